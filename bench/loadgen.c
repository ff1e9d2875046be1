/* SPDX-License-Identifier: MIT */
/*
** loadgen.c: the benchmark's load driver. It spawns any stdio MCP server,
** talks either protocol era to it and measures one thing per run: pipelined
** tools/call throughput and latency (call), full tools/list latency (list),
** start to first full tools/list and exit (start), or a plain program's
** run time (exec). Every response is checked; one line of key=value goes to
** stdout for bench/run.sh. Exit status 1 on any wrong or missing response.
*/
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A server that says nothing for this long is taken as hung: generous,
 * because the bench machine is shared and loaded. */
static int stall_ms = 20000; /* --stall S: a 10,000-plugin cold start
                             * says nothing for longer */

typedef enum { MODE_CALL, MODE_LIST, MODE_START, MODE_EXEC } run_mode;

typedef struct opts {
    run_mode mode;
    bool modern; /* 2026-07-28: _meta on each request, no initialize */
    long n, w, size, warmup;
    const char *tool;
    const char *after; /* a shell command run after the calls, server still up */
    char **argv;
} opts;

/* One spawned server: its pipes, and what was read but not yet parsed. */
typedef struct server {
    pid_t pid;
    int to, from; /* our ends: its stdin, its stdout */
    char *in;     /* bytes read from it; IN_OFF is where unparsed lines start */
    size_t in_off, in_len, in_cap;
    char *out; /* bytes queued for it */
    size_t out_off, out_len, out_cap;
} server;

static const char meta[] = ",\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                           "\"io.modelcontextprotocol/clientCapabilities\":{}}";

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void die(const char *what)
{
    fprintf(stderr, "loadgen: %s\n", what);
    exit(1);
}

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n);
    if (!p)
        die("out of memory");
    return p;
}

/* ---- a minimal JSON reader: enough to walk a response's object keys ---- */

/* The end of the string starting at P (on its quote), or NULL. */
static const char *skip_string(const char *p, const char *end)
{
    for (p++; p < end; p++) {
        if (*p == '\\')
            p++;
        else if (*p == '"')
            return p + 1;
    }
    return NULL;
}

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
        p++;
    return p;
}

