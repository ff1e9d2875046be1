/* SPDX-License-Identifier: MIT */
/*
** httpgen.c: the benchmark's HTTP load driver. It spawns a server that says
** "listening on http://127.0.0.1:PORT" on stderr (toolhost --http, the
** libmicrohttpd floor, the SDK's HTTP server), keeps W keep-alive
** connections each with one tools/call echo in flight, checks every
** response (200, its id, the text byte for byte) and prints one key=value
** line for bench/run.sh. Exit status 1 on any wrong or missing response.
**
**   httpgen [--session|--modern|--stateless] [-n N] [-w W] [--size BYTES] -- CMD...
**
** --session: a 2025-11-25 session (initialize, then Mcp-Session-Id on each
** call); --modern: 2026-07-28 stateless requests (_meta and the Mcp-Method
** and Mcp-Name headers); --stateless (the default): 2025-11-25 requests
** without a session (the SDK's stateless mode).
*/
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A server silent for this long is taken as hung (the machine is shared). */
#define STALL_MS 20000
#define LISTENING "listening on http://127.0.0.1:"

typedef struct opts {
    bool session, modern;
    long n, w, size, warmup;
    char **argv;
} opts;

/* One keep-alive connection with at most one request in flight. */
typedef struct conn {
    int fd;
    char *out;      /* the request being written */
    size_t out_len, out_off;
    char *in;       /* the response so far */
    size_t in_len, in_cap;
    long id;        /* of the request in flight; 0: idle */
    double sent_us;
} conn;

static const char meta[] = ",\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                           "\"io.modelcontextprotocol/clientCapabilities\":{}}";

static pid_t server_pid;
static int server_err = -1; /* its stderr, drained while measuring */
static char session_id[256];
static int port;

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void die(const char *what)
{
    fprintf(stderr, "httpgen: %s\n", what);
    if (server_pid > 0)
        kill(server_pid, SIGKILL);
    exit(1);
}

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n);
    if (!p)
        die("out of memory");
    return p;
}

