/* SPDX-License-Identifier: MIT */
/*
** base/metrics.c: the values behind /metrics. Tool series live in a table
** that only grows (a slot is claimed by compare-and-swap, never freed while
** serving), so recording a call is a check of the thread's last series (or
** a hash and a probe) and two relaxed adds.
*/
#include "config.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/metrics.h"

bool th_metrics_enabled;

/* The OpenTelemetry MCP conventions' explicit boundaries for
 * mcp.server.operation.duration, in seconds (then +Inf). */
static const double op_bounds[] = {0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300};
#define NOP (sizeof op_bounds / sizeof op_bounds[0])

/* Queue waits are usually far below a call's duration. */
static const double wait_bounds[] = {0.0001, 0.001, 0.01, 0.1, 1, 10};
#define NWAIT (sizeof wait_bounds / sizeof wait_bounds[0])

typedef struct hist {
    atomic_uint_least64_t bucket[NOP + 1]; /* not cumulative: one bucket per call */
    atomic_uint_least64_t sum_ns;
} hist;

typedef struct series {
    char *tool;
    hist by_outcome[TH_METRICS_NOUTCOMES];
} series;

#define NSLOTS (2 * TH_METRICS_MAX_TOOLS)
static _Atomic(series *) slots[NSLOTS];
static atomic_size_t ntools;
static series other = {.tool = "_other"};
static atomic_uint generation; /* of the table: th_metrics_reset frees its series */

/* Requests of other methods: series by method, then by error code. */
typedef struct method_series {
    _Atomic(const char *) name;
    hist ok, other_error;
    atomic_int code[TH_METRICS_MAX_CODES]; /* 0: not claimed */
    hist by_code[TH_METRICS_MAX_CODES];
} method_series;
static method_series methods[TH_METRICS_MAX_METHODS];

static struct {
    atomic_ullong spans_dropped, spans_exported, spans_failed;
    atomic_llong in_flight;
    atomic_llong sessions;
    atomic_ullong refused;
    atomic_uint_least64_t audit_failures;
    atomic_uint_least64_t wait_bucket[NWAIT + 1];
    atomic_uint_least64_t wait_sum_ns;
    atomic_uint_least64_t worker[TH_METRICS_NWORKER_EVENTS];
} g;

/* The outcome names of the call log, and the error.type each maps to under
 * the conventions: a result with isError is "tool_error" (a crash and a
 * timeout are answered so), a busy refusal is its JSON-RPC code. */
static const struct {
    const char *name;
    const char *error_type;
} outcomes[TH_METRICS_NOUTCOMES] = {
    [TH_METRICS_OK] = {"ok", NULL},
    [TH_METRICS_ERROR] = {"error", "tool_error"},
    [TH_METRICS_CRASH] = {"crash", "tool_error"},
    [TH_METRICS_TIMEOUT] = {"timeout", "tool_error"},
    [TH_METRICS_CANCELLED] = {"cancelled", "cancelled"},
    [TH_METRICS_BUSY] = {"busy", "-31000"},
    [TH_METRICS_LIMITED] = {"limited", "-31002"},
};

const char *th_metrics_error_type(th_metrics_outcome outcome)
{
    return (unsigned)outcome < TH_METRICS_NOUTCOMES ? outcomes[outcome].error_type : "tool_error";
}

const char *th_metrics_outcome_name(th_metrics_outcome outcome)
{
    return (unsigned)outcome < TH_METRICS_NOUTCOMES ? outcomes[outcome].name : "error";
}

static const struct {
    const char *name, *help;
} worker_events[TH_METRICS_NWORKER_EVENTS] = {
    [TH_METRICS_WORKER_START] = {"toolhost_worker_starts_total", "Worker processes started."},
    [TH_METRICS_WORKER_CRASH] = {"toolhost_worker_crashes_total", "Worker processes that died unasked."},
    [TH_METRICS_WORKER_RESTART] = {"toolhost_worker_restarts_total", "Worker processes started after a crash."},
    [TH_METRICS_WORKER_QUARANTINE] = {"toolhost_worker_quarantines_total",
                                      "Plugins quarantined after repeated crashes."},
};

