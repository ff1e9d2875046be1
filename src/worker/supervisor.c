/* SPDX-License-Identifier: MIT */
/*
** worker/supervisor.c: process isolation, host side. Owns one slot per plugin
** file (its worker, restart backoff and circuit breaker), the proxy handler
** registered for every tool, which reads the worker's pipe itself while it
** waits (leader/follower: no reader thread between the result and the call),
** and per worker a monitor thread logging its output and reaping it.
*/
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/compat.h"
#include "base/jsontree.h"
#include "base/log.h"
#include "base/metrics.h"
#include "call/callctx.h"
#include "plugin/cache.h"
#include "plugin/settings.h"
#include "worker/frames.h"
#include "worker/ipc.h"
#include "worker/isolate.h"
#include "worker/resproxy.h"
#include "worker/promptproxy.h"
#include "worker/route.h"
#include "worker/spawn.h"
#include "worker/supervisor.h"

/* Restart backoff and circuit breaker. */
#define BACKOFF_FIRST_MS 100
#define BACKOFF_MAX_MS 30000
#define HEALTHY_MS 60000       /* a worker up this long resets the backoff */
#define BREAKER_CRASHES 5      /* this many crashes ... */
#define BREAKER_WINDOW_MS 60000 /* ... within this window ... */
#define QUARANTINE_MS 60000    /* ... quarantine the plugin this long */
#define POLL_MS 25             /* a waiting proxy checks for cancellation */
#define LOST_PIPE_GRACE_MS 2000 /* its pipe ended, process alive: then killed */
#define LOG_TAIL_MS 100        /* output still read once the worker is dead (a
                                * grandchild may hold the pipe open for ever) */

typedef struct slot slot;

/* What a proxied exchange does with the final RESULT frame. */
typedef void (*result_fn)(th_call *call, const char *name, const th_qframe *q, void *ctx);

/*
** One proxied call waiting for its frames. A waiting proxy's lives on its
** stack (HOST NULL). A deferred one's (a pipelining client's call, see
** proxy_handler) is allocated: its proxy returned at once, and whichever
** thread reads the worker's frames for it runs them (run_ready) and
** finishes the call through th_call_resume.
*/
typedef struct pending {
    th_route_call rc;    /* first: its id and frames (worker/route.h) */
    pthread_cond_t cond; /* a waiting proxy's */
    /* A deferred call's: */
    th_call *host;       /* the host's call (th_call_defer), resumed at the end */
    slot *slot;
    const char *name;
    th_ipc_type type;
    result_fn on_result;
    void *ctx;
    bool cancel_sent;
    long long kill_at;
} pending;

/* The pending call whose rc C is. */
static pending *pending_of(th_route_call *c)
{
    return (pending *)c;
}

typedef struct worker {
    slot *slot;     /* under lock: moves to a reload's slot (adopt_worker) until exited */
    char *tag;      /* its plugin's base name, for its output's log lines (owned:
                     * it may outlive the supervisor that started it) */
    json_object *served; /* the tool names its READY frame listed */
    th_child ch;
    pthread_mutex_t lock; /* rt, leading, eof, exited, dead, cause, refs, strays */
    pthread_mutex_t send_lock;
    th_route rt;     /* its calls in flight (pending), deferred ones to run */
    unsigned strays; /* frames it sent for no call of its own (logged) */
    long long deferring_since_ns; /* when NDEFERRED last left 0 */
    int wakefd;      /* an eventfd: the monitor reads the pipe again */
    bool watching;   /* the monitor's poll includes the frame pipe */
    bool asleep_long; /* the monitor's poll is not bounded by POLL_MS */
    th_ipc_reader r; /* the frames from it: only the leader touches it */
    bool leading;    /* a thread (a waiting proxy) is reading its pipe */
    bool eof;        /* its pipe ended or broke: nobody reads it again */
    bool exited;     /* the process ended: the monitor drains its pipe */
    bool torn;       /* the stream ended inside a frame */
    bool dead;       /* reaped, cause set: waiting calls fail */
    bool spin;       /* the leader busy-polls before it sleeps (read_pipe) */
    long long busy_ns; /* --busy-poll, fixed at its start */
    char cause[256];
    char kill_reason[256]; /* set before the host kills it on purpose */
    int refs;
    long long started_ms;
} worker;

struct slot {
    th_supervisor *sup;
    size_t index;
    const char *path;
    const char *tag; /* base name, for the output's log lines */
    json_object *tools; /* the names the scan reported */
    json_object *needs; /* and the needs its plugin declared (plugin/needs.h) */
    pthread_mutex_t lock;
    worker *w; /* the running worker (a reference), or NULL */
    long long crash_at[BREAKER_CRASHES];
    size_t crashes;
    long long backoff_ms, next_start_ms, quarantined_until_ms;
    th_cache_key key; /* the file whose tools were registered (hot reload) */
    char digest[TH_SHA256_DIGEST_LEN + 1]; /* of the bytes they were scanned
                       * from: its worker loads only those ("": unknown) */
    bool registered;  /* its tools or resources are in the registry */
};

/* A registered tool's user_data. */
typedef struct proxy_tool {
    slot *slot;
    char *name;
    char *call_head; /* a CALL payload's name and NUL (see TH_IPC_CALL) */
    size_t call_head_len;
    bool parse_result; /* it has an outputSchema: the host parses its results */
} proxy_tool;

/* A registered resource's or template's user_data. */
typedef struct proxy_res {
    slot *slot;
    char *key;      /* the URI, or the template's text */
    bool template_;
    struct proxy_res *next;
} proxy_res;

struct th_supervisor {
    th_supervisor_opts opts;
    proxy_res *resources;
    char **paths;
    size_t n;
    slot *slots;
    proxy_tool **tools;
    size_t ntools, captools;
    pthread_mutex_t lock; /* threads, stopping */
    pthread_cond_t cond;
    int threads;
    bool stopping;
    bool orphaned; /* th_supervisor_free could not wait: the last thread frees it */
};

/* The worker whose monitor runs on this thread (see th_supervisor_free). */
static _Thread_local worker *monitored;

static void destroy(th_supervisor *sup);

/* ---- workers --------------------------------------------------------------- */

static void worker_unref(worker *w)
{
    pthread_mutex_lock(&w->lock);
    bool last = --w->refs == 0;
    pthread_mutex_unlock(&w->lock);
    if (!last)
        return;
    pthread_mutex_destroy(&w->lock);
    pthread_mutex_destroy(&w->send_lock);
    th_ipc_reader_free(&w->r);
    json_object_put(w->served);
    free(w->tag);
    close(w->ch.to);
    close(w->ch.from);
    close(w->ch.out);
    if (w->wakefd >= 0)
        close(w->wakefd);
    free(w);
}

/* After this the calling thread does not touch SUP again. */
static void thread_done(th_supervisor *sup)
{
    pthread_mutex_lock(&sup->lock);
    bool last = --sup->threads == 0 && sup->orphaned;
    pthread_cond_broadcast(&sup->cond);
    pthread_mutex_unlock(&sup->lock);
    if (last)
        destroy(sup);
}

/* Why the worker ended, for the calls it was running. */
static void describe_death(worker *w, int status)
{
    if (w->kill_reason[0]) {
        snprintf(w->cause, sizeof w->cause, "%s", w->kill_reason);
    } else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
        snprintf(w->cause, sizeof w->cause, "killed (SIGKILL; out of memory or --worker-memory-limit?)");
    } else if (th_child_lost_pipe(status)) {
        snprintf(w->cause, sizeof w->cause, "the plugin closed or replaced descriptor %d or %d (its worker's pipes)",
                 TH_WORKER_FD, TH_WORKER_OUT_FD);
    } else if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        const char *name = th_signal_name(sig);
        int len = snprintf(w->cause, sizeof w->cause, "signal %d (%s)", sig, name ? name : "unknown");
        /* Past RLIMIT_AS the kernel kills nothing: allocations fail, and
         * code that does not check then faults or aborts. Name the limit. */
        unsigned long long limit = w->slot->sup->opts.memory_limit;
        bool mib = limit % (1u << 20) == 0;
        if (limit && (sig == SIGSEGV || sig == SIGBUS || sig == SIGABRT) && len > 0 && (size_t)len < sizeof w->cause)
            snprintf(w->cause + len, sizeof w->cause - (size_t)len,
                     "; its memory is limited to %llu %s (--worker-memory-limit)", mib ? limit >> 20 : limit,
                     mib ? "MiB" : "bytes");
    } else if (WIFEXITED(status)) {
        snprintf(w->cause, sizeof w->cause, "the plugin called exit(%d)", WEXITSTATUS(status));
    } else {
        snprintf(w->cause, sizeof w->cause, "its worker ended");
    }
}

/* A crash of S's worker started at STARTED: back off, maybe quarantine.
 * Under S->lock. */
