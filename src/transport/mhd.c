/* SPDX-License-Identifier: MIT */
/*
** transport/mhd.c: libmicrohttpd opened on first use (see mhd.h and
** base/dynlib.h). Owns the function table.
*/
#include "config.h"

#include <stdio.h>

#include "base/dynlib.h"
#include "transport/mhd.h"

#ifndef TH_MHD_SONAME
#define TH_MHD_SONAME "libmicrohttpd.so.12"
#endif

static void *fns[th_mhd_count];

#define TH_MHD_NAME(f) #f,
static const char *const names[] = {TH_MHD_FUNCS(TH_MHD_NAME)};
#undef TH_MHD_NAME

_Static_assert(sizeof names / sizeof names[0] == th_mhd_count, "a name for every slot");
static th_dynlib lib = TH_DYNLIB_INIT(TH_MHD_SONAME, names, fns, th_mhd_count, NULL);

void *const *th_mhd(void)
{
    th_dynlib_need(&lib);
    return fns;
}

bool th_mhd_open(char *err, size_t errlen)
{
    if (th_dynlib_open(&lib))
        return true;
    if (err && errlen)
        snprintf(err, errlen, "%s", lib.error);
    return false;
}
