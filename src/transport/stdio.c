/* SPDX-License-Identifier: MIT */
/*
** transport/stdio.c: newline-delimited JSON-RPC over file descriptors. The
** reader splits lines in place (no copy for a message that arrives whole),
** runs quick calls itself and hands the reading over to another thread when
** a message takes long; it stops reading while too much output waits, and
** otherwise waits in read() alone while a sentry thread watches for stop.
** Senders queue whole messages, written by whoever finds the output idle or
** by one writer thread, so replies never interleave, batch under load, and
** never block the reader.
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
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/compat.h"
#include "protocol/jsonrpc.h"
#include "base/log.h"
#include "transport/earlyflush.h"
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
/*
** The bound is checked before each message, not only before each read():
** one read of 35 KB brought 400 resource reads whose answers took 235 MB.
** Answers still being made are owed too, and may all land at once: the
** reader also waits while OWED_MAX responses are unwritten (as many as the
** default tool threads can be making), or OWED_BEHIND while the client
** lags by more than OUT_BEHIND_BYTES. The queue then stays within
** OUT_HIGH_BYTES plus that many answers.
*/
#define OUT_BEHIND_BYTES ((size_t)1 << 20)
#define OWED_BEHIND 16
#define OWED_MAX 64
/* Answers finishing wake the reader only through the writer, which may
 * have written them before they stopped counting as owed (or never woken
 * at all: a sender that finds the output idle writes itself); a reader
 * waiting for owed answers looks again this often. */
#define OWED_RECHECK_MS 10
/* Input read past lines held for answers owed, to find the client's own
 * answers among it (see take_answers); past it, reading waits too. */
#define HELD_INPUT_MAX ((size_t)1 << 20)
/* Bytes per write(), so the queue shrinks (and the reader resumes) while
 * a large backlog drains. */
#define WRITE_CHUNK ((size_t)1 << 20)

typedef struct writer {
    int fd;
    int wake[2];         /* the writer tells the reader: room again, or broken */
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t more; /* a write was asked for (want_write), or stopping */
    unsigned asks;       /* want_write's calls so far */
    pthread_cond_t idle; /* the writer thread ended */
    th_buf pending;      /* bytes to write */
    th_buf out;          /* what the writer is writing (owned by it until it ends) */
    th_buf line;         /* a message being written at once (write_msg) */
    size_t out_left;     /* bytes of OUT not yet written */
    bool reader_waiting; /* the reader paused for room */
    bool stopping;       /* write what is queued, then end */
    bool done;           /* the writer thread ended */
    int err;             /* errno of the write that failed: output is dropped */
    int pipe_size;       /* fd is a pipe of this capacity; 0: not a pipe */
    atomic_bool nowait;  /* pwritev2(RWF_NOWAIT) works on fd (see write_now) */
    bool regular;        /* fd is a file: a write never waits for a reader */
    bool sock;           /* fd is a socket: send(MSG_DONTWAIT) never waits */
    int quit[2];         /* writer_finish tells the writer: give up now */
    int notify_fd;       /* told when a write fails (the sentry's), or -1 */
    bool quitting;       /* ... and drop what is left */
    const void *corked_by; /* see cork() */
    /* The corking thread's alone (see early_flush): */
    unsigned corked_n;     /* messages corked since the last flush */
    size_t corked_bytes;   /* ... and their bytes */
    th_early early;        /* when corked answers leave early */
    bool probe;            /* probe this read's first early write */
} writer;

/* This thread, as writer.corked_by names it. */
static _Thread_local char self;

/* Under w->lock. */
static size_t queued(const writer *w)
{
    return w->pending.len + w->out_left;
}

/*
** Under w->lock: ask the writer thread to write what is pending, corked or
** not. Only an ask makes it take what a corking thread collects: once
** woken it used to write whatever had piled up each time it came back for
** more, so while it ran beside a corking reader the answers to one read
** left a message or two per write (200 answers in 126 writes, without
** RWF_NOWAIT; see cork).
*/
static void want_write(writer *w)
{
    w->asks++;
    pthread_cond_signal(&w->more);
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
** SIGPIPE. Writing stdout after the client closed it raises SIGPIPE, whose
** action in-process plugin code may have set to SIG_DFL (death) at any
** time, so no thread may write stdout with it unblocked. Blocking it around
** each write cost two rt_sigprocmask calls per message, measurable in the
** pipelined benchmark; so the threads of ours that write stdout keep it
** blocked for good, set once at thread start: the writer thread and the reader threads (a message they
** handle is answered by a write of their own, write_now). Pool threads
** inherit the mask of the reader that starts them, and write_now keeps it
** so. The SIGPIPE a failed write() raises is directed at the writing
** thread, so it stays pending there (consume_sigpipe takes it) and the
** write returns EPIPE. A thread of a plugin's that sends keeps its own
** mask: write_now blocks around its write.
**
** Readers and pool threads run plugin code (--isolation=none only: with
** process isolation, the default, handlers run in worker processes, which
** never get here). What that code sees differently:
**  - pthread_sigmask() reports SIGPIPE blocked;
**  - its own write to a pipe or socket whose reader is gone fails with
**    EPIPE, and the signal stays pending in that thread instead of running
**    its handler or ending the process (the host prefers that anyway: a
**    SIGPIPE that ends the process ends every session);
**  - a child it fork()s starts with SIGPIPE unblocked again (the atfork
**    handler below; not for a pool thread that has not written yet), but
**    one it starts with posix_spawn(), system() or popen() inherits the
**    blocked mask across exec, since glibc runs no atfork handler there:
**    such a program gets EPIPE instead of dying when its reader goes (most
**    report a write error and exit; one that ignores write errors loops).
**    A plugin that needs a definite mask for a child sets it with
**    posix_spawnattr_setsigmask, which it must do anyway: a thread's mask
**    is its caller's business (the host's other threads block nothing).
** In-process plugins share the host's process by choice; this is the
** price of two syscalls per message, and process isolation pays none of it.
*/
static _Thread_local bool pipe_blocked; /* this thread keeps SIGPIPE blocked */

static void sigpipe_set(int how)
{
    sigset_t pipe_only;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    pthread_sigmask(how, &pipe_only, NULL);
}

/* In a child a blocked thread fork()s: the mask it would have had. */
static void unblock_in_child(void)
{
    if (pipe_blocked) {
        sigpipe_set(SIG_UNBLOCK);
        pipe_blocked = false;
    }
}

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void atfork_register(void)
{
    pthread_atfork(NULL, NULL, unblock_in_child);
}