static void note_crash(slot *s, long long started)
{
    long long now = th_now_ms();
    if (th_metrics_enabled)
        th_metrics_worker(TH_METRICS_WORKER_CRASH);
    s->crash_at[s->crashes++ % BREAKER_CRASHES] = now;
    size_t recent = 0;
    for (size_t i = 0; i < BREAKER_CRASHES && i < s->crashes; i++)
        if (now - s->crash_at[i] <= BREAKER_WINDOW_MS)
            recent++;
    if (recent >= BREAKER_CRASHES) {
        s->quarantined_until_ms = now + QUARANTINE_MS;
        s->crashes = 0;
        if (th_metrics_enabled)
            th_metrics_worker(TH_METRICS_WORKER_QUARANTINE);
        th_log(TH_LOG_ERROR, "plugin %s crashed %d times in %d s; quarantined for %d s", s->path, BREAKER_CRASHES,
               BREAKER_WINDOW_MS / 1000, QUARANTINE_MS / 1000);
    }
    if (now - started >= HEALTHY_MS || s->backoff_ms == 0)
        s->backoff_ms = BACKOFF_FIRST_MS;
    else if ((s->backoff_ms *= 2) > BACKOFF_MAX_MS)
        s->backoff_ms = BACKOFF_MAX_MS;
    s->next_start_ms = now + s->backoff_ms;
}

#define STRAYS_LOGGED 8 /* a worker's stray frames logged, then one line more */

/* A frame of W's for no call of its own (worker/route.h): dropped, and
 * logged naming the plugin, since only plugin code writes one. Under
 * W->lock. */
static void log_stray(worker *w, const th_ipc_frame *f)
{
    if (w->strays > STRAYS_LOGGED)
        return;
    if (w->strays++ == STRAYS_LOGGED) {
        th_log(TH_LOG_WARNING, "plugin %s: worker %ld: further stray frames are dropped unlogged", w->slot->path,
               (long)w->ch.pid);
        return;
    }
    const char *name = th_route_type_name(f->type);
    char num[16];
    snprintf(num, sizeof num, "type %u", (unsigned)f->type);
    th_log(TH_LOG_WARNING,
           "plugin %s: worker %ld sent frame %s for call %lu, which is no call of its own: dropped "
           "(plugin code writing on its pipe?)",
           w->slot->path, (long)w->ch.pid, name ? name : num, (unsigned long)f->id);
}

/* Route every complete frame in W's reader to the call it belongs to;
 * frames for calls that ended are dropped. Under W->lock, by the leader. */
static void route_frames(worker *w)
{
    th_ipc_frame f;
    th_err err;
    int got;
    while ((got = th_ipc_next(&w->r, &f, &err)) == 1) {
        th_route_call *c;
        switch (th_route_frame(&w->rt, &f, &c)) {
        case TH_ROUTE_UPDATED: /* belongs to no call: fan it out */
            th_worker_apply_updated(f.payload, f.len);
            break;
        case TH_ROUTE_WAITER:
            pthread_cond_signal(&pending_of(c)->cond); /* no waiter (the leader's own): no syscall */
            break;
        case TH_ROUTE_STRAY:
            log_stray(w, &f);
            break;
        case TH_ROUTE_READY: /* on the ready list: run_ready runs it */
        case TH_ROUTE_LATE:  /* a call that gave up or was answered */
        case TH_ROUTE_NOMEM:
            break;
        }
    }
    if (got < 0 && !w->eof) {
        /* The child is not trusted: a broken frame ends it. */
        snprintf(w->kill_reason, sizeof w->kill_reason, "its worker broke the IPC protocol (%.160s)", err.msg);
        kill(w->ch.pid, SIGKILL);
        w->eof = true;
    }
}

/*
** One read of W's pipe by its leader (without W->lock), waiting up to
** WAIT_MS; >0 bytes read, 0 end of stream, -1 error, -2 nothing yet. The
** poll(2) bounds the wait, so that a cancelled call is seen. A quick
** answer is busy-polled for first (--busy-poll, as the stdio reader does
** for its input): the leader yields the CPU and reads again, so on one CPU
** the worker runs at once and the leader takes its answer without a sleep
** and a wake-up, and on two it saves the cross-CPU wake-up. The spin
** looks with read(2) itself, not poll(2) then read(2): an answer found
** costs one system call. It adapts as the reader does: after a spin that
** found nothing, the leader sleeps at once until an answer comes within
** the window again.
*/
static long read_pipe(worker *w, int wait_ms)
{
    /* The answer is usually there already: on one CPU the worker preempts
     * the leader as the CALL reaches it. The host's end of the pipe is
     * non-blocking (spawn_worker), so looking costs one read(2). */
    long n = th_ipc_fill(&w->r);
    if (n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
        return n;
    long long busy_ns = w->busy_ns;
    if (busy_ns > 0 && wait_ms > 0 && w->spin) {
        long long until = th_now_ns() + busy_ns;
        do {
            sched_yield();
            n = th_ipc_fill(&w->r);
            if (n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
                return n;
        } while (th_now_ns() < until);
        w->spin = false;
    }
    struct pollfd pfd = {.fd = w->ch.from, .events = POLLIN};
    long long asleep = th_now_ns();
    int k = poll(&pfd, 1, wait_ms);
    if (k > 0 && busy_ns > 0)
        w->spin = th_now_ns() - asleep <= busy_ns;
    if (k == 0 || (k < 0 && errno == EINTR))
        return -2;
    if (k < 0)
        return -1;
    n = th_ipc_fill(&w->r);
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) ? -2 : n;
}

/* What read_pipe returned, taken in under W->lock. */
static void absorb(worker *w, long n)
{
    if (n > 0) {
        route_frames(w);
    } else if (n == 0 || n == -1) {
        /* A worker that dies while writing ends its stream inside a frame:
         * its exit status says why, so only one that lives on is blamed. */
        if (n == 0 && w->r.len > 0 && !w->eof)
            w->torn = true;
        w->eof = true;
    }
}

/* After a reader stopped reading W's pipe with deferred calls still waiting
 * and no waiting proxy to take the reading over: the monitor polls the pipe
 * again. Under W->lock. */
static void wake_monitor(worker *w)
{
    if (w->rt.ndeferred == 0 || w->watching || w->leading || w->eof || w->exited)
        return;
    w->watching = true; /* once: the monitor sets it again as it polls */
    uint64_t one = 1;
    if (write(w->wakefd, &one, sizeof one) < 0) {
        /* full (it is woken already), or no eventfd: it looks every POLL_MS */
    }
}

static void run_ready(worker *w);
static void cancel_deferred(worker *w);

/* True once PID has ended (it stays a zombie for the reaper), or is no
 * child to wait for at all: a monitor must not wait for it for ever. */
static bool has_exited(pid_t pid)
{
    siginfo_t si = {0};
    int r = waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT);
    return r == 0 ? si.si_pid == pid : errno == ECHILD;
}

