/*
** transport_stdio.c: newline-delimited JSON-RPC over file descriptors. The
** reader splits lines in place (no copy for a message that arrives whole);
** the writer queues whole messages and one sender at a time writes the
** queue, so concurrent replies never interleave and batch under load.
*/
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jsonrpc.h"
#include "log.h"
#include "transport_stdio.h"
#include "util.h"

#define READ_CHUNK 65536

/*
** The output side. Senders append whole messages to PENDING; whoever finds
** no flush under way becomes the flusher and writes until PENDING stays
** empty, while the others return at once. Under load many responses leave
** in one write(); alone, a message is written immediately.
*/
/* Responses queued for a client that is not reading beyond this mean it
 * is gone or stuck: output stops rather than memory growing without end. */
#define MAX_PENDING_BYTES ((size_t)256 << 20)

typedef struct writer {
    int fd;
    int stop_fd;         /* readable once a stop was requested (-1: none) */
    pthread_mutex_t lock;
    pthread_cond_t idle; /* a flush ended */
    th_buf pending;      /* bytes to write */
    th_buf spare;        /* the flusher's buffer, kept to avoid reallocation */
    bool flushing;
    bool broken;         /* the peer is gone; drop further output */
} writer;

/*
** Write all LEN bytes at P; false when the peer is gone. The fd is
** non-blocking so that a client that stops reading cannot pin this thread
** past a stop request: waiting for room also watches STOP_FD.
*/
static bool write_all(int fd, int stop_fd, const char *p, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                struct pollfd pf[2] = {{.fd = fd, .events = POLLOUT}, {.fd = stop_fd, .events = POLLIN}};
                if (poll(pf, stop_fd >= 0 ? 2 : 1, -1) > 0 && stop_fd >= 0 && (pf[1].revents & POLLIN) &&
                    !(pf[0].revents & POLLOUT)) {
                    th_log(TH_LOG_WARNING, "stop requested while the client was not reading stdout; "
                                           "dropping %zu bytes of output", len);
                    return false;
                }
                continue;
            }
            th_log(TH_LOG_ERROR, "stdout: %s; no further messages will be sent", strerror(errno));
            return false;
        }
        p += n;
        len -= (size_t)n;
    }
    return true;
}

static void write_msg(void *ctx, json_object *msg)
{
    writer *w = ctx;
    size_t len;
    const char *text = th_rpc_serialize(msg, &len); /* msg's own buffer: no lock needed */

    pthread_mutex_lock(&w->lock);
    if (!w->broken && w->pending.len + len + 1 > MAX_PENDING_BYTES) {
        th_log(TH_LOG_ERROR, "the client is not reading stdout (%zu bytes waiting); no further messages will be sent",
               w->pending.len);
        w->broken = true;
    }
    if (!w->broken && (!th_buf_append(&w->pending, text, len) || !th_buf_append(&w->pending, "\n", 1))) {
        th_log(TH_LOG_ERROR, "out of memory queueing a message; it was not sent");
        w->pending.len = 0; /* a partial message must never reach the wire */
    }
    json_object_put(msg);
    if (w->flushing || w->broken) {
        pthread_mutex_unlock(&w->lock);
        return;
    }
    w->flushing = true;
    while (w->pending.len > 0 && !w->broken) {
        th_buf out = w->pending;
        w->pending = w->spare;
        w->pending.len = 0;
        pthread_mutex_unlock(&w->lock);
        bool ok = write_all(w->fd, w->stop_fd, out.data, out.len);
        pthread_mutex_lock(&w->lock);
        out.len = 0;
        w->spare = out;
        if (!ok)
            w->broken = true;
    }
    w->flushing = false;
    pthread_cond_broadcast(&w->idle);
    pthread_mutex_unlock(&w->lock);
}

/* Wait until no flush is under way (all sends have returned). */
static void writer_finish(writer *w)
{
    pthread_mutex_lock(&w->lock);
    while (w->flushing)
        pthread_cond_wait(&w->idle, &w->lock);
    pthread_mutex_unlock(&w->lock);
    free(w->pending.data);
    free(w->spare.data);
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->idle);
}

/* Lines of nothing but white space carry no message: skip them like empty
 * ones rather than answer a parse error nobody asked for. */
static bool blank(const char *p, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r')
            return false;
    return true;
}

static void shutdown_session(th_mcp_session *s, long long grace_ms)
{
    long long deadline = th_now_ms() + grace_ms;
    size_t n = th_mcp_session_inflight(s);
    if (n)
        th_log(TH_LOG_INFO, "shutting down: waiting up to %lld ms for %zu call%s", grace_ms, n, n == 1 ? "" : "s");
    if (!th_mcp_session_drain(s, deadline)) {
        th_log(TH_LOG_WARNING, "shutting down: cancelling %zu call%s still running after %lld ms",
               th_mcp_session_inflight(s), th_mcp_session_inflight(s) == 1 ? "" : "s", grace_ms);
        th_mcp_session_cancel_all(s);
        /* A moment for handlers that poll th_call_cancelled() to return. */
        th_mcp_session_drain(s, th_now_ms() + 250);
    }
}

