/* SPDX-License-Identifier: MIT */
/*
** protocol/ratelimit.c: the rules of --rate-limit, --rate-limit-per-principal
** and --concurrency-limit, and their token buckets and counters. A bucket
** belongs to a rule, not to a tool: a glob limits the tools it names together.
*/
#include "config.h"

#include <fnmatch.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/ratelimit.h"

/* Principals tracked per rule: past this, idle buckets are forgotten, and
 * when none is idle the newcomers share one bucket, so a client minting
 * tokens cannot grow the table without bound. */
#define MAX_PRINCIPALS 1024
#define NSLOTS (2 * MAX_PRINCIPALS)

typedef struct bucket {
    double tokens;
    long long at_ns; /* when TOKENS was last brought up to date */
} bucket;

typedef struct pslot {
    char *principal; /* NULL: empty */
    bucket b;
} pslot;

typedef struct rule {
    struct rule *next;
    char *glob;
    double rate;  /* tokens a second */
    double burst; /* the bucket's size */
    unsigned max_running;
    atomic_uint running;
    bucket shared;  /* TH_LIMIT_RATE, and the per-principal overflow */
    pslot *slots;   /* TH_LIMIT_RATE_PER_PRINCIPAL */
    size_t nslots;
} rule;

struct th_ratelimit {
    pthread_mutex_t lock;
    rule *rules[TH_LIMIT_NKINDS];
    rule *retired; /* replaced concurrency rules calls still hold */
};

th_ratelimit *th_ratelimit_new(void)
{
    th_ratelimit *rl = calloc(1, sizeof *rl);
    if (rl)
        pthread_mutex_init(&rl->lock, NULL);
    return rl;
}

static void rule_free(rule *r)
{
    for (size_t i = 0; r->slots && i < NSLOTS; i++)
        free(r->slots[i].principal);
    free(r->slots);
    free(r->glob);
    free(r);
}

void th_ratelimit_free(th_ratelimit *rl)
{
    if (!rl)
        return;
    for (size_t k = 0; k <= TH_LIMIT_NKINDS; k++)
        for (rule *r = k < TH_LIMIT_NKINDS ? rl->rules[k] : rl->retired, *next; r; r = next) {
            next = r->next;
            rule_free(r);
        }
    pthread_mutex_destroy(&rl->lock);
    free(rl);
}

/* ---- parsing ------------------------------------------------------------ */

static const struct {
    const char *unit;
    double seconds;
} units[] = {{"/s", 1}, {"/m", 60}, {"/h", 3600}};

/* "N/s", "N/m" or "N/h", then optionally ",burst=B": R's rate and burst. */
static bool parse_rate(rule *r, const char *text)
{
    char *end;
    double n = strtod(text, &end);
    if (end == text || !isfinite(n) || n <= 0)
        return false;
    size_t u = 0;
    while (u < sizeof units / sizeof units[0] && strncmp(end, units[u].unit, 2) != 0)
        u++;
    if (u == sizeof units / sizeof units[0])
        return false;
    r->rate = n / units[u].seconds;
    /* One period's worth by default: N/s lets N calls through at once. */
    r->burst = n < 1 ? 1 : floor(n);
    end += 2;
    if (!*end)
        return true;
    if (strncmp(end, ",burst=", 7) != 0)
        return false;
    const char *b = end + 7;
    long long burst = strtoll(b, &end, 10);
    if (end == b || *end || burst < 1 || burst > 1000000)
        return false;
    r->burst = (double)burst;
    return true;
}

static bool parse_count(rule *r, const char *text)
{
    char *end;
    long long n = strtoll(text, &end, 10);
    if (end == text || *end || n < 1 || n > 100000)
        return false;
    r->max_running = (unsigned)n;
    return true;
}