/* The end of the JSON value starting at P, or NULL if it is cut short. */
static const char *skip_value(const char *p, const char *end)
{
    if (p >= end)
        return NULL;
    if (*p == '"')
        return skip_string(p, end);
    if (*p == '{' || *p == '[') {
        int depth = 0;
        while (p < end) {
            if (*p == '"') {
                p = skip_string(p, end);
                if (!p)
                    return NULL;
                continue;
            }
            if (*p == '{' || *p == '[')
                depth++;
            else if (*p == '}' || *p == ']') {
                if (--depth == 0)
                    return p + 1;
            }
            p++;
        }
        return NULL;
    }
    while (p < end && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\n')
        p++;
    return p;
}

/* The value of KEY in the object [S, END), as [*V, *VEND); false if absent. */
static bool obj_get(const char *s, const char *end, const char *key, const char **v, const char **vend)
{
    size_t klen = strlen(key);
    const char *p = skip_ws(s, end);
    if (p >= end || *p != '{')
        return false;
    p++;
    for (;;) {
        p = skip_ws(p, end);
        if (p >= end || *p != '"')
            return false;
        const char *k = p + 1, *kend = skip_string(p, end);
        if (!kend)
            return false;
        p = skip_ws(kend, end);
        if (p >= end || *p != ':')
            return false;
        p = skip_ws(p + 1, end);
        const char *e = skip_value(p, end);
        if (!e)
            return false;
        if ((size_t)(kend - 1 - k) == klen && memcmp(k, key, klen) == 0) {
            *v = p;
            *vend = e;
            return true;
        }
        p = skip_ws(e, end);
        if (p >= end || *p != ',')
            return false;
        p++;
    }
}

/* Count the elements of the array [S, END); -1 if it is not an array. */
static long array_count(const char *s, const char *end, const char **first, const char **first_end)
{
    const char *p = skip_ws(s, end);
    if (p >= end || *p != '[')
        return -1;
    p = skip_ws(p + 1, end);
    if (p < end && *p == ']')
        return 0;
    long n = 0;
    for (;;) {
        const char *e = skip_value(p, end);
        if (!e)
            return -1;
        if (n == 0 && first) {
            *first = p;
            *first_end = e;
        }
        n++;
        p = skip_ws(e, end);
        if (p < end && *p == ']')
            return n;
        if (p >= end || *p != ',')
            return -1;
        p = skip_ws(p + 1, end);
    }
}

/* ---- the child and its pipes ---- */

static void spawn(server *s, char **argv)
{
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
        die("pipe failed");
    s->pid = fork();
    if (s->pid < 0)
        die("fork failed");
    if (s->pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        /* The servers' logs would cost terminal time and hide our line. */
        if (!getenv("LOADGEN_STDERR")) {
            int devnull = open("/dev/null", O_WRONLY);
            if (devnull >= 0)
                dup2(devnull, 2);
        }
        execvp(argv[0], argv);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    s->to = in[1];
    s->from = out[0];
    fcntl(s->to, F_SETFL, fcntl(s->to, F_GETFL) | O_NONBLOCK);
    fcntl(s->from, F_SETFL, fcntl(s->from, F_GETFL) | O_NONBLOCK);
}

static void queue(server *s, const char *data, size_t len)
{
    if (s->out_len + len > s->out_cap) {
        s->out_cap = (s->out_len + len) * 2;
        s->out = xrealloc(s->out, s->out_cap);
    }
    memcpy(s->out + s->out_len, data, len);
    s->out_len += len;
}

static void flush_some(server *s)
{
    while (s->out_off < s->out_len) {
        ssize_t n = write(s->to, s->out + s->out_off, s->out_len - s->out_off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return;
        if (n <= 0)
            die("writing to the server failed (did it exit?)");
        s->out_off += (size_t)n;
    }
    s->out_off = s->out_len = 0;
}

/*
** Wait until there is input or output can go on; read what there is.
** Dies when the server closes its stdout or says nothing for stall_ms.
*/
static void pump(server *s)
{
    struct pollfd p[2] = {{.fd = s->from, .events = POLLIN}, {.fd = s->to, .events = POLLOUT}};
    int r = poll(p, s->out_off < s->out_len ? 2 : 1, stall_ms);
    if (r < 0 && errno == EINTR)
        return;
    if (r == 0)
        die("no progress from the server in --stall seconds");
    if (p[1].revents & (POLLOUT | POLLERR))
        flush_some(s);
    if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
        /* Lines already parsed go now, and with them the pointers into them. */
        if (s->in_off > 0) {
            memmove(s->in, s->in + s->in_off, s->in_len - s->in_off);
            s->in_len -= s->in_off;
            s->in_off = 0;
        }
        for (;;) {
            if (s->in_cap - s->in_len < 65536) {
                s->in_cap = s->in_cap * 2 + 65536;
                s->in = xrealloc(s->in, s->in_cap);
            }
            ssize_t n = read(s->from, s->in + s->in_len, s->in_cap - s->in_len);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0 && errno == EAGAIN)
                break;
            if (n <= 0)
                die("the server closed its stdout before answering everything");
            s->in_len += (size_t)n;
        }
    }
}

/* The next complete line, or NULL; valid until the next pump(). */
static const char *next_line(server *s, size_t *len)
{
    char *start = s->in + s->in_off;
    char *nl = s->in_len > s->in_off ? memchr(start, '\n', s->in_len - s->in_off) : NULL;
    if (!nl)
        return NULL;
    *len = (size_t)(nl - start);
    s->in_off += *len + 1;
    return start;
}

static void fail_line(const char *why, const char *line, size_t len)
{
    fprintf(stderr, "loadgen: %s: %.*s\n", why, (int)(len > 300 ? 300 : len), line);
    exit(1);
}

/* The id of a response, or -1 for a notification or a request. */
static long response_id(const char *line, size_t len, const char **result, const char **result_end)
{
    const char *v, *ve, *end = line + len;
    if (!obj_get(line, end, "id", &v, &ve))
        return -1;
    if (obj_get(line, end, "error", result, result_end))
        fail_line("an error response", line, len);
    if (!obj_get(line, end, "result", result, result_end))
        fail_line("a response without result", line, len);
    char *e;
    long id = strtol(v, &e, 10);
    if (e != ve)
        fail_line("a response whose id is not one we sent", line, len);
    return id;
}

/* Send one request with ID and wait for its answer, whose result is returned
 * (valid until the next pump()). PARAMS is the params object's members. */
static const char *roundtrip(server *s, const opts *o, long id, const char *method, const char *params,
                             const char **result_end)
{
    char req[1024];
    int n = snprintf(req, sizeof req, "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"%s\",\"params\":{%s%s}}\n", id,
                     method, params, o->modern ? (*params ? meta : meta + 1) : "");
    if (n < 0 || (size_t)n >= sizeof req)
        die("request too long");
    queue(s, req, (size_t)n);
    flush_some(s);
    for (;;) {
        size_t len;
        const char *line;
        while ((line = next_line(s, &len))) {
            const char *r;
            long got = response_id(line, len, &r, result_end);
            if (got == id)
                return r;
            if (got >= 0)
                fail_line("a response to a request we did not send", line, len);
        }
        pump(s);
    }
}

static void handshake(server *s, const opts *o)
{
    if (o->modern)
        return; /* every request carries its version */
    const char *re;
    roundtrip(s, o, 0, "initialize",
              "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
              "\"clientInfo\":{\"name\":\"loadgen\",\"version\":\"1\"}",
              &re);
    static const char note[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";
    queue(s, note, sizeof note - 1);
    flush_some(s);
}

/* Every page of tools/list, following nextCursor; returns the tool count. */
static long full_list(server *s, const opts *o, long *id)
{
    long tools = 0;
    char cursor[512] = "";
    for (int pages = 0;; pages++) {
        if (pages > 10000)
            die("tools/list never ends");
        char params[600];
        snprintf(params, sizeof params, *cursor ? "\"cursor\":%s" : "", cursor);
        const char *re, *r = roundtrip(s, o, ++*id, "tools/list", params, &re);
        const char *v, *ve;
        long n;
        if (!obj_get(r, re, "tools", &v, &ve) || (n = array_count(v, ve, NULL, NULL)) < 0)
            fail_line("a tools/list result without a tools array", r, (size_t)(re - r));
        tools += n;
        if (!obj_get(r, re, "nextCursor", &v, &ve) || *v != '"')
            return tools;
        if ((size_t)(ve - v) >= sizeof cursor)
            die("nextCursor too long");
        memcpy(cursor, v, (size_t)(ve - v));
        cursor[ve - v] = '\0';
    }
}

static long vmhwm_kb(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    long kb = -1;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
            break;
    fclose(f);
    return kb;
}

/* FIELD (a "Name:" line, in kB) of /proc/PID/FILE, or -1. */
static long proc_kb(pid_t pid, const char *file, const char *field)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, file);
    FILE *f = fopen(path, "r");
    long kb = -1;
    size_t len = strlen(field);
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, field, len) == 0 && sscanf(line + len, "%ld", &kb) == 1)
            break;
    fclose(f);
    return kb;
}

