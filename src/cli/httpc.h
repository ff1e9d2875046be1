/* SPDX-License-Identifier: MIT */
/*
** cli/httpc.h: the least HTTP/1.1 client `toolhost connect` needs to talk
** to toolhost's own Streamable HTTP server over a Unix socket: one request
** per connection, a JSON body or an SSE stream back (chunked or not).
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
    char dec[4096];                /* body bytes decoded, for the SSE lines */
    size_t dpos, dlen;
} th_httpc;

/*
** Connect to the socket at PATH and send HEAD (the request line and header
** fields, without the blank line ending them) and BODY (BLEN bytes, may be
** 0). False with errno set when the socket failed.
*/
bool th_httpc_send(th_httpc *c, const char *path, const char *head, const char *body, size_t blen);

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