static size_t name_hash(const char *s)
{
    size_t h = 5381;
    while (*s)
        h = h * 33 + (unsigned char)*s++;
    return h;
}

/* TOOL's series: found, or claimed in the first empty slot of its probe. */
static series *series_of(const char *tool)
{
    size_t i = name_hash(tool) % NSLOTS;
    for (size_t n = 0; n < NSLOTS; n++, i = (i + 1) % NSLOTS) {
        series *s = atomic_load_explicit(&slots[i], memory_order_acquire);
        if (s && strcmp(s->tool, tool) == 0)
            return s;
        if (s)
            continue;
        if (atomic_load_explicit(&ntools, memory_order_relaxed) >= TH_METRICS_MAX_TOOLS)
            return &other;
        series *fresh = calloc(1, sizeof *fresh);
        if (!fresh || !(fresh->tool = strdup(tool))) {
            free(fresh);
            return &other;
        }
        series *expected = NULL;
        if (atomic_compare_exchange_strong_explicit(&slots[i], &expected, fresh, memory_order_acq_rel,
                                                    memory_order_acquire)) {
            atomic_fetch_add_explicit(&ntools, 1, memory_order_relaxed);
            return fresh;
        }
        free(fresh->tool);
        free(fresh);
        if (strcmp(expected->tool, tool) == 0)
            return expected; /* another thread claimed it for the same name */
    }
    return &other;
}

static size_t bucket_of(const double *bounds, size_t n, long long ns)
{
    double s = (double)ns / 1e9;
    size_t i = 0;
    while (i < n && s > bounds[i])
        i++;
    return i;
}

void th_metrics_call_begin(void)
{
    atomic_fetch_add_explicit(&g.in_flight, 1, memory_order_relaxed);
}

void th_metrics_call_end(const char *tool, th_metrics_outcome outcome, long long elapsed_ns)
{
    atomic_fetch_sub_explicit(&g.in_flight, 1, memory_order_relaxed);
    if ((unsigned)outcome >= TH_METRICS_NOUTCOMES)
        outcome = TH_METRICS_ERROR;
    if (elapsed_ns < 0)
        elapsed_ns = 0;
    /* A thread mostly serves the same tool again: its last series is
     * checked before the table is probed (series never move). */
    static _Thread_local series *last;
    static _Thread_local unsigned last_gen;
    unsigned gen = atomic_load_explicit(&generation, memory_order_relaxed);
    if (!tool)
        tool = "";
    if (!last || last_gen != gen || strcmp(last->tool, tool) != 0) {
        last = series_of(tool);
        last_gen = gen;
    }
    hist *h = &last->by_outcome[outcome];
    atomic_fetch_add_explicit(&h->bucket[bucket_of(op_bounds, NOP, elapsed_ns)], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&h->sum_ns, (uint_least64_t)elapsed_ns, memory_order_relaxed);
}

static void hist_add(hist *h, long long ns)
{
    if (ns < 0)
        ns = 0;
    atomic_fetch_add_explicit(&h->bucket[bucket_of(op_bounds, NOP, ns)], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&h->sum_ns, (uint_least64_t)ns, memory_order_relaxed);
}

/* METHOD's series, claimed by compare-and-swap; NULL once all are taken. */
static method_series *method_of(const char *method)
{
    for (size_t i = 0; i < TH_METRICS_MAX_METHODS; i++) {
        const char *name = atomic_load_explicit(&methods[i].name, memory_order_acquire);
        if (!name && atomic_compare_exchange_strong(&methods[i].name, &name, method))
            return &methods[i];
        if (name == method || strcmp(name, method) == 0)
            return &methods[i];
    }
    return NULL;
}

static hist *code_hist(method_series *m, int code)
{
    for (size_t i = 0; i < TH_METRICS_MAX_CODES; i++) {
        int c = atomic_load_explicit(&m->code[i], memory_order_acquire);
        if (!c && atomic_compare_exchange_strong(&m->code[i], &c, code))
            return &m->by_code[i];
        if (c == code)
            return &m->by_code[i];
    }
    return &m->other_error;
}