/*
** The memory of PID and all its descendants (workers, scanners) now, in
** kB: their RSS summed (pages shared between them counted in each), and
** their PSS summed (shared pages split between them: what they cost
** together). Descendants are found through /proc/N/task/N/children.
*/
static void tree_mem_kb(pid_t pid, long *rss, long *pss)
{
    pid_t todo[4096];
    size_t n = 0;
    todo[n++] = pid;
    *rss = *pss = 0;
    while (n > 0) {
        pid_t p = todo[--n];
        long r = proc_kb(p, "status", "VmRSS:"), q = proc_kb(p, "smaps_rollup", "Pss:");
        *rss += r > 0 ? r : 0;
        *pss += q > 0 ? q : 0;
        /* Each thread's own children: a worker's parent may be any thread. */
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/task", (int)p);
        DIR *tasks = opendir(path);
        struct dirent *t;
        while (tasks && (t = readdir(tasks))) {
            char kids[300];
            int child;
            if (t->d_name[0] == '.')
                continue;
            snprintf(kids, sizeof kids, "/proc/%d/task/%s/children", (int)p, t->d_name);
            FILE *f = fopen(kids, "r");
            while (f && n < sizeof todo / sizeof *todo && fscanf(f, "%d", &child) == 1)
                todo[n++] = (pid_t)child;
            if (f)
                fclose(f);
        }
        if (tasks)
            closedir(tasks);
    }
}

