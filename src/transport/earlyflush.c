/* SPDX-License-Identifier: MIT */
/*
** transport/earlyflush.c: the early-write policy of the stdio transport
** (why: see the comment above early_flush in stdio.c): half a read, within
** bounds, and a backoff while the client shares our CPU.
*/
#include "config.h"

#include <limits.h>

#include "transport/earlyflush.h"

void th_early_init(th_early *e, bool can_probe)
{
    e->off = can_probe ? 0 : UINT_MAX;
    e->backoff = TH_EARLY_BACKOFF_MIN;
    e->unprobed = 0;
}

bool th_early_probe_due(const th_early *e)
{
    return e->unprobed == 0;
}

bool th_early_due(const th_early *e, unsigned n, size_t bytes, bool half)
{
    if (e->off > 0 || n < TH_EARLY_MIN_MSGS)
        return false;
    return half || n >= TH_EARLY_MAX_MSGS || bytes >= TH_EARLY_MAX_BYTES;
}

void th_early_probed(th_early *e, int unread, bool preempted)
{
    if (unread < 0) {
        e->off = UINT_MAX; /* nothing to tell it by: never again */
    } else if (unread == 0 && preempted) {
        e->off = e->backoff;
        if (e->backoff < TH_EARLY_BACKOFF_MAX)
            e->backoff *= 2;
        e->unprobed = 0; /* the first early write after the pause */
    } else {
        /* Elsewhere; unread 0 without a preemption: a quick client there. */
        if (unread > 0)
            e->backoff = TH_EARLY_BACKOFF_MIN;
        e->unprobed = TH_EARLY_PROBE_EVERY;
    }
}

void th_early_read_done(th_early *e)
{
    if (e->unprobed > 0 && e->off == 0)
        e->unprobed--;
    if (e->off > 0 && e->off != UINT_MAX)
        e->off--;
}