/*
** The worker's monitor: logs its stdout and stderr, tagged, and when the
** process ends (its pidfd becomes readable) routes what is left in the
** frame pipe, reaps it, fails the calls still waiting and tells the slot. It
** does not wait for either pipe's end of stream: a grandchild
** of the plugin may hold either open for ever.
*/
static void *monitor_main(void *p)
{
    worker *w = p;
    monitored = w;
    th_outbuf ob = {.len = 0};
    int pidfd = th_pidfd_open(w->ch.pid); /* -1: waitid() on a short poll */
    bool out_open = true;
    long long eof_at = 0;
    bool pipe_idle = true; /* no call is reading the frame pipe */
    for (;;) {
        /* The frame pipe too while no call reads it: a frame that belongs to no
         * call (TH_IPC_UPDATED from a plugin's own thread) is routed now,
         * not when the next call comes, and never fills the pipe up. */
        /* Deferred calls are checked for cancellation every POLL_MS, as a
         * waiting proxy checks its own. */
        pthread_mutex_lock(&w->lock);
        int wait_ms = w->rt.ndeferred ? POLL_MS : pidfd >= 0 ? 1000 : 100;
        w->asleep_long = w->rt.ndeferred == 0; /* the first deferred call wakes it */
        pthread_mutex_unlock(&w->lock);
        struct pollfd pfd[4] = {{.fd = out_open ? w->ch.out : -1, .events = POLLIN},
                                {.fd = pidfd, .events = POLLIN},
                                {.fd = pipe_idle ? w->ch.from : -1, .events = POLLIN},
                                {.fd = w->wakefd, .events = POLLIN}};
        int k = poll(pfd, 4, wait_ms);
        if (k > 0 && pfd[0].revents && th_outbuf_pump(&ob, w->ch.out, w->tag) <= 0)
            out_open = false;
        if (k > 0 && pfd[3].revents) {
            uint64_t n;
            if (read(w->wakefd, &n, sizeof n) < 0) {
                /* EAGAIN: another read took it */
            }
        }
        if (has_exited(w->ch.pid))
            break;
        pthread_mutex_lock(&w->lock);
        if ((pfd[2].fd < 0 || (k > 0 && pfd[2].revents)) && w->rt.ndeferred && !w->leading && !w->eof && !w->exited) {
            /* Deferred calls wait and nobody reads: look (one read(2)). */
            pfd[2].revents = POLLIN;
            k = k > 0 ? k : 1;
        }
        if (k > 0 && pfd[2].revents && !w->leading && !w->eof && !w->exited) {
            w->leading = true;
            pthread_mutex_unlock(&w->lock);
            long n = read_pipe(w, 0);
            pthread_mutex_lock(&w->lock);
            absorb(w, n);
            w->leading = false;
            for (th_route_call *o = w->rt.calls; o; o = o->next) /* a waiting call takes the reading over */
                if (!o->deferred && !o->head) {
                    pthread_cond_signal(&pending_of(o)->cond);
                    break;
                }
        }
        if (w->rt.ready) {
            pthread_mutex_unlock(&w->lock);
            run_ready(w);
            pthread_mutex_lock(&w->lock);
        }
        cancel_deferred(w);
        /* While a call reads, the pipe stays readable until it does:
         * leave it to that call rather than spin. */
        pipe_idle = !w->leading && !w->eof && !w->exited;
        w->watching = pipe_idle;
        bool eof = w->eof, torn = w->torn;
        pthread_mutex_unlock(&w->lock);
        if (eof && !eof_at) {
            eof_at = th_now_ms();
        } else if (eof && th_now_ms() - eof_at >= LOST_PIPE_GRACE_MS) {
            pthread_mutex_lock(&w->lock);
            if (torn && !w->kill_reason[0])
                snprintf(w->kill_reason, sizeof w->kill_reason,
                         "its worker broke the IPC protocol (end of stream inside a frame)");
            pthread_mutex_unlock(&w->lock);
            kill(w->ch.pid, SIGKILL); /* it lost its pipe but lives on */
            eof_at = th_now_ms();
        }
    }
    if (pidfd >= 0)
        close(pidfd);

    /* Take the reading over for good, once the current leader's poll ends,
     * and route what the worker wrote before it ended. */
    pthread_mutex_lock(&w->lock);
    w->exited = true;
    while (w->leading) {
        pthread_mutex_unlock(&w->lock);
        struct timespec ts = {0, 1000000L};
        nanosleep(&ts, NULL);
        pthread_mutex_lock(&w->lock);
    }
    w->leading = true;
    while (!w->eof) {
        pthread_mutex_unlock(&w->lock);
        long n = read_pipe(w, 0);
        pthread_mutex_lock(&w->lock);
        if (n == -2)
            break;
        absorb(w, n);
    }
    pthread_mutex_unlock(&w->lock);
    run_ready(w);

    int status = th_child_reap(w->ch.pid, 0);
    /* Exited: a reload no longer adopts it, so its slot (and the supervisor
     * counting this thread) stays the one read now. */
    pthread_mutex_lock(&w->lock);
    slot *s = w->slot;
    pthread_mutex_unlock(&w->lock);
    th_supervisor *sup = s->sup;
    pthread_mutex_lock(&sup->lock);
    bool stopping = sup->stopping;
    pthread_mutex_unlock(&sup->lock);

    pthread_mutex_lock(&w->lock); /* kill_reason is written under it */
    describe_death(w, status);
    pthread_mutex_unlock(&w->lock);
    if (!stopping)
        th_log(TH_LOG_ERROR, "plugin %s: worker %ld ended: %s", s->path, (long)w->ch.pid, w->cause);
    /* The slot learns of the crash before any waiting call does: a call
     * answered "crashed" is followed by one that sees the backoff and the
     * breaker count including this crash. */
    pthread_mutex_lock(&s->lock);
    bool current = s->w == w;
    if (current) {
        s->w = NULL;
        if (!stopping)
            note_crash(s, w->started_ms);
    }
    pthread_mutex_unlock(&s->lock);

    pthread_mutex_lock(&w->lock);
    w->dead = true;
    /* A deferred call gets its crash answer from run_ready (or from the
     * thread running its frames now, which finds it dead); a waiting one
     * from its proxy, woken. */
    th_route_orphan(&w->rt);
    for (th_route_call *c = w->rt.calls; c; c = c->next)
        pthread_cond_signal(&pending_of(c)->cond);
    pthread_mutex_unlock(&w->lock);
    run_ready(w);

    /* The output it wrote before it ended, and no more than LOG_TAIL_MS of
     * what may follow from a grandchild. */
    long long until = th_now_ms() + LOG_TAIL_MS;
    while (out_open) {
        long long left = until - th_now_ms();
        struct pollfd pfd = {.fd = w->ch.out, .events = POLLIN};
        if (left <= 0 || poll(&pfd, 1, (int)left) <= 0 || th_outbuf_pump(&ob, w->ch.out, w->tag) <= 0)
            break;
    }
    th_outbuf_pump(&ob, -1, w->tag);
    if (current)
        worker_unref(w); /* the slot's reference */
    worker_unref(w);
    thread_done(sup);
    return NULL;
}

static bool start_thread(th_supervisor *sup, void *(*fn)(void *), worker *w)
{
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_mutex_lock(&w->lock);
    w->refs++;
    pthread_mutex_unlock(&w->lock);
    pthread_mutex_lock(&sup->lock);
    sup->threads++;
    pthread_mutex_unlock(&sup->lock);
    bool ok = pthread_create(&t, &attr, fn, w) == 0;
    pthread_attr_destroy(&attr);
    if (!ok) {
        thread_done(sup);
        worker_unref(w);
    }
    return ok;
}

/* Wait for the READY frame (logging output meanwhile) and check that the
 * worker registered what the scan reported. */
static bool await_ready(slot *s, worker *w, char *why, size_t size)
{
    th_ipc_reader r = {.fd = w->ch.from, .max = 64u << 20};
    th_outbuf ob = {.len = 0};
    long long deadline = th_now_ms() + s->sup->opts.start_timeout_ms;
    bool ok = false;
    th_err err;
    for (;;) {
        long long wait = deadline - th_now_ms();
        if (wait <= 0) {
            snprintf(why, size, "its worker did not finish loading within %g s", (double)s->sup->opts.start_timeout_ms / 1000.0);
            break;
        }
        struct pollfd pfd[2] = {{.fd = w->ch.from, .events = POLLIN}, {.fd = w->ch.out, .events = POLLIN}};
        if (poll(pfd, 2, (int)(wait > 1000 ? 1000 : wait)) <= 0)
            continue;
        if (pfd[1].revents)
            th_outbuf_pump(&ob, w->ch.out, s->tag);
        if (!pfd[0].revents)
            continue;
        th_ipc_frame f;
        long got = th_ipc_fill(&r);
        int fr = got > 0 ? th_ipc_next(&r, &f, &err) : -1;
        if (fr == 0)
            continue;
        if (fr < 0 || f.type != TH_IPC_READY) {
            snprintf(why, size, "its worker ended while loading");
            break;
        }
        json_object *ready = th_ipc_parse(f.payload, f.len, &err), *names = NULL;
        ok = ready && json_object_object_get_ex(ready, "tools", &names) && json_object_is_type(names, json_type_array);
        if (ok)
            w->served = json_object_get(names); /* what a reload may route to it */
        /* Every tool the host serves must be there (the host may have
         * refused some the worker registers). */
        for (size_t i = 0; ok && i < json_object_array_length(s->tools); i++) {
            bool found = false;
            for (size_t k = 0; !found && k < json_object_array_length(names); k++)
                found = json_object_equal(json_object_array_get_idx(s->tools, i), json_object_array_get_idx(names, k));
            ok = found;
        }
        if (!ok)
            snprintf(why, size, "its worker registered other tools than the scan found (%s instead of %s)",
                     names && ready ? json_object_to_json_string(names) : "nothing",
                     json_object_to_json_string(s->tools));
        json_object_put(ready);
        /* Frames after READY belong to the reader thread: there are none
         * yet, since no call was sent. */
        break;
    }
    th_outbuf_pump(&ob, -1, s->tag);
    th_ipc_reader_free(&r);
    return ok;
}

/* A result may be escaped to twice its size, plus the envelope. */
static size_t max_frame(const th_supervisor *sup)
{
    size_t max = sup->opts.max_result_bytes;
    return max > (SIZE_MAX - (1u << 20)) / 2 ? SIZE_MAX : max * 2 + (1u << 20);
}

/* Start S's worker. Under S->lock. NULL with WHY on failure. */
/* Is PATH still the file this supervisor was made for? A worker loads the
 * file on disk: if it was replaced, the new code would run under the old
 * descriptors (and a reload's kept version would load its refused
 * successor), so the call is refused until a rescan serves the new file. */
static bool same_file(const slot *s)
{
    th_cache_key now = th_cache_key_of(s->path);
    return !s->key.valid || (now.valid && now.ino == s->key.ino && now.dev == s->key.dev &&
                             now.size == s->key.size && now.mtime_ns == s->key.mtime_ns);
}