void th_metrics_request_end(const char *method, int error_code, long long elapsed_ns)
{
    method_series *m = method_of(method);
    if (m)
        hist_add(error_code ? code_hist(m, error_code) : &m->ok, elapsed_ns);
}

void th_metrics_span_dropped(void)
{
    atomic_fetch_add_explicit(&g.spans_dropped, 1, memory_order_relaxed);
}

void th_metrics_spans_exported(size_t n, bool ok)
{
    atomic_fetch_add_explicit(ok ? &g.spans_exported : &g.spans_failed, n, memory_order_relaxed);
}

void th_metrics_queue_wait(long long wait_ns)
{
    if (wait_ns < 0)
        wait_ns = 0;
    atomic_fetch_add_explicit(&g.wait_bucket[bucket_of(wait_bounds, NWAIT, wait_ns)], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&g.wait_sum_ns, (uint_least64_t)wait_ns, memory_order_relaxed);
}

void th_metrics_worker(th_metrics_worker_event ev)
{
    if ((unsigned)ev < TH_METRICS_NWORKER_EVENTS)
        atomic_fetch_add_explicit(&g.worker[ev], 1, memory_order_relaxed);
}

void th_metrics_set_refused(size_t n)
{
    atomic_store_explicit(&g.refused, n, memory_order_relaxed);
}

void th_metrics_sessions_add(int delta)
{
    atomic_fetch_add_explicit(&g.sessions, delta, memory_order_relaxed);
}

/* ---- rendering ------------------------------------------------------------ */

/* A label value as the text format quotes it. */
static bool put_label(th_buf *b, const char *v)
{
    bool ok = true;
    for (; ok && *v; v++) {
        const char *esc = *v == '\\' ? "\\\\" : *v == '"' ? "\\\"" : *v == '\n' ? "\\n" : NULL;
        ok = esc ? th_buf_printf(b, "%s", esc) : th_buf_append(b, v, 1);
    }
    return ok;
}

