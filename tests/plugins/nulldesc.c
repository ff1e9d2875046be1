/* SPDX-License-Identifier: MIT */
/*
** nulldesc.c: test plugin nulldesc.so, whose entry point declines by
** returning NULL.
*/
#include <toolhost/plugin.h>

TH_REGISTER(nulldesc)
{
    (void)server;
    return NULL;
}
