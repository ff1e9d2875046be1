/* SPDX-License-Identifier: MIT */
/*
** http_client.h: a plain socket HTTP/1.1 client for the tests that drive a
** real src/toolhost over --http (test_http, test_http_hostile): start the
** host on a free port, send requests, read whole responses.
*/
#ifndef TH_TESTS_HTTP_CLIENT_H
#define TH_TESTS_HTTP_CLIENT_H

#include "mcp_harness.h"

#define LISTENING "listening on http://127.0.0.1:"
#define MODERN_HEADERS "MCP-Protocol-Version: 2026-07-28\r\n"
#define ACCEPT_BOTH "Accept: application/json, text/event-stream\r\n"

/* A response as the client saw it. */
typedef struct hres {
    int status;
    char *headers; /* raw header block, lower-cased names kept as sent */
    char *body;    /* de-chunked */
} hres;

void hres_free(hres *r);

/* Start toolhost serving HTTP on a free port (plus ARGS...); *PORT gets it. */
mh_proc *start_http(int *port, const char *a1, const char *a2, const char *a3);

/* A connection to 127.0.0.1:PORT (from the local address SOURCE, e.g.
 * "127.0.0.2", unless NULL), reads timing out after MH_TIMEOUT_MS. */
int connect_to(int port);
int connect_from(int port, const char *source);

/* Send METHOD with extra header lines HDRS ("Name: v\r\n"...) and BODY
 * (NULL: none); the connection closes after the response. */
int send_request(int port, const char *method, const char *path, const char *hdrs, const char *body);

/* The value of header NAME in R (malloc'd), or NULL. */
char *header_of(const hres *r, const char *name);

/* Read the whole response from FD (closed afterwards). */
hres read_response(int fd);

/* Like read_response, but a connection closed without a response gives
 * status 0 instead of failing. */
hres read_response_or_empty(int fd);

/* METHOD on /mcp, answered (send_request, then read_response). */
hres request(int port, const char *method, const char *hdrs, const char *body);

#endif
