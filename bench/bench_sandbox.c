/* SPDX-License-Identifier: MIT */
/*
** bench_sandbox.c: what the worker sandbox costs. toolhost serves echo in
** process isolation with --sandbox=off and with the default sandbox; after
** a tools/list (the host has scanned), the first call's round trip is the
** worker's start (spawn, sandbox, dlopen, register) and the calls after it
** the per-call cost, which the sandbox must not change.
*/
#define _POSIX_C_SOURCE 200809L /* getline */
#include "config.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef TOP_BUILDDIR
#define TOP_BUILDDIR "."
#endif

#define META                                                                                                           \
    "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","                                          \
    "\"io.modelcontextprotocol/clientCapabilities\":{}}"

enum { CALLS = 2000, RUNS = 21 };

typedef struct host {
    pid_t pid;
    FILE *to, *from;
} host;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int start(host *h, const char *sandbox)
{
    int in[2], out[2];
    if (pipe(in) || pipe(out))
        return -1;
    char *argv[] = {TOP_BUILDDIR "/src/toolhost", "-q", "--isolation=process", (char *)sandbox,
                    "--plugin-dir",             TOP_BUILDDIR "/plugins/.libs", NULL};
    if ((h->pid = fork()) < 0)
        return -1;
    if (h->pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(in[0], 0);
        dup2(out[1], 1);
        dup2(null, 2);
        close(in[1]); /* else its stdin never ends */
        close(out[0]);
        execv(argv[0], argv);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    h->to = fdopen(in[1], "w");
    h->from = fdopen(out[0], "r");
    return h->to && h->from ? 0 : -1;
}

/* One request, one answer line; its round trip in seconds, or -1. */
static double round_trip(host *h, int id, const char *method, const char *params)
{
    static char *line;
    static size_t cap;
    double t = now_s();
    fprintf(h->to, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"%s\",\"params\":{%s%s" META "}}\n", id, method, params,
            *params ? "," : "");
    fflush(h->to);
    if (getline(&line, &cap, h->from) < 0 || !strstr(line, "\"result\""))
        return -1;
    return now_s() - t;
}

static void stop(host *h)
{
    int status;
    fclose(h->to);
    fclose(h->from);
    waitpid(h->pid, &status, 0);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One run: the worker's start and the mean of the CALLS after it. */
static int one_run(const char *sandbox, double *start_ms, double *call_us)
{
    host h;
    static const char echo[] = "\"name\":\"echo\",\"arguments\":{\"text\":\"ping\"}";
    if (start(&h, sandbox) != 0 || round_trip(&h, 1, "tools/list", "") < 0)
        return -1;
    double first = round_trip(&h, 2, "tools/call", echo), total = 0;
    for (int i = 0; i < CALLS && first >= 0; i++) {
        double t = round_trip(&h, 3 + i, "tools/call", echo);
        if (t < 0)
            first = -1;
        total += t;
    }
    stop(&h);
    *start_ms = first * 1e3;
    *call_us = total / CALLS * 1e6;
    return first < 0 ? -1 : 0;
}

int main(void)
{
    static const char *const modes[] = {"--sandbox=off", "--sandbox=declared"};
    double starts[2][RUNS], calls[2][RUNS];
    signal(SIGPIPE, SIG_IGN);
    /* Alternated, so that the rest of the machine weighs on both alike. */
    for (int r = 0; r < RUNS; r++)
        for (size_t m = 0; m < 2; m++)
            if (one_run(modes[m], &starts[m][r], &calls[m][r]) != 0) {
                fprintf(stderr, "bench_sandbox: %s: a run failed\n", modes[m]);
                return 1;
            }
    double start_med[2], call_med[2];
    for (size_t m = 0; m < 2; m++) {
        qsort(starts[m], RUNS, sizeof starts[m][0], cmp_double);
        qsort(calls[m], RUNS, sizeof calls[m][0], cmp_double);
        start_med[m] = starts[m][RUNS / 2];
        call_med[m] = calls[m][RUNS / 2];
        printf("%-18s worker start (first call) %6.2f ms, then %6.1f us per call (medians of %d runs, %d calls)\n",
               modes[m], start_med[m], call_med[m], RUNS, CALLS);
    }
    printf("sandbox cost: %+.2f ms per worker start, %+.1f us per call\n", start_med[1] - start_med[0],
           call_med[1] - call_med[0]);
    return 0;
}
