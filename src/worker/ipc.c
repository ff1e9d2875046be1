/* SPDX-License-Identifier: MIT */
/*
** worker/ipc.c: frames on the host-child pipes: reading them out of a
** byte stream that may split them anywhere, writing each with one call,
** and parsing their payloads as untrusted input.
*/
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "base/compat.h"
#include "call/result.h"
#include "base/fastjson.h"
#include "worker/ipc.h"

void th_ipc_reader_free(th_ipc_reader *r)
{
    free(r->buf);
    r->buf = NULL;
    r->start = r->len = r->cap = 0;
}

/* Put back the byte the last frame's NUL terminator replaced. */
static void restore(th_ipc_reader *r)
{
    if (r->saved) {
        r->buf[r->saved_at] = r->saved_byte;
        r->saved = false;
    }
}

long th_ipc_fill(th_ipc_reader *r)
{
    restore(r);
    /* Move the unread tail to the front before growing, so the buffer
     * stays the size of the largest frame, not of the stream. */
    if (r->start > 0 && (r->len == 0 || r->start + r->len == r->cap)) {
        memmove(r->buf, r->buf + r->start, r->len);
        r->start = 0;
    }
    if (r->start + r->len == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 65536;
        char *b = realloc(r->buf, cap);
        if (!b) {
            errno = ENOMEM;
            return -1;
        }
        r->buf = b;
        r->cap = cap;
    }
    for (;;) {
        char *at = r->buf + r->start + r->len;
        size_t room = r->cap - r->start - r->len;
        ssize_t n = read(r->fd, at, room);
        if (n < 0 && errno == EINTR)
            continue;
        if (n > 0)
            r->len += (size_t)n;
        return (long)n;
    }
}

/* Make room for NEED bytes from r->start; false when out of memory. */
static bool room(th_ipc_reader *r, size_t need)
{
    if (r->cap - r->start >= need)
        return true;
    if (r->start > 0) {
        memmove(r->buf, r->buf + r->start, r->len);
        r->start = 0;
    }
    if (r->cap >= need)
        return true;
    char *b = realloc(r->buf, need);
    if (!b)
        return false;
    r->buf = b;
    r->cap = need;
    return true;
}

int th_ipc_next(th_ipc_reader *r, th_ipc_frame *f, th_err *err)
{
    restore(r);
    if (r->len < TH_IPC_HEADER)
        return 0;
    const unsigned char *h = (const unsigned char *)r->buf + r->start;
    uint32_t plen, id;
    memcpy(&plen, h, 4);
    memcpy(&id, h + 5, 4);
    if (plen > r->max) {
        th_err_set(err, TH_ERR_IO, "frame of %lu bytes is over the limit of %zu", (unsigned long)plen, r->max);
        return -1;
    }
    /* One byte past the frame holds the payload's NUL terminator. */
    size_t total = TH_IPC_HEADER + (size_t)plen;
    if (!room(r, total + 1)) {
        th_err_set(err, TH_ERR_NOMEM, "out of memory for a frame of %lu bytes", (unsigned long)plen);
        return -1;
    }
    if (r->len < total)
        return 0;
    char *p = r->buf + r->start;
    f->type = (uint8_t)p[4];
    f->id = id;
    f->len = plen;
    f->payload = p + TH_IPC_HEADER;
    r->saved_at = r->start + total;
    r->saved_byte = r->buf[r->saved_at];
    r->saved = true;
    r->buf[r->saved_at] = '\0';
    r->start += total;
    r->len -= total;
    return 1;
}

int th_ipc_recv(th_ipc_reader *r, th_ipc_frame *f, th_err *err)
{
    for (;;) {
        int got = th_ipc_next(r, f, err);
        if (got != 0)
            return got;
        long n = th_ipc_fill(r);
        if (n < 0)
            return th_err_set(err, TH_ERR_IO, "cannot read: %s", strerror(errno)), -1;
        if (n == 0) {
            if (r->len == 0)
                return 0;
            th_err_set(err, TH_ERR_IO, "end of stream inside a frame (%zu bytes of it read)", r->len);
            return -1;
        }
    }
}

th_rc th_ipc_send(int fd, th_ipc_type type, uint32_t id, const char *payload, size_t len)
{
    struct iovec part = {(void *)payload, len};
    return th_ipc_sendv(fd, type, id, &part, len ? 1 : 0);
}

#define MAX_PARTS 8

/* See th_ipc_guard_sigpipe. On until told otherwise: the safe default. */
static bool guard_sigpipe = true;

void th_ipc_guard_sigpipe(bool on)
{
    guard_sigpipe = on;
}

static th_rc write_iov(int fd, struct iovec *at, int nat, size_t left);

/* H: the header of a frame of TYPE and ID whose payload is PARTS; false
 * when the payload is too long for its 32-bit length. *LEN: its length. */
static bool frame_header(unsigned char h[TH_IPC_HEADER], th_ipc_type type, uint32_t id, const struct iovec *parts,
                         size_t nparts, size_t *len)
{
    *len = 0;
    for (size_t i = 0; i < nparts; i++)
        *len += parts[i].iov_len;
    if (*len > UINT32_MAX)
        return false;
    uint32_t plen = (uint32_t)*len;
    memcpy(h, &plen, 4);
    h[4] = (unsigned char)type;
    memcpy(h + 5, &id, 4);
    return true;
}

