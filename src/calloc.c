/* SPDX-License-Identifier: MIT */
/*
** calloc.c: the executable's calloc, so that small zeroed blocks (json-c's
** objects, ours, in-process plugins') come from glibc's per-thread cache.
** Linked into toolhost only; nothing calls it by another name.
**
** Why: glibc 2.36 (Debian 12's) serves calloc from the arena and never
** from the tcache, while free() puts every small chunk into the tcache. A
** json-c object callocs its hash table and a 16-entry array (656 bytes);
** each tool call made and freed several, so the tcache bin filled up with
** chunks calloc never took back, and from then on each such calloc went
** through _int_malloc and each free through _int_free: 1.6k of an echo
** call's 20k instructions. As malloc and memset, a small block is served
** and taken back by the tcache.
**
** An executable's definition comes first in symbol lookup: libc, json-c,
** ld.so and plugins all call this one. It must therefore stay right with
** any allocator underneath: it only ever calls malloc (whichever one is in
** use: glibc's, a sanitizer's, valgrind's, an LD_PRELOADed one), and hands
** larger blocks, where calloc can skip zeroing fresh pages, to the calloc
** that follows this executable in lookup order (RTLD_NEXT), found once
** before main; until then, and if there is none, malloc and memset.
*/
#define _GNU_SOURCE /* RTLD_NEXT */
#include "config.h"

#include <stdlib.h> /* __GLIBC__ */

#if defined(__GLIBC__) && !defined(TH_NO_CALLOC)

#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>

#include "base/util.h"

/* glibc's tcache holds chunks for requests of up to 1032 bytes (its
 * default tcache_max); above it malloc goes to the arena anyway. */
#define SMALL_CALLOC 1024

typedef void *calloc_fn(size_t, size_t);

/* The next calloc in lookup order; NULL before the constructor ran (ld.so
 * and the libraries' constructors allocate before it) or if none. */
static _Atomic(calloc_fn *) next_calloc;

__attribute__((constructor)) static void find_next_calloc(void)
{
    /* dlsym may itself calloc: that call finds next_calloc NULL and is
     * served by malloc and memset. */
    calloc_fn *f = (calloc_fn *)dlsym(RTLD_NEXT, "calloc");
    atomic_store_explicit(&next_calloc, f, memory_order_release);
}

void *calloc(size_t n, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(n, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    calloc_fn *next = total > SMALL_CALLOC ? atomic_load_explicit(&next_calloc, memory_order_acquire) : NULL;
    if (next)
        return next(n, size);
    /* th_zalloc keeps the compiler from folding malloc and memset back into
     * a call to calloc, which would be this function. */
    return th_zalloc(total);
}

#endif