static worker *spawn_worker(slot *s, char *why, size_t size)
{
    th_supervisor *sup = s->sup;
    th_err err;
    if (!same_file(s)) {
        snprintf(why, size, "its plugin file changed since its tools were registered; a rescan (--watch, "
                 "SIGHUP) serves the new version");
        return NULL;
    }
    worker *w = calloc(1, sizeof *w);
    if (w)
        w->wakefd = -1;
    if (!w || !(w->tag = strdup(s->tag))) {
        free(w);
        snprintf(why, size, "out of memory");
        return NULL;
    }
    if (th_spawn_child(&w->ch, &err) != TH_OK) {
        snprintf(why, size, "its worker could not start: %.160s", err.msg);
        free(w->tag);
        free(w);
        return NULL;
    }
    if (th_metrics_enabled) {
        th_metrics_worker(TH_METRICS_WORKER_START);
        if (s->backoff_ms) /* only a crash sets it */
            th_metrics_worker(TH_METRICS_WORKER_RESTART);
    }
    /* Where the kernel reports a denial only to its audit log, by pid. */
    th_log(TH_LOG_DEBUG, "plugin %s: worker %ld started", s->path, (long)w->ch.pid);
    w->slot = s;
    w->busy_ns = sup->opts.busy_poll_us * 1000;
    w->refs = 1; /* the slot's */
    w->started_ms = th_now_ms();
    pthread_mutex_init(&w->lock, NULL);
    pthread_mutex_init(&w->send_lock, NULL);

    json_object *hello = json_object_new_object();
    json_object_object_add(hello, "role", json_object_new_string("serve"));
    json_object_object_add(hello, "paths", th_scan_paths_json(sup->paths, sup->n));
    json_object_object_add(hello, "from", json_object_new_int64((int64_t)s->index));
    th_scan_hello_load_opts(hello, &sup->opts.load);
    th_scan_hello_settings(hello, &sup->opts.load, s->path);
    th_isolate_hello(hello);
    json_object_object_add(hello, "log_threshold", json_object_new_int(th_log_threshold()));
    json_object_object_add(hello, "memory_limit", json_object_new_int64((int64_t)sup->opts.memory_limit));
    json_object_object_add(hello, "max_files", json_object_new_int64((int64_t)sup->opts.max_files));
    json_object_object_add(hello, "max_result_bytes", json_object_new_int64((int64_t)sup->opts.max_result_bytes));
    json_object_object_add(hello, "threads", json_object_new_int64((int64_t)sup->opts.threads));
    char name[256];
    json_object_object_add(hello, "sandbox",
                           th_sandbox_hello(&sup->opts.sandbox,
                                            th_config_plugin_name(s->path, name, sizeof name) ? name : "", s->needs));
    if (s->digest[0])
        json_object_object_add(hello, "sha256", json_object_new_string(s->digest));
    th_rc rc = th_ipc_send_json(w->ch.to, TH_IPC_HELLO, 0, hello);
    json_object_put(hello);

    if (rc != TH_OK || !await_ready(s, w, why, size)) {
        if (rc != TH_OK)
            snprintf(why, size, "its worker could not be configured");
        kill(w->ch.pid, SIGKILL);
        while (waitpid(w->ch.pid, NULL, 0) < 0 && errno == EINTR)
            ;
        note_crash(s, w->started_ms);
        w->dead = true;
        worker_unref(w);
        return NULL;
    }
    w->r = (th_ipc_reader){.fd = w->ch.from, .max = max_frame(sup)};
    /* Calls look for the answer with one read(2) before they wait (read_pipe). */
    int fl = fcntl(w->ch.from, F_GETFL);
    if (fl < 0 || fcntl(w->ch.from, F_SETFL, fl | O_NONBLOCK) != 0) {
        kill(w->ch.pid, SIGKILL);
        while (waitpid(w->ch.pid, NULL, 0) < 0 && errno == EINTR)
            ;
        snprintf(why, size, "its worker's pipe could not be set up: %s", strerror(errno));
        worker_unref(w);
        return NULL;
    }
    w->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); /* -1: the monitor looks every POLL_MS */
    w->watching = true; /* the monitor's first poll includes the pipe */
    if (!start_thread(sup, monitor_main, w)) {
        kill(w->ch.pid, SIGKILL);
        while (waitpid(w->ch.pid, NULL, 0) < 0 && errno == EINTR)
            ;
        snprintf(why, size, "out of threads");
        worker_unref(w);
        return NULL;
    }
    return w;
}

/* acquire under S->lock; *TIMING: CALL's start-up wait is being counted. */
static worker *acquire_locked(slot *s, const char *tool, th_call *call, char *why, size_t size, bool *timing)
{
    for (;;) {
        long long now = th_now_ms();
        if (s->quarantined_until_ms > now) {
            time_t until = time(NULL) + (time_t)((s->quarantined_until_ms - now + 999) / 1000);
            struct tm tm;
            char when[64];
            gmtime_r(&until, &tm);
            strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
            snprintf(why, size, "tool '%s' is unavailable: its plugin crashed %d times in %d s; quarantined until %s",
                     tool, BREAKER_CRASHES, BREAKER_WINDOW_MS / 1000, when);
            pthread_mutex_unlock(&s->lock);
            return NULL;
        }
        worker *w = s->w;
        if (w) {
            pthread_mutex_lock(&w->lock);
            bool dead = w->dead;
            /* Killed, ended or cut off but not yet reaped: a call sent to
             * it now would fail with the ended one's cause. Wait for the
             * reaper, which clears the slot, then start afresh (after the
             * backoff). */
            bool dying = !dead && (w->kill_reason[0] || w->exited || w->eof);
            if (!dead && !dying)
                w->refs++;
            pthread_mutex_unlock(&w->lock);
            if (!dead && !dying) {
                pthread_mutex_unlock(&s->lock);
                return w;
            }
            if (dying) {
                pthread_mutex_unlock(&s->lock);
                if (th_call_cancelled(call)) {
                    snprintf(why, size, "tool '%s' was cancelled", tool);
                    return NULL;
                }
                struct timespec ts = {0, POLL_MS * 1000000L};
                nanosleep(&ts, NULL);
                pthread_mutex_lock(&s->lock);
                continue;
            }
        }
        if (now < s->next_start_ms) { /* backing off after a crash */
            pthread_mutex_unlock(&s->lock);
            if (*timing) { /* a plugin's backoff is its calls' time */
                th_call_startup_end(call);
                *timing = false;
            }
            if (th_call_cancelled(call)) {
                snprintf(why, size, "tool '%s' was cancelled", tool);
                return NULL;
            }
            long long left = s->next_start_ms - now;
            struct timespec ts = {0, (left > POLL_MS ? POLL_MS : left) * 1000000L};
            nanosleep(&ts, NULL);
            pthread_mutex_lock(&s->lock);
            continue;
        }
        char cause[256];
        if (!*timing) {
            th_call_startup_begin(call);
            *timing = true;
        }
        w = spawn_worker(s, cause, sizeof cause);
        if (!w) {
            th_log(TH_LOG_ERROR, "plugin %s: %s", s->path, cause);
            snprintf(why, size, "tool '%s' is unavailable: %s", tool, cause);
            pthread_mutex_unlock(&s->lock);
            return NULL;
        }
        s->w = w;
        pthread_mutex_lock(&w->lock);
        w->refs++;
        pthread_mutex_unlock(&w->lock);
        pthread_mutex_unlock(&s->lock);
        return w;
    }
}

/*
** S's running worker (a new reference), started if need be; NULL with WHY
** when the plugin is quarantined or its worker cannot start. The call's
** deadline does not count a worker's start (--load-timeout bounds that),
** including the wait for another call that is starting it (the slot's
** lock is held meanwhile); a running worker costs no clock read.
*/
static worker *acquire(slot *s, const char *tool, th_call *call, char *why, size_t size)
{
    bool timing = pthread_mutex_trylock(&s->lock) != 0;
    if (timing) {
        th_call_startup_begin(call);
        pthread_mutex_lock(&s->lock);
    }
    worker *w = acquire_locked(s, tool, call, why, size, &timing);
    if (timing)
        th_call_startup_end(call);
    return w;
}

/* ---- the proxy handler ----------------------------------------------------- */

/*
** The CALL frames of the deferred calls this thread sent, held to leave in
** one write: the worker then reads them together (th_call_hold). Written
** before the thread waits for anything (th_call_flush_held, and exchange)
** and before it sends to another plugin's worker. W: a reference.
*/
#define HELD_MAX ((size_t)64 << 10) /* past it, written at once (a pipe holds 64 KiB) */
static _Thread_local struct {
    worker *w;
    slot *slot;
    size_t n; /* frames in BUF */
    th_buf buf;
} held;

static void flush_held(void)
{
    worker *w = held.w;
    if (!w)
        return;
    held.w = NULL;
    held.slot = NULL;
    held.n = 0;
    pthread_mutex_lock(&w->send_lock);
    th_ipc_write(w->ch.to, held.buf.data, held.buf.len); /* a dead worker shows as EOF */
    pthread_mutex_unlock(&w->send_lock);
    /* Not kept: a reader thread may end next, and a thread's own buffer
     * would be lost with it (one allocation per batch of calls). */
    free(held.buf.data);
    held.buf = (th_buf){0};
    worker_unref(w);
}

static void send_frame(worker *w, th_ipc_type type, uint32_t id, const struct iovec *parts, size_t n)
{
    pthread_mutex_lock(&w->send_lock);
    th_ipc_sendv(w->ch.to, type, id, parts, n); /* a dead worker shows as EOF */
    pthread_mutex_unlock(&w->send_lock);
}

/* The worker's handler asks the client: asked on the host's call (which
 * may block until the client answers, legacy), answered with ANSWER. */
static void answer_ask(worker *w, uint32_t id, th_call *call, const th_qframe *q)
{
    json_object *a = th_worker_answer_ask(call, q->payload, q->len);
    if (!a)
        return; /* out of memory: its handler waits until its call is cancelled */
    pthread_mutex_lock(&w->send_lock);
    th_ipc_send_json(w->ch.to, TH_IPC_ANSWER, id, a);
    pthread_mutex_unlock(&w->send_lock);
    json_object_put(a);
}

/* A descriptor's own deadline, as the scanner reported it (0: none). */
static uint32_t timeout_of(json_object *d)
{
    json_object *v;
    if (!json_object_object_get_ex(d, "timeout_ms", &v) || !json_object_is_type(v, json_type_int))
        return 0;
    int64_t ms = json_object_get_int64(v);
    return ms > 0 && ms <= UINT32_MAX ? (uint32_t)ms : 0;
}

