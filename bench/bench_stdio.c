/* SPDX-License-Identifier: MIT */
/*
** bench_stdio.c: toolhost's stdio throughput against the pipe's floor. The
** same request bytes are pushed through `cat` (a child that only copies
** stdin to stdout: what the pipes alone cost) and through toolhost serving
** echo, pipelined, and the two times are reported with their ratio; in
** both isolation modes (--isolation=none: echo runs inside the host;
** process: in a worker process). Then the latency of one call at a time
** (W=1) in each mode, and the start-up time.
*/
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
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

typedef struct feed {
    int fd;
    const char *data;
    size_t len;
} feed;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *writer(void *p)
{
    feed *f = p;
    size_t off = 0;
    while (off < f->len) {
        ssize_t n = write(f->fd, f->data + off, f->len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        off += (size_t)n;
    }
    close(f->fd);
    return NULL;
}

/*
** Run ARGV with DATA on its stdin; read its stdout to the end, counting
** bytes and lines. Returns the wall time, or a negative value on failure.
*/
/* Start ARGV with stdin from IN[0], stdout to OUT[1] and stderr to
 * /dev/null; closes the child's ends here. -1 when fork fails. */
static pid_t spawn(char *const argv[], int in[2], int out[2])
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0)
            dup2(devnull, 2);
        close(in[0]);
        close(in[1]);
        close(out[0]);
        close(out[1]);
        execv(argv[0], argv);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    return pid;
}

