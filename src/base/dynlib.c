/* SPDX-License-Identifier: MIT */
/*
** base/dynlib.c: opening a library with dlopen() on first use and
** resolving its functions into a table (see dynlib.h). Why: the dynamic
** linker spends more on libcrypto and libmicrohttpd (with GnuTLS and its
** eight dependencies) than the rest of a start costs, on every start,
** including the stdio-only ones that never use them.
*/
#include "config.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/dynlib.h"

/* The library being opened by do_open(): pthread_once() takes no argument.
 * Guarded by open_lock, held around the pthread_once() call. */
static th_dynlib *opening;
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;

static void do_open(void)
{
    th_dynlib *lib = opening;
    /* RTLD_LOCAL: the library's symbols stay out of the global scope, so a
     * plugin does not bind to them by accident (it links its own). */
    void *h = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        snprintf(lib->error, sizeof lib->error, "cannot open %s: %s", lib->soname, why ? why : "unknown error");
        return;
    }
    for (size_t i = 0; i < lib->count; i++) {
        dlerror();
        void *f = dlsym(h, lib->names[i]);
        if (!f) {
            const char *why = dlerror();
            snprintf(lib->error, sizeof lib->error, "%s has no function %s: %s", lib->soname, lib->names[i],
                     why ? why : "NULL address");
            /* The handle stays open: the library may be in use elsewhere
             * in the process, and closing it buys nothing. */
            return;
        }
        lib->slots[i] = f;
    }
    if (lib->after)
        lib->after();
    atomic_store_explicit(&lib->ok, true, memory_order_release);
}

bool th_dynlib_open(th_dynlib *lib)
{
    /* Every call through a table comes here: once open, one atomic load
     * (acquire: the slots were written before ok). */
    if (atomic_load_explicit(&lib->ok, memory_order_acquire))
        return true;
    pthread_mutex_lock(&open_lock);
    opening = lib;
    pthread_once(&lib->once, do_open);
    opening = NULL;
    pthread_mutex_unlock(&open_lock);
    return atomic_load_explicit(&lib->ok, memory_order_acquire);
}

bool th_dynlib_is_open(th_dynlib *lib)
{
    return atomic_load_explicit(&lib->ok, memory_order_acquire);
}

void th_dynlib_need(th_dynlib *lib)
{
    if (th_dynlib_open(lib))
        return;
    fprintf(stderr, "toolhost: %s\n", lib->error);
    abort();
}
