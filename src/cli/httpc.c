/* SPDX-License-Identifier: MIT */
/*
** cli/httpc.c: a minimal HTTP/1.1 client over a Unix socket, enough for
** toolhost's own server (transport/http.c): it frames bodies by
** Content-Length, chunks or the connection's end, splits SSE events, and
** says when a connection may carry the next request (keep-alive).
*/
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/compat.h"
#include "cli/httpc.h"
#include "transport/unixsock.h"

/* More bytes from the socket into the buffer; 0 at its end, -1 on error. */
static ssize_t fill(th_httpc *c)
{
    if (c->pos == c->len)
        c->pos = c->len = 0;
    if (c->len == sizeof c->buf) {
        if (c->pos == 0) {
            errno = EPROTO; /* a line longer than the buffer */
            return -1;
        }
        memmove(c->buf, c->buf + c->pos, c->len - c->pos);
        c->len -= c->pos;
        c->pos = 0;
    }
    ssize_t n;
    while ((n = read(c->fd, c->buf + c->len, sizeof c->buf - c->len)) < 0 && errno == EINTR)
        ;
    if (n < 0 && errno == ECONNRESET)
        c->reset = true;
    if (n > 0) {
        c->len += (size_t)n;
        c->got = true;
    }
    return n;
}

/* One raw line (the head, a chunk size) into LINE without its CRLF. */
static bool raw_line(th_httpc *c, char *line, size_t size)
{
    for (;;) {
        char *nl = memchr(c->buf + c->pos, '\n', c->len - c->pos);
        if (nl) {
            size_t n = (size_t)(nl - (c->buf + c->pos));
            if (n && nl[-1] == '\r')
                n--;
            snprintf(line, size, "%.*s", (int)n, c->buf + c->pos);
            c->pos = (size_t)(nl - c->buf) + 1;
            return true;
        }
        if (fill(c) <= 0) {
            if (errno == 0)
                errno = ECONNRESET;
            return false;
        }
    }
}

/* The header fields that decide how the rest is read. */
static void head_field(th_httpc *c, const char *line)
{
    const char *colon = strchr(line, ':');
    if (!colon)
        return;
    size_t klen = (size_t)(colon - line);
    const char *v = colon + 1 + strspn(colon + 1, " \t");
    if (klen == 14 && strncasecmp(line, "Content-Length", klen) == 0) {
        c->sized = true;
        c->left = strtoull(v, NULL, 10);
    } else if (klen == 17 && strncasecmp(line, "Transfer-Encoding", klen) == 0) {
        c->chunked = strncasecmp(v, "chunked", 7) == 0; /* the only coding our server sends */
    } else if (klen == 12 && strncasecmp(line, "Content-Type", klen) == 0) {
        c->sse = strncasecmp(v, "text/event-stream", 17) == 0;
    } else if (klen == 14 && strncasecmp(line, "Mcp-Session-Id", klen) == 0) {
        snprintf(c->sid, sizeof c->sid, "%s", v);
    } else if (klen == 10 && strncasecmp(line, "Connection", klen) == 0) {
        c->closing = strncasecmp(v, "close", 5) == 0;
    }
}

bool th_httpc_open(th_httpc *c, const char *path)
{
    *c = (th_httpc){.fd = th_unixsock_connect(path)};
    return c->fd >= 0;
}

/* All of P, counting in c->sent what the socket took. */
static bool put(th_httpc *c, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(c->fd, p, n, TH_MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        c->sent += (size_t)w;
        p += w;
        n -= (size_t)w;
    }
    return true;
}

/* The state of a response forgotten, the buffers not cleared: pos, len,
 * dpos and dlen say what of them counts, and 20 KiB zeroed per call would
 * be work for nothing. */
static void forget_response(th_httpc *c)
{
    c->pos = c->len = c->dpos = c->dlen = 0;
    c->status = 0;
    c->sse = c->chunked = c->sized = c->ended = c->closing = c->http11 = c->got = c->reset = false;
    c->left = 0;
    c->sid[0] = '\0';
    c->sent = 0;
}

bool th_httpc_request(th_httpc *c, const char *head, const char *body, size_t blen)
{
    /* The previous response was read whole (th_httpc_reusable): nothing
     * of it is left to keep. */
    forget_response(c);
    size_t hl = strlen(head), n = hl + 4 + blen;
    /* One send, so the daemon wakes once; a usual request fits on the
     * stack, no allocation per call. */
    char small[8192], *req = n <= sizeof small ? small : malloc(n);
    if (!req)
        return false;
    memcpy(req, head, hl);
    memcpy(req + hl, "\r\n\r\n", 4);
    if (blen)
        memcpy(req + hl + 4, body, blen);
    bool sent = put(c, req, n);
    if (req != small)
        free(req);
    return sent;
}

bool th_httpc_send(th_httpc *c, const char *path, const char *head, const char *body, size_t blen)
{
    return th_httpc_open(c, path) && th_httpc_request(c, head, body, blen);
}

bool th_httpc_reusable(const th_httpc *c)
{
    /* A body framed by the connection's end ended it; bytes past the
     * response would be an answer to nothing. */
    return c->fd >= 0 && c->ended && !c->closing && c->http11 && c->pos == c->len &&
           (c->sized || c->chunked || c->status == 204 || c->status == 202);
}

