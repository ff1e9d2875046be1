/*
** transport/stdio.c: newline-delimited JSON-RPC over file descriptors. The
** reader splits lines in place (no copy for a message that arrives whole)
** and stops reading while too much output waits; senders queue whole
** messages and one writer thread writes them, so concurrent replies never
** interleave, batch under load, and never block the reader.
*/
/* pipe2, POLLRDHUP */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "protocol/jsonrpc.h"
#include "base/log.h"
#include "transport/stdio.h"
#include "base/util.h"

#define READ_CHUNK 65536

/*
** The output side: senders append whole messages to PENDING and return at
** once; one writer thread writes the queue with blocking writes (the
** descriptor's flags are the caller's, never changed). Under load many
** responses leave in one write(); alone, a small message is written by its
** sender at once (write_now), without a thread switch.
**
** Backpressure: while more than OUT_HIGH_BYTES wait to be written, the
** reader stops reading input (calls already running still finish and
** queue), and the writer wakes it once the queue is below the bound again.
*/
#define OUT_HIGH_BYTES ((size_t)8 << 20)
/* Bytes per write(), so the queue shrinks (and the reader resumes) while
 * a large backlog drains. */
#define WRITE_CHUNK ((size_t)1 << 20)

typedef struct writer {
    int fd;
    int wake[2];         /* the writer tells the reader: room again, or broken */
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t more; /* pending grew, or stopping */
    pthread_cond_t idle; /* the writer thread ended */
    th_buf pending;      /* bytes to write */
    th_buf out;          /* what the writer is writing (owned by it until it ends) */
    size_t out_left;     /* bytes of OUT not yet written */
    bool reader_waiting; /* the reader paused for room */
    bool stopping;       /* write what is queued, then end */
    bool done;           /* the writer thread ended */
    int err;             /* errno of the write that failed: output is dropped */
} writer;

/* Under w->lock. */
static size_t queued(const writer *w)
{
    return w->pending.len + w->out_left;
}

/* Under w->lock. */
static void wake_reader(writer *w)
{
    w->reader_waiting = false;
    char b = 1;
    ssize_t r = write(w->wake[1], &b, 1); /* full: a wake-up is pending anyway */
    (void)r;
}

/*
** A SIGPIPE the failed write raised is directed at this thread, where it
** is blocked: take it, so no handler a plugin installed (or SIG_DFL) ever
** sees it.
*/
static void consume_sigpipe(void)
{
    sigset_t pipe_only;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    struct timespec zero = {0, 0};
    while (sigtimedwait(&pipe_only, NULL, &zero) == SIGPIPE) {
    }
}

/* One write of up to WRITE_CHUNK bytes; the only place the thread can be
 * cancelled (at shutdown, when the client stopped reading). Returns the
 * bytes written or -errno. */
static ssize_t write_some(int fd, const char *p, size_t len)
{
    if (len > WRITE_CHUNK)
        len = WRITE_CHUNK;
    for (;;) {
        pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
        ssize_t n = write(fd, p, len);
        int e = errno;
        if (n < 0 && (e == EAGAIN || e == EWOULDBLOCK)) {
            /* The caller gave us a non-blocking descriptor: wait for room. */
            struct pollfd pf = {.fd = fd, .events = POLLOUT};
            poll(&pf, 1, -1);
        }
        pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
        if (n >= 0)
            return n;
        if (e == EPIPE)
            consume_sigpipe();
        if (e != EINTR && e != EAGAIN && e != EWOULDBLOCK)
            return -e;
    }
}

static void *writer_main(void *p)
{
    writer *w = p;
    sigset_t pipe_only;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_only, NULL);
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);

    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (w->pending.len == 0 && !w->stopping)
            pthread_cond_wait(&w->more, &w->lock);
        if (w->pending.len == 0)
            break; /* stopping, and everything was written */
        th_buf tmp = w->out;
        w->out = w->pending;
        w->pending = tmp;
        w->pending.len = 0;
        w->out_left = w->out.len;
        size_t off = 0;
        while (w->out_left > 0) {
            pthread_mutex_unlock(&w->lock);
            ssize_t n = write_some(w->fd, w->out.data + off, w->out_left);
            pthread_mutex_lock(&w->lock);
            if (n < 0) {
                w->err = (int)-n;
                break;
            }
            off += (size_t)n;
            w->out_left -= (size_t)n;
            if (w->reader_waiting && queued(w) <= OUT_HIGH_BYTES)
                wake_reader(w);
        }
        w->out.len = 0;
        if (w->err) {
            th_log(w->err == EPIPE ? TH_LOG_INFO : TH_LOG_ERROR, "stdout: %s; %zu bytes of output dropped",
                   strerror(w->err), w->out_left + w->pending.len);
            w->out_left = 0;
            w->pending.len = 0;
            wake_reader(w);
            break;
        }
    }
    w->done = true;
    pthread_cond_broadcast(&w->idle);
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

