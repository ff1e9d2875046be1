/* SPDX-License-Identifier: MIT */
/*
** cli/ttest.c: `toolhost test FILE`: each case of a cases file sent to a
** real server in each isolation mode, reported as TAP for people and for
** Automake's tap-driver.sh. A server that dies fails its case and is
** started again for the next one.
*/
/* asprintf, strsignal */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "base/util.h"
#include "cli/cases.h"
#include "cli/cli.h"
#include "cli/hostproc.h"

/* Exit statuses: the verdict, or why there was none. */
enum { TT_PASS = 0, TT_FAIL = 1, TT_USAGE = 2 };

/* How long past its deadline (the case's, else the server's default) a
 * case's answer is awaited before the server is taken for hung. */
enum { TT_GRACE_MS = 10000, TT_DEFAULT_DEADLINE_MS = 60000 };

/* How long a server may take to answer initialize: loading its plugins
 * (each within the server's --load-timeout, 10 s by default) comes first,
 * and a hang there would otherwise stall the run for ever. */
#define TT_START_TIMEOUT_S 60.0

static const char test_synopsis[] = "Usage: toolhost test [--isolation=MODE] [--start-timeout=SECONDS] [OPTION]... FILE\n";

static const char test_usage[] =
    "Run the cases in FILE (a JSON array of cases, or one case a line; see\n"
    "toolhost(1) and doc/plugins.md) against a toolhost server, each case in\n"
    "both isolation modes, process and none (--isolation=MODE: that one only),\n"
    "and report them as TAP. Every other OPTION is the server's, e.g.\n"
    "--plugin-dir=DIR, --set=NAME.KEY=VALUE, --config=FILE.\n"
    "--start-timeout=SECONDS: a server that has not answered initialize by\n"
    "then (default 60; plugins load first) is killed and the run ends.\n"
    "Exit status: 0 when every case passed, 1 when one failed, 2 for a usage\n"
    "error, a cases file that cannot be read, or a server that does not start.\n";

static const struct mode {
    unsigned bit;
    const char *name;
} modes[] = {{TH_CASE_PROCESS, "process"}, {TH_CASE_NONE, "none"}};

/* The running server and what it was started for. */
typedef struct runner {
    char **argv;    /* the server's: base options, then mode and deadline */
    size_t nbase;
    th_hostproc host;
    bool up;
    const char *mode;
    long long timeout_ms;
    long long start_timeout_ms;
    int next_id;
    int tap;        /* the last test point written */
    bool failed;
} runner;

/* One test point's outcome: NULL MESSAGE means it passed. */
typedef struct outcome {
    char *message;
    th_case_diff diff;
} outcome;

