/* SPDX-License-Identifier: MIT */
/*
** transport/http.h: MCP over Streamable HTTP (libmicrohttpd). It admits
** requests (path, method, Origin/Host, media types, size), keeps the legacy
** sessions that initialize opens, checks the modern per-request headers
** against the body, and turns what a th_mcp_session sends into a JSON body
** or an SSE stream. It never interprets MCP beyond those headers.
*/
#ifndef TH_TRANSPORT_HTTP_H
#define TH_TRANSPORT_HTTP_H

#include <stddef.h>

#include "plugin/registry.h"
#include "protocol/mcp.h"
#include "transport/auth.h"

typedef struct th_http_opts {
    const char *addr;            /* IPv4 or IPv6 literal to bind; NULL: 127.0.0.1 */
    unsigned port;               /* 0: any free port (see th_http_port) */
    const char *path;            /* the endpoint; NULL: "/mcp" */
    const char *const *origins;  /* allowed Origin values besides loopback ones */
    size_t norigins;
    size_t max_body_bytes;       /* a larger POST body is refused with 413 */
    unsigned max_connections;    /* open connections at once */
    unsigned max_client_connections; /* of them from one client address; 0: half */
    size_t max_sessions;         /* legacy sessions at once */
    long long request_timeout_ms; /* idle connection and longest wait for an answer */
    long long retry_ms;          /* SSE polling (legacy sessions): a request silent this
                                  * long gets a priming event with this retry, and each SSE
                                  * answer ends after this long; resumed by GET with
                                  * Last-Event-ID. 0: off, answers stream to the end */
    const th_registry *reg;      /* for x-mcp-header parameters; may be NULL */
    const th_auth *auth;         /* bearer tokens every request needs; NULL: none */
    const char *auth_scope;      /* scope every request needs; NULL: any known token */
    const char *resource_url;    /* this server's resource URI; NULL: from Host */
    const char *auth_issuer;     /* authorization server named in the metadata */
    const char *const *tool_scopes; /* "TOOL=SCOPE": tools/call of TOOL needs SCOPE */
    size_t ntool_scopes;
    const char *const *caller_tools; /* "SCOPE=GLOB,...": with any, a caller sees the
                                      * tools matching the globs of the scopes its
                                      * token carries, and no other */
    size_t ncaller_tools;
    const char *session_prefix;  /* starts every Mcp-Session-Id (at most
                                  * TH_HTTP_SESSION_PREFIX_MAX of [A-Za-z0-9._-]),
                                  * so a load balancer can pin a session to the
                                  * instance that issued it; NULL: none */
    bool metrics;                /* serve /metrics (/healthz and /readyz always) */
    bool use_listen_fd;          /* serve on LISTEN_FD (socket activation, or a
                                  * Unix socket: see unixsock.h) instead of
                                  * binding ADDR and PORT; th_http owns it. On a
                                  * Unix socket without tokens each peer's uid is
                                  * its principal ("uid:N", also its scope for
                                  * CALLER_TOOLS) */
    int listen_fd;
} th_http_opts;

#define TH_HTTP_SESSION_PREFIX_MAX 32

typedef struct th_http th_http;

/*
** Start serving MCP (taken by reference; it must outlive the th_http) on
** OPTS (copied; its strings must outlive the th_http). NULL with a message
** in ERR when the address cannot be parsed or bound.
*/
th_http *th_http_start(th_mcp *mcp, const th_http_opts *opts, char *err, size_t errlen);

/* For how long (ms) H has had no open connection and no session; 0 while
 * it has one. Expired sessions are ended first. --idle-exit polls it. */
long long th_http_idle_ms(th_http *h);

/* The port actually bound (useful after port 0). */
unsigned th_http_port(const th_http *h);

/*
** Stop accepting connections, let requests in flight finish until
** DEADLINE_MS (th_now_ms clock), cancel what is still running, close every
** connection and session, and free H.
*/
void th_http_stop(th_http *h, long long deadline_ms);

#endif
