/* SPDX-License-Identifier: MIT */
/*
** base/crypto.c: libcrypto opened on first use (see crypto.h and dynlib.h).
** Owns the function table and the one OPENSSL_init_crypto() call.
*/
#include "config.h"

#include <stdio.h>

#include "base/crypto.h"
#include "base/dynlib.h"

#ifndef TH_CRYPTO_SONAME
#define TH_CRYPTO_SONAME "libcrypto.so.3"
#endif

static void *fns[th_crypto_count];

#define TH_CRYPTO_NAME(f) #f,
static const char *const names[] = {TH_CRYPTO_FUNCS(TH_CRYPTO_NAME)};
#undef TH_CRYPTO_NAME

/* OpenSSL keeps per-thread state that a thread's exit frees; its own exit
 * handler frees the same state again when a transport or pool thread is
 * still running as the process ends (a double free ASan caught). The
 * process's end frees it all. Before any other call, so run here. */
static void after_open(void)
{
    ((__typeof__(&OPENSSL_init_crypto))fns[th_crypto_i_OPENSSL_init_crypto])(OPENSSL_INIT_NO_ATEXIT, NULL);
}

_Static_assert(sizeof names / sizeof names[0] == th_crypto_count, "a name for every slot");
static th_dynlib lib = TH_DYNLIB_INIT(TH_CRYPTO_SONAME, names, fns, th_crypto_count, after_open);

void *const *th_crypto(void)
{
    th_dynlib_need(&lib);
    return fns;
}

bool th_crypto_open(char *err, size_t errlen)
{
    if (th_dynlib_open(&lib))
        return true;
    if (err && errlen)
        snprintf(err, errlen, "%s", lib.error);
    return false;
}

void th_crypto_thread_stop(void)
{
    if (th_dynlib_is_open(&lib))
        ((__typeof__(&OPENSSL_thread_stop))fns[th_crypto_i_OPENSSL_thread_stop])();
}