/* Why the server stopped, as its wait STATUS tells. */
static void describe_end(int status, char *buf, size_t size)
{
    if (status >= 0 && WIFSIGNALED(status))
        snprintf(buf, size, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else if (status >= 0 && WIFEXITED(status))
        snprintf(buf, size, "exit status %d", WEXITSTATUS(status));
    else
        snprintf(buf, size, "its end unknown");
}

static void stop_host(runner *r, bool kill, char *why, size_t size)
{
    int status = r->up ? th_hostproc_stop(&r->host, kill) : -1;
    if (why)
        describe_end(status, why, size);
    r->up = false;
}

/* A server for C in MODE, the running one when it fits. False when it
 * does not start: the run cannot go on. */
static bool host_for(runner *r, const th_case *c, const char *mode)
{
    if (r->up && r->mode == mode && r->timeout_ms == c->timeout_ms)
        return true;
    stop_host(r, false, NULL, 0);
    char iso[32], deadline[64];
    size_t n = r->nbase;
    snprintf(iso, sizeof iso, "--isolation=%s", mode);
    r->argv[n++] = iso;
    if (c->timeout_ms > 0) {
        snprintf(deadline, sizeof deadline, "--call-timeout=%lld.%03lld", c->timeout_ms / 1000, c->timeout_ms % 1000);
        r->argv[n++] = deadline;
    }
    r->argv[n] = NULL;
    r->mode = mode;
    r->timeout_ms = c->timeout_ms;
    r->next_id = 2;
    if (!th_hostproc_start(&r->host, r->argv)) {
        fprintf(stderr, "toolhost test: cannot start the server: %s\n", strerror(errno));
        return false;
    }
    r->up = true;
    bool timed_out = false;
    if (th_hostproc_initialize_within(&r->host, "toolhost test", r->start_timeout_ms, &timed_out))
        return true;
    char why[96];
    stop_host(r, true, why, sizeof why);
    if (timed_out)
        fprintf(stderr,
                "toolhost test: the server (--isolation=%s) did not answer initialize within %g s "
                "(--start-timeout): it was killed\n",
                mode, (double)r->start_timeout_ms / 1000.0);
    else
        fprintf(stderr, "toolhost test: the server (--isolation=%s) did not start: %s; see its messages above\n",
                mode, why);
    return false;
}

static bool send_request(runner *r, const char *method, json_object *params, int id)
{
    char *line = NULL;
    bool ok = asprintf(&line, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"%s\",\"params\":%s}", id, method,
                       json_object_to_json_string_ext(params, JSON_C_TO_STRING_PLAIN)) >= 0 &&
              th_hostproc_send(&r->host, line);
    free(line);
    return ok;
}

static void set_message(outcome *o, const char *fmt, const char *a, long long n)
{
    if (asprintf(&o->message, fmt, a, n) < 0)
        o->message = NULL;
}

/* The response to ID within LIMIT_MS; NULL when the server ended, or hung
 * and was killed, after writing which to O. A response to OTHER (>= 2) on
 * the way is kept in *EARLY. */
static json_object *await_id(runner *r, int id, long long limit_ms, int other, json_object **early, outcome *o)
{
    for (;;) {
        bool timed_out = false;
        json_object *m = th_hostproc_read(&r->host, (int)limit_ms, &timed_out), *v;
        if (!m) {
            char why[96];
            stop_host(r, timed_out, why, sizeof why);
            set_message(o, timed_out ? "no answer within %2$lld ms: the server was killed, %1$s" :
                                       "the server ended without answering: %s", why, limit_ms);
            return NULL;
        }
        bool response = json_object_object_get_ex(m, "id", &v) && !json_object_object_get_ex(m, "method", NULL);
        if (response && json_object_get_int(v) == id)
            return m;
        if (response && early && !*early && json_object_get_int(v) == other)
            *early = json_object_get(m);
        json_object_put(m);
    }
}

/* Read R's server for MS milliseconds, keeping a response to ID in
 * *EARLY. False when the server ended meanwhile (O says how). */
static bool watch(runner *r, long long ms, int id, json_object **early, outcome *o)
{
    long long until = th_now_ms() + ms;
    while (!*early) {
        long long left = until - th_now_ms();
        bool timed_out = false;
        json_object *m = th_hostproc_read(&r->host, (int)(left > 0 ? left : 0), &timed_out), *v;
        if (timed_out)
            return true;
        if (!m) {
            char why[96];
            stop_host(r, false, why, sizeof why);
            set_message(o, "the server ended before the cancel: %s", why, 0);
            return false;
        }
        if (json_object_object_get_ex(m, "id", &v) && json_object_get_int(v) == id &&
            !json_object_object_get_ex(m, "method", NULL))
            *early = json_object_get(m);
        json_object_put(m);
    }
    return true;
}

/* Case C with a cancel: sent, cancelled after its delay, then a ping. It
 * passes when no response to it came before the ping's answer (the server
 * sends none for a cancelled request, so none can come later). */
static void run_cancel(runner *r, const th_case *c, int id, outcome *o)
{
    json_object *early = NULL, *pong;
    if (!watch(r, c->cancel_ms, id, &early, o))
        return;
    char note[160];
    snprintf(note, sizeof note,
             "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":%d,"
             "\"reason\":\"toolhost test\"}}",
             id);
    json_object *empty = json_object_new_object();
    if (!early && th_hostproc_send(&r->host, note) && send_request(r, "ping", empty, id + 1) &&
        (pong = await_id(r, id + 1, TT_GRACE_MS, id, &early, o)) != NULL)
        json_object_put(pong);
    json_object_put(empty);
    if (!early)
        return;
    free(o->message);
    o->message = strdup("a result");
    snprintf(o->diff.field, sizeof o->diff.field, "cancelled");
    o->diff.expected = strdup("\"no result\"");
    o->diff.got = strdup(json_object_to_json_string_ext(early, JSON_C_TO_STRING_PLAIN));
    json_object_put(early);
}

/* Run C on R's server; O holds what went wrong, if anything. */
static void run_case(runner *r, const th_case *c, outcome *o)
{
    int id = r->next_id;
    r->next_id += 2; /* one for a cancel's ping */
    if (!send_request(r, c->method, c->params, id)) {
        char why[96];
        stop_host(r, false, why, sizeof why);
        set_message(o, "the server ended before the request was sent: %s", why, 0);
        return;
    }
    if (c->cancel_ms >= 0) {
        run_cancel(r, c, id, o);
        return;
    }
    long long limit = (c->timeout_ms ? c->timeout_ms : TT_DEFAULT_DEADLINE_MS) + TT_GRACE_MS;
    json_object *resp = await_id(r, id, limit, 0, NULL, o);
    if (resp && !th_case_check(c, resp, &o->diff))
        o->message = strdup("differs"); /* report() words it from the diff */
    json_object_put(resp);
}

/* A YAML line KEY: VALUE, VALUE as a JSON string (YAML reads it so). */
static void yaml_string(const char *key, const char *value)
{
    json_object *s = json_object_new_string(value);
    printf("  %s: %s\n", key, json_object_to_json_string_ext(s, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(s);
}

/* The test point for C in MODE. */
static void report(runner *r, const th_case *c, size_t index, const char *mode, outcome *o)
{
    r->tap++;
    if (!o->message) {
        printf("ok %d - %s [%s]\n", r->tap, c->name, mode);
        return;
    }
    r->failed = true;
    printf("not ok %d - %s [%s]\n  ---\n", r->tap, c->name, mode);
    if (o->diff.field[0]) {
        char *msg = NULL;
        /* A schema has no expected value: its violations stand there. */
        const char *want = o->diff.expected ? o->diff.expected : "nothing", *got = o->diff.got ? o->diff.got : "nothing";
        int n = strcmp(o->diff.field, "structuredContentSchema") == 0 && o->diff.got ?
                    asprintf(&msg, "structuredContent does not match the schema: %s (got %s)", want, got) :
                    asprintf(&msg, "%s: expected %s, got %s%s%s", o->diff.field, want, got,
                             o->diff.said ? ": " : "", o->diff.said ? o->diff.said : "");
        if (n >= 0)
            yaml_string("message", msg);
        free(msg);
    } else {
        yaml_string("message", o->message);
    }
    printf("  case: %zu\n  line: %ld\n  isolation: %s\n", index, c->line, mode);
    if (o->diff.field[0]) {
        yaml_string("field", o->diff.field);
        printf("  expected: %s\n  got: %s\n", o->diff.expected ? o->diff.expected : "~",
               o->diff.got ? o->diff.got : "~");
        if (o->diff.said)
            printf("  said: %s\n", o->diff.said);
    }
    printf("  ...\n");
}

/* The value of ARGV[*I] when it is the option NAME (--NAME=V or --NAME V,
 * the value before FILE), else NULL. */
static const char *own_option(int argc, char **argv, int *i, const char *name)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, "--", 2) != 0 || strncmp(a + 2, name, n) != 0)
        return NULL;
    if (a[n + 2] == '=')
        return a + n + 3;
    if (a[n + 2] == '\0' && *i + 1 < argc - 1)
        return argv[++*i];
    return NULL;
}

