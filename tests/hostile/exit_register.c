/* SPDX-License-Identifier: MIT */
/*
** exit_register.c: hostile plugin whose register function calls exit(3).
** The scanner must refuse it, saying so, and the host start with the others.
*/
#include <stdlib.h>

#include <toolhost/plugin.h>

TH_REGISTER(exit_register)
{
    (void)server;
    exit(3);
}
