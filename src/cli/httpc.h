/* SPDX-License-Identifier: MIT */
/*
** cli/httpc.h: the least HTTP/1.1 client `toolhost connect` needs to talk
** to toolhost's own Streamable HTTP server over a Unix socket: requests one
** after another on a connection (no pipelining), a JSON body or an SSE
** stream back (chunked or not).
*/
#ifndef TH_CLI_HTTPC_H
#define TH_CLI_HTTPC_H

#include <stdbool.h>
#include <stddef.h>

#define TH_HTTPC_SID_MAX 160

typedef struct th_httpc {
    int fd;                        /* the connection, or -1 */
    char buf[16384];               /* bytes read, not yet used */
    size_t pos, len;
    int status;                    /* of the response */
    bool sse;                      /* the body is text/event-stream */
    bool chunked, sized, ended;    /* how the body is framed; ended: all of it read */
    unsigned long long left;       /* bytes of the body (sized) or of this chunk left */
    char sid[TH_HTTPC_SID_MAX];    /* Mcp-Session-Id of the response, or "" */
    bool closing, http11;          /* Connection: close; an HTTP/1.1 response */
    size_t sent;                   /* bytes of the request the socket took */
    bool got;                      /* any byte of the response came */
    bool reset;                    /* a read failed with ECONNRESET (not the end) */
    char dec[4096];                /* body bytes decoded, for the SSE lines */
    size_t dpos, dlen;
} th_httpc;

/* Connect to the socket at PATH. False with errno set when it failed. */
bool th_httpc_open(th_httpc *c, const char *path);
/*
** Send HEAD (the request line and header fields, without the blank line
** ending them) and BODY (BLEN bytes, may be 0) on C's connection, open or
** kept from a response read whole. False with errno set when the socket
** failed; c->sent says how much of the request went.
*/
bool th_httpc_request(th_httpc *c, const char *head, const char *body, size_t blen);
/* th_httpc_open, then th_httpc_request. */
bool th_httpc_send(th_httpc *c, const char *path, const char *head, const char *body, size_t blen);
/* Whether the response was read whole and the connection may carry the
 * next request (HTTP/1.1 keep-alive: framed body, no Connection: close). */
bool th_httpc_reusable(const th_httpc *c);
/* Whether a kept connection is still open on the server's side. */
bool th_httpc_idle_ok(const th_httpc *c);
/* Read the response's status and header fields. False with errno set when
 * the connection failed (a response that is no HTTP gives EPROTO). */
bool th_httpc_head(th_httpc *c);

/* The whole body, NUL-terminated (*LEN bytes), malloc'd; NULL on error. */
char *th_httpc_body(th_httpc *c, size_t *len);

/*
** The data of the next SSE event that has any (multi-line data joined by
** newlines), malloc'd; its id, if it gave one, into ID (IDSIZE bytes).
** NULL at the end of the stream.
*/
char *th_httpc_event(th_httpc *c, char *id, size_t idsize);

/* Close the connection (another thread may shutdown(2) c->fd to end a
 * read in progress). */
void th_httpc_close(th_httpc *c);

#endif