/* --start-timeout's SECONDS: a number above 0 and at most a day. */
static bool take_start_timeout(const char *v, runner *r)
{
    char *end;
    errno = 0;
    double s = strtod(v, &end);
    if (errno || end == v || *end || !(s > 0 && s <= 86400)) {
        fprintf(stderr, "toolhost test: --start-timeout: '%.40s' is not a number of seconds above 0 "
                        "(at most 86400)\n", v);
        return false;
    }
    r->start_timeout_ms = (long long)(s * 1000.0 + 0.5);
    return true;
}

/* The server's options from ARGV, all but the command's own (--isolation,
 * which picks the modes, and --start-timeout) and FILE (the last). */
static bool split_args(int argc, char **argv, runner *r, unsigned *want)
{
    *want = 0;
    for (int i = 1; i < argc - 1; i++) {
        const char *mode = own_option(argc, argv, &i, "isolation"), *limit = NULL;
        if (!mode && (limit = own_option(argc, argv, &i, "start-timeout")) && !take_start_timeout(limit, r))
            return false;
        if (limit)
            continue;
        if (!mode) {
            r->argv[r->nbase++] = argv[i];
            continue;
        }
        size_t m = 0;
        while (m < sizeof modes / sizeof modes[0] && strcmp(modes[m].name, mode) != 0)
            m++;
        if (m == sizeof modes / sizeof modes[0]) {
            fprintf(stderr, "toolhost test: --isolation: '%.40s' is not process or none\n", mode);
            return false;
        }
        *want |= modes[m].bit;
    }
    if (!*want)
        *want = TH_CASE_PROCESS | TH_CASE_NONE;
    return true;
}

