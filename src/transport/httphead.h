/* SPDX-License-Identifier: MIT */
/*
** transport/httphead.h: HTTP header values read as their RFCs define them,
** not by prefix: Host and Origin as authorities (RFC 3986 3.2, RFC 6454),
** Accept with its q-values (RFC 9110 12.5.1), Content-Length's digits.
*/
#ifndef TH_TRANSPORT_HTTPHEAD_H
#define TH_TRANSPORT_HTTPHEAD_H

#include <stdbool.h>
#include <stddef.h>

/* Longest host th_http_authority and th_http_origin_host return (a DNS
 * name is at most 253 bytes; brackets and percent-encoding add a little). */
#define TH_HTTP_HOST_MAX 300

/*
** AUTH (a Host header, or an Origin's authority) as "host[:port]" with host
** an IP literal in brackets, an IPv4 address or a registered name: the host,
** lower-cased, into HOST (SIZE bytes). False when it is anything else
** (userinfo, bytes after the literal, a port that is not a number).
*/
bool th_http_authority(const char *auth, char *host, size_t size);

/* ORIGIN as "scheme://host[:port]" (RFC 6454 7): its host as above. False
 * for "null" and for anything that is not an origin. */
bool th_http_origin_host(const char *origin, char *host, size_t size);

/* Does the Accept list LIST (NULL: no header, anything goes) accept TYPE?
 * The most specific range that matches decides, and q=0 refuses. */
bool th_http_accepts(const char *list, const char *type);

/* S is 1*DIGIT with a value that fits in size_t (Content-Length). */
bool th_http_length(const char *s, size_t *value);

#endif
