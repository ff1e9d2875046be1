/* SPDX-License-Identifier: MIT */
/*
** crash_register.c: hostile plugin whose register function faults. The
** scanner must refuse it, naming it and the signal.
*/
#include <stdint.h>

#include <toolhost/plugin.h>

static volatile uintptr_t bad_address = 8;

TH_REGISTER(crash_register)
{
    (void)server;
    return *(const th_tool *volatile *)bad_address;
}