static size_t count_points(const th_cases *cs, unsigned want)
{
    size_t n = 0;
    for (size_t i = 0; i < cs->n; i++)
        for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++)
            n += (cs->v[i].modes & want & modes[m].bit) != 0;
    return n;
}

int th_cli_test(int argc, char **argv)
{
    runner r = {0};
    th_cases cs = {0};
    unsigned want;
    int status = TT_USAGE;
    char err[512];
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(test_synopsis, stdout);
            fputs(test_usage, stdout);
            return TT_PASS;
        }
    if (argc < 2 || argv[argc - 1][0] == '-') {
        fprintf(stderr, "toolhost test: no cases file: give the FILE last\n%s"
                        "Try 'toolhost test --help' for more information.\n", test_synopsis);
        return TT_USAGE;
    }
    if (!(r.argv = calloc((size_t)argc + 4, sizeof *r.argv))) {
        fprintf(stderr, "toolhost test: out of memory\n");
        return TT_USAGE;
    }
    r.start_timeout_ms = (long long)(TT_START_TIMEOUT_S * 1000.0);
    r.argv[r.nbase++] = "toolhost";
    r.argv[r.nbase++] = "--log-level=error"; /* the server's own messages, only when it fails */
    if (!split_args(argc, argv, &r, &want))
        goto cleanup;
    if (!th_cases_load(argv[argc - 1], &cs, err, sizeof err)) {
        fprintf(stderr, "toolhost test: %s\n", err);
        goto cleanup;
    }
    printf("TAP version 13\n1..%zu\n", count_points(&cs, want));
    fflush(stdout);
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++)
        for (size_t i = 0; i < cs.n; i++) {
            if (!(cs.v[i].modes & want & modes[m].bit))
                continue;
            if (!host_for(&r, &cs.v[i], modes[m].name)) {
                printf("Bail out! the server (--isolation=%s) did not start\n", modes[m].name);
                goto cleanup;
            }
            outcome o = {0};
            run_case(&r, &cs.v[i], &o);
            report(&r, &cs.v[i], i + 1, modes[m].name, &o);
            fflush(stdout);
            free(o.message);
            th_case_diff_clear(&o.diff);
        }
    status = r.failed ? TT_FAIL : TT_PASS;
cleanup:
    stop_host(&r, false, NULL, 0);
    th_cases_free(&cs);
    free(r.argv);
    return status;
}