/*
** Under w->lock: at low load, write a small message at once instead of
** waking the writer thread (a thread switch per message). Only when nothing
** is queued or being written (order), the message fits in PIPE_BUF, and
** poll reports room: a pipe then takes it without blocking. SIGPIPE is
** blocked around the write, as in the writer thread. Returns the bytes
** written (0 if it did not try), or -errno.
*/
static ssize_t write_now(writer *w, const char *text, size_t len)
{
    char line[PIPE_BUF];
    if (len + 1 > sizeof line || w->pending.len || w->out_left)
        return 0;
    struct pollfd pf = {.fd = w->fd, .events = POLLOUT};
    if (poll(&pf, 1, 0) != 1 || pf.revents != POLLOUT)
        return 0; /* no room, or an error the writer thread will report */
    memcpy(line, text, len);
    line[len] = '\n';
    sigset_t pipe_only, old;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
    ssize_t n;
    do
        n = write(w->fd, line, len + 1);
    while (n < 0 && errno == EINTR);
    int e = errno;
    if (n < 0 && e == EPIPE)
        consume_sigpipe();
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (n < 0)
        return e == EAGAIN || e == EWOULDBLOCK ? 0 : -e;
    return n;
}

static void write_msg(void *ctx, json_object *msg)
{
    writer *w = ctx;
    size_t len;
    const char *text = th_rpc_serialize(msg, &len); /* msg's own buffer: no lock needed */

    pthread_mutex_lock(&w->lock);
    /* Once stdout is gone the session is shutting down: nobody to send to. */
    if (!w->err && !w->done) {
        /* On an error the rest is queued: the writer thread fails the
         * same way and reports it. */
        ssize_t n = write_now(w, text, len);
        size_t done = n > 0 ? (size_t)n : 0, old = w->pending.len;
        if (done < len + 1) {
            if ((done == len || th_buf_append(&w->pending, text + done, len - done)) &&
                th_buf_append(&w->pending, "\n", 1)) {
                pthread_cond_signal(&w->more);
            } else {
                w->pending.len = old; /* a partial message must never reach the wire */
                th_log(TH_LOG_ERROR, "out of memory queueing a message; it was not sent");
            }
        }
    }
    pthread_mutex_unlock(&w->lock);
    json_object_put(msg);
}

static bool writer_start(writer *w, int fd)
{
    memset(w, 0, sizeof *w);
    w->fd = fd;
    if (pipe2(w->wake, O_CLOEXEC | O_NONBLOCK) != 0)
        return false;
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->more, NULL);
    pthread_cond_init(&w->idle, NULL);
    int rc = pthread_create(&w->thread, NULL, writer_main, w);
    if (rc != 0) {
        close(w->wake[0]);
        close(w->wake[1]);
        pthread_mutex_destroy(&w->lock);
        pthread_cond_destroy(&w->more);
        pthread_cond_destroy(&w->idle);
        errno = rc;
        return false;
    }
    return true;
}

/*
** Let the writer write what is queued until DEADLINE_MS; output the client
** has not taken by then is dropped (the writer is cancelled in write()).
** Returns false if output was dropped that way.
*/
static bool writer_finish(writer *w, long long deadline_ms)
{
    bool whole = true;
    pthread_mutex_lock(&w->lock);
    w->stopping = true;
    pthread_cond_signal(&w->more);
    while (!w->done && th_cond_wait_until(&w->idle, &w->lock, deadline_ms)) {
    }
    if (!w->done) {
        th_log(TH_LOG_WARNING, "shutting down: the client did not read stdout; %zu bytes of output dropped",
               queued(w));
        whole = false;
        pthread_cancel(w->thread);
    }
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    free(w->pending.data);
    free(w->out.data);
    close(w->wake[0]);
    close(w->wake[1]);
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->more);
    pthread_cond_destroy(&w->idle);
    return whole;
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