int th_stdio_serve(th_mcp *mcp, int in_fd, int out_fd, int stop_fd, const th_stdio_opts *opts)
{
    writer w = {.fd = out_fd, .stop_fd = stop_fd};
    int fl = fcntl(out_fd, F_GETFL);
    if (fl >= 0)
        fcntl(out_fd, F_SETFL, fl | O_NONBLOCK);
    pthread_mutex_init(&w.lock, NULL);
    pthread_cond_init(&w.idle, NULL);
    th_mcp_session *s = th_mcp_session_new(mcp, write_msg, &w);
    size_t max = opts->max_message_bytes;
    size_t cap = READ_CHUNK * 2, len = 0;
    char *buf = malloc(cap);
    bool discarding = false; /* inside a line already refused as too long */
    size_t discarded = 0;
    int status = 0;

    if (!s || !buf) {
        th_log(TH_LOG_CRITICAL, "out of memory starting the stdio transport");
        free(buf);
        th_mcp_session_free(s);
        writer_finish(&w);
        return 1;
    }

    for (;;) {
        struct pollfd pfd[2] = {{.fd = in_fd, .events = POLLIN}, {.fd = stop_fd, .events = POLLIN}};
        int np = poll(pfd, stop_fd >= 0 ? 2 : 1, -1);
        if (np < 0) {
            if (errno == EINTR)
                continue;
            th_log(TH_LOG_ERROR, "poll: %s", strerror(errno));
            status = 1;
            break;
        }
        if (stop_fd >= 0 && (pfd[1].revents & POLLIN)) {
            th_log(TH_LOG_INFO, "stop requested");
            break;
        }
        if (!(pfd[0].revents & (POLLIN | POLLHUP | POLLERR)))
            continue;

        if (cap - len < READ_CHUNK) {
            size_t ncap = cap * 2;
            char *nb = realloc(buf, ncap);
            if (!nb) {
                th_log(TH_LOG_CRITICAL, "out of memory reading input");
                status = 1;
                break;
            }
            buf = nb;
            cap = ncap;
        }
        ssize_t n = read(in_fd, buf + len, cap - len);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            th_log(TH_LOG_ERROR, "stdin: %s", strerror(errno));
            status = 1;
            break;
        }
        if (n == 0) {
            /* A last line without a newline is still a message. */
            if (discarding || len > max) {
                char m[160];
                snprintf(m, sizeof m, "Invalid Request: message of %zu bytes exceeds the limit of %zu bytes",
                         discarded + len, max);
                th_mcp_session_reject(s, TH_RPC_INVALID_REQUEST, m);
            } else if (!blank(buf, len)) {
                th_mcp_session_handle(s, buf, len);
            }
            break;
        }

        size_t scan = len, start = 0;
        len += (size_t)n;
        th_mcp_batch_begin(mcp);
        for (;;) {
            char *nl = memchr(buf + scan, '\n', len - scan);
            if (!nl)
                break;
            size_t end = (size_t)(nl - buf);
            size_t line_len = end - start;
            if (discarding) {
                discarding = false;
                discarded += line_len;
                char m[160];
                snprintf(m, sizeof m, "Invalid Request: message of %zu bytes exceeds the limit of %zu bytes", discarded,
                         max);
                th_mcp_session_reject(s, TH_RPC_INVALID_REQUEST, m);
                discarded = 0;
            } else {
                if (line_len > 0 && buf[end - 1] == '\r')
                    line_len--;
                if (line_len > max) {
                    char m[160];
                    snprintf(m, sizeof m, "Invalid Request: message of %zu bytes exceeds the limit of %zu bytes",
                             line_len, max);
                    th_mcp_session_reject(s, TH_RPC_INVALID_REQUEST, m);
                } else if (!blank(buf + start, line_len)) {
                    th_mcp_session_handle(s, buf + start, line_len);
                }
            }
            start = end + 1;
            scan = start;
        }
        th_mcp_batch_end(mcp);
        /* Keep the unfinished tail; drop it if it is already over the limit. */
        if (start > 0) {
            memmove(buf, buf + start, len - start);
            len -= start;
        }
        if (len > max) {
            discarding = true;
            discarded += len;
            len = 0;
        }
        if (cap > 4 * READ_CHUNK && len < READ_CHUNK) {
            char *nb = realloc(buf, READ_CHUNK * 2);
            if (nb) {
                buf = nb;
                cap = READ_CHUNK * 2;
            }
        }
    }

    shutdown_session(s, opts->grace_ms);
    th_mcp_session_free(s); /* no send starts after this */
    writer_finish(&w);      /* and the last flush has ended */
    free(buf);
    return status;
}