th_rc th_ratelimit_add(th_ratelimit *rl, th_limit_kind kind, const char *spec, th_err *err)
{
    static const char *const forms[TH_LIMIT_NKINDS] = {
        [TH_LIMIT_RATE] = "GLOB=N/s (or /m, /h) with an optional ,burst=B",
        [TH_LIMIT_RATE_PER_PRINCIPAL] = "GLOB=N/s (or /m, /h) with an optional ,burst=B",
        [TH_LIMIT_CONCURRENCY] = "GLOB=N (1 to 100000)",
    };
    const char *eq = strchr(spec, '=');
    if (!eq || eq == spec)
        return th_err_set(err, TH_ERR_VALUE, "'%s' is not %s", spec, forms[kind]);
    rule *r = calloc(1, sizeof *r);
    if (!r || !(r->glob = strndup(spec, (size_t)(eq - spec)))) {
        free(r);
        return th_err_set(err, TH_ERR_NOMEM, "out of memory");
    }
    bool ok = kind == TH_LIMIT_CONCURRENCY ? parse_count(r, eq + 1) : parse_rate(r, eq + 1);
    if (!ok) {
        rule_free(r);
        return th_err_set(err, TH_ERR_VALUE, "'%s' is not %s", spec, forms[kind]);
    }
    r->shared.tokens = r->burst;
    r->shared.at_ns = -1;
    if (kind == TH_LIMIT_RATE_PER_PRINCIPAL && !(r->slots = calloc(NSLOTS, sizeof *r->slots))) {
        rule_free(r);
        return th_err_set(err, TH_ERR_NOMEM, "out of memory");
    }
    rule **tail = &rl->rules[kind];
    while (*tail)
        tail = &(*tail)->next;
    *tail = r;
    return TH_OK;
}

/* ---- replacing the rules ---------------------------------------------- */

/* Unlink from *LIST the rule for GLOB, or NULL. */
static rule *take_glob(rule **list, const char *glob)
{
    for (; *list; list = &(*list)->next)
        if (strcmp((*list)->glob, glob) == 0) {
            rule *r = *list;
            *list = r->next;
            return r;
        }
    return NULL;
}

/* OLD, a rule NEW replaces, with NEW's numbers: what it counted (tokens
 * spent, principals, calls running) carries over. */
static rule *keep_state(rule *old, rule *new)
{
    old->rate = new->rate;
    old->burst = new->burst;
    old->max_running = new->max_running;
    old->shared.tokens = fmin(old->shared.tokens, old->burst);
    for (size_t i = 0; old->slots && i < NSLOTS; i++)
        old->slots[i].b.tokens = fmin(old->slots[i].b.tokens, old->burst);
    old->next = new->next;
    rule_free(new);
    return old;
}

void th_ratelimit_replace(th_ratelimit *rl, th_ratelimit *with)
{
    pthread_mutex_lock(&rl->lock);
    for (size_t k = 0; k < TH_LIMIT_NKINDS; k++) {
        rule *old = rl->rules[k];
        for (rule **at = &with->rules[k]; *at; at = &(*at)->next) {
            rule *same = take_glob(&old, (*at)->glob);
            if (same)
                *at = keep_state(same, *at);
        }
        rl->rules[k] = with->rules[k];
        with->rules[k] = NULL;
        /* A call admitted under a rule gone gives its slot back to it
         * (th_ratelimit_release), so one still held must outlive it. */
        for (rule *next; old; old = next) {
            next = old->next;
            if (atomic_load(&old->running) == 0) {
                rule_free(old);
            } else {
                old->next = rl->retired;
                rl->retired = old;
            }
        }
    }
    pthread_mutex_unlock(&rl->lock);
    th_ratelimit_free(with);
}

/* ---- buckets ------------------------------------------------------------ */

static rule *rule_for(th_ratelimit *rl, th_limit_kind kind, const char *tool)
{
    rule *r = rl->rules[kind];
    while (r && fnmatch(r->glob, tool, 0) != 0)
        r = r->next;
    return r;
}

static void refill(const rule *r, bucket *b, long long now_ns)
{
    if (b->at_ns >= 0 && now_ns > b->at_ns)
        b->tokens = fmin(r->burst, b->tokens + (double)(now_ns - b->at_ns) / 1e9 * r->rate);
    b->at_ns = now_ns;
}

static size_t name_hash(const char *s)
{
    size_t h = 5381;
    while (*s)
        h = h * 33 + (unsigned char)*s++;
    return h;
}