/* Drain a non-blocking wake-up pipe. */
static void drain(int fd)
{
    char sink[64];
    while (read(fd, sink, sizeof sink) > 0) {
    }
}

int th_stdio_serve(th_mcp *mcp, int in_fd, int out_fd, int stop_fd, const th_stdio_opts *opts)
{
    writer w;
    if (!writer_start(&w, out_fd)) {
        th_log(TH_LOG_CRITICAL, "cannot start the stdout writer: %s", strerror(errno));
        return 1;
    }
    th_mcp_session *s = th_mcp_session_new(mcp, write_msg, &w);
    size_t max = opts->max_message_bytes;
    size_t cap = READ_CHUNK * 2, len = 0;
    char *buf = malloc(cap);
    bool discarding = false; /* inside a line already refused as too long */
    size_t discarded = 0;
    bool hung_up = false;    /* the client closed its end: read what is left */
    int status = 0;

    if (!s || !buf) {
        th_log(TH_LOG_CRITICAL, "out of memory starting the stdio transport");
        free(buf);
        th_mcp_session_free(s);
        writer_finish(&w, th_now_ms());
        return 1;
    }

    for (;;) {
        pthread_mutex_lock(&w.lock);
        int werr = w.err;
        /* A client that hung up can send no more than what is already in
         * the pipe: reading it is bounded, and it lets end of input be seen
         * while the client is not reading stdout. */
        bool paused = !hung_up && queued(&w) > OUT_HIGH_BYTES;
        w.reader_waiting = paused;
        pthread_mutex_unlock(&w.lock);
        if (werr) {
            /* stdout is gone: no answer can reach the client any more. */
            if (werr == EPIPE)
                th_log(TH_LOG_INFO, "stdout closed; shutting down");
            else
                th_log(TH_LOG_ERROR, "stdout failed (%s); shutting down", strerror(werr));
            status = werr == EPIPE ? 0 : 1;
            break;
        }
        /* Paused, only a hang-up is watched for (POLLHUP is always reported). */
        struct pollfd pfd[3] = {{.fd = in_fd, .events = paused ? POLLRDHUP : POLLIN},
                                {.fd = w.wake[0], .events = POLLIN},
                                {.fd = stop_fd, .events = POLLIN}};
        int np = poll(pfd, stop_fd >= 0 ? 3 : 2, -1);
        if (np < 0) {
            if (errno == EINTR)
                continue;
            th_log(TH_LOG_ERROR, "poll: %s", strerror(errno));
            status = 1;
            break;
        }
        if (stop_fd >= 0 && (pfd[2].revents & (POLLIN | POLLERR | POLLHUP | POLLNVAL))) {
            if (pfd[2].revents & POLLNVAL) {
                th_log(TH_LOG_ERROR, "the stop descriptor was closed under the host; shutting down");
                status = 1;
            } else {
                th_log(TH_LOG_INFO, "stop requested");
            }
            break;
        }
        if (pfd[1].revents & POLLNVAL) {
            th_log(TH_LOG_ERROR, "the writer's wake-up descriptor was closed under the host; shutting down");
            status = 1;
            break;
        }
        if (pfd[1].revents & POLLIN)
            drain(w.wake[0]);
        if (pfd[0].revents & POLLNVAL) {
            /* Someone closed the descriptor (plugin code): poll would report
             * this for ever, so it is the end of input. */
            th_log(TH_LOG_ERROR, "stdin: the descriptor was closed under the host; shutting down");
            status = 1;
            break;
        }
        if (paused && (pfd[0].revents & (POLLHUP | POLLERR | POLLRDHUP)))
            hung_up = true;
        if (paused || !(pfd[0].revents & (POLLIN | POLLHUP | POLLERR)))
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

    long long deadline = th_now_ms() + opts->grace_ms;
    shutdown_session(s, opts->grace_ms);
    th_mcp_session_free(s); /* no send starts after this */
    /* Output gets what is left of the grace period, and at least a moment
     * for the responses of calls that finished at its very end. */
    if (deadline < th_now_ms() + 250)
        deadline = th_now_ms() + 250;
    writer_finish(&w, deadline);
    free(buf);
    return status;
}