/* A descriptor's task support, as the scanner reported it (0: none; a
 * value out of range is left for the registry to refuse). */
static uint32_t task_support_of(json_object *d)
{
    json_object *v;
    if (!json_object_object_get_ex(d, "task_support", &v) || !json_object_is_type(v, json_type_int))
        return 0;
    int64_t n = json_object_get_int64(v);
    return n > 0 && n <= UINT32_MAX ? (uint32_t)n : UINT32_MAX;
}

static void exchange(slot *s, worker *w, const char *name, th_call *call, th_ipc_type type,
                     const struct iovec *parts, size_t nparts, result_fn on_result, void *ctx);
static void run_frame(worker *w, uint32_t id, th_call *call, const char *name, const th_qframe *q,
                      result_fn on_result, void *ctx);
static void exchange_deferred(slot *s, worker *w, const char *name, th_call *host, th_ipc_type type,
                              const struct iovec *parts, size_t nparts, result_fn on_result, void *ctx);

static void tool_result(th_call *call, const char *name, const th_qframe *q, void *ctx)
{
    const proxy_tool *pt = ctx;
    th_worker_apply_frame(call, name, pt->parse_result, q->type, q->payload, q->len);
}

/*
** Deferred calls sent to W before this thread's current batch have kept it
** busy for longer than the stdio reader's hand-off budget (a slow one among
** them, or a backlog): a call that waited for its answer would wait for
** theirs too, holding its thread (the reader, which then hands its reading
** to a new thread each time). It is deferred too. A pipelining client's
** batches that W answers at once leave it idle in between: their last call
** still waits, and reads the batch's answers on the reader's thread.
*/
#define BEHIND_NS 1000000LL
static bool behind_others(worker *w)
{
    size_t mine = held.w == w ? held.n : 0;
    pthread_mutex_lock(&w->lock);
    bool behind = w->rt.ndeferred > mine && th_now_ns() - w->deferring_since_ns > BEHIND_NS;
    pthread_mutex_unlock(&w->lock);
    return behind;
}

static th_rc proxy_handler(th_call *call, json_object *args, void *user_data)
{
    proxy_tool *pt = user_data;
    slot *s = pt->slot;
    char why[512];
    if (held.slot && held.slot != s)
        flush_held(); /* acquiring another plugin's worker may wait for its start */
    worker *w = acquire(s, pt->name, call, why, sizeof why);
    if (!w) {
        th_call_abort(call);
        return th_call_fail(call, "%s", why) == TH_OK ? TH_OK : TH_ERR_NOMEM;
    }

    /* The arguments are all the worker parses (with the protocol's
     * parser: it sees every literal as the client sent it); the name goes
     * as its bytes, made once. A plain request's arguments go as the
     * client sent them (the hooks' ARGS_TEXT: it parses to the very tree
     * the host validated), else they are printed by jsontree.c, not into
     * the printbuf json-c would hang on them. The client's capabilities
     * go along, for th_call_client_can: read at once from the call's hooks
     * (one handle look-up, not one per bit). */
    th_buf argbuf = {0};
    const char *text = "{}";
    size_t len = 2;
    th_call *resolved;
    const th_call_hooks *hooks = th_call_hooks_of(call, &resolved, __func__);
    uint32_t caps32 = hooks ? hooks->client_caps & (TH_ASK_ELICITATION | TH_ASK_SAMPLING | TH_ASK_ROOTS) : 0;
    bool pipelined = hooks && hooks->pipelined;
    if (hooks && hooks->args_text) {
        text = hooks->args_text;
        len = hooks->args_len;
    } else if (args && th_json_append(&argbuf, args)) {
        text = argbuf.data;
        len = argbuf.len;
    }
    th_call_release(call, resolved);
    struct iovec parts[3] = {{&caps32, sizeof caps32}, {pt->call_head, pt->call_head_len}, {(void *)text, len}};
    /* A pipelining client's call ends when its worker answers, on the
     * thread that reads the answer: unless its client can be asked
     * something (a legacy ask waits for the client, and must not hold up
     * the thread reading every call's answers). */
    th_call *host = caps32 == 0 && (pipelined || behind_others(w)) ? th_call_defer(call) : NULL;
    if (host)
        exchange_deferred(s, w, pt->name, host, TH_IPC_CALL, parts, 3, tool_result, pt);
    else
        exchange(s, w, pt->name, call, TH_IPC_CALL, parts, 3, tool_result, pt);
    free(argbuf.data);
    return TH_OK;
}

/* A READ's RESULT {"rc","result"} onto the host's call; *CTX gets rc. */
static void read_result(th_call *call, const char *name, const th_qframe *q, void *ctx)
{
    th_rc *rc = ctx;
    th_err err;
    json_object *o = q->len ? th_ipc_parse(q->payload, q->len, &err) : NULL, *v, *r;
    if (!o || !json_object_object_get_ex(o, "rc", &v) || !json_object_is_type(v, json_type_int) ||
        !json_object_object_get_ex(o, "result", &r)) {
        th_call_error(call, "resource '%s': its worker sent no valid result", name);
        *rc = TH_ERR_TOOL;
    } else {
        size_t len;
        const char *text = json_object_to_json_string_length(r, JSON_C_TO_STRING_PLAIN, &len);
        if (text)
            th_worker_apply_result(call, name, true, text, len);
        *rc = (th_rc)json_object_get_int(v);
    }
    json_object_put(o);
}

/* The host's read function of a process-isolated plugin's resource. */
static th_rc proxy_read(th_call *call, const char *uri, json_object *vars, void *user_data)
{
    proxy_res *pr = user_data;
    char why[512];
    worker *w = acquire(pr->slot, pr->key, call, why, sizeof why);
    if (!w)
        return th_call_error(call, "%s", why) == TH_OK ? TH_ERR_TOOL : TH_ERR_NOMEM;
    json_object *req = json_object_new_object();
    if (!req) {
        worker_unref(w);
        return TH_ERR_NOMEM;
    }
    json_object_object_add(req, "key", json_object_new_string(pr->key));
    json_object_object_add(req, "template", json_object_new_boolean(pr->template_));
    json_object_object_add(req, "uri", json_object_new_string(uri));
    json_object_object_add(req, "vars", json_object_get(vars));
    size_t len;
    const char *text = json_object_to_json_string_length(req, JSON_C_TO_STRING_PLAIN, &len);
    struct iovec part = {(void *)text, len};
    th_rc rc = TH_ERR_TOOL; /* unless a RESULT says otherwise (a crash) */
    exchange(pr->slot, w, pr->key, call, TH_IPC_READ, &part, 1, read_result, &rc);
    json_object_put(req);
    return rc;
}

/* A subscription to one of the plugin's resources: start its worker, so
 * the plugin's own threads run and can announce updates. */
static void proxy_watch(void *user_data)
{
    proxy_res *pr = user_data;
    char why[512];
    worker *w = acquire(pr->slot, pr->key, NULL, why, sizeof why);
    if (w)
        worker_unref(w);
    else
        th_log(TH_LOG_WARNING, "plugin %s: a subscription to %s cannot start its worker: %s", pr->slot->path, pr->key,
               why);
}

/* What a frame of TYPE runs, for the message of a worker that died under
 * it: a crashed prompt get or completion is no "tool". */
static const char *frame_noun(th_ipc_type type)
{
    static const struct {
        th_ipc_type type;
        const char *noun;
    } nouns[] = {
        {TH_IPC_READ, "resource"},
        {TH_IPC_PROMPT, "prompt"},
        {TH_IPC_COMPLETE, "completion of"},
    };
    for (size_t i = 0; i < sizeof nouns / sizeof nouns[0]; i++)
        if (nouns[i].type == type)
            return nouns[i].noun;
    return "tool";
}

/*
** Run Q, a frame of call ID on W: progress and log onto CALL, an ASK asked
** of its client and answered, the final one to ON_RESULT. Without W->lock.
*/
static void run_frame(worker *w, uint32_t id, th_call *call, const char *name, const th_qframe *q,
                      result_fn on_result, void *ctx)
{
    switch (th_route_use_of(q->type)) {
    case TH_USE_APPLY:
        th_worker_apply_frame(call, name, false, q->type, q->payload, q->len);
        break;
    case TH_USE_ASK:
        answer_ask(w, id, call, q);
        break;
    case TH_USE_FINAL:
        on_result(call, name, q, ctx);
        break;
    case TH_USE_NONE: /* th_route_frame queues none */
        break;
    }
}