/* Spawn the server (stdin /dev/null, stderr to us) and read its port. */
static void spawn(char **argv)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        die("pipe failed");
    server_pid = fork();
    if (server_pid < 0)
        die("fork failed");
    if (server_pid == 0) {
        int null = open("/dev/null", O_RDWR);
        dup2(null, 0);
        dup2(null, 1);
        dup2(p[1], 2);
        execvp(argv[0], argv);
        fprintf(stderr, "httpgen: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(p[1]);
    server_err = p[0];
    char buf[8192];
    size_t len = 0;
    double deadline = now_us() + STALL_MS * 1e3;
    for (;;) {
        buf[len] = '\0';
        const char *at = strstr(buf, LISTENING);
        if (at && strchr(at, '\n')) {
            port = atoi(at + strlen(LISTENING));
            break;
        }
        struct pollfd pf = {.fd = server_err, .events = POLLIN};
        int left = (int)((deadline - now_us()) / 1e3);
        if (left <= 0 || poll(&pf, 1, left) <= 0)
            die("the server did not say where it listens");
        ssize_t n = read(server_err, buf + len, sizeof buf - 1 - len);
        if (n <= 0) {
            fprintf(stderr, "%s", buf);
            die("the server ended before listening");
        }
        len += (size_t)n;
        if (len == sizeof buf - 1)
            die("the server wrote too much before listening");
    }
    fcntl(server_err, F_SETFL, O_NONBLOCK);
}

static void drain_stderr(void)
{
    char buf[4096];
    while (read(server_err, buf, sizeof buf) > 0)
        ;
}

static int connect_server(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0)
        die("cannot connect to the server");
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

/* The request for BODY (malloc'd), with the headers its era wants. */
static char *make_request(const opts *o, const char *body, const char *method, size_t *len)
{
    char *req = NULL;
    int n;
    if (o->modern)
        n = asprintf(&req,
                     "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
                     "Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n"
                     "Mcp-Method: %s\r\n%sContent-Length: %zu\r\n\r\n%s",
                     port, method, strcmp(method, "tools/call") == 0 ? "Mcp-Name: echo\r\n" : "", strlen(body), body);
    else
        n = asprintf(&req,
                     "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
                     "Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\n"
                     "%s%s%sContent-Length: %zu\r\n\r\n%s",
                     port, session_id[0] ? "Mcp-Session-Id: " : "", session_id, session_id[0] ? "\r\n" : "",
                     strlen(body), body);
    if (n < 0)
        die("out of memory");
    *len = (size_t)n;
    return req;
}

/* A complete response at the start of C->in: its length, the status, the
 * body; 0 while incomplete. Content-Length or chunked bodies. */
static size_t parse_response(conn *c, int *status, char **body, size_t *body_len)
{
    char *end = memmem(c->in, c->in_len, "\r\n\r\n", 4);
    if (!end)
        return 0;
    size_t head = (size_t)(end - c->in) + 4;
    if (sscanf(c->in, "HTTP/1.1 %d", status) != 1)
        die("not an HTTP/1.1 response");
    char saved = *end;
    *end = '\0';
    const char *cl = strcasestr(c->in, "\r\nContent-Length:");
    bool chunked = strcasestr(c->in, "\r\nTransfer-Encoding: chunked") != NULL;
    *end = saved;
    if (cl && !chunked) {
        size_t n = strtoul(cl + 17, NULL, 10);
        if (c->in_len < head + n)
            return 0;
        *body = c->in + head;
        *body_len = n;
        return head + n;
    }
    if (!chunked)
        die("a response with neither Content-Length nor chunks");
    /* De-chunk in place behind the head. */
    size_t at = head, out = head;
    for (;;) {
        char *line_end = memmem(c->in + at, c->in_len - at, "\r\n", 2);
        if (!line_end)
            return 0;
        size_t sz = strtoul(c->in + at, NULL, 16);
        size_t data = (size_t)(line_end - c->in) + 2;
        if (c->in_len < data + sz + 2)
            return 0;
        if (sz == 0) {
            /* Chunks are moved down only once the response is whole, so a
             * partial parse leaves the buffer as it came. */
            size_t total = data + 2;
            at = head;
            while ((sz = strtoul(c->in + at, NULL, 16)) != 0) {
                size_t d = (size_t)((char *)memmem(c->in + at, c->in_len - at, "\r\n", 2) - c->in) + 2;
                memmove(c->in + out, c->in + d, sz);
                out += sz;
                at = d + sz + 2;
            }
            *body = c->in + head;
            *body_len = out - head;
            return total;
        }
        at = data + sz + 2;
    }
}

/* Write the rest of C's request; false when the socket would block. */
static void write_some(conn *c)
{
    while (c->out_off < c->out_len) {
        ssize_t n = write(c->fd, c->out + c->out_off, c->out_len - c->out_off);
        if (n < 0 && errno == EAGAIN)
            return;
        if (n <= 0)
            die("write to the server failed");
        c->out_off += (size_t)n;
    }
}

/* Read what is there; true when a whole response is in. */
static bool read_some(conn *c, int *status, char **body, size_t *body_len, size_t *used)
{
    for (;;) {
        if (c->in_cap - c->in_len < 65536)
            c->in = xrealloc(c->in, c->in_cap = c->in_cap * 2 + 65536);
        ssize_t n = read(c->fd, c->in + c->in_len, c->in_cap - c->in_len - 1);
        if (n < 0 && errno == EAGAIN)
            break;
        if (n <= 0)
            die("the server closed a connection");
        c->in_len += (size_t)n;
    }
    c->in[c->in_len] = '\0';
    *used = parse_response(c, status, body, body_len);
    return *used > 0;
}

/* One request on a blocking connection, for the handshake. */
static void exchange_once(const opts *o, int fd, const char *body, const char *method, int want, bool keep_sid)
{
    conn c = {.fd = fd};
    fcntl(fd, F_SETFL, O_NONBLOCK);
    c.out = make_request(o, body, method, &c.out_len);
    int status;
    char *rb;
    size_t rl, used;
    double deadline = now_us() + STALL_MS * 1e3;
    for (;;) {
        write_some(&c);
        if (c.out_off == c.out_len && read_some(&c, &status, &rb, &rl, &used))
            break;
        struct pollfd pf = {.fd = fd, .events = c.out_off < c.out_len ? POLLOUT : POLLIN};
        int left = (int)((deadline - now_us()) / 1e3);
        if (left <= 0 || poll(&pf, 1, left) <= 0)
            die("no answer to the handshake");
    }
    if (status != want) {
        fprintf(stderr, "httpgen: %s: HTTP %d, want %d: %.*s\n", method, status, want, (int)rl, rb);
        die("the handshake failed");
    }
    if (keep_sid) {
        const char *h = strcasestr(c.in, "\r\nMcp-Session-Id:");
        if (!h || sscanf(h + 17, " %255[^\r\n ]", session_id) != 1)
            die("initialize gave no Mcp-Session-Id");
    }
    free(c.out);
    free(c.in);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double percentile(double *v, long n, double p)
{
    if (n <= 0)
        return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    long i = (long)(p * (double)(n - 1) + 0.5);
    return v[i];
}

static long server_rss_kb(void)
{
    char path[64], line[256];
    long kb = -1;
    snprintf(path, sizeof path, "/proc/%d/status", (int)server_pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
            break;
    fclose(f);
    return kb;
}

static void usage(void)
{
    fprintf(stderr, "usage: httpgen [--session|--modern|--stateless] [-n N] [-w W] [--size BYTES] -- SERVER-COMMAND...\n");
    exit(2);
}

int main(int argc, char **argv)
{
    opts o = {.n = 10000, .w = 1, .size = 8, .warmup = -1};
    int i = 1;
    for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (strcmp(argv[i], "--session") == 0)
            o.session = true;
        else if (strcmp(argv[i], "--stateless") == 0)
            o.session = o.modern = false;
        else if (strcmp(argv[i], "--modern") == 0)
            o.modern = true;
        else if (strcmp(argv[i], "-n") == 0 && i + 1 < argc)
            o.n = atol(argv[++i]);
        else if (strcmp(argv[i], "-w") == 0 && i + 1 < argc)
            o.w = atol(argv[++i]);
        else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc)
            o.size = atol(argv[++i]);
        else
            usage();
    }
    if (i + 1 >= argc || o.n < 1 || o.w < 1 || o.size < 0 || (o.session && o.modern))
        usage();
    o.argv = argv + i + 1;
    /* As loadgen: a tenth unmeasured (at most 2,000), so that process
     * isolation's worker is running when the clock starts. */
    o.warmup = o.n / 10 < 2000 ? o.n / 10 : 2000;
    signal(SIGPIPE, SIG_IGN);
    spawn(o.argv);

    if (o.session) {
        int fd = connect_server();
        exchange_once(&o, fd,
                      "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                      "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"httpgen\",\"version\":\"1\"}}}",
                      "initialize", 200, true);
        exchange_once(&o, fd, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
                      "notifications/initialized", 202, false);
        close(fd);
    }

    char *text = malloc((size_t)o.size + 1);
    if (!text)
        die("out of memory");
    memset(text, 'x', (size_t)o.size);
    text[o.size] = '\0';
    conn *cs = calloc((size_t)o.w, sizeof *cs);
    struct pollfd *pf = calloc((size_t)o.w + 1, sizeof *pf);
    long total = o.n + o.warmup;
    double *lat = calloc((size_t)o.n, sizeof *lat);
    if (!cs || !pf || !lat)
        die("out of memory");
    for (long k = 0; k < o.w; k++) {
        cs[k].fd = connect_server();
        fcntl(cs[k].fd, F_SETFL, O_NONBLOCK);
    }
    long next_id = 1, done = 0;
    double t0 = now_us(), last_progress = now_us();
    char *body = NULL;
    while (done < total) {
        for (long k = 0; k < o.w; k++) {
            conn *c = &cs[k];
            if (c->id || next_id > total)
                continue;
            if (next_id == o.warmup + 1 && done < o.warmup)
                continue; /* the clock starts with every warm-up call answered */
            if (next_id == o.warmup + 1)
                t0 = now_us();
            free(body);
            if (asprintf(&body,
                         "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                         "\"arguments\":{\"text\":\"%s\"}%s}}",
                         next_id, text, o.modern ? meta : "") < 0)
                die("out of memory");
            free(c->out);
            c->out = make_request(&o, body, "tools/call", &c->out_len);
            c->out_off = 0;
            c->id = next_id++;
            c->sent_us = now_us();
            write_some(c);
        }
        for (long k = 0; k < o.w; k++)
            pf[k] = (struct pollfd){.fd = cs[k].fd,
                                    .events = (short)(cs[k].id ? POLLIN | (cs[k].out_off < cs[k].out_len ? POLLOUT : 0)
                                                               : 0)};
        pf[o.w] = (struct pollfd){.fd = server_err, .events = POLLIN};
        int r = poll(pf, (nfds_t)o.w + 1, 1000);
        if (r < 0 && errno != EINTR)
            die("poll failed");
        if (pf[o.w].revents)
            drain_stderr();
        for (long k = 0; k < o.w; k++) {
            conn *c = &cs[k];
            if (!c->id || !pf[k].revents)
                continue;
            if (pf[k].revents & POLLOUT)
                write_some(c);
            if (!(pf[k].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            int status;
            char *rb;
            size_t rl, used;
            if (!read_some(c, &status, &rb, &rl, &used))
                continue;
            char want_id[32];
            snprintf(want_id, sizeof want_id, "\"id\":%ld", c->id);
            if (status != 200 || !memmem(rb, rl, want_id, strlen(want_id)) ||
                !memmem(rb, rl, text, (size_t)o.size) || memmem(rb, rl, "\"isError\":true", 14)) {
                fprintf(stderr, "httpgen: call %ld: HTTP %d: %.*s\n", c->id, status, rl > 300 ? 300 : (int)rl, rb);
                die("a wrong answer");
            }
            if (c->id > o.warmup)
                lat[c->id - o.warmup - 1] = now_us() - c->sent_us;
            memmove(c->in, c->in + used, c->in_len - used);
            c->in_len -= used;
            c->id = 0;
            done++;
            last_progress = now_us();
        }
        if (now_us() - last_progress > STALL_MS * 1e3)
            die("the server stalled");
    }
    double t = now_us() - t0;
    long rss = server_rss_kb();
    for (long k = 0; k < o.w; k++) {
        close(cs[k].fd);
        free(cs[k].out);
        free(cs[k].in);
    }
    kill(server_pid, SIGTERM);
    int st = 0;
    double deadline = now_us() + STALL_MS * 1e3;
    while (waitpid(server_pid, &st, WNOHANG) == 0) {
        drain_stderr();
        if (now_us() > deadline) {
            kill(server_pid, SIGKILL);
            waitpid(server_pid, &st, 0);
            break;
        }
        usleep(10000);
    }
    printf("mode=http era=%s n=%ld w=%ld size=%ld calls_per_s=%.0f p50_us=%.1f p99_us=%.1f rss_kb=%ld exit=%d\n",
           o.session ? "session" : o.modern ? "modern" : "stateless", o.n, o.w, o.size, (double)o.n / (t / 1e6),
           percentile(lat, o.n, 0.5), percentile(lat, o.n, 0.99), rss, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    free(body);
    free(text);
    free(lat);
    free(cs);
    free(pf);
    return 0;
}
