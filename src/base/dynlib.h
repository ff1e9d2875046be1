/* SPDX-License-Identifier: MIT */
/*
** base/dynlib.h: a library the host needs only for some features (HTTP,
** tokens, MACs), opened with dlopen() the first time one of them runs
** instead of by the dynamic linker at every start (see dynlib.c).
*/
#ifndef TH_DYNLIB_H
#define TH_DYNLIB_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

/* One library: its soname, the names of the functions wanted and where
 * their addresses go (slots[i] for names[i], in the same order). AFTER, if
 * set, runs once with the functions resolved, before anyone uses them.
 * Statically allocated by its owner (crypto.c, mhd.c); filled in once. */
typedef struct th_dynlib {
    const char *soname;
    const char *const *names;
    void **slots;
    size_t count;
    void (*after)(void);
    pthread_once_t once;
    atomic_bool ok;  /* set once, after every slot is filled */
    char error[256]; /* why it could not be opened; "" when ok */
} th_dynlib;

#define TH_DYNLIB_INIT(soname_, names_, slots_, count_, after_) \
    {(soname_), (names_), (slots_), (count_), (after_), PTHREAD_ONCE_INIT, false, ""}

/* Open LIB and resolve every name, once per process whatever the number of
 * threads asking. Returns true when all of it is there; otherwise false,
 * and LIB->error names the library and what failed (dlerror's text). */
bool th_dynlib_open(th_dynlib *lib);

/* Whether LIB has been opened successfully already (never opens it). */
bool th_dynlib_is_open(th_dynlib *lib);

/* The functions of LIB, opening it first if need be. A library this host
 * was built against that cannot be opened is a broken installation, as it
 * would have been for the dynamic linker: the message goes to stderr and
 * the process aborts, rather than call through a NULL pointer. Callers
 * that can fail cleanly call th_dynlib_open() first (e.g. at --http). */
void th_dynlib_need(th_dynlib *lib);

#endif