/*
** A call's wait ends early when it runs on a thread that must be free to
** write to its client (hooks.let_go, see th_call_is_waiting_handler) and
** its host can defer it: once it is cancelled (that thread sends the
** deadline's answer), and once it has sent a notification (that thread
** streams it, and what follows, as it comes). P, with no frame waiting,
** becomes a deferred call (CANCEL_SENT: its CANCEL went, the worker is
** killed past KILL_AT), and the monitor takes over what is left (reading
** the rest, the kill) as for any deferred call. True when handed over:
** W's reference went with it. A tool's CALL only (another exchange's CTX
** lives on its caller's stack). Under W->lock.
*/
static bool hand_over(worker *w, pending *p, slot *s, const char *name, th_call *call, th_ipc_type type,
                      result_fn on_result, void *ctx, bool cancel_sent, long long kill_at)
{
    if (type != TH_IPC_CALL || p->rc.head)
        return false;
    th_call *resolved;
    const th_call_hooks *hooks = th_call_hooks_of(call, &resolved, __func__);
    bool let_go = hooks && hooks->let_go;
    th_call_release(call, resolved);
    if (!let_go) /* its thread waits: the call holds its slot until it ends */
        return false;
    pending *pd = calloc(1, sizeof *pd);
    th_call *host = pd ? th_call_defer(call) : NULL;
    if (!host) {
        free(pd);
        return false;
    }
    *pd = (pending){.host = host, .slot = s, .name = name, .type = type, .on_result = on_result, .ctx = ctx,
                    .cancel_sent = cancel_sent, .kill_at = kill_at};
    if (w->rt.ndeferred == 0)
        w->deferring_since_ns = th_now_ns();
    th_route_hand_over(&w->rt, &p->rc, &pd->rc); /* its id, its place in flight */
    /* The monitor looks at deferred calls every POLL_MS, and reads the
     * pipe for them when no call does: wake it from a long poll. */
    if (w->asleep_long) {
        w->asleep_long = false;
        uint64_t one = 1;
        if (write(w->wakefd, &one, sizeof one) < 0) {
            /* no eventfd: it looks within a second */
        }
    }
    return true;
}

/*
** Send one frame of TYPE for a new call id on W (a reference, dropped here)
** and follow the frames of that id: progress and log onto CALL, the RESULT
** to ON_RESULT; a crash or cancellation as for a tool call.
*/
static void exchange(slot *s, worker *w, const char *name, th_call *call, th_ipc_type type,
                     const struct iovec *parts, size_t nparts, result_fn on_result, void *ctx)
{

    pending p = {0};
    flush_held(); /* this thread waits below: what it holds goes first */
    pthread_cond_init(&p.cond, NULL);
    pthread_mutex_lock(&w->lock);
    uint32_t id = th_route_add(&w->rt, &p.rc, false);
    pthread_mutex_unlock(&w->lock);
    send_frame(w, type, id, parts, nparts);

    bool done = false, cancel_sent = false;
    long long kill_at = 0;
    pthread_mutex_lock(&w->lock);
    while (!done) {
        th_qframe *q = th_route_pop(&p.rc);
        if (q) {
            /* Routing a final frame took P out of flight: nothing more is
             * routed to it, so no lock is taken again. */
            th_route_use use = th_route_use_of(q->type);
            pthread_mutex_unlock(&w->lock);
            run_frame(w, id, call, name, q, on_result, ctx);
            bool told = use == TH_USE_APPLY;
            free(q);
            if (use == TH_USE_FINAL)
                goto unlinked;
            pthread_mutex_lock(&w->lock);
            if (told && !p.rc.head && hand_over(w, &p, s, name, call, type, on_result, ctx, cancel_sent, kill_at)) {
                pthread_mutex_unlock(&w->lock);
                pthread_cond_destroy(&p.cond);
                return;
            }
            continue;
        }
        if (w->dead) {
            th_call_fail(call, "%s '%s' crashed: %s", frame_noun(type), name, w->cause);
            th_call_mark_crashed(call);
            th_call_abort(call);
            break;
        }
        if (!w->leading && !w->eof && !w->exited) {
            /* Nobody reads the pipe: this call does, so that its result
             * wakes it straight from the pipe. */
            w->leading = true;
            pthread_mutex_unlock(&w->lock);
            long n = read_pipe(w, POLL_MS);
            pthread_mutex_lock(&w->lock);
            absorb(w, n);
            w->leading = false;
            if (p.rc.head) { /* done reading: hand the role to a call still waiting */
                th_route_call *o = w->rt.calls;
                while (o && (o == &p.rc || o->deferred || o->head))
                    o = o->next;
                if (o)
                    pthread_cond_signal(&pending_of(o)->cond);
                else
                    wake_monitor(w); /* deferred calls only: it reads for them */
            }
            if (w->rt.ready) { /* deferred calls' frames this read routed */
                pthread_mutex_unlock(&w->lock);
                run_ready(w);
                pthread_mutex_lock(&w->lock);
            }
        } else {
            th_cond_wait_until(&p.cond, &w->lock, th_now_ms() + POLL_MS);
        }
        if (!p.rc.head && !w->dead && th_call_cancelled(call)) {
            long long now = th_now_ms();
            if (!cancel_sent) {
                cancel_sent = true;
                kill_at = now + s->sup->opts.cancel_grace_ms;
                pthread_mutex_unlock(&w->lock);
                send_frame(w, TH_IPC_CANCEL, id, NULL, 0);
                pthread_mutex_lock(&w->lock);
            } else if (now >= kill_at && !w->kill_reason[0]) {
                snprintf(w->kill_reason, sizeof w->kill_reason,
                         "its worker was killed: %s '%s' ignored cancellation for %lld ms (--cancel-grace-ms)",
                         frame_noun(type), name, s->sup->opts.cancel_grace_ms);
                th_log(TH_LOG_WARNING, "plugin %s: %s", s->path, w->kill_reason);
                kill(w->ch.pid, SIGKILL);
            }
            if (!p.rc.head && hand_over(w, &p, s, name, call, type, on_result, ctx, true, kill_at)) {
                pthread_mutex_unlock(&w->lock);
                pthread_cond_destroy(&p.cond);
                return;
            }
        }
    }
    th_route_remove(&w->rt, &p.rc);
    pthread_mutex_unlock(&w->lock);
unlinked:
    th_route_clear(&p.rc);
    pthread_cond_destroy(&p.cond);
    worker_unref(w);
}

/* ---- deferred calls --------------------------------------------------------- */

/*
** A pipelining client's calls do not wait for one another (th_call_defer):
** the proxy sends CALL and returns, the reader reads the next request and
** sends its CALL, and the worker reads them together and answers them
** together. Whichever thread reads the answers (a waiting proxy, usually
** the reader's call for the last request it had, or the monitor) runs
** their frames here and finishes each call. One round trip to the worker
** is then shared by all the calls in flight, instead of paid by each.
*/

/* PD is done (its RESULT run, or failed): free it and finish its call. */
static void end_deferred(worker *w, pending *pd)
{
    th_call *host = pd->host;
    th_route_clear(&pd->rc);
    free(pd);
    worker_unref(w);
    th_call_resume(host, TH_OK);
}

/* Run PD's frames in order, until none is left or its RESULT is run.
 * PD is queued: no other thread runs it meanwhile. */
static void run_deferred(worker *w, pending *pd)
{
    for (;;) {
        pthread_mutex_lock(&w->lock);
        th_qframe *q = th_route_pop(&pd->rc);
        if (!q && (!w->dead || pd->rc.final_seen)) {
            pd->rc.queued = false; /* the next frame queues it again */
            pthread_mutex_unlock(&w->lock);
            return;
        }
        pthread_mutex_unlock(&w->lock);
        if (!q) { /* its worker died before it answered (the monitor unlinked it) */
            th_call_fail(pd->host, "%s '%s' crashed: %s", frame_noun(pd->type), pd->name, w->cause);
            th_call_mark_crashed(pd->host);
            th_call_abort(pd->host);
            end_deferred(w, pd);
            return;
        }
        /* An ASK is answered at once: its client can be asked nothing. */
        bool final = th_route_use_of(q->type) == TH_USE_FINAL;
        run_frame(w, pd->rc.id, pd->host, pd->name, q, pd->on_result, pd->ctx);
        free(q);
        if (final) {
            end_deferred(w, pd);
            return;
        }
    }
}

/* Run the deferred calls W's readers queued. Without W->lock. */
static void run_ready(worker *w)
{
    for (;;) {
        pthread_mutex_lock(&w->lock);
        th_route_call *c = th_route_next_ready(&w->rt);
        pthread_mutex_unlock(&w->lock);
        if (!c)
            return;
        run_deferred(w, pending_of(c));
    }
}

/*
** The monitor, every POLL_MS while deferred calls wait: a cancelled one
** (notifications/cancelled, its deadline) is told to the worker, which is
** killed when the call ignores it past --cancel-grace-ms, as for a waiting
** proxy. Under W->lock (let go while sending).
*/
static void cancel_deferred(worker *w)
{
    if (w->rt.ndeferred == 0)
        return;
    uint32_t ids[64];
    size_t n = 0;
    long long now = th_now_ms();
    for (th_route_call *c = w->rt.calls; c; c = c->next) {
        pending *pd = pending_of(c);
        if (!c->deferred || !th_call_cancelled(pd->host))
            continue;
        th_supervisor *sup = pd->slot->sup;
        if (!pd->cancel_sent) {
            if (n == sizeof ids / sizeof ids[0])
                continue; /* the next round */
            pd->cancel_sent = true;
            pd->kill_at = now + sup->opts.cancel_grace_ms;
            ids[n++] = c->id;
        } else if (now >= pd->kill_at && !w->kill_reason[0]) {
            snprintf(w->kill_reason, sizeof w->kill_reason,
                     "its worker was killed: %s '%s' ignored cancellation for %lld ms (--cancel-grace-ms)",
                     frame_noun(pd->type), pd->name, sup->opts.cancel_grace_ms);
            th_log(TH_LOG_WARNING, "plugin %s: %s", pd->slot->path, w->kill_reason);
            kill(w->ch.pid, SIGKILL);
        }
    }
    if (n == 0)
        return;
    pthread_mutex_unlock(&w->lock);
    for (size_t i = 0; i < n; i++)
        send_frame(w, TH_IPC_CANCEL, ids[i], NULL, 0);
    pthread_mutex_lock(&w->lock);
}