static bool put_head(th_buf *b, const char *name, const char *type, const char *help)
{
    return th_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* One histogram series: cumulative buckets from per-bucket COUNTS, then
 * _sum and _count. LABELS is the label text before "le" (may be empty). */
static bool put_hist(th_buf *b, const char *name, const char *labels, const double *bounds, size_t n,
                     const uint64_t *counts, uint64_t sum_ns)
{
    uint64_t cum = 0;
    const char *sep = *labels ? "," : "";
    bool ok = true;
    for (size_t i = 0; ok && i <= n; i++) {
        cum += counts[i];
        if (i < n)
            ok = th_buf_printf(b, "%s_bucket{%s%sle=\"%g\"} %llu\n", name, labels, sep, bounds[i],
                               (unsigned long long)cum);
        else
            ok = th_buf_printf(b, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", name, labels, sep, (unsigned long long)cum);
    }
    const char *open = *labels ? "{" : "", *close = *labels ? "}" : "";
    return ok && th_buf_printf(b, "%s_sum%s%s%s %.9f\n%s_count%s%s%s %llu\n", name, open, labels, close,
                               (double)sum_ns / 1e9, name, open, labels, close, (unsigned long long)cum);
}

/* The histogram series of S whose outcomes map to ERROR_TYPE, if any. */
static bool put_op_series(th_buf *b, const series *s, const char *error_type)
{
    uint64_t counts[NOP + 1] = {0}, sum = 0, total = 0;
    for (size_t o = 0; o < TH_METRICS_NOUTCOMES; o++) {
        const char *et = outcomes[o].error_type;
        if (!(et == error_type || (et && error_type && strcmp(et, error_type) == 0)))
            continue;
        for (size_t i = 0; i <= NOP; i++) {
            uint64_t v = atomic_load_explicit(&s->by_outcome[o].bucket[i], memory_order_relaxed);
            counts[i] += v;
            total += v;
        }
        sum += atomic_load_explicit(&s->by_outcome[o].sum_ns, memory_order_relaxed);
    }
    if (!total)
        return true;
    th_buf labels = {0};
    bool ok = th_buf_printf(&labels, "mcp_method_name=\"tools/call\",gen_ai_tool_name=\"") && put_label(&labels, s->tool) &&
              th_buf_printf(&labels, "\"");
    if (ok && error_type)
        ok = th_buf_printf(&labels, ",error_type=\"%s\"", error_type);
    ok = ok && put_hist(b, "mcp_server_operation_duration_seconds", labels.data, op_bounds, NOP, counts, sum);
    free(labels.data);
    return ok;
}

/* The error types, each once, in the order of the outcomes. */
static bool put_op_all(th_buf *b, const series *s)
{
    bool ok = true;
    for (size_t o = 0; ok && o < TH_METRICS_NOUTCOMES; o++) {
        bool first = true;
        for (size_t p = 0; p < o; p++) {
            const char *a = outcomes[p].error_type, *c = outcomes[o].error_type;
            if (a == c || (a && c && strcmp(a, c) == 0))
                first = false;
        }
        if (first)
            ok = put_op_series(b, s, outcomes[o].error_type);
    }
    return ok;
}

static bool put_calls(th_buf *b, const series *s)
{
    bool ok = true;
    for (size_t o = 0; ok && o < TH_METRICS_NOUTCOMES; o++) {
        uint64_t n = 0;
        for (size_t i = 0; i <= NOP; i++)
            n += atomic_load_explicit(&s->by_outcome[o].bucket[i], memory_order_relaxed);
        if (n)
            ok = th_buf_printf(b, "toolhost_tool_calls_total{tool=\"") && put_label(b, s->tool) &&
                 th_buf_printf(b, "\",outcome=\"%s\"} %llu\n", outcomes[o].name, (unsigned long long)n);
    }
    return ok;
}

static bool put_method_hist(th_buf *b, const char *method, const char *error_type, const hist *h)
{
    uint64_t counts[NOP + 1], total = 0;
    for (size_t i = 0; i <= NOP; i++)
        total += counts[i] = atomic_load_explicit(&h->bucket[i], memory_order_relaxed);
    if (!total)
        return true;
    th_buf labels = {0};
    bool ok = th_buf_printf(&labels, "mcp_method_name=\"") && put_label(&labels, method) &&
              th_buf_printf(&labels, "\"%s%s%s", error_type ? ",error_type=\"" : "", error_type ? error_type : "",
                            error_type ? "\"" : "");
    ok = ok && put_hist(b, "mcp_server_operation_duration_seconds", labels.data, op_bounds, NOP, counts,
                        atomic_load_explicit(&h->sum_ns, memory_order_relaxed));
    free(labels.data);
    return ok;
}

/* The series of every method but tools/call's tool series. */
static bool put_methods(th_buf *b)
{
    bool ok = true;
    for (size_t i = 0; ok && i < TH_METRICS_MAX_METHODS; i++) {
        const method_series *m = &methods[i];
        const char *name = atomic_load_explicit(&m->name, memory_order_acquire);
        if (!name)
            break;
        ok = put_method_hist(b, name, NULL, &m->ok);
        for (size_t c = 0; ok && c < TH_METRICS_MAX_CODES; c++) {
            char code[16];
            snprintf(code, sizeof code, "%d", atomic_load_explicit(&m->code[c], memory_order_relaxed));
            ok = put_method_hist(b, name, code, &m->by_code[c]);
        }
        ok = ok && put_method_hist(b, name, "_OTHER", &m->other_error);
    }
    return ok;
}

static bool put_counter(th_buf *b, const char *name, const char *help, atomic_ullong *v)
{
    return put_head(b, name, "counter", help) &&
           th_buf_printf(b, "%s %llu\n", name, (unsigned long long)atomic_load_explicit(v, memory_order_relaxed));
}

/* Call PUT on every tool series in use, "_other" last. */
static bool each_series(th_buf *b, bool (*put)(th_buf *, const series *))
{
    bool ok = true;
    for (size_t i = 0; ok && i < NSLOTS; i++) {
        const series *s = atomic_load_explicit(&slots[i], memory_order_acquire);
        if (s)
            ok = put(b, s);
    }
    return ok && put(b, &other);
}

static bool put_wait(th_buf *b)
{
    uint64_t counts[NWAIT + 1];
    for (size_t i = 0; i <= NWAIT; i++)
        counts[i] = atomic_load_explicit(&g.wait_bucket[i], memory_order_relaxed);
    return put_head(b, "toolhost_queue_wait_seconds", "histogram",
                    "Time tool calls waited for a thread of the pool before they ran.") &&
           put_hist(b, "toolhost_queue_wait_seconds", "", wait_bounds, NWAIT, counts,
                    atomic_load_explicit(&g.wait_sum_ns, memory_order_relaxed));
}

static bool put_gauge(th_buf *b, const char *name, const char *help, long long v)
{
    return put_head(b, name, "gauge", help) && th_buf_printf(b, "%s %lld\n", name, v);
}

static bool put_workers(th_buf *b)
{
    bool ok = true;
    for (size_t e = 0; ok && e < TH_METRICS_NWORKER_EVENTS; e++)
        ok = put_head(b, worker_events[e].name, "counter", worker_events[e].help) &&
             th_buf_printf(b, "%s %llu\n", worker_events[e].name,
                           (unsigned long long)atomic_load_explicit(&g.worker[e], memory_order_relaxed));
    return ok;
}

void th_metrics_audit_failure(void)
{
    atomic_fetch_add_explicit(&g.audit_failures, 1, memory_order_relaxed);
}

bool th_metrics_render(th_buf *out, long long rss_bytes)
{
    return put_head(out, "toolhost_tool_calls_total", "counter", "Tool calls by tool and outcome.") &&
           each_series(out, put_calls) &&
           put_head(out, "mcp_server_operation_duration_seconds", "histogram",
                    "MCP request duration as observed on the receiver, from when it was read until its "
                    "result was sent.") &&
           each_series(out, put_op_all) && put_methods(out) &&
           put_gauge(out, "toolhost_calls_in_flight", "Tool calls admitted and not yet answered.",
                     atomic_load_explicit(&g.in_flight, memory_order_relaxed)) &&
           put_wait(out) && put_workers(out) &&
           put_gauge(out, "toolhost_plugins_refused", "Plugins the last load or reload refused.",
                     (long long)atomic_load_explicit(&g.refused, memory_order_relaxed)) &&
           put_head(out, "toolhost_audit_write_failures_total", "counter",
                    "Audit log lines that could not be written.") &&
           th_buf_printf(out, "toolhost_audit_write_failures_total %llu\n",
                         (unsigned long long)atomic_load_explicit(&g.audit_failures, memory_order_relaxed)) &&
           put_gauge(out, "toolhost_sessions", "Client sessions open.",
                     atomic_load_explicit(&g.sessions, memory_order_relaxed)) &&
           put_counter(out, "toolhost_spans_dropped_total",
                       "Spans dropped because the export queue was full (--otlp-endpoint).", &g.spans_dropped) &&
           put_counter(out, "toolhost_spans_exported_total", "Spans the OTLP collector accepted.",
                       &g.spans_exported) &&
           put_counter(out, "toolhost_spans_export_failed_total",
                       "Spans lost because their export failed (no connection, or an HTTP error).",
                       &g.spans_failed) &&
           put_gauge(out, "process_resident_memory_bytes", "Resident memory size in bytes.", rss_bytes);
}

void th_metrics_reset(void)
{
    for (size_t i = 0; i < NSLOTS; i++) {
        series *s = atomic_exchange(&slots[i], NULL);
        if (s) {
            free(s->tool);
            free(s);
        }
    }
    atomic_store(&ntools, 0);
    atomic_fetch_add(&generation, 1);
    memset(other.by_outcome, 0, sizeof other.by_outcome);
    memset(&g, 0, sizeof g);
    memset(methods, 0, sizeof methods);
}
