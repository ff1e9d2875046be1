/* SPDX-License-Identifier: MIT */
/*
** protocol/ratelimit.h: the limits on tools/call: token buckets per tool
** glob (shared, or one per principal) and concurrency caps. Pure
** bookkeeping under one lock: no I/O, no clock of its own.
*/
#ifndef TH_PROTOCOL_RATELIMIT_H
#define TH_PROTOCOL_RATELIMIT_H

#include <stdbool.h>

#include "base/util.h"

typedef struct th_ratelimit th_ratelimit;

typedef enum th_limit_kind {
    TH_LIMIT_RATE = 0,          /* GLOB=N/s[,burst=B]: one bucket for every caller */
    TH_LIMIT_RATE_PER_PRINCIPAL, /* the same, one bucket per principal */
    TH_LIMIT_CONCURRENCY,        /* GLOB=N: calls of the matching tools running at once */
    TH_LIMIT_NKINDS
} th_limit_kind;

typedef enum th_limit_verdict {
    TH_LIMIT_PASS = 0,
    TH_LIMIT_RATE_HIT,        /* a bucket is empty */
    TH_LIMIT_CONCURRENCY_HIT, /* a concurrency cap is reached */
} th_limit_verdict;

/* A concurrency slot taken by an admitted call, given back by
 * th_ratelimit_release (a zeroed hold holds nothing). */
typedef struct th_limit_hold {
    void *slot;
} th_limit_hold;

th_ratelimit *th_ratelimit_new(void);
void th_ratelimit_free(th_ratelimit *rl);

/* Add the rule SPEC of KIND; ERR names what is wrong with it. The first
 * rule of each kind whose glob matches a tool's exposed name applies. */
th_rc th_ratelimit_add(th_ratelimit *rl, th_limit_kind kind, const char *spec, th_err *err);

/*
** Put the rules of WITH (freed) in place of RL's, as a reload re-reads
** them: a rule of the same kind and glob keeps what it counted (tokens,
** principals, calls running) under its new numbers; calls admitted under
** a rule gone give their slots back to it.
*/
void th_ratelimit_replace(th_ratelimit *rl, th_ratelimit *with);

/*
** May TOOL's call by PRINCIPAL (NULL: anonymous) start at NOW_NS
** (th_now_ns)? On a pass, a token is taken and *HOLD holds the concurrency
** slot, if a rule applies; otherwise nothing is taken and *RETRY_MS says
** when a retry could pass (a concurrency hit cannot know: 1000).
*/
th_limit_verdict th_ratelimit_admit(th_ratelimit *rl, const char *tool, const char *principal, long long now_ns,
                                    th_limit_hold *hold, long long *retry_ms);

/* Give back HOLD's slot, once (it is cleared). */
void th_ratelimit_release(th_limit_hold *hold);

/* "rate_limited", "concurrency_limited". */
const char *th_limit_verdict_name(th_limit_verdict v);

#endif