bool th_httpc_idle_ok(const th_httpc *c)
{
    /* The server sends nothing unasked: anything to read on an idle
     * connection is its end (or junk), so it carries no request. */
    struct pollfd p = {.fd = c->fd, .events = POLLIN};
    return poll(&p, 1, 0) == 0;
}

bool th_httpc_head(th_httpc *c)
{
    char line[4096];
    errno = 0;
    if (!raw_line(c, line, sizeof line))
        return false;
    if (strncmp(line, "HTTP/1.", 7) != 0 || sscanf(line + 8, " %d", &c->status) != 1) {
        errno = EPROTO;
        return false;
    }
    c->http11 = line[7] == '1'; /* HTTP/1.0 closes after each response */
    while (raw_line(c, line, sizeof line) && line[0])
        head_field(c, line);
    /* No body: a 202 or 204, or a sized one of 0 bytes. */
    c->ended = c->status == 204 || c->status == 202 || (c->sized && !c->chunked && c->left == 0);
    if (c->chunked)
        c->left = 0;
    return true;
}

/* The next chunk's size; the end (size 0) ends the body. */
static bool next_chunk(th_httpc *c)
{
    char line[128];
    do {
        if (!raw_line(c, line, sizeof line))
            return false;
    } while (!line[0]); /* the CRLF after the previous chunk's data */
    c->left = strtoull(line, NULL, 16);
    if (c->left != 0)
        return true;
    /* The last chunk: its trailer, up to a blank line, is read too, so
     * that the connection's next bytes are the next response's. */
    do {
        if (!raw_line(c, line, sizeof line))
            return false;
    } while (line[0]);
    c->ended = true;
    return true;
}

/* Up to MAX decoded body bytes into OUT; 0 at the end, -1 on error. */
static ssize_t body_read(th_httpc *c, char *out, size_t max)
{
    if (c->ended)
        return 0;
    if (c->chunked && c->left == 0 && (!next_chunk(c) || c->ended))
        return c->ended ? 0 : -1;
    if (c->pos == c->len) {
        ssize_t n = fill(c);
        if (n <= 0) {
            c->ended = true;
            /* Only a body framed by the connection's end may end so. */
            return n == 0 && !c->chunked && !c->sized ? 0 : -1;
        }
    }
    size_t n = c->len - c->pos;
    if (n > max)
        n = max;
    if ((c->chunked || c->sized) && n > c->left)
        n = (size_t)c->left;
    memcpy(out, c->buf + c->pos, n);
    c->pos += n;
    if (c->chunked || c->sized)
        c->left -= n;
    if (c->sized && !c->chunked && c->left == 0)
        c->ended = true;
    return (ssize_t)n;
}

char *th_httpc_body(th_httpc *c, size_t *len)
{
    size_t cap = 4096, n = 0;
    char *out = malloc(cap);
    ssize_t r;
    while (out && (r = body_read(c, out + n, cap - n - 1)) > 0) {
        n += (size_t)r;
        if (cap - n < 2) {
            char *more = realloc(out, cap * 2);
            if (!more) {
                free(out);
                return NULL;
            }
            out = more;
            cap *= 2;
        }
    }
    if (!out || r < 0) {
        free(out);
        return NULL;
    }
    out[n] = '\0';
    *len = n;
    return out;
}

/* One decoded line (no CR/LF) appended to *LINE (grown); false at the end. */
static bool body_line(th_httpc *c, char **line, size_t *cap)
{
    size_t n = 0;
    for (;;) {
        if (c->dpos == c->dlen) {
            ssize_t r = body_read(c, c->dec, sizeof c->dec);
            if (r <= 0)
                return false;
            c->dpos = 0;
            c->dlen = (size_t)r;
        }
        char ch = c->dec[c->dpos++];
        if (ch == '\n')
            break;
        if (n + 2 > *cap) {
            char *more = realloc(*line, *cap ? *cap * 2 : 256);
            if (!more)
                return false;
            *line = more;
            *cap = *cap ? *cap * 2 : 256;
        }
        (*line)[n++] = ch;
    }
    if (n && (*line)[n - 1] == '\r')
        n--;
    if (!*line && !(*line = malloc(*cap = 256)))
        return false;
    (*line)[n] = '\0';
    return true;
}

char *th_httpc_event(th_httpc *c, char *id, size_t idsize)
{
    char *line = NULL, *data = NULL;
    size_t cap = 0, dn = 0;
    while (body_line(c, &line, &cap)) {
        if (!line[0]) { /* an event ends; one without data (priming) is no message */
            if (data)
                break;
            continue;
        }
        if (strncmp(line, "id:", 3) == 0) {
            snprintf(id, idsize, "%s", line + 3 + (line[3] == ' '));
        } else if (strncmp(line, "data:", 5) == 0) {
            const char *v = line + 5 + (line[5] == ' ');
            size_t vl = strlen(v);
            char *more = realloc(data, dn + vl + 2);
            if (!more)
                break;
            data = more;
            if (dn)
                data[dn++] = '\n';
            memcpy(data + dn, v, vl + 1);
            dn += vl;
        }
    }
    free(line);
    return data;
}

void th_httpc_close(th_httpc *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
}