/* At the start of a thread of ours that writes stdout. */
static void block_sigpipe(void)
{
    pthread_once(&atfork_once, atfork_register);
    sigpipe_set(SIG_BLOCK);
    pipe_blocked = true;
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

/*
** Under w->lock or in the writer thread: bytes fd takes now without
** blocking. For a pipe, all of it
** when the client has read everything, else nothing: a pipe holds a fixed
** number of page-sized slots and a write does not fill the rest of a
** partly used one, so its free bytes (capacity minus unread) overstate
** what fits; 16 unread 3000-byte answers fill a 64 KiB pipe. Trusting them
** blocked the reader in write() while the client did not read, and end of
** input went unseen. Else PIPE_BUF when poll reports room. 0 when in
** doubt: the writer thread then takes the message.
*/
static size_t room(writer *w)
{
    struct pollfd pf = {.fd = w->fd, .events = POLLOUT};
    if (w->pipe_size > 0) {
        int unread;
        if (ioctl(w->fd, FIONREAD, &unread) == 0 && unread == 0)
            return (size_t)w->pipe_size;
        return 0;
    }
    if (poll(&pf, 1, 0) != 1 || pf.revents != POLLOUT)
        return 0; /* no room, or an error the writer thread will report */
    return PIPE_BUF;
}

/*
** The writer thread's write: up to WRITE_CHUNK bytes, never a write that
** can wait for the client. When nothing fits it waits in poll() for room
** or for writer_finish giving up (w->quit), so shutdown never has to
** cancel a thread blocked in write(). (It did: under AddressSanitizer the
** cancelled thread then failed at exit, as the forced unwind of
** cancellation leaves the unwound frames' stack redzones poisoned,
** google/sanitizers#1399.)
** What cannot wait: pwritev2(RWF_NOWAIT) on a pipe; a pipe the client
** has emptied takes its capacity (room); send(MSG_DONTWAIT) on a socket;
** after poll reported POLLOUT, any other descriptor takes PIPE_BUF bytes
** (a pipe has a free page then); a regular file never waits for a reader.
** What remains: a terminal that reports room but takes less than PIPE_BUF
** can still block it (see writer_finish). Returns the bytes written,
** -ECANCELED when told to quit, or -errno.
*/
static ssize_t write_some(writer *w, const char *p, size_t len)
{
    if (len > WRITE_CHUNK)
        len = WRITE_CHUNK;
    bool ready = false; /* poll just reported room */
    for (;;) {
        ssize_t n;
#if HAVE_DECL_RWF_NOWAIT
        if (atomic_load_explicit(&w->nowait, memory_order_relaxed)) {
            struct iovec part = {.iov_base = (void *)p, .iov_len = len};
            n = pwritev2(w->fd, &part, 1, -1, RWF_NOWAIT);
            if (n < 0 && errno == EOPNOTSUPP) {
                atomic_store_explicit(&w->nowait, false, memory_order_relaxed);
                continue;
            }
        } else
#endif
        if (w->regular) {
            n = write(w->fd, p, len);
#ifdef MSG_DONTWAIT
        } else if (w->sock) {
            n = send(w->fd, p, len, MSG_DONTWAIT | TH_MSG_NOSIGNAL);
#endif
        } else {
            size_t fit = w->pipe_size > 0 ? room(w) : 0;
            if (ready && fit < PIPE_BUF)
                fit = PIPE_BUF;
            if (fit > 0) {
                n = write(w->fd, p, len < fit ? len : fit);
            } else {
                n = -1;
                errno = EAGAIN; /* wait for room */
            }
        }
        int e = errno;
        ready = false;
        if (n >= 0)
            return n;
        if (e == EAGAIN || e == EWOULDBLOCK) {
            struct pollfd pf[2] = {{.fd = w->fd, .events = POLLOUT}, {.fd = w->quit[0], .events = POLLIN}};
            if (poll(pf, 2, -1) < 0 && errno != EINTR)
                return -errno;
            if (pf[1].revents)
                return -ECANCELED;
            ready = pf[0].revents != 0; /* room, or an error the write reports */
            continue;
        }
        if (e == EPIPE)
            consume_sigpipe();
        if (e != EINTR)
            return -e;
    }
}

static void *writer_main(void *p)
{
    writer *w = p;
    block_sigpipe();

    pthread_mutex_lock(&w->lock);
    unsigned served = w->asks;
    for (;;) {
        /* What a corked thread collects waits for its flush (see want_write). */
        while (!w->stopping && (w->pending.len == 0 || (w->corked_by && w->asks == served)))
            pthread_cond_wait(&w->more, &w->lock);
        if (w->pending.len == 0)
            break; /* stopping, and everything was written */
        served = w->asks;
        th_buf tmp = w->out;
        w->out = w->pending;
        w->pending = tmp;
        w->pending.len = 0;
        w->out_left = w->out.len;
        size_t off = 0;
        while (w->out_left > 0) {
            pthread_mutex_unlock(&w->lock);
            ssize_t n = write_some(w, w->out.data + off, w->out_left);
            pthread_mutex_lock(&w->lock);
            if (w->quitting)
                break; /* writer_finish reports what is dropped */
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
        if (w->quitting)
            break;
        if (w->err) {
            th_log(w->err == EPIPE ? TH_LOG_INFO : TH_LOG_ERROR, "stdout: %s; %zu bytes of output dropped",
                   strerror(w->err), w->out_left + w->pending.len);
            w->out_left = 0;
            w->pending.len = 0;
            wake_reader(w);
            if (w->notify_fd >= 0) {
                char b = 1;
                ssize_t r = write(w->notify_fd, &b, 1);
                (void)r;
            }
            break;
        }
    }
    w->done = true;
    pthread_cond_broadcast(&w->idle);
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

/*
** Under w->lock: at low load, write at once instead of waking the writer
** thread (a thread switch per message). Only when nothing is queued or
** being written (order) and the whole of PARTS fits in the room the
** descriptor has, so the blocking write cannot block. SIGPIPE is blocked
** in this thread already (see pipe_blocked) or around the write. Returns
** the bytes written (0 if it did not try), or -errno.
*/
static ssize_t write_now(writer *w, const struct iovec *parts, int nparts, bool queue_too)
{
    size_t len = 0;
    for (int i = 0; i < nparts; i++)
        len += parts[i].iov_len;
    bool nowait = atomic_load_explicit(&w->nowait, memory_order_relaxed);
    if ((!queue_too && w->pending.len) || w->out_left || (!nowait && !w->sock && len > room(w)))
        return 0;
    sigset_t pipe_only, old;
    bool restore = false;
    if (!pipe_blocked) {
        sigemptyset(&pipe_only);
        sigaddset(&pipe_only, SIGPIPE);
        pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
        /* Inherited blocked (a pool thread a reader started): keep it so. */
        restore = !sigismember(&old, SIGPIPE);
        pipe_blocked = !restore;
    }
    ssize_t n;
    do {
#ifdef MSG_DONTWAIT
        /* A socket (what Node's child_process makes of stdio) takes what
         * fits without waiting, and raises no SIGPIPE: one syscall. */
        if (w->sock) {
            struct msghdr m = {.msg_iov = (struct iovec *)parts, .msg_iovlen = (size_t)nparts};
            n = sendmsg(w->fd, &m, MSG_DONTWAIT | TH_MSG_NOSIGNAL);
        } else
#endif
#if HAVE_DECL_RWF_NOWAIT
        /* The kernel knows what fits: it writes what does and never waits
         * (a partial write queues the rest), so a busy client's pipe keeps
         * the fast path too. */
        if (nowait)
            n = pwritev2(w->fd, parts, nparts, -1, RWF_NOWAIT);
        else
#endif
            n = writev(w->fd, parts, nparts);
    } while (n < 0 && errno == EINTR);
    int e = errno;
    if (n < 0 && e == EOPNOTSUPP && nowait) {
        /* a kernel whose pipes refuse it: room() from now on */
        atomic_store_explicit(&w->nowait, false, memory_order_relaxed);
        if (restore)
            pthread_sigmask(SIG_SETMASK, &old, NULL);
        return 0;
    }
    if (n < 0 && e == EPIPE)
        consume_sigpipe();
    if (restore)
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (n < 0)
        return e == EAGAIN || e == EWOULDBLOCK ? 0 : -e;
    return n;
}

/* Under w->lock: write what is pending now if it fits, else wake the
 * writer thread for it. */
static void flush_pending(writer *w)
{
    if (!w->pending.len || w->err || w->done)
        return;
    struct iovec part = {.iov_base = w->pending.data, .iov_len = w->pending.len};
    ssize_t n = w->out_left ? 0 : write_now(w, &part, 1, true);
    size_t done = n > 0 ? (size_t)n : 0;
    memmove(w->pending.data, w->pending.data + done, w->pending.len - done);
    w->pending.len -= done;
    if (w->pending.len) /* on an error too: the writer thread fails the same way and reports it */
        want_write(w);
}

/* Under w->lock: queue the bytes of PARTS after the first SKIP, whole or
 * not at all. */
static bool queue_parts(writer *w, const struct iovec *parts, int nparts, size_t skip)
{
    size_t old = w->pending.len;
    for (int i = 0; i < nparts; i++) {
        size_t len = parts[i].iov_len;
        if (skip >= len) {
            skip -= len;
            continue;
        }
        if (!th_buf_append(&w->pending, (const char *)parts[i].iov_base + skip, len - skip)) {
            w->pending.len = old; /* a partial message must never reach the wire */
            th_log(TH_LOG_ERROR, "out of memory queueing a message; it was not sent");
            return false;
        }
        skip = 0;
    }
    return true;
}

/* One message to W: MSG's text (MSG not NULL), or TEXT's LEN bytes. */
static void write_out(writer *w, json_object *msg, const char *text, size_t len)
{
    pthread_mutex_lock(&w->lock);
    /* Once stdout is gone the session is shutting down: nobody to send to. */
    if (!w->err && !w->done) {
        /* The text goes straight into the queue when it must wait there
         * (corked, or behind what waits: order), else into the line buffer
         * for write_now; serialising under the lock costs less than a
         * buffer per message and a copy. */
        bool corked = w->corked_by == &self, queue = corked || w->pending.len || w->out_left;
        th_buf *b = queue ? &w->pending : &w->line;
        size_t old = queue ? b->len : 0;
        b->len = old;
        if (!(msg ? th_rpc_write(msg, b) : th_buf_append(b, text, len)) || !th_buf_append(b, "\n", 1)) {
            b->len = old; /* a partial message must never reach the wire */
            th_log(TH_LOG_ERROR, "out of memory serialising a message; it was not sent");
        } else if (!queue) {
            struct iovec part = {.iov_base = w->line.data, .iov_len = w->line.len};
            ssize_t n = write_now(w, &part, 1, false);
            size_t done = n > 0 ? (size_t)n : 0;
            /* On an error the rest is queued: the writer thread fails the
             * same way and reports it. */
            if (done < part.iov_len && queue_parts(w, &part, 1, done))
                want_write(w);
        } else if (!corked) {
            want_write(w);
        } else {
            w->corked_n++;
            w->corked_bytes += b->len - old;
        }
        if (w->line.cap > WRITE_CHUNK) { /* one huge message: not kept for ever */
            free(w->line.data);
            w->line = (th_buf){0};
        }
    }
    pthread_mutex_unlock(&w->lock);
}

static void write_msg(void *ctx, json_object *msg)
{
    write_out(ctx, msg, NULL, 0);
    json_object_put(msg);
}

/* A message made as text (a tool call's response): no object to write. */
static void write_text(void *ctx, const char *text, size_t len)
{
    write_out(ctx, NULL, text, len);
}

/*
** Collect this thread's messages to W, queued without a write or a
** wake-up, until uncork writes them: one write per read of input, not one
** per response. Only one thread corks at a time (the reader); a hand-off
** uncorks it from outside, so the rest of a slow call's output flows.
*/
static void cork(writer *w)
{
    pthread_mutex_lock(&w->lock);
    if (w->corked_by != &self) { /* else the last read kept it: see take_lines */
        w->corked_by = &self;
        w->corked_n = 0;
        w->corked_bytes = 0;
    }
    w->probe = th_early_probe_due(&w->early);
    pthread_mutex_unlock(&w->lock);
}

/* At the end of a read's lines: write what is corked, unless KEEP (it
 * leaves with the next read's early write: see take_lines). */
static void uncork(writer *w, bool keep)
{
    pthread_mutex_lock(&w->lock);
    if (!keep) {
        w->corked_by = NULL;
        flush_pending(w);
    }
    th_early_read_done(&w->early);
    pthread_mutex_unlock(&w->lock);
}

/* Before the reader waits for anything but input it knows is there: write
 * what a read kept corked. */
static void flush_kept(writer *w)
{
    pthread_mutex_lock(&w->lock);
    if (w->corked_by == &self) {
        w->corked_by = NULL;
        flush_pending(w);
    }
    pthread_mutex_unlock(&w->lock);
}

/*
** Early writes (the policy's numbers: transport/earlyflush.c). Writing a
** read's answers only at its end made a pipelined client and the host take
** turns: with 64 calls in flight the client waited while we handled 64,
** then we waited (or spun) while it read 64 answers and sent 64 requests;
** the host used 55-83% of its CPU, and throughput swung between runs
** (bench/run.sh). So the answers corked so far also leave once the reader is
** past the middle of what its read brought (take_lines): the client, on
** another CPU, turns them into requests while we handle the second half,
** and those are there when our next read comes, two halves in flight the
** way double buffering works. A write costs a syscall and, to a client
** asleep in poll, a wake-up (about 3 us on the benchmark VM: an IPI), so
** no early write carries fewer than TH_EARLY_MIN_MSGS answers; a long read
** writes every TH_EARLY_MAX_MSGS answers or TH_EARLY_MAX_BYTES. Measured
** at W=32, 64 and 128 against a fixed count per write: 16 was best at W=32
** and worst at 128, 32 the reverse (no early write at W=32 at all); half a
** read was within noise of the best at each.
**
** A client on our own CPU cannot work while we do: the wake-up preempts
** us, and each early write costs two context switches for nothing (W=64
** with both ends on one CPU lost 20%). That shows in the first early write
** of a read: the client had read all of it when our write returned, and we
** were preempted meanwhile (our involuntary context switches; an empty
** pipe alone could be a fast client elsewhere). Then early writes stay off
** for TH_EARLY_BACKOFF_MIN reads, twice as many each time the next probe
** finds the same, up to TH_EARLY_BACKOFF_MAX; a probe that finds the
** client elsewhere resets it. The probe costs two syscalls, so while the
** client is found elsewhere only every TH_EARLY_PROBE_EVERY-th read is
** probed. Only pipes and sockets, whose unread bytes ioctl reports, are
** written early; a file or a terminal never is.
*/
/* Bytes written to W's descriptor that the client has not read, or -1. */
static int unread_output(writer *w)
{
    int unread = -1;
    if (w->pipe_size > 0) {
        if (ioctl(w->fd, FIONREAD, &unread) != 0)
            return -1;
#ifdef TIOCOUTQ
    } else if (w->sock) {
        if (ioctl(w->fd, TIOCOUTQ, &unread) != 0) /* a socket's: unread by the peer */
            return -1;
#endif
    }
    return unread;
}

/* This thread's involuntary context switches so far, or -1. Without
 * RUSAGE_THREAD the process's: another thread's count too, so now and then
 * a pause for nothing. */
static long involuntary_switches(void)
{
    struct rusage ru;
#if HAVE_DECL_RUSAGE_THREAD
    if (getrusage(RUSAGE_THREAD, &ru) == 0)
#else
    if (getrusage(RUSAGE_SELF, &ru) == 0)
#endif
        return ru.ru_nivcsw;
    return -1;
}

/*
** The corking thread, after each message it handled; HALF: it is past the
** middle of its read. Writes what it corked when that is due (see above).
** Returns whether it wrote. corked_n and corked_bytes change only in this
** thread, so they are read without the lock.
*/
static bool early_flush(writer *w, bool half)
{
    if (!th_early_due(&w->early, w->corked_n, w->corked_bytes, half))
        return false;
    pthread_mutex_lock(&w->lock);
    bool mine = w->corked_by == &self; /* else a hand-off has flushed it already */
    if (mine) {
        long before = w->probe ? involuntary_switches() : -1;
        flush_pending(w);
        if (w->probe && !w->pending.len && !w->out_left) {
            int unread = unread_output(w);
            th_early_probed(&w->early, unread, unread == 0 && before >= 0 && involuntary_switches() > before);
        }
        w->probe = false;
    }
    w->corked_n = 0;
    w->corked_bytes = 0;
    pthread_mutex_unlock(&w->lock);
    return mine;
}

/* NOTIFY_FD: written when a write fails, or -1. */
static bool writer_start(writer *w, int fd, int notify_fd)
{
    memset(w, 0, sizeof *w);
    w->fd = fd;
    w->notify_fd = notify_fd;
    atomic_init(&w->nowait, false);
    struct stat st;
    bool known = fstat(fd, &st) == 0;
    if (known && S_ISFIFO(st.st_mode)) {
        int size = fcntl(fd, F_GETPIPE_SZ);
        w->pipe_size = size > 0 ? size : 0;
#if HAVE_DECL_RWF_NOWAIT
        atomic_store(&w->nowait, true);
#endif
    }
    w->regular = known && (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode));
#ifdef MSG_DONTWAIT
    w->sock = known && S_ISSOCK(st.st_mode);
#endif
    th_early_init(&w->early, w->pipe_size > 0 || w->sock);
    if (th_pipe_cloexec(w->wake, true) != 0)
        return false;
    if (th_pipe_cloexec(w->quit, true) != 0) {
        close(w->wake[0]);
        close(w->wake[1]);
        return false;
    }
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->more, NULL);
    pthread_cond_init(&w->idle, NULL);
    int rc = pthread_create(&w->thread, NULL, writer_main, w);
    if (rc != 0) {
        close(w->wake[0]);
        close(w->wake[1]);
        close(w->quit[0]);
        close(w->quit[1]);
        pthread_mutex_destroy(&w->lock);
        pthread_cond_destroy(&w->more);
        pthread_cond_destroy(&w->idle);
        errno = rc;
        return false;
    }
    return true;
}

/* How long a writer told to quit may take to notice: it waits in poll(),
 * so at once, unless a write judged safe blocks (see write_some). */
#define QUIT_WAIT_MS 1000

/*
** Let the writer write what is queued until DEADLINE_MS; output the client
** has not taken by then is dropped: the writer is told to quit (w->quit)
** and ends. Returns false if it did not end (stuck in a write that blocks
** after all): then it is left running, detached, and W must stay
** allocated for it until the process exits.
*/
static bool writer_finish(writer *w, long long deadline_ms)
{
    pthread_mutex_lock(&w->lock);
    w->stopping = true;
    want_write(w);
    while (!w->done && th_cond_wait_until(&w->idle, &w->lock, deadline_ms)) {
    }
    if (!w->done) {
        th_log(TH_LOG_WARNING, "shutting down: the client did not read stdout; %zu bytes of output dropped",
               queued(w));
        w->quitting = true;
        char b = 1;
        ssize_t r = write(w->quit[1], &b, 1);
        (void)r;
        long long until = th_now_ms() + QUIT_WAIT_MS;
        while (!w->done && th_cond_wait_until(&w->idle, &w->lock, until)) {
        }
    }
    if (!w->done) {
        th_log(TH_LOG_ERROR, "shutting down: the stdout writer is stuck in write(); leaving it");
        pthread_mutex_unlock(&w->lock);
        pthread_detach(w->thread);
        return false;
    }
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    free(w->pending.data);
    free(w->out.data);
    free(w->line.data);
    close(w->wake[0]);
    close(w->wake[1]);
    close(w->quit[0]);
    close(w->quit[1]);
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->more);
    pthread_cond_destroy(&w->idle);
    return true;
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

/* At end of input the last request often still runs for a moment (a
 * client that pipes its requests in and closes stdin): that is the normal
 * end, so it is waited for quietly this long before the log says why the
 * host has not exited yet. */
#define QUIET_DRAIN_MS 1000

static void shutdown_session(th_mcp_session *s, long long grace_ms)
{
    long long deadline = th_now_ms() + grace_ms;
    long long quiet = grace_ms < QUIET_DRAIN_MS ? deadline : th_now_ms() + QUIET_DRAIN_MS;
    if (th_mcp_session_drain(s, quiet))
        return;
    size_t n = th_mcp_session_inflight(s);
    if (n && deadline > th_now_ms())
        th_log(TH_LOG_INFO,
               "shutting down: waiting up to %lld ms more (--shutdown-grace-ms) for %zu tool call%s still "
               "running, then cancelling %s",
               deadline - th_now_ms(), n, n == 1 ? "" : "s", n == 1 ? "it" : "them");
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

/*
** Who reads. The thread holding the reading role handles each message
** itself, tool calls included, so a quick call costs no thread switch. A
** watchdog (the thread that called th_stdio_serve) hands the role to
** another thread when one message takes longer than HANDOFF_NS, the way
** Go's scheduler hands a P over when its thread blocks in a system call:
** a slow call holds up the messages behind it by about that long, never
** for its whole run. The thread that ran it parks as a spare (or ends)
** when the call returns.
*/
#define HANDOFF_NS 1000000LL

/* The input buffer; the role holder's alone (or the watchdog's while it
 * takes the role away under srv.lock). */
typedef struct input {
    char *buf;
    size_t cap, len;
    size_t start;     /* bytes before it are handled */
    size_t scan;      /* no newline in [start, scan) */
    bool discarding;  /* inside a line already refused as too long */
    size_t discarded;
    bool hung_up;     /* the client closed its end: read what is left */
    bool held;        /* complete lines wait for room in the output */
    size_t checked;   /* held: bytes after start known to hold no answer */
    bool spin;        /* busy-poll before the next read (see busy_poll) */
} input;

/* srv.state: the holder's message count and two flags. */
#define ST_BUSY 1UL   /* a message is being handled */
#define ST_STOLEN 2UL /* ... and the watchdog took the role away meanwhile */

typedef struct srv {
    atomic_int refs;        /* th_stdio_serve's and each reader thread's */
    th_mcp *mcp;
    th_mcp_session *s;
    writer w;
    int in_fd, stop_fd;
    bool stopped;        /* a stop signal, not end of input, ended reading */
    size_t max;
    long long busy_ns;   /* th_stdio_opts.busy_poll_us */
    input in;

    atomic_ulong state;     /* (messages << 2) | ST_* */
    atomic_llong since_ns;  /* when the current message began */
    atomic_bool wd_asleep;  /* the watchdog waits for a signal, not a tick */

    pthread_mutex_t lock;   /* what follows */
    pthread_cond_t wd;      /* for the watchdog: busy again, or over */
    pthread_cond_t spare;   /* for parked readers: the role is free, or over */
    bool role_free;         /* handed off: a spare should take it */
    bool over;              /* reading ended */
    bool closed;            /* the session and the writer are gone */
    bool end_req;           /* reading is to end: status and stopped are set */
    bool in_read;           /* the holder waits in read() (see read_input) */
    bool abandoned;         /* ... and was left there when reading ended */
    int status;
    size_t nparked, nalive; /* spare reader threads, all of them */

    int sentry[2];          /* wakes the sentry: stdout failed, or quit */
    bool sentry_quit;
    pthread_t sentry_thread;
} srv;

static void srv_unref(srv *v)
{
    if (atomic_fetch_sub(&v->refs, 1) != 1)
        return;
    free(v->in.buf);
    pthread_mutex_destroy(&v->lock);
    pthread_cond_destroy(&v->wd);
    pthread_cond_destroy(&v->spare);
    free(v);
}

static void reject_too_long(srv *v, size_t bytes)
{
    char m[160];
    snprintf(m, sizeof m, "Invalid Request: message of %zu bytes exceeds the limit of %zu bytes", bytes, v->max);
    th_mcp_session_reject(v->s, TH_RPC_INVALID_REQUEST, m);
}

/*
** The holder runs a tool call itself (th_mcp_session_run_inline): from
** call_begin to call_end the watchdog may take the reading role away.
** Only then: the parse and other methods are quick or bounded, and a
** thread that lost its role while parsing would still be reading its
** buffer.
*/
static _Thread_local bool lost;           /* call_end found the role taken away */
static _Thread_local unsigned long marked; /* the state call_begin stored */

static void call_begin(void *ctx)
{
    srv *v = ctx;
    unsigned long busy = ((atomic_load_explicit(&v->state, memory_order_relaxed) >> 2) + 1) << 2 | ST_BUSY;
    atomic_store(&v->since_ns, th_now_ns());
    atomic_store(&v->state, busy);
    marked = busy;
    if (atomic_load(&v->wd_asleep)) {
        pthread_mutex_lock(&v->lock);
        pthread_cond_signal(&v->wd);
        pthread_mutex_unlock(&v->lock);
    }
}

static void call_end(void *ctx)
{
    srv *v = ctx;
    /* From what call_begin stored: once stolen, the state may already be
     * the next holder's. */
    unsigned long busy = marked;
    if (!atomic_compare_exchange_strong(&v->state, &busy, marked & ~ST_BUSY))
        lost = true;
}

/*
** Handle one message as the role holder. Returns false when the role was
** taken away during a call it ran: the caller then touches nothing of the
** input (another thread reads now) and stops reading. MINE is the buffer
** TEXT is in, freed here in that case (the watchdog copied what was left).
*/
static bool handle(srv *v, const char *text, size_t len, char *mine)
{
    th_mcp_session_handle(v->s, text, len);
    if (!lost)
        return true;
    lost = false;
    pthread_mutex_lock(&v->lock); /* the watchdog has finished the hand-off */
    if (mine != v->in.buf)
        free(mine);
    pthread_mutex_unlock(&v->lock);
    return false;
}

/*
** Whether the output is too far behind to handle another message: 0 if
** not, else how long to wait before looking again (-1: until the writer
** makes room). Sets the writer's reader_waiting to match, under its lock,
** so a writer that makes room after this wakes the reader.
*/
static int backlog_full(srv *v)
{
    size_t owed = th_mcp_session_open(v->s);
    writer *w = &v->w;
    pthread_mutex_lock(&w->lock);
    size_t q = queued(w);
    bool bytes = q > OUT_HIGH_BYTES || (q > OUT_BEHIND_BYTES && owed >= OWED_BEHIND);
    bool full = bytes || owed >= OWED_MAX;
    w->reader_waiting = full;
    pthread_mutex_unlock(&w->lock);
    return !full ? 0 : bytes ? -1 : OWED_RECHECK_MS;
}

/*
** Held for answers owed, the reader still takes the client's answers to
** the server's own requests, wherever they are among the held lines: the
** calls those answers release are among the answers owed, and would
** otherwise wait for them until their deadline. An answer adds nothing to
** the output, so taking it out of turn keeps every bound. False when the
** role was lost on the way.
*/
static bool take_answers(srv *v)
{
    input *in = &v->in;
    for (;;) {
        size_t at = in->start + in->checked;
        char *nl = memchr(in->buf + at, '\n', in->len - at);
        if (!nl)
            return true;
        size_t line = (size_t)(nl - in->buf) - at;
        th_rpc_msg m;
        th_rpc_parse(in->buf + at, line, &m);
        bool answer = m.kind == TH_RPC_RESPONSE;
        th_rpc_msg_clear(&m);
        if (!answer) {
            in->checked += line + 1;
            continue;
        }
        if (!handle(v, in->buf + at, line, in->buf))
            return false;
        memmove(in->buf + at, nl + 1, in->len - (at + line + 1));
        in->len -= line + 1;
    }
}

/*
** Held for answers owed, read what input is already there (never waiting
** for it): it may hold answers that take_answers takes. At end of input,
** the end is left for the main path to see once the held lines are gone.
*/
static void read_held(srv *v)
{
    input *in = &v->in;
    struct pollfd pfd = {.fd = v->in_fd, .events = POLLIN};
    if (in->hung_up || in->len - in->start >= HELD_INPUT_MAX || poll(&pfd, 1, 0) != 1 || !(pfd.revents & POLLIN))
        return;
    if (in->cap - in->len < READ_CHUNK) {
        char *nb = realloc(in->buf, in->cap * 2);
        if (!nb)
            return; /* the main path reports it */
        in->buf = nb;
        in->cap *= 2;
    }
    ssize_t n = read(v->in_fd, in->buf + in->len, in->cap - in->len);
    if (n > 0)
        in->len += (size_t)n;
    else if (n == 0)
        in->hung_up = true;
}

/*
** Handle the complete lines in the input. False when the role was lost
** on the way. Output is collected and written once at the end, and tool
** calls queued are woken together.
*/
static bool take_lines(srv *v)
{
    input *in = &v->in;
    bool kept = true;
    th_mcp_batch_begin(v->mcp);
    cork(&v->w);
    /* Past it, what is corked leaves early (see early_flush); once. */
    size_t half = in->start + (in->len - in->start) / 2;
    bool early = false;
    while (kept) {
        char *nl = memchr(in->buf + in->scan, '\n', in->len - in->scan);
        if (!nl)
            break;
        int full = backlog_full(v);
        if (full) {
            in->held = true;
            if (full > 0 && !take_answers(v)) /* not when the client does not read */
                kept = false;
            break;
        }
        size_t end = (size_t)(nl - in->buf), start = in->start, line_len = end - start;
        in->start = in->scan = end + 1; /* consumed before it is handled: see hand_off */
        in->checked = in->checked > line_len + 1 ? in->checked - (line_len + 1) : 0;
        if (in->discarding) {
            in->discarding = false;
            in->discarded += line_len;
            reject_too_long(v, in->discarded);
            in->discarded = 0;
            continue;
        }
        if (line_len > 0 && in->buf[end - 1] == '\r')
            line_len--;
        if (line_len > v->max)
            reject_too_long(v, line_len);
        else if (!blank(in->buf + start, line_len)) {
            /* A pipelining client's calls need not wait for one another. */
            th_mcp_session_more(v->s, memchr(in->buf + in->scan, '\n', in->len - in->scan) != NULL);
            kept = handle(v, in->buf + start, line_len, in->buf);
        }
        if (kept && early_flush(&v->w, in->start >= half)) {
            half = SIZE_MAX;
            early = true;
        }
    }
    if (kept) {
        in->scan = in->held ? in->start : in->len;
        /* A read that wrote early came from a pipelining client. When its
         * next requests are already here (they answer our early write),
         * the rest of this read's answers leave with the next read's
         * early write: one write, and one wake-up of the client, per read
         * instead of two (a wake-up costs the writer about 3 us on the
         * benchmark VM). The next read() cannot wait: only we read IN_FD. */
        int waiting = 0;
        uncork(&v->w, early && ioctl(v->in_fd, FIONREAD, &waiting) == 0 && waiting > 0);
        th_mcp_batch_end(v->mcp);
        return true;
    }
    /* The writer and the pool may be gone once the session is closed;
     * hand_off uncorked this thread. */
    pthread_mutex_lock(&v->lock);
    if (!v->closed)
        th_mcp_batch_end(v->mcp);
    pthread_mutex_unlock(&v->lock);
    return false;
}

/*
** Before the reader blocks in read(): poll the input for up to busy_ns
** first. A client that sends its next request as soon as it has the
** answer (an agent calling tool after tool) is then served without a
** wake-up: on another CPU a sleeping reader costs a cross-CPU wake-up per
** message, the better part of a W=1 round trip (p50 47 us against 17 us
** busy-polling, on the benchmark machine), the reason Linux has busy_poll
** for sockets. A client on the same CPU is not kept waiting: our answer
** woke it, and a woken task preempts the poller. The spin does not yield:
** on a loaded machine a yield hands the CPU to whatever else runs for a
** whole time slice (milliseconds), while a sleeper is woken at once. It
** adapts: after a spin in which nothing came, the reader sleeps at once
** until a message comes within the window again (read_loop measures its
** sleep), so a quiet session costs one spin per pause, not one per
** message. A stop request waits for the spin's end.
*/
static void busy_poll(srv *v)
{
    input *in = &v->in;
    if (v->busy_ns <= 0 || !in->spin)
        return;
    struct pollfd pfd = {.fd = v->in_fd, .events = POLLIN};
    long long until = th_now_ns() + v->busy_ns;
    while (poll(&pfd, 1, 0) == 0)
        if (th_now_ns() >= until) {
            in->spin = false;
            return;
        }
}

enum { READ_ENDED, READ_LOST, READ_ABANDONED };

/* Reading ends for the holder's own reason (end of input, an error) with
 * STATUS, unless the sentry asked first. */
static void end_reading(srv *v, int status)
{
    pthread_mutex_lock(&v->lock);
    if (!v->end_req) {
        v->end_req = true;
        v->status = status;
    }
    pthread_mutex_unlock(&v->lock);
}

/*
** Wait in poll() for input (PAUSED: only for a hang-up; POLLHUP is always
** reported) or the writer's wake-up (room again, stdout failed, or the
** sentry's end request), at most TIMEOUT_MS (-1: no limit). False when
** reading is to end.
*/
static bool wait_input(srv *v, bool paused, int timeout_ms)
{
    pthread_mutex_lock(&v->lock);
    bool end = v->end_req; /* a request after this writes the wake-up pipe */
    pthread_mutex_unlock(&v->lock);
    if (end)
        return false;
    /* A hung-up input would report so at once, for ever: once known, only
     * the writer's wake-up is waited for. */
    struct pollfd pfd[2] = {{.fd = paused && v->in.hung_up ? -1 : v->in_fd, .events = paused ? TH_POLLRDHUP : POLLIN},
                            {.fd = v->w.wake[0], .events = POLLIN}};
    if (poll(pfd, 2, timeout_ms) < 0) {
        if (errno == EINTR)
            return true;
        th_log(TH_LOG_ERROR, "poll: %s", strerror(errno));
        end_reading(v, 1);
        return false;
    }
    if (pfd[1].revents & POLLNVAL) {
        th_log(TH_LOG_ERROR, "the writer's wake-up descriptor was closed under the host; shutting down");
        end_reading(v, 1);
        return false;
    }
    if (pfd[1].revents & POLLIN)
        drain(v->w.wake[0]);
    if (pfd[0].revents & POLLNVAL) {
        /* Someone closed the descriptor (plugin code): poll would report
         * this for ever, so it is the end of input. */
        th_log(TH_LOG_ERROR, "stdin: the descriptor was closed under the host; shutting down");
        end_reading(v, 1);
        return false;
    }
    if (paused && (pfd[0].revents & (POLLHUP | POLLERR | TH_POLLRDHUP)))
        v->in.hung_up = true;
    return true;
}

/* Read and handle input as the role holder until it ends (status in
 * v->status), the role is lost, or the sentry ended reading while this
 * thread waited in read(). */
static int read_loop(srv *v)
{
    input *in = &v->in;
    writer *w = &v->w;
    for (;;) {
        if (!take_lines(v))
            return READ_LOST;
        /* Keep the unfinished tail; drop it if it is already over the limit. */
        if (in->start > 0) {
            memmove(in->buf, in->buf + in->start, in->len - in->start);
            in->len -= in->start;
            in->start = 0;
            in->scan = in->held ? 0 : in->len;
        }
        if (in->held) {
            /* Lines are waiting: no read() until they are handled. */
            in->held = false;
            flush_kept(w);
            int wait_ms = backlog_full(v);
            if (wait_ms && !wait_input(v, true, wait_ms))
                return READ_ENDED;
            if (wait_ms > 0)
                read_held(v);
            continue;
        }
        if (in->len > v->max) {
            in->discarding = true;
            in->discarded += in->len;
            in->len = in->scan = 0;
        }
        if (in->cap > 4 * READ_CHUNK && in->len < READ_CHUNK) {
            char *nb = realloc(in->buf, READ_CHUNK * 2);
            if (nb) {
                in->buf = nb;
                in->cap = READ_CHUNK * 2;
            }
        }

        pthread_mutex_lock(&w->lock);
        /* A client that hung up can send no more than what is already in
         * the pipe: reading it is bounded, and it lets end of input be seen
         * while the client is not reading stdout. */
        bool paused = !in->hung_up && queued(w) > OUT_HIGH_BYTES;
        w->reader_waiting = paused;
        pthread_mutex_unlock(&w->lock);
        if (paused) {
            flush_kept(w);
            if (!wait_input(v, true, -1))
                return READ_ENDED;
            continue;
        }

        if (in->cap - in->len < READ_CHUNK) {
            size_t ncap = in->cap * 2;
            char *nb = realloc(in->buf, ncap);
            if (!nb) {
                th_log(TH_LOG_CRITICAL, "out of memory reading input");
                flush_kept(w);
                end_reading(v, 1);
                return READ_ENDED;
            }
            in->buf = nb;
            in->cap = ncap;
        }
        /*
        ** Not paused: wait in read() alone, one syscall per message where a
        ** poll() first made two. What the poll also watched is
        ** the sentry's now: a stop request or a failed stdout while we wait
        ** here leaves this thread in read() (abandoned) and ends reading
        ** without it. Checked under v->lock with in_read set, so either we
        ** see the request before reading or the sentry sees us reading.
        */
        busy_poll(v); /* before in_read: a spinning reader is not abandoned */
        pthread_mutex_lock(&v->lock);
        if (v->end_req) {
            pthread_mutex_unlock(&v->lock);
            flush_kept(w);
            return READ_ENDED;
        }
        v->in_read = true;
        pthread_mutex_unlock(&v->lock);
        long long asleep = v->busy_ns > 0 ? th_now_ns() : 0;
        ssize_t n = read(v->in_fd, in->buf + in->len, in->cap - in->len);
        int e = errno;
        pthread_mutex_lock(&v->lock);
        v->in_read = false;
        bool left = v->abandoned;
        pthread_mutex_unlock(&v->lock);
        if (left)
            return READ_ABANDONED; /* the session may be gone: touch nothing */
        if (n <= 0)
            flush_kept(w); /* the input it expected is not there after all */
        if (n > 0 && asleep)
            in->spin = th_now_ns() - asleep <= v->busy_ns;
        if (n < 0) {
            if (e == EINTR)
                continue;
            if (e == EAGAIN || e == EWOULDBLOCK) {
                /* The caller gave us a non-blocking descriptor. */
                if (!wait_input(v, false, -1))
                    return READ_ENDED;
                continue;
            }
            if (e == EBADF) /* plugin code closed it */
                th_log(TH_LOG_ERROR, "stdin: the descriptor was closed under the host; shutting down");
            else
                th_log(TH_LOG_ERROR, "stdin: %s", strerror(e));
            end_reading(v, 1);
            return READ_ENDED;
        }
        if (n == 0) {
            /* A last line without a newline is still a message. */
            size_t len = in->len;
            in->start = in->scan = in->len;
            if (in->discarding || len > v->max)
                reject_too_long(v, in->discarded + len);
            else if (!blank(in->buf, len) && (th_mcp_session_more(v->s, false), !handle(v, in->buf, len, in->buf)))
                return READ_LOST;
            end_reading(v, 0);
            return READ_ENDED;
        }
        in->len += (size_t)n;
    }
}

/*
** A reader thread: takes the role when it is free, parks as a spare when it
** lost it during a call, and ends once the session is closed. Calls run on
** it in both isolation modes: a worker process a call starts is started by
** the spawner thread (worker/spawn.c), not by the reader, so it does not
** die with a reader that ends (PR_SET_PDEATHSIG being per thread).
*/
static void *reader_main(void *p)
{
    srv *v = p;
    /* Threads it starts (the pool's, say) name themselves. */
    th_thread_name("th-read");
    block_sigpipe(); /* it writes stdout: see pipe_blocked */
    pthread_mutex_lock(&v->lock);
    for (;;) {
        while ((!v->role_free || v->over) && !v->closed) {
            v->nparked++;
            pthread_cond_wait(&v->spare, &v->lock);
            v->nparked--;
        }
        if (v->closed)
            break;
        v->role_free = false;
        pthread_mutex_unlock(&v->lock);
        int r = read_loop(v);
        pthread_mutex_lock(&v->lock);
        /* READ_ABANDONED: the sentry ended reading (over) meanwhile. */
        if (r == READ_ENDED) {
            v->over = true;
            pthread_cond_signal(&v->wd);
        }
    }
    v->nalive--;
    pthread_cond_signal(&v->wd);
    pthread_mutex_unlock(&v->lock);
    srv_unref(v);
    return NULL;
}

/* Start a reader thread; it waits for the role. Under v->lock. */
static bool reader_start(srv *v)
{
    pthread_attr_t attr;
    pthread_t t;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    atomic_fetch_add(&v->refs, 1);
    int rc = pthread_create(&t, &attr, reader_main, v);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        atomic_fetch_sub(&v->refs, 1);
        th_log(TH_LOG_WARNING, "cannot start a reader thread: %s", strerror(rc));
        return false;
    }
    v->nalive++;
    return true;
}

/*
** The holder's message outlasted its budget and STATE was marked stolen:
** give the rest of the input to a spare reader. The holder may still be
** reading its buffer (a long parse), so the tail is copied, not moved.
** Under v->lock.
*/
static void hand_off(srv *v)
{
    input *in = &v->in;
    size_t left = in->len - in->start, cap = READ_CHUNK * 2;
    while (cap < left + READ_CHUNK)
        cap *= 2;
    char *nb = malloc(cap);
    if (!nb) {
        /* The holder keeps its buffer (handle frees only one it lost) and
         * takes the role back when its message is done. */
        th_log(TH_LOG_ERROR, "out of memory handing reading over; it waits for the slow message");
        v->role_free = true;
        return;
    }
    memcpy(nb, in->buf + in->start, left);
    in->scan -= in->start;
    in->buf = nb;
    in->cap = cap;
    in->len = left;
    in->start = 0;
    /* What the holder collected so far, and what its call sends from now
     * on, must not wait for the call to end. */
    pthread_mutex_lock(&v->w.lock);
    v->w.corked_by = NULL;
    if (v->w.pending.len)
        want_write(&v->w);
    pthread_mutex_unlock(&v->w.lock);
    v->role_free = true;
    if (v->nparked > 0)
        pthread_cond_signal(&v->spare);
    else
        reader_start(v);
}

/*
** Under v->lock: the sentry ends reading with STATUS. A holder waiting in
** read() is left there (nothing short of input wakes it) and reading ends
** without it; a holder waiting in poll() is woken; one handling messages
** sees the request before it reads again.
*/
static void request_end(srv *v, int status, bool stopped)
{
    if (v->end_req)
        return;
    v->end_req = true;
    v->status = status;
    v->stopped = stopped;
    if (v->in_read) {
        v->abandoned = true;
        v->over = true;
        pthread_cond_signal(&v->wd);
    }
    char b = 1;
    ssize_t r = write(v->w.wake[1], &b, 1); /* full: a wake-up is pending anyway */
    (void)r;
}

/*
** The sentry: a thread that waits in poll() for what must end reading
** while the holder waits in read(): a stop request (stop_fd) and a failed
** stdout (the writer writes v->sentry). It ends after the first, or when
** th_stdio_serve tells it to quit.
*/
static void *sentry_main(void *p)
{
    srv *v = p;
    th_thread_name("th-sentry");
    for (;;) {
        struct pollfd pfd[2] = {{.fd = v->sentry[0], .events = POLLIN}, {.fd = v->stop_fd, .events = POLLIN}};
        if (poll(pfd, v->stop_fd >= 0 ? 2 : 1, -1) < 0) {
            if (errno == EINTR)
                continue;
            th_log(TH_LOG_ERROR, "poll: %s", strerror(errno));
            pthread_mutex_lock(&v->lock);
            request_end(v, 1, false);
            pthread_mutex_unlock(&v->lock);
            return NULL;
        }
        if (pfd[0].revents & POLLIN)
            drain(v->sentry[0]);
        pthread_mutex_lock(&v->w.lock);
        int werr = v->w.err;
        pthread_mutex_unlock(&v->w.lock);
        pthread_mutex_lock(&v->lock);
        if (v->sentry_quit) {
            pthread_mutex_unlock(&v->lock);
            return NULL;
        }
        bool first = !v->end_req, stopped = false;
        int status = 1, level = TH_LOG_ERROR;
        char why[160];
        if (pfd[0].revents & (POLLNVAL | POLLHUP | POLLERR)) {
            snprintf(why, sizeof why, "the stdio transport's wake-up pipe was closed under the host; shutting down");
        } else if (v->stop_fd >= 0 && (pfd[1].revents & POLLNVAL)) {
            snprintf(why, sizeof why, "the stop descriptor was closed under the host; shutting down");
        } else if (v->stop_fd >= 0 && (pfd[1].revents & (POLLIN | POLLERR | POLLHUP))) {
            snprintf(why, sizeof why, "stop requested");
            level = TH_LOG_INFO;
            status = 0;
            stopped = true;
        } else if (werr) {
            /* stdout is gone: no answer can reach the client any more. */
            if (werr == EPIPE) {
                snprintf(why, sizeof why, "stdout closed; shutting down");
                level = TH_LOG_INFO;
                status = 0;
            } else if (werr == EBADF) { /* plugin code closed it */
                snprintf(why, sizeof why, "stdout: the descriptor was closed under the host; shutting down");
            } else {
                snprintf(why, sizeof why, "stdout failed (%s); shutting down", strerror(werr));
            }
        } else {
            pthread_mutex_unlock(&v->lock);
            continue; /* a wake-up with nothing to do */
        }
        request_end(v, status, stopped);
        pthread_mutex_unlock(&v->lock);
        if (first)
            th_log(level, "%s", why);
        return NULL;
    }
}

/* Tell the sentry to quit (if it has not ended already) and join it. */
static void sentry_stop(srv *v)
{
    pthread_mutex_lock(&v->lock);
    v->sentry_quit = true;
    char b = 1;
    ssize_t r = write(v->sentry[1], &b, 1);
    (void)r;
    pthread_mutex_unlock(&v->lock);
    pthread_join(v->sentry_thread, NULL);
}

/*
** The watchdog, until reading ends: it ticks every HANDOFF_NS while
** messages arrive and sleeps for a signal when input is idle, so a busy
** session costs it about a thousand wake-ups a second, not one per
** message. Under v->lock.
*/
static void watch(srv *v)
{
    unsigned long seen = ~0UL;
    while (!v->over) {
        unsigned long st = atomic_load(&v->state);
        long long now = th_now_ns(), wake;
        if ((st & ST_BUSY) && !(st & ST_STOLEN)) {
            /* The holder stores since_ns before state: it is this
             * message's start or a later one's, never an earlier one's. */
            long long due = atomic_load(&v->since_ns) + HANDOFF_NS;
            if (now >= due) {
                if (atomic_compare_exchange_strong(&v->state, &st, st | ST_STOLEN))
                    hand_off(v);
                continue;
            }
            seen = st;
            wake = due;
        } else if (st != seen) {
            seen = st; /* messages arrive: keep ticking */
            wake = now + HANDOFF_NS;
        } else {
            atomic_store(&v->wd_asleep, true);
            if (atomic_load(&v->state) == st && !v->over)
                pthread_cond_wait(&v->wd, &v->lock);
            atomic_store(&v->wd_asleep, false);
            continue;
        }
        struct timespec ts = {.tv_sec = wake / 1000000000LL, .tv_nsec = wake % 1000000000LL};
        pthread_cond_timedwait(&v->wd, &v->lock, &ts);
    }
}

int th_stdio_serve(th_mcp *mcp, int in_fd, int out_fd, int stop_fd, const th_stdio_opts *opts)
{
    srv *v = calloc(1, sizeof *v);
    if (!v) {
        th_log(TH_LOG_CRITICAL, "out of memory starting the stdio transport");
        return 1;
    }
    if (th_pipe_cloexec(v->sentry, true) != 0) {
        th_log(TH_LOG_CRITICAL, "cannot start the stdio transport: pipe: %s", strerror(errno));
        free(v);
        return 1;
    }
    if (!writer_start(&v->w, out_fd, v->sentry[1])) {
        th_log(TH_LOG_CRITICAL, "cannot start the stdout writer: %s", strerror(errno));
        close(v->sentry[0]);
        close(v->sentry[1]);
        free(v);
        return 1;
    }
    atomic_init(&v->refs, 1);
    v->mcp = mcp;
    v->in_fd = in_fd;
    v->stop_fd = stop_fd;
    v->max = opts->max_message_bytes;
    v->busy_ns = opts->busy_poll_us * 1000;
    v->in.cap = READ_CHUNK * 2;
    v->in.buf = malloc(v->in.cap);
    v->s = th_mcp_session_new(mcp, write_msg, &v->w);
    if (v->s)
        th_mcp_session_set_who(v->s, "stdio"); /* the process that started us, whoever it runs as */
    pthread_mutex_init(&v->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* the watchdog's ticks */
    pthread_cond_init(&v->wd, &ca);
    pthread_condattr_destroy(&ca);
    pthread_cond_init(&v->spare, NULL);

    if (v->s) {
        th_mcp_session_run_inline(v->s, call_begin, call_end, v);
        th_mcp_session_send_text(v->s, write_text);
    }
    pthread_mutex_lock(&v->lock);
    v->role_free = true;
    bool sentry = v->s && v->in.buf && pthread_create(&v->sentry_thread, NULL, sentry_main, v) == 0;
    if (!sentry || !reader_start(v)) {
        pthread_mutex_unlock(&v->lock);
        th_log(TH_LOG_CRITICAL, "out of memory starting the stdio transport");
        if (sentry)
            sentry_stop(v);
        th_mcp_session_free(v->s);
        if (writer_finish(&v->w, th_now_ms())) { /* nothing queued: it ends */
            close(v->sentry[0]);
            close(v->sentry[1]);
            srv_unref(v);
        }
        return 1;
    }
    watch(v);
    int status = v->status;
    bool stopped = v->stopped;
    pthread_mutex_unlock(&v->lock);

    long long deadline = th_now_ms() + opts->grace_ms;
    /* The client is still there when the server stops: tell it. */
    if (stopped)
        th_mcp_session_end_subscriptions(v->s);
    shutdown_session(v->s, opts->grace_ms);
    th_mcp_session_free(v->s); /* no send starts after this */
    /* A reader still in a call it ran touches the writer no more. */
    /* Output gets what is left of the grace period, and at least a moment
     * for the responses of calls that finished at its very end. */
    if (deadline < th_now_ms() + 250)
        deadline = th_now_ms() + 250;
    pthread_mutex_lock(&v->lock);
    v->closed = true;
    pthread_cond_broadcast(&v->spare);
    /* Spare readers end now; one still in a call it ran (a handler that
     * never returns) is not waited for past the deadline, and keeps v. One
     * left in read() (abandoned) is not waited for at all. */
    long long until = th_now_ns() + (deadline - th_now_ms()) * 1000000LL;
    while (v->nalive > (v->in_read ? 1u : 0u) && th_now_ns() < until) {
        struct timespec ts = {.tv_sec = until / 1000000000LL, .tv_nsec = until % 1000000000LL};
        pthread_cond_timedwait(&v->wd, &v->lock, &ts);
    }
    pthread_mutex_unlock(&v->lock);
    sentry_stop(v);
    /* A writer stuck in write() still uses v->w: v then stays, unfreed. */
    if (writer_finish(&v->w, deadline)) {
        close(v->sentry[0]); /* the writer's notify_fd */
        close(v->sentry[1]);
        srv_unref(v); /* readers stuck in a call or in read() keep it until they return */
    }
    return status;
}
