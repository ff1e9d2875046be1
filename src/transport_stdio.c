/*
** transport_stdio.c: newline-delimited JSON-RPC over file descriptors. The
** reader splits lines in place (no copy for a message that arrives whole);
** the writer sends each message and its newline in one writev so concurrent
** replies never interleave.
*/
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "jsonrpc.h"
#include "log.h"
#include "transport_stdio.h"
#include "util.h"

#define READ_CHUNK 65536

typedef struct writer {
    int fd;
    bool broken; /* the peer is gone; drop further output */
} writer;

/* Called by the session with its send lock held: one writer at a time. */
static void write_msg(void *ctx, json_object *msg)
{
    writer *w = ctx;
    size_t len;
    const char *text = th_rpc_serialize(msg, &len);
    struct iovec iov[2] = {{(void *)text, len}, {(void *)"\n", 1}};
    int idx = 0;
    while (!w->broken && idx < 2) {
        ssize_t n = writev(w->fd, iov + idx, 2 - idx);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN) {
                struct pollfd p = {.fd = w->fd, .events = POLLOUT};
                poll(&p, 1, -1);
                continue;
            }
            th_log(TH_LOG_ERROR, "stdout: %s; no further messages will be sent", strerror(errno));
            w->broken = true;
            break;
        }
        while (idx < 2 && (size_t)n >= iov[idx].iov_len) {
            n -= (ssize_t)iov[idx].iov_len;
            idx++;
        }
        if (idx < 2) {
            iov[idx].iov_base = (char *)iov[idx].iov_base + n;
            iov[idx].iov_len -= (size_t)n;
        }
    }
    json_object_put(msg);
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
    writer w = {.fd = out_fd};
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
    th_mcp_session_free(s);
    free(buf);
    return status;
}