/* Drop the principals whose buckets have refilled: they are as good as new. */
static void forget_idle(rule *r, long long now_ns)
{
    pslot *old = r->slots;
    pslot *fresh = calloc(NSLOTS, sizeof *fresh);
    if (!fresh)
        return;
    r->nslots = 0;
    for (size_t i = 0; i < NSLOTS; i++) {
        if (!old[i].principal)
            continue;
        refill(r, &old[i].b, now_ns);
        if (old[i].b.tokens >= r->burst) {
            free(old[i].principal);
            continue;
        }
        size_t k = name_hash(old[i].principal) % NSLOTS;
        while (fresh[k].principal)
            k = (k + 1) % NSLOTS;
        fresh[k] = old[i];
        r->nslots++;
    }
    free(old);
    r->slots = fresh;
}

static bucket *principal_bucket(rule *r, const char *principal, long long now_ns)
{
    size_t k = name_hash(principal) % NSLOTS;
    for (size_t n = 0; n < NSLOTS; n++, k = (k + 1) % NSLOTS) {
        if (!r->slots[k].principal)
            break;
        if (strcmp(r->slots[k].principal, principal) == 0)
            return &r->slots[k].b;
    }
    if (r->nslots >= MAX_PRINCIPALS) {
        forget_idle(r, now_ns);
        if (r->nslots >= MAX_PRINCIPALS)
            return &r->shared;
        k = name_hash(principal) % NSLOTS;
        while (r->slots[k].principal)
            k = (k + 1) % NSLOTS;
    }
    if (!(r->slots[k].principal = strdup(principal)))
        return &r->shared;
    r->slots[k].b = (bucket){.tokens = r->burst, .at_ns = now_ns};
    r->nslots++;
    return &r->slots[k].b;
}

/* Whether B holds a whole token: refills add fractions in floating point,
 * and 0.998 + 0.002 may fall short of 1 by a rounding. */
static bool has_token(const bucket *b)
{
    return b->tokens >= 1 - 1e-9;
}

/* Milliseconds until B holds a whole token, rounded up. */
static long long wait_ms(const rule *r, const bucket *b)
{
    return (long long)ceil((1.0 - b->tokens) / r->rate * 1000.0);
}

th_limit_verdict th_ratelimit_admit(th_ratelimit *rl, const char *tool, const char *principal, long long now_ns,
                                    th_limit_hold *hold, long long *retry_ms)
{
    hold->slot = NULL;
    *retry_ms = 0;
    if (!rl)
        return TH_LIMIT_PASS;
    pthread_mutex_lock(&rl->lock);
    rule *conc = rule_for(rl, TH_LIMIT_CONCURRENCY, tool);
    rule *shared = rule_for(rl, TH_LIMIT_RATE, tool);
    rule *mine = rule_for(rl, TH_LIMIT_RATE_PER_PRINCIPAL, tool);
    bucket *sb = shared ? &shared->shared : NULL;
    bucket *pb = mine ? principal_bucket(mine, principal ? principal : "", now_ns) : NULL;
    if (sb)
        refill(shared, sb, now_ns);
    if (pb)
        refill(mine, pb, now_ns);
    th_limit_verdict v = TH_LIMIT_PASS;
    /* Nothing is taken from one limit when another refuses the call. */
    if (conc && atomic_load(&conc->running) >= conc->max_running) {
        v = TH_LIMIT_CONCURRENCY_HIT;
        *retry_ms = 1000;
    } else if ((sb && !has_token(sb)) || (pb && !has_token(pb))) {
        long long a = sb && !has_token(sb) ? wait_ms(shared, sb) : 0;
        long long b = pb && !has_token(pb) ? wait_ms(mine, pb) : 0;
        v = TH_LIMIT_RATE_HIT;
        *retry_ms = a > b ? a : b;
    } else {
        if (sb)
            sb->tokens -= 1;
        if (pb)
            pb->tokens -= 1;
        if (conc) {
            atomic_fetch_add(&conc->running, 1);
            hold->slot = conc;
        }
    }
    pthread_mutex_unlock(&rl->lock);
    return v;
}

void th_ratelimit_release(th_limit_hold *hold)
{
    rule *r = hold->slot;
    hold->slot = NULL;
    if (r)
        atomic_fetch_sub(&r->running, 1);
}

const char *th_limit_verdict_name(th_limit_verdict v)
{
    static const char *const names[] = {
        [TH_LIMIT_PASS] = "ok", [TH_LIMIT_RATE_HIT] = "rate_limited",
        [TH_LIMIT_CONCURRENCY_HIT] = "concurrency_limited"};
    return (unsigned)v < sizeof names / sizeof names[0] ? names[v] : "limited";
}
