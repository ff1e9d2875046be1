/* SPDX-License-Identifier: MIT */
/*
** call/crashnote.c: a fixed table of running tool names (atomic slots, no lock)
** and the fatal-signal handler that writes them to stderr with write(2),
** then dies by the same signal. A stopgap until calls run isolated.
*/
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/signals.h"
#include "call/crashnote.h"

/* More than --max-concurrent-calls allows; beyond it calls go unnamed. */
#define NSLOTS 4096
/* Room for the handler and write(2); a fixed size because SIGSTKSZ is not
 * a constant on every libc. */
#define ALTSTACK_BYTES ((size_t)64 << 10)

static _Atomic(const char *) running[NSLOTS];

static const struct {
    int sig;
    const char *name;
} fatal_signals[] = {
    {SIGSEGV, "SIGSEGV"}, {SIGBUS, "SIGBUS"}, {SIGFPE, "SIGFPE"}, {SIGILL, "SIGILL"}, {SIGABRT, "SIGABRT"},
};
#define NFATAL (sizeof fatal_signals / sizeof fatal_signals[0])

static pthread_key_t altstack_key;
static pthread_once_t altstack_once = PTHREAD_ONCE_INIT;
static _Thread_local bool altstack_checked;
static char main_altstack[ALTSTACK_BYTES];

static void on_fatal(int sig)
{
    const char *name = "a fatal signal";
    for (size_t i = 0; i < NFATAL; i++)
        if (fatal_signals[i].sig == sig)
            name = fatal_signals[i].name;
    th_signal_safe_put("toolhost: critical: ");
    th_signal_safe_put(name);
    bool any = false;
    for (size_t i = 0; i < NSLOTS; i++) {
        const char *tool = atomic_load_explicit(&running[i], memory_order_relaxed);
        if (!tool)
            continue;
        th_signal_safe_put(any ? ", '" : " while running tool '");
        th_signal_safe_put(tool);
        th_signal_safe_put("'");
        any = true;
    }
    th_signal_safe_put(any ? "; the host dies with it\n" : " while no tool was running\n");
    /* SA_RESETHAND restored the default action: re-raising (delivered when
     * this handler returns, the signal being blocked in it) ends the
     * process with the signal, so the exit status still says what happened. */
    raise(sig);
}

/* Handlers run on the alternate stack of the thread that faulted; a thread
 * without one reports everything but a stack overflow. */
static bool use_altstack(void *mem, size_t size)
{
    stack_t cur;
    if (sigaltstack(NULL, &cur) == 0 && !(cur.ss_flags & SS_DISABLE))
        return true; /* one is set already (a sanitizer runtime's, say): keep it */
    stack_t st = {.ss_sp = mem, .ss_size = size, .ss_flags = 0};
    return sigaltstack(&st, NULL) == 0;
}

/* At thread exit: the stack must not stay registered once freed. */
static void drop_altstack(void *mem)
{
    stack_t st = {.ss_flags = SS_DISABLE};
    sigaltstack(&st, NULL);
    free(mem);
}

static void make_key(void)
{
    if (pthread_key_create(&altstack_key, drop_altstack) != 0)
        altstack_key = (pthread_key_t)-1;
}

static void thread_altstack(void)
{
    altstack_checked = true;
    stack_t cur;
    if (sigaltstack(NULL, &cur) == 0 && !(cur.ss_flags & SS_DISABLE))
        return;
    pthread_once(&altstack_once, make_key);
    void *mem = malloc(ALTSTACK_BYTES);
    if (!mem)
        return;
    if (altstack_key == (pthread_key_t)-1 || pthread_setspecific(altstack_key, mem) != 0) {
        free(mem);
        return;
    }
    if (!use_altstack(mem, ALTSTACK_BYTES)) {
        pthread_setspecific(altstack_key, NULL);
        free(mem);
    }
}

bool th_crashnote_init(void)
{
    if (!altstack_checked) {
        altstack_checked = true;
        if (!use_altstack(main_altstack, sizeof main_altstack))
            return false;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_ONSTACK | SA_RESETHAND;
    sa.sa_handler = on_fatal;
    for (size_t i = 0; i < NFATAL; i++)
        if (sigaction(fatal_signals[i].sig, &sa, NULL) != 0)
            return false;
    return true;
}

int th_crashnote_begin(const char *tool)
{
    if (!altstack_checked)
        thread_altstack();
    for (int i = 0; i < NSLOTS; i++) {
        const char *expected = NULL;
        if (atomic_load_explicit(&running[i], memory_order_relaxed) == NULL &&
            atomic_compare_exchange_strong(&running[i], &expected, tool))
            return i;
    }
    return -1;
}

void th_crashnote_end(int slot)
{
    if (slot >= 0 && slot < NSLOTS)
        atomic_store(&running[slot], NULL);
}