/*
** exchange for a deferred call: send the frame of TYPE for HOST (the host's
** call, th_call_defer) on W (a reference, taken over) and return; the
** frames are run by run_ready, and th_call_resume ends the call.
*/
static void exchange_deferred(slot *s, worker *w, const char *name, th_call *host, th_ipc_type type,
                              const struct iovec *parts, size_t nparts, result_fn on_result, void *ctx)
{
    pending *pd = calloc(1, sizeof *pd);
    if (!pd) {
        th_call_fail(host, "%s '%s' failed: out of memory", frame_noun(type), name);
        worker_unref(w);
        th_call_resume(host, TH_OK);
        return;
    }
    *pd = (pending){.host = host, .slot = s, .name = name, .type = type, .on_result = on_result, .ctx = ctx};
    pthread_mutex_lock(&w->lock);
    if (w->dead) {
        pthread_mutex_unlock(&w->lock);
        th_call_fail(host, "%s '%s' crashed: %s", frame_noun(type), name, w->cause);
        th_call_mark_crashed(host);
        th_call_abort(host);
        end_deferred(w, pd);
        return;
    }
    if (w->rt.ndeferred == 0)
        w->deferring_since_ns = th_now_ns();
    uint32_t id = th_route_add(&w->rt, &pd->rc, true);
    w->refs++; /* the send's own: PD's may be dropped as soon as it is sent */
    /* Its cancellation must be seen within POLL_MS: a monitor in a long
     * poll is woken (once; it then looks every POLL_MS while deferred
     * calls wait). */
    bool wake = w->asleep_long;
    w->asleep_long = false;
    pthread_mutex_unlock(&w->lock);
    if (wake) {
        uint64_t one = 1;
        if (write(w->wakefd, &one, sizeof one) < 0) {
            /* no eventfd: it looks within a second */
        }
    }
    if (held.w != w)
        flush_held();
    if (!th_ipc_appendv(&held.buf, type, id, parts, nparts)) {
        send_frame(w, type, id, parts, nparts); /* out of memory: on its own */
        worker_unref(w);
        return;
    }
    held.n++;
    if (held.w == w) {
        worker_unref(w); /* HELD has one */
    } else {
        held.w = w;
        held.slot = s;
        th_call_hold(flush_held);
    }
    if (held.buf.len >= HELD_MAX)
        flush_held();
}

/* ---- set-up and tear-down -------------------------------------------------- */

th_supervisor *th_supervisor_new(char *const *paths, size_t n, const th_supervisor_opts *opts)
{
    th_call_mark_waiting_handler(proxy_handler); /* see hand_over */
    th_supervisor *sup = calloc(1, sizeof *sup);
    if (!sup)
        return NULL;
    sup->opts = *opts;
    pthread_mutex_init(&sup->lock, NULL);
    pthread_cond_init(&sup->cond, NULL);
    sup->paths = calloc(n + 1, sizeof *sup->paths);
    sup->slots = calloc(n + 1, sizeof *sup->slots);
    if (!sup->paths || !sup->slots)
        goto fail;
    sup->n = n;
    for (size_t i = 0; i < n; i++) {
        if (!(sup->paths[i] = strdup(paths[i])))
            goto fail;
        slot *s = &sup->slots[i];
        s->sup = sup;
        s->index = i;
        s->path = sup->paths[i];
        const char *b = strrchr(s->path, '/');
        s->tag = b ? b + 1 : s->path;
        s->key = th_cache_key_of(s->path);
        pthread_mutex_init(&s->lock, NULL);
    }
    return sup;
fail:
    th_supervisor_free(sup);
    return NULL;
}

static proxy_tool *new_proxy(th_supervisor *sup, slot *s, const char *name)
{
    if (sup->ntools == sup->captools) {
        size_t cap = sup->captools ? sup->captools * 2 : 64;
        proxy_tool **t = realloc(sup->tools, cap * sizeof *t);
        if (!t)
            return NULL;
        sup->tools = t;
        sup->captools = cap;
    }
    proxy_tool *pt = calloc(1, sizeof *pt);
    if (!pt || !(pt->name = strdup(name)) || !(pt->call_head = strdup(name))) {
        if (pt)
            free(pt->name);
        free(pt);
        return NULL;
    }
    pt->call_head_len = strlen(name) + 1; /* with its NUL */
    pt->slot = s;
    sup->tools[sup->ntools++] = pt;
    return pt;
}

static const char *str_of(json_object *o, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) ? json_object_get_string(v)
                                                                                             : NULL;
}

/* One scanned resource or template of slot S, reading through its worker. */
static void register_resource(th_supervisor *sup, slot *s, th_registry *reg, json_object *d, th_load_stats *stats)
{
    bool template_ = false;
    th_resproxy_is_resource(d, &template_);
    const char *key = str_of(d, template_ ? "uri_template" : "uri");
    proxy_res *pr = calloc(1, sizeof *pr);
    th_err err;
    th_rc rc;
    th_err_clear(&err);
    if (!pr || !key || !(pr->key = strdup(key))) {
        free(pr);
        pr = NULL;
        rc = th_err_set(&err, key ? TH_ERR_NOMEM : TH_ERR_ATTRIBUTE, key ? "out of memory" : "no URI in its descriptor");
    } else {
        pr->slot = s;
        pr->template_ = template_;
        pr->next = sup->resources;
        sup->resources = pr; /* freed with the supervisor, after the registry */
        rc = th_resproxy_register(reg, d, s->path, proxy_read, pr, NULL, proxy_watch, &err);
    }
    if (rc != TH_OK) {
        stats->resources_refused++;
        th_log(TH_LOG_ERROR, "plugin %s: resource%s '%.200s' refused: %s [%s]", s->path, template_ ? " template" : "",
               key ? key : "?", err.msg, th_rc_name(rc));
    }
}

/* Send REQ (taken) as a TYPE frame for CALL to PR's worker and return the
 * code of its RESULT {"rc","result"}, the result put onto CALL. */
static th_rc proxy_run(proxy_res *pr, th_call *call, th_ipc_type type, json_object *req)
{
    char why[512];
    worker *w = req ? acquire(pr->slot, pr->key, call, why, sizeof why) : NULL;
    if (!w) {
        json_object_put(req);
        return !req ? TH_ERR_NOMEM : th_call_error(call, "%s", why) == TH_OK ? TH_ERR_TOOL : TH_ERR_NOMEM;
    }
    /* The client's capabilities go along, for th_call_client_can. */
    unsigned caps = 0;
    for (unsigned k = TH_ASK_ELICITATION; k <= TH_ASK_ROOTS; k <<= 1)
        if (th_call_client_can(call, k))
            caps |= k;
    json_object_object_add(req, "caps", json_object_new_int64(caps));
    size_t len;
    const char *text = json_object_to_json_string_length(req, JSON_C_TO_STRING_PLAIN, &len);
    struct iovec part = {(void *)text, len};
    th_rc rc = TH_ERR_TOOL; /* unless a RESULT says otherwise (a crash) */
    exchange(pr->slot, w, pr->key, call, type, &part, 1, read_result, &rc);
    json_object_put(req);
    return rc;
}

/* The host's get function of a process-isolated plugin's prompt. */
static th_rc proxy_get(th_call *call, json_object *args, void *user_data)
{
    proxy_res *pr = user_data;
    json_object *req = json_object_new_object();
    if (req) {
        json_object_object_add(req, "name", json_object_new_string(pr->key));
        json_object_object_add(req, "arguments", json_object_get(args));
    }
    return proxy_run(pr, call, TH_IPC_PROMPT, req);
}

/* The host's complete function of a process-isolated plugin's completion. */
static th_rc proxy_complete(th_call *call, const char *argument, const char *value, json_object *context,
                            void *user_data)
{
    proxy_res *pr = user_data;
    json_object *req = json_object_new_object();
    if (req) {
        json_object_object_add(req, pr->template_ ? "uri_template" : "prompt", json_object_new_string(pr->key));
        json_object_object_add(req, "argument", json_object_new_string(argument));
        json_object_object_add(req, "value", json_object_new_string(value));
        json_object_object_add(req, "context", json_object_get(context));
    }
    return proxy_run(pr, call, TH_IPC_COMPLETE, req);
}

/* Register prompt or completion descriptor D of slot S with a proxy. */
static void register_prompt(th_supervisor *sup, slot *s, th_registry *reg, json_object *d, th_load_stats *stats)
{
    bool completion_ = false;
    th_promptproxy_is_prompt(d, &completion_);
    json_object *v;
    const char *key = json_object_object_get_ex(d, completion_ ? "prompt" : "name", &v) ? json_object_get_string(v)
                      : completion_ && json_object_object_get_ex(d, "uri_template", &v) ? json_object_get_string(v)
                                                                                          : NULL;
    proxy_res *pr = calloc(1, sizeof *pr);
    th_err err;
    th_rc rc;
    th_err_clear(&err);
    if (!pr || !key || !(pr->key = strdup(key))) {
        free(pr);
        rc = th_err_set(&err, key ? TH_ERR_NOMEM : TH_ERR_ATTRIBUTE, key ? "out of memory" : "no name in its descriptor");
    } else {
        pr->slot = s;
        pr->template_ = completion_ && !json_object_object_get_ex(d, "prompt", NULL);
        pr->next = sup->resources;
        sup->resources = pr; /* freed with the supervisor, after the registry */
        const char *k;
        rc = th_promptproxy_register(reg, d, s->path, proxy_get, proxy_complete, pr, &k, &err);
    }
    if (rc != TH_OK) {
        stats->prompts_refused++;
        th_log(TH_LOG_ERROR, "plugin %s: %s '%.200s' refused: %s [%s]", s->path, completion_ ? "completion" : "prompt",
               key ? key : "?", err.msg, th_rc_name(rc));
    }
}

