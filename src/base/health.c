/* SPDX-License-Identifier: MIT */
/*
** base/health.c: the readiness flag behind /readyz, one atomic so that a
** probe never waits on the host's locks.
*/
#include "config.h"

#include <stdatomic.h>

#include "base/health.h"

static atomic_bool ready;

void th_health_set_ready(bool r)
{
    atomic_store(&ready, r);
}

bool th_health_ready(void)
{
    return atomic_load(&ready);
}