static double run(char *const argv[], const char *data, size_t len, size_t *out_bytes, size_t *out_lines)
{
    int in[2], out[2];
    if (pipe(in) || pipe(out))
        return -1;
    pid_t pid = spawn(argv, in, out);
    if (pid < 0)
        return -1;
    double t0 = now_s();
    feed f = {.fd = in[1], .data = data, .len = len};
    pthread_t th;
    pthread_create(&th, NULL, writer, &f);
    static char buf[1 << 16];
    size_t bytes = 0, lines = 0;
    for (;;) {
        ssize_t n = read(out[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        bytes += (size_t)n;
        for (ssize_t i = 0; i < n; i++)
            lines += buf[i] == '\n';
    }
    double t = now_s() - t0;
    pthread_join(th, NULL);
    close(out[0]);
    int status;
    waitpid(pid, &status, 0);
    *out_bytes = bytes;
    *out_lines = lines;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? t : -1;
}

/* N modern (2026-07-28) echo calls, each echoing TEXT_LEN characters. */
static char *requests(size_t n, size_t text_len, size_t *len)
{
    char *text = malloc(text_len + 1);
    for (size_t i = 0; i < text_len; i++)
        text[i] = (char)('a' + i % 26);
    text[text_len] = '\0';
    size_t cap = n * (text_len + 256), off = 0;
    char *buf = malloc(cap);
    for (size_t i = 0; i < n; i++)
        off += (size_t)snprintf(buf + off, cap - off,
                                "{\"jsonrpc\":\"2.0\",\"id\":%zu,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                                "\"arguments\":{\"text\":\"%s\"},\"_meta\":{"
                                "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                                "\"io.modelcontextprotocol/clientCapabilities\":{}}}}\n",
                                i, text);
    free(text);
    *len = off;
    return buf;
}

/* Best of REPS runs: the least disturbed by the rest of the machine. */
static double best(char *const argv[], const char *data, size_t len, int reps, size_t *bytes, size_t *lines)
{
    double b = -1;
    for (int r = 0; r < reps; r++) {
        double t = run(argv, data, len, bytes, lines);
        if (t < 0)
            return -1;
        if (b < 0 || t < b)
            b = t;
    }
    return b;
}

/*
** One call at a time: start ARGV, send N echo calls each after the previous
** response, and return the mean round trip in microseconds (the first call
** excluded: it starts the worker in process mode). Negative on failure.
*/
static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double latency_us(char *const argv[], int n, double *startup_ms, double *p50_us)
{
    double *each = calloc((size_t)n + 1, sizeof *each);
    if (!each)
        return -1;
    int in[2], out[2];
    if (pipe(in) || pipe(out))
        return -1;
    double t0 = now_s();
    pid_t pid = spawn(argv, in, out);
    if (pid < 0)
        return -1;
    FILE *rd = fdopen(out[0], "r");
    char line[4096];
    double total = 0;
    int ok = 1;
    for (int i = 0; i <= n && ok; i++) {
        char req[512];
        int len = snprintf(req, sizeof req,
                           "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                           "\"arguments\":{\"text\":\"ping\"},\"_meta\":{"
                           "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                           "\"io.modelcontextprotocol/clientCapabilities\":{}}}}\n",
                           i);
        double t = now_s();
        ok = write(in[1], req, (size_t)len) == len && fgets(line, sizeof line, rd) != NULL;
        if (i == 0)
            *startup_ms = (now_s() - t0) * 1e3; /* to the first answer */
        else
            total += each[i - 1] = now_s() - t;
    }
    close(in[1]);
    while (fgets(line, sizeof line, rd))
        ;
    fclose(rd);
    int status;
    waitpid(pid, &status, 0);
    qsort(each, (size_t)n, sizeof *each, cmp_double);
    *p50_us = each[n / 2] * 1e6;
    free(each);
    return ok ? total / n * 1e6 : -1;
}

/* `bench_stdio --latency MODE N`: only N calls at W=1 in MODE (to profile). */
static int latency_only(const char *mode, int n)
{
    char *th_argv[] = {TOP_BUILDDIR "/src/toolhost", "-q", (char *)mode, "--plugin-dir", TOP_BUILDDIR "/plugins/.libs",
                       NULL};
    double st, med, l = latency_us(th_argv, n, &st, &med);
    if (l < 0)
        return 1;
    printf("%s: %d calls at W=1: %.1f us per call (p50 %.1f us)\n", mode, n, l, med);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--latency") == 0)
        return latency_only(argv[2], atoi(argv[3]));
    static const struct {
        size_t calls, text_len;
    } cases[] = {{50000, 8}, {20000, 1024}, {2000, 65536}};
    char *cat_argv[] = {"/bin/cat", NULL};
    static const char *const modes[] = {"--isolation=none", "--isolation=process"};

    signal(SIGPIPE, SIG_IGN);
    for (size_t m = 0; m < 2; m++) {
        char *th_argv[] = {TOP_BUILDDIR "/src/toolhost", "-q", (char *)modes[m], "--plugin-dir",
                           TOP_BUILDDIR "/plugins/.libs", NULL};
        printf("%s: pipelined echo calls through toolhost vs the same bytes through cat (best of 3)\n", modes[m]);
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            size_t len, bytes, lines;
            char *data = requests(cases[c].calls, cases[c].text_len, &len);
            double floor_t = best(cat_argv, data, len, 3, &bytes, &lines);
            double th_t = best(th_argv, data, len, 3, &bytes, &lines);
            if (floor_t < 0 || th_t < 0 || lines != cases[c].calls) {
                fprintf(stderr, "bench_stdio: run failed (%zu of %zu responses)\n", lines, cases[c].calls);
                free(data);
                return 1;
            }
            printf("%6zu calls, %5zu-byte text: toolhost %8.1f ms (%8.0f calls/s, %6.1f MB/s in)  "
                   "cat %7.1f ms  ratio %6.1fx\n",
                   cases[c].calls, cases[c].text_len, th_t * 1e3, (double)cases[c].calls / th_t,
                   (double)len / th_t / 1e6, floor_t * 1e3, th_t / floor_t);
            free(data);
        }
    }
    double lat[2], start[2], p50[2];
    for (size_t m = 0; m < 2; m++) {
        char *th_argv[] = {TOP_BUILDDIR "/src/toolhost", "-q", (char *)modes[m], "--plugin-dir",
                           TOP_BUILDDIR "/plugins/.libs", NULL};
        lat[m] = -1;
        for (int r = 0; r < 3; r++) { /* best of 3 */
            double st, med, l = latency_us(th_argv, 2000, &st, &med);
            if (l < 0) {
                fprintf(stderr, "bench_stdio: latency run failed\n");
                return 1;
            }
            if (lat[m] < 0 || l < lat[m]) {
                lat[m] = l;
                start[m] = st;
                p50[m] = med;
            }
        }
        printf("%s: one call at a time (W=1): %.1f us per call (p50 %.1f us); start to first answer %.1f ms\n",
               modes[m], lat[m], p50[m], start[m]);
    }
    printf("process / none latency at W=1: %.2fx (p50 %.2fx)\n", lat[1] / lat[0], p50[1] / p50[0]);
    return 0;
}