void th_supervisor_register(th_supervisor *sup, th_registry *reg, const th_scanned *scanned, th_load_stats *stats)
{
    th_supervisor_register_in(sup, reg, scanned, stats, NULL);
}

void th_supervisor_register_in(th_supervisor *sup, th_registry *reg, const th_scanned *scanned,
                               th_load_stats *stats, const size_t *order)
{
    for (size_t j = 0; j < sup->n; j++) {
        size_t i = order ? order[j] : j;
        slot *s = &sup->slots[i];
        if (!scanned[i].accepted)
            continue;
        th_staged staged = th_loader_stage(reg);
        bool own_refused = false;
        memcpy(s->digest, scanned[i].digest, sizeof s->digest);
        json_object_put(s->needs);
        s->needs = json_object_get(scanned[i].needs);
        s->tools = json_object_new_array();
        for (size_t k = 0; k < json_object_array_length(scanned[i].tools); k++) {
            json_object *d = json_object_array_get_idx(scanned[i].tools, k);
            if (th_promptproxy_is_prompt(d, NULL)) {
                register_prompt(sup, s, reg, d, stats);
                continue;
            }
            if (th_resproxy_is_resource(d, NULL)) {
                register_resource(sup, s, reg, d, stats);
                continue;
            }
            const char *name = str_of(d, "name");
            proxy_tool *pt = name ? new_proxy(sup, s, name) : NULL;
            th_err err;
            th_rc rc;
            th_err_clear(&err);
            if (!pt) {
                rc = th_err_set(&err, TH_ERR_NOMEM, "out of memory");
            } else {
                th_tool t = {
                    TH_TOOL_INIT,
                    .name = name,
                    .title = str_of(d, "title"),
                    .description = str_of(d, "description"),
                    .input_schema = str_of(d, "input_schema"),
                    .output_schema = str_of(d, "output_schema"),
                    .annotations = str_of(d, "annotations"),
                    .timeout_ms = timeout_of(d),
                    .task_support = task_support_of(d),
                    .icons = str_of(d, "icons"),
                    .handler = proxy_handler,
                    .user_data = pt,
                };
                rc = th_registry_add(reg, &t, s->path, &err);
            }
            if (rc == TH_OK) {
                pt->parse_result = str_of(d, "output_schema") != NULL;
                json_object_array_add(s->tools, json_object_new_string(name));
            } else {
                own_refused |= th_loader_tool_refused(s->path, name, rc, &err, stats);
            }
        }
        stats->tools_refused += scanned[i].tools_refused;
        stats->resources_refused += scanned[i].resources_refused;
        stats->prompts_refused += scanned[i].prompts_refused;
        if (own_refused || (th_registry_count(reg) == staged.tools && th_loader_staged_extras(reg, &staged) == 0)) {
            th_loader_discard(reg, &staged, s->path, stats);
            stats->plugins_refused++;
            continue;
        }
        stats->tools_loaded += th_registry_count(reg) - staged.tools;
        stats->plugins_loaded++;
        s->registered = true;
    }
}

/* ---- hot reload: carrying unchanged plugins' workers over ----------------- */

static bool same_key(const th_cache_key *a, const th_cache_key *b)
{
    return a->valid && b->valid && a->ino == b->ino && a->dev == b->dev && a->size == b->size &&
           a->mtime_ns == b->mtime_ns;
}

/* Does W serve every tool the new slot S registered? The scan can give an
 * unchanged file other tools (a NAME.so added or removed elsewhere moves
 * tool NAME), and a worker routes only what it registered at its start. */
static bool serves_all(const worker *w, const slot *s)
{
    for (size_t i = 0; w->served && i < json_object_array_length(s->tools); i++) {
        bool found = false;
        for (size_t k = 0; !found && k < json_object_array_length(w->served); k++)
            found = json_object_equal(json_object_array_get_idx(s->tools, i), json_object_array_get_idx(w->served, k));
        if (!found)
            return false;
    }
    return w->served != NULL;
}

/*
** Move PS's worker (and crash history) to S, both made for the same,
** unchanged file. Under PS->lock. The worker's monitor thread is counted
** by S's supervisor from now on; once the monitor has seen the process end
** (exited) the worker stays where it is and S starts its own.
*/
static bool adopt_worker(slot *s, slot *ps)
{
    memcpy(s->crash_at, ps->crash_at, sizeof s->crash_at);
    s->crashes = ps->crashes;
    s->backoff_ms = ps->backoff_ms;
    s->next_start_ms = ps->next_start_ms;
    s->quarantined_until_ms = ps->quarantined_until_ms;
    worker *w = ps->w;
    if (!w)
        return false;
    pthread_mutex_lock(&w->lock);
    bool ok = !w->dead && !w->exited && !w->eof && !w->kill_reason[0] && serves_all(w, s);
    if (ok)
        w->slot = s;
    pthread_mutex_unlock(&w->lock);
    if (!ok)
        return false;
    ps->w = NULL;
    s->w = w; /* the slot's reference moves with it */
    pthread_mutex_lock(&s->sup->lock);
    s->sup->threads++;
    pthread_mutex_unlock(&s->sup->lock);
    thread_done(ps->sup);
    return true;
}

size_t th_supervisor_adopt(th_supervisor *sup, th_supervisor *prev)
{
    size_t moved = 0;
    for (size_t i = 0; sup && prev && i < sup->n; i++) {
        slot *s = &sup->slots[i];
        if (!s->registered)
            continue; /* refused now: its worker would serve nothing */
        for (size_t k = 0; k < prev->n; k++) {
            slot *ps = &prev->slots[k];
            if (strcmp(ps->path, s->path) != 0 || !same_key(&ps->key, &s->key))
                continue;
            pthread_mutex_lock(&ps->lock);
            pthread_mutex_lock(&s->lock);
            long pid = ps->w ? (long)ps->w->ch.pid : 0;
            if (adopt_worker(s, ps)) {
                moved++;
                th_log(TH_LOG_INFO, "plugin %s: unchanged; its worker %ld carries over", s->path, pid);
            }
            pthread_mutex_unlock(&s->lock);
            pthread_mutex_unlock(&ps->lock);
            break;
        }
    }
    return moved;
}

void th_supervisor_stop(th_supervisor *sup)
{
    if (!sup)
        return;
    pthread_mutex_lock(&sup->lock);
    sup->stopping = true;
    pthread_mutex_unlock(&sup->lock);
    for (size_t i = 0; i < sup->n; i++) {
        slot *s = &sup->slots[i];
        pthread_mutex_lock(&s->lock);
        if (s->w) {
            snprintf(s->w->kill_reason, sizeof s->w->kill_reason, "the host is shutting down");
            kill(s->w->ch.pid, SIGKILL);
        }
        pthread_mutex_unlock(&s->lock);
    }
}

void th_supervisor_free(th_supervisor *sup)
{
    if (!sup)
        return;
    th_supervisor_stop(sup);
    /* A deferred call ends on its worker's monitor thread, and the last
     * reference to a registry replaced by a reload may go with it: then
     * this runs on one of SUP's own threads, which must not wait for
     * itself (it did, 5 s, and then leaked SUP). */
    slot *mine = NULL;
    if (monitored) {
        pthread_mutex_lock(&monitored->lock);
        mine = monitored->slot;
        pthread_mutex_unlock(&monitored->lock);
    }
    /* Monitor threads end once their worker is reaped. */
    pthread_mutex_lock(&sup->lock);
    long long deadline = th_now_ms() + 5000;
    while (sup->threads > 0 && !(mine && mine->sup == sup) && th_cond_wait_until(&sup->cond, &sup->lock, deadline))
        ;
    bool idle = sup->threads == 0;
    sup->orphaned = !idle; /* a thread still uses it: freed after it */
    pthread_mutex_unlock(&sup->lock);
    if (idle)
        destroy(sup);
}

static void destroy(th_supervisor *sup)
{
    for (size_t i = 0; i < sup->n; i++) {
        json_object_put(sup->slots[i].tools);
        json_object_put(sup->slots[i].needs);
        pthread_mutex_destroy(&sup->slots[i].lock);
        free(sup->paths[i]);
    }
    while (sup->resources) {
        proxy_res *pr = sup->resources;
        sup->resources = pr->next;
        free(pr->key);
        free(pr);
    }
    for (size_t i = 0; i < sup->ntools; i++) {
        free(sup->tools[i]->name);
        free(sup->tools[i]->call_head);
        free(sup->tools[i]);
    }
    free(sup->tools);
    free(sup->paths);
    free(sup->slots);
    pthread_mutex_destroy(&sup->lock);
    pthread_cond_destroy(&sup->cond);
    free(sup);
}