th_rc th_ipc_sendv(int fd, th_ipc_type type, uint32_t id, const struct iovec *parts, size_t nparts)
{
    size_t len;
    unsigned char h[TH_IPC_HEADER];
    if (nparts > MAX_PARTS || !frame_header(h, type, id, parts, nparts, &len))
        return TH_ERR_VALUE;
    struct iovec iov[MAX_PARTS + 1] = {{h, sizeof h}};
    if (nparts)
        memcpy(iov + 1, parts, nparts * sizeof *parts);
    return write_iov(fd, iov, (int)nparts + 1, sizeof h + len);
}

bool th_ipc_appendv(th_buf *b, th_ipc_type type, uint32_t id, const struct iovec *parts, size_t nparts)
{
    size_t len;
    unsigned char h[TH_IPC_HEADER];
    if (!frame_header(h, type, id, parts, nparts, &len))
        return false;
    size_t mark = b->len;
    bool ok = th_buf_append(b, (const char *)h, sizeof h);
    for (size_t i = 0; ok && i < nparts; i++)
        ok = !parts[i].iov_len || th_buf_append(b, parts[i].iov_base, parts[i].iov_len);
    if (!ok)
        b->len = mark;
    return ok;
}

th_rc th_ipc_write(int fd, const void *data, size_t len)
{
    struct iovec iov = {(void *)data, len};
    return len ? write_iov(fd, &iov, 1, len) : TH_OK;
}

/* Write LEFT bytes from NAT pieces at AT (changed), looping on short writes. */
static th_rc write_iov(int fd, struct iovec *at, int nat, size_t left)
{
    sigset_t pipe_only, old;
    bool guard = guard_sigpipe;
    if (guard) {
        sigemptyset(&pipe_only);
        sigaddset(&pipe_only, SIGPIPE);
        pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
    }
    th_rc rc = TH_OK;
    while (left > 0) {
        ssize_t n = writev(fd, at, nat);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            rc = TH_ERR_IO;
            break;
        }
        left -= (size_t)n;
        while (n > 0 && nat > 0) {
            if ((size_t)n >= at[0].iov_len) {
                n -= (ssize_t)at[0].iov_len;
                at++;
                nat--;
            } else {
                at[0].iov_base = (char *)at[0].iov_base + n;
                at[0].iov_len -= (size_t)n;
                n = 0;
            }
        }
    }
    if (guard) {
        /* The SIGPIPE a write to a reader that is gone raised waits,
         * blocked, on this thread: take it before unblocking. */
        struct timespec zero = {0, 0};
        if (rc != TH_OK && errno == EPIPE)
            while (sigtimedwait(&pipe_only, NULL, &zero) == SIGPIPE) {
            }
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    return rc;
}

th_rc th_ipc_send_json(int fd, th_ipc_type type, uint32_t id, json_object *obj)
{
    size_t len = 0;
    const char *text = obj ? json_object_to_json_string_length(obj, JSON_C_TO_STRING_PLAIN |
                                                                         JSON_C_TO_STRING_NOSLASHESCAPE, &len)
                           : "";
    if (!text)
        return TH_ERR_NOMEM;
    return th_ipc_send(fd, type, id, text, len);
}

/*
** One tokener per thread, reset between payloads: a new one clears its
** whole parse stack (TH_RESULT_MAX_DEPTH levels), which cost more than
** parsing a small result. Freed when its thread ends.
*/
static pthread_key_t tok_key;
static pthread_once_t tok_once = PTHREAD_ONCE_INIT;
static bool tok_key_ok;

static void tok_free(void *tok)
{
    json_tokener_free(tok);
}

static void tok_key_init(void)
{
    tok_key_ok = pthread_key_create(&tok_key, tok_free) == 0;
}

/* This thread's tokener, reset; NULL when out of memory. */
static json_tokener *thread_tokener(void)
{
    pthread_once(&tok_once, tok_key_init);
    json_tokener *tok = tok_key_ok ? pthread_getspecific(tok_key) : NULL;
    if (tok) {
        json_tokener_reset(tok);
        return tok;
    }
    /* Results may nest as deep as the host allows a plugin to build. */
    if (!(tok = json_tokener_new_ex(TH_RESULT_MAX_DEPTH + 8)))
        return NULL;
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    if (!tok_key_ok || pthread_setspecific(tok_key, tok) != 0) {
        json_tokener_free(tok);
        return NULL;
    }
    return tok;
}

json_object *th_ipc_parse(const char *payload, size_t len, th_err *err)
{
    if (len > INT_MAX) {
        th_err_set(err, TH_ERR_VALUE, "payload of %zu bytes is too large to parse", len);
        return NULL;
    }
    if (!th_utf8_valid(payload, len)) {
        th_err_set(err, TH_ERR_VALUE, "payload is not valid UTF-8");
        return NULL;
    }
    /* A plain payload (calls, results) skips json-c's tokener. */
    json_object *o = th_fastjson_parse(payload, len);
    if (o)
        return o;
    json_tokener *tok = thread_tokener();
    if (!tok) {
        th_err_set(err, TH_ERR_NOMEM, "out of memory");
        return NULL;
    }
    o = json_tokener_parse_ex(tok, payload, (int)len);
    enum json_tokener_error e = json_tokener_get_error(tok);
    if (e != json_tokener_success || !o || tok->char_offset != (int)len) {
        if (e == json_tokener_continue)
            th_err_set(err, TH_ERR_VALUE, "payload is not complete JSON");
        else if (e != json_tokener_success)
            th_err_set(err, TH_ERR_VALUE, "payload is not JSON: %s", json_tokener_error_desc(e));
        else
            th_err_set(err, TH_ERR_VALUE, "payload has bytes after its JSON value");
        json_object_put(o);
        o = NULL;
    }
    return o;
}