/* Close its stdin, read its stdout to the end and reap it; SIGKILL when it
 * has not exited stall_ms later. Returns the wait status. */
static int finish(server *s)
{
    close(s->to);
    double deadline = now_us() + stall_ms * 1e3;
    char buf[65536];
    for (;;) {
        struct pollfd p = {.fd = s->from, .events = POLLIN};
        int left = (int)((deadline - now_us()) / 1e3);
        if (left <= 0 || poll(&p, 1, left) == 0)
            break;
        ssize_t n = read(s->from, buf, sizeof buf);
        if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
            break;
    }
    close(s->from);
    /* A pidfd wakes us the moment it exits: a sleep loop would add its
     * period to every start-up time measured. */
    int status = 0, pidfd = (int)syscall(SYS_pidfd_open, s->pid, 0);
    while (waitpid(s->pid, &status, WNOHANG) == 0) {
        int left = (int)((deadline - now_us()) / 1e3);
        if (left <= 0) {
            fprintf(stderr, "loadgen: the server did not exit at end of input; killed\n");
            kill(s->pid, SIGKILL);
            waitpid(s->pid, &status, 0);
            break;
        }
        struct pollfd p = {.fd = pidfd, .events = POLLIN};
        if (pidfd < 0 || poll(&p, 1, left) < 0)
            usleep(100);
    }
    if (pidfd >= 0)
        close(pidfd);
    free(s->in);
    free(s->out);
    return status;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double percentile(double *v, long n, double q)
{
    long i = (long)(q * (double)(n - 1) + 0.5);
    return v[i];
}

/* ---- the modes ---- */

/*
** COUNT calls with ids FIRST.., at most W in flight; latencies (us) of each
** go to LAT (may be NULL). Each response must carry our text back.
*/
static void calls(server *s, const opts *o, const char *text, long first, long count, double *lat)
{
    double *sent_at = calloc((size_t)count, sizeof *sent_at);
    char *req_head = NULL, *req_tail = NULL;
    if (!sent_at || asprintf(&req_head, "{\"jsonrpc\":\"2.0\",\"id\":") < 0 ||
        asprintf(&req_tail, ",\"method\":\"tools/call\",\"params\":{\"name\":\"%s\",\"arguments\":{\"text\":\"",
                 o->tool) < 0)
        die("out of memory");
    size_t text_len = strlen(text);
    long next = 0, done = 0;
    while (done < count) {
        while (next < count && next - done < o->w) {
            char id[32];
            int idn = snprintf(id, sizeof id, "%ld", first + next);
            queue(s, req_head, strlen(req_head));
            queue(s, id, (size_t)idn);
            queue(s, req_tail, strlen(req_tail));
            queue(s, text, text_len);
            queue(s, "\"}", 2);
            if (o->modern)
                queue(s, meta, sizeof meta - 1);
            queue(s, "}}\n", 3);
            sent_at[next++] = now_us();
        }
        flush_some(s);
        size_t len;
        const char *line;
        while ((line = next_line(s, &len))) {
            const char *r, *re, *v, *ve, *b, *be, *t, *te;
            long id = response_id(line, len, &r, &re);
            if (id < 0)
                continue;
            if (id < first || id >= first + next)
                fail_line("a response to no call in flight", line, len);
            double at = now_us();
            if (sent_at[id - first] == 0)
                fail_line("a second response to one call", line, len);
            if (lat)
                lat[id - first] = at - sent_at[id - first];
            sent_at[id - first] = 0;
            if (obj_get(r, re, "isError", &v, &ve) && ve - v == 4 && memcmp(v, "true", 4) == 0)
                fail_line("an isError result", line, len);
            if (!obj_get(r, re, "content", &v, &ve) || array_count(v, ve, &b, &be) != 1 ||
                !obj_get(b, be, "text", &t, &te) || (size_t)(te - t) != text_len + 2 ||
                memcmp(t + 1, text, text_len) != 0)
                fail_line("a result whose content is not the text sent", line, len);
            done++;
        }
        /* Answers just read made room: send before waiting again. */
        if (done < count && !(next < count && next - done < o->w))
            pump(s);
    }
    free(sent_at);
    free(req_head);
    free(req_tail);
}

static int run_call(const opts *o)
{
    char *text = malloc((size_t)o->size + 1);
    double *lat = malloc((size_t)o->n * sizeof *lat);
    if (!text || !lat)
        die("out of memory");
    /* Letters only, so the echoed text is byte-identical, unescaped. */
    for (long i = 0; i < o->size; i++)
        text[i] = (char)('a' + i % 26);
    text[o->size] = '\0';
    server s = {0};
    spawn(&s, o->argv);
    handshake(&s, o);
    /* Warm-up: first calls start workers, fault pages in, fill caches. */
    if (o->warmup > 0)
        calls(&s, o, text, 1, o->warmup, NULL);
    double t0 = now_us();
    calls(&s, o, text, 1 + o->warmup, o->n, lat);
    double t = now_us() - t0;
    long rss = vmhwm_kb(s.pid), tree_rss, tree_pss;
    tree_mem_kb(s.pid, &tree_rss, &tree_pss);
    /* A profiler's dump (callgrind_control -d) must come while the server
     * and its workers still run: the host ends workers with SIGKILL. */
    if (o->after && system(o->after) != 0)
        die("the --after command failed");
    int status = finish(&s);
    qsort(lat, (size_t)o->n, sizeof *lat, cmp_double);
    printf("mode=call era=%s n=%ld w=%ld size=%ld calls_per_s=%.0f p50_us=%.1f p99_us=%.1f rss_kb=%ld "
           "tree_rss_kb=%ld tree_pss_kb=%ld exit=%d\n",
           o->modern ? "modern" : "legacy", o->n, o->w, o->size, (double)o->n / (t / 1e6),
           percentile(lat, o->n, 0.5), percentile(lat, o->n, 0.99), rss, tree_rss, tree_pss,
           WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    free(text);
    free(lat);
    return 0;
}

static int run_list(const opts *o)
{
    double *lat = malloc((size_t)o->n * sizeof *lat);
    if (!lat)
        die("out of memory");
    server s = {0};
    spawn(&s, o->argv);
    handshake(&s, o);
    long id = 0, tools = 0;
    for (long i = 0; i < o->warmup; i++)
        full_list(&s, o, &id);
    for (long i = 0; i < o->n; i++) {
        double t0 = now_us();
        tools = full_list(&s, o, &id);
        lat[i] = now_us() - t0;
    }
    long rss = vmhwm_kb(s.pid);
    finish(&s);
    qsort(lat, (size_t)o->n, sizeof *lat, cmp_double);
    printf("mode=list era=%s n=%ld tools=%ld p50_us=%.1f p99_us=%.1f rss_kb=%ld\n", o->modern ? "modern" : "legacy",
           o->n, tools, percentile(lat, o->n, 0.5), percentile(lat, o->n, 0.99), rss);
    free(lat);
    return 0;
}

static int run_start(const opts *o)
{
    double t0 = now_us();
    server s = {0};
    spawn(&s, o->argv);
    handshake(&s, o);
    long id = 0, tools = full_list(&s, o, &id);
    double listed = now_us() - t0;
    long rss = vmhwm_kb(s.pid);
    int status = finish(&s);
    double exited = now_us() - t0;
    printf("mode=start era=%s tools=%ld list_ms=%.2f exit_ms=%.2f rss_kb=%ld exit=%d\n",
           o->modern ? "modern" : "legacy", tools, listed / 1e3, exited / 1e3, rss,
           WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

static int run_exec(const opts *o)
{
    double t0 = now_us();
    pid_t pid = fork();
    if (pid < 0)
        die("fork failed");
    if (pid == 0) {
        execvp(o->argv[0], o->argv);
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) != pid)
        die("wait4 failed");
    double t = now_us() - t0;
    printf("mode=exec exit_ms=%.2f rss_kb=%ld exit=%d\n", t / 1e3, ru.ru_maxrss,
           WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

static const char usage[] =
    "usage: loadgen [options] -- SERVER [ARGS...]\n"
    "  --mode call|list|start|exec  what to measure (default call)\n"
    "  --era legacy|modern          initialize (2025-11-25) or per-request _meta (2026-07-28)\n"
    "  -n N                         measured calls or listings (default 10000)\n"
    "  -w W                         calls in flight (default 1)\n"
    "  --size BYTES                 echoed text length (default 8)\n"
    "  --warmup K                   unmeasured calls or listings first (default n/10, at most 2000)\n"
    "  --tool NAME                  the echo tool's name (default echo)\n"
    "  --stall S                    a server silent this long is taken as hung (default 20)\n"
    "  --after CMD                  (call mode) run sh -c CMD after the calls, before the server's\n"
    "                               stdin closes, e.g. callgrind_control -d to profile its workers\n";

int main(int argc, char **argv)
{
    opts o = {.mode = MODE_CALL, .n = 10000, .w = 1, .size = 8, .warmup = -1, .tool = "echo"};
    static const char *const modes[] = {"call", "list", "start", "exec"};
    int i;
    for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            die(usage);
        i++;
        if (strcmp(a, "--mode") == 0) {
            size_t m = 0;
            while (m < 4 && strcmp(v, modes[m]) != 0)
                m++;
            if (m == 4)
                die(usage);
            o.mode = (run_mode)m;
        } else if (strcmp(a, "--era") == 0) {
            if (strcmp(v, "modern") != 0 && strcmp(v, "legacy") != 0)
                die(usage);
            o.modern = strcmp(v, "modern") == 0;
        } else if (strcmp(a, "-n") == 0)
            o.n = atol(v);
        else if (strcmp(a, "-w") == 0)
            o.w = atol(v);
        else if (strcmp(a, "--size") == 0)
            o.size = atol(v);
        else if (strcmp(a, "--warmup") == 0)
            o.warmup = atol(v);
        else if (strcmp(a, "--tool") == 0)
            o.tool = v;
        else if (strcmp(a, "--after") == 0)
            o.after = v;
        else if (strcmp(a, "--stall") == 0)
            stall_ms = atoi(v) * 1000;
        else
            die(usage);
    }
    if (i + 1 >= argc || o.n < 1 || o.w < 1 || o.size < 0)
        die(usage);
    o.argv = argv + i + 1;
    if (o.warmup < 0)
        o.warmup = o.mode == MODE_CALL ? (o.n / 10 > 2000 ? 2000 : o.n / 10) : 1;
    signal(SIGPIPE, SIG_IGN);
    switch (o.mode) {
    case MODE_CALL:
        return run_call(&o);
    case MODE_LIST:
        return run_list(&o);
    case MODE_START:
        return run_start(&o);
    case MODE_EXEC:
        return run_exec(&o);
    }
    return 1;
}
