/* SPDX-License-Identifier: MIT */
/*
** floor.c: the benchmark's floor, the least an MCP server over stdio can do.
** It reads request lines, finds the id and (for tools/call) the "text"
** argument by searching bytes, no JSON parsing, and writes a fixed answer of
** the right shape: the echo result carries the text copied back, so its
** answers are as long as toolhost's. One thread; the answers to everything
** one read() brought are written with one write().
**
** With --hop it is the least a process-isolated server can do: a child
** process answers, and the parent only carries each batch of request lines
** to it and its answers back over two pipes, as toolhost's host carries a
** call to a worker. The two floors' difference is what a process boundary
** costs on the machine, measured in the same run as toolhost's.
**
** With --relay it is the least a relayed server can do: the process that
** reads stdin only carries each request line as an HTTP/1.1 POST over one
** kept Unix stream socket to a child, a trivial HTTP server that answers
** it (framed by Content-Length, or 202 for a notification), and writes the
** answer's body back as a line, one request at a time, as `toolhost
** connect` carries a client to the daemon. With --hop as well the HTTP
** server carries each request on to a child of its own, so that
** `floor --relay --hop` against `floor --hop` is the cost of the relay
** hop and HTTP framing alone, beside the process boundary both have.
**
** With --spin it polls stdin for 50 us after each batch before it sleeps,
** as toolhost's reader does by default (--busy-poll), so that its wake-ups
** are the client's alone, as toolhost's are.
*/
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

typedef struct buf {
    char *p;
    size_t len, cap;
} buf;

static int put(buf *b, const char *s, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = (b->len + n) * 2;
        char *p = realloc(b->p, cap);
        if (!p)
            return -1;
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    return 0;
}

#define PUTS(b, lit) put(b, lit, sizeof lit - 1)

static const char init_result[] =
    "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"tools\":{}},"
    "\"serverInfo\":{\"name\":\"floor\",\"version\":\"1\"}}";
static const char list_result[] =
    "{\"tools\":[{\"name\":\"echo\",\"description\":\"Return the given text unchanged.\","
    "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}},"
    "\"required\":[\"text\"]}}]}";

/* The bytes of a JSON string value starting after KEY in [S, END), up to its
 * closing quote; NULL when KEY is not there. */
static const char *string_after(const char *s, const char *end, const char *key, size_t klen, const char **vend)
{
    const char *k = memmem(s, (size_t)(end - s), key, klen);
    if (!k)
        return NULL;
    const char *v = k + klen, *p = v;
    while (p < end && *p != '"')
        p += *p == '\\' ? 2 : 1;
    *vend = p < end ? p : end;
    return v;
}

/* Answer one request line; notifications get nothing. */
static int answer(buf *out, const char *line, const char *end)
{
    static const char id_key[] = "\"id\":";
    const char *id = memmem(line, (size_t)(end - line), id_key, sizeof id_key - 1);
    if (!id)
        return 0;
    id += sizeof id_key - 1;
    const char *id_end = id;
    while (id_end < end && *id_end != ',' && *id_end != '}')
        id_end++;
    if (PUTS(out, "{\"jsonrpc\":\"2.0\",\"id\":") || put(out, id, (size_t)(id_end - id)) ||
        PUTS(out, ",\"result\":"))
        return -1;
    const char *text_end, *text = NULL;
    if (memmem(line, (size_t)(end - line), "\"tools/call\"", 12))
        text = string_after(line, end, "\"text\":\"", 8, &text_end);
    int rc;
    if (text)
        rc = PUTS(out, "{\"content\":[{\"type\":\"text\",\"text\":\"") || put(out, text, (size_t)(text_end - text)) ||
             PUTS(out, "\"}]}");
    else if (memmem(line, (size_t)(end - line), "\"initialize\"", 12))
        rc = PUTS(out, init_result);
    else if (memmem(line, (size_t)(end - line), "\"tools/list\"", 12))
        rc = PUTS(out, list_result);
    else
        rc = PUTS(out, "{}"); /* ping and the rest */
    return rc || PUTS(out, "}\n") ? -1 : 0;
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Room for at least 64 KiB more in B. */
static int reserve(buf *b)
{
    if (b->cap - b->len >= 65536)
        return 0;
    size_t cap = b->cap * 2 + 65536;
    char *p = realloc(b->p, cap);
    if (!p)
        return -1;
    b->p = p;
    b->cap = cap;
    return 0;
}

/*
** The child of --hop: reads batches of request lines from IN, each ended by
** a NUL (JSON text has none), and writes their answers to OUT, also ended by
** a NUL, so the parent knows when a batch is answered whatever it held.
*/
static int hop_child(int in_fd, int out_fd)
{
    buf in = {0}, out = {0};
    int rc = 1;
    for (;;) {
        if (reserve(&in))
            goto cleanup;
        ssize_t n = read(in_fd, in.p + in.len, in.cap - in.len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            rc = n < 0;
            goto cleanup;
        }
        in.len += (size_t)n;
        const char *nul;
        while ((nul = memchr(in.p, '\0', in.len))) {
            const char *p = in.p, *nl;
            while ((nl = memchr(p, '\n', (size_t)(nul - p)))) {
                if (answer(&out, p, nl))
                    goto cleanup;
                p = nl + 1;
            }
            if (put(&out, "", 1) || write_all(out_fd, out.p, out.len))
                goto cleanup;
            out.len = 0;
            size_t used = (size_t)(nul + 1 - in.p);
            memmove(in.p, nul + 1, in.len - used);
            in.len -= used;
        }
    }
cleanup:
    free(in.p);
    free(out.p);
    return rc;
}

/* --hop: the batch [P, P+LEN) goes to the child, its answers to stdout. */
static int hop_batch(int to, int from, buf *out, const char *p, size_t len)
{
    if (write_all(to, p, len) || write_all(to, "", 1))
        return -1;
    out->len = 0;
    for (;;) {
        if (reserve(out))
            return -1;
        ssize_t n = read(from, out->p + out->len, out->cap - out->len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        out->len += (size_t)n;
        if (out->p[out->len - 1] == '\0')
            break;
    }
    out->len--;
    return 0;
}

/* The position just past the blank line ending an HTTP head in [P, P+N). */
static const char *head_end(const char *p, size_t n)
{
    const char *e = memmem(p, n, "\r\n\r\n", 4);
    return e ? e + 4 : NULL;
}

/* The Content-Length of the head [P, END); 0 without one. */
static size_t content_length(const char *p, const char *end)
{
    static const char key[] = "\r\nContent-Length:";
    const char *k = memmem(p, (size_t)(end - p), key, sizeof key - 1);
    return k ? (size_t)strtoul(k + sizeof key - 1, NULL, 10) : 0;
}

/* One HTTP message (head and Content-Length body) from FD into B, which
 * may hold the start of it; *HEAD and *BODY_LEN say where it splits. */
static int read_message(int fd, buf *b, size_t *head, size_t *body_len)
{
    const char *he;
    while (!(he = head_end(b->p ? b->p : "", b->len)) || b->len < (size_t)(he - b->p) + content_length(b->p, he)) {
        if (reserve(b))
            return -1;
        ssize_t n = read(fd, b->p + b->len, b->cap - b->len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        b->len += (size_t)n;
    }
    *head = (size_t)(he - b->p);
    *body_len = content_length(b->p, he);
    return 0;
}

/* Drop the first N bytes of B. */
static void consume(buf *b, size_t n)
{
    memmove(b->p, b->p + n, b->len - n);
    b->len -= n;
}

/*
** The HTTP server of --relay: each POST's body is one request line,
** answered here (or, with HOP, by the hop child over TO and FROM) and sent
** back framed by Content-Length; a notification gets 202 and no body.
*/
static int relay_server(int fd, int to, int from)
{
    buf in = {0}, ans = {0}, out = {0}, req = {0};
    int rc = 1;
    size_t head, blen;
    while (read_message(fd, &in, &head, &blen) == 0) {
        char *line = in.p + head;
        ans.len = 0;
        if (to >= 0) {
            req.len = 0;
            if (put(&req, line, blen) || put(&req, "\n", 1) || hop_batch(to, from, &ans, req.p, req.len))
                goto cleanup;
        } else if (answer(&ans, line, line + blen)) {
            goto cleanup;
        }
        if (ans.len && ans.p[ans.len - 1] == '\n')
            ans.len--;
        char h[128];
        int hl = ans.len ? snprintf(h, sizeof h,
                                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
                                    ans.len)
                         : snprintf(h, sizeof h, "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n");
        out.len = 0;
        if (put(&out, h, (size_t)hl) || put(&out, ans.p ? ans.p : "", ans.len) || write_all(fd, out.p, out.len))
            goto cleanup;
        consume(&in, head + blen);
    }
    rc = 0;
cleanup:
    free(in.p);
    free(ans.p);
    free(out.p);
    free(req.p);
    return rc;
}

/* --relay: each line of [P, P+LEN) as a POST to the server on FD, the
 * bodies of the answers to OUT, one line each. */
static int relay_batch(int fd, buf *req, buf *resp, buf *out, const char *p, size_t len)
{
    const char *end = p + len, *nl;
    for (; (nl = memchr(p, '\n', (size_t)(end - p))); p = nl + 1) {
        char h[192];
        int hl = snprintf(h, sizeof h,
                          "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                          "Accept: application/json, text/event-stream\r\nContent-Length: %zu\r\n\r\n",
                          (size_t)(nl - p));
        size_t head, blen;
        req->len = 0; /* head and body in one write, as connect sends them */
        if (put(req, h, (size_t)hl) || put(req, p, (size_t)(nl - p)) || write_all(fd, req->p, req->len) ||
            read_message(fd, resp, &head, &blen))
            return -1;
        if (blen && (put(out, resp->p + head, blen) || put(out, "\n", 1)))
            return -1;
        consume(resp, head + blen);
    }
    return 0;
}

static long long now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

/* read(2) of stdin; with SPIN, polled for 50 us before it sleeps. */
static ssize_t read_in(char *p, size_t n, int spin)
{
    if (!spin)
        return read(0, p, n);
    long long until = now_us() + 50;
    for (;;) {
        ssize_t r = read(0, p, n);
        if (r >= 0 || errno != EAGAIN)
            return r;
        if (now_us() > until) {
            struct pollfd pf = {.fd = 0, .events = POLLIN};
            if (poll(&pf, 1, -1) < 0 && errno != EINTR)
                return -1;
        }
    }
}

/* Fork the --hop child; TO and FROM are the parent's ends of its pipes. */
static pid_t start_hop(int *to, int *from)
{
    int down[2], up[2];
    if (pipe(down) || pipe(up))
        return -1;
    pid_t child = fork();
    if (child == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        close(down[1]);
        close(up[0]);
        _exit(hop_child(down[0], up[1]));
    }
    close(down[0]);
    close(up[1]);
    *to = down[1];
    *from = up[0];
    return child;
}

/* Fork the --relay HTTP server (with its own hop child when HOP); *FD is
 * the relay's end of the socket. */
static pid_t start_relay(int hop, int *fd)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
        return -1;
    pid_t child = fork();
    if (child == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        close(sv[0]);
        int to = -1, from = -1;
        if (hop && start_hop(&to, &from) < 0)
            _exit(1);
        _exit(relay_server(sv[1], to, from));
    }
    close(sv[1]);
    *fd = sv[0];
    return child;
}

int main(int argc, char **argv)
{
    buf in = {0}, out = {0}, req = {0}, resp = {0};
    int rc = 1, to = -1, from = -1, spin = 0, hop = 0, relay = 0, sock = -1;
    pid_t child = -1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--hop") == 0)
            hop = 1;
        else if (strcmp(argv[i], "--spin") == 0)
            spin = 1;
        else if (strcmp(argv[i], "--relay") == 0)
            relay = 1;
        else {
            fprintf(stderr, "usage: floor [--hop] [--relay] [--spin]\n");
            return 2;
        }
    }
    if (spin && fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK) != 0)
        return 1;
    if (relay)
        child = start_relay(hop, &sock);
    else if (hop)
        child = start_hop(&to, &from);
    if ((relay || hop) && child < 0)
        return 1;
    for (;;) {
        if (reserve(&in))
            goto cleanup;
        ssize_t n = read_in(in.p + in.len, in.cap - in.len, spin);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            goto cleanup;
        if (n == 0)
            break;
        in.len += (size_t)n;
        const char *p = in.p, *end = in.p + in.len, *nl;
        if (to >= 0 || sock >= 0) {
            /* Every complete line goes over together, as one batch. */
            const char *last = p;
            while ((nl = memchr(last, '\n', (size_t)(end - last))))
                last = nl + 1;
            if (last > p && (sock >= 0 ? relay_batch(sock, &req, &resp, &out, p, (size_t)(last - p))
                                       : hop_batch(to, from, &out, p, (size_t)(last - p))))
                goto cleanup;
            p = last;
        } else {
            while ((nl = memchr(p, '\n', (size_t)(end - p)))) {
                if (answer(&out, p, nl))
                    goto cleanup;
                p = nl + 1;
            }
        }
        memmove(in.p, p, (size_t)(end - p));
        in.len = (size_t)(end - p);
        if (out.len && write_all(1, out.p, out.len))
            goto cleanup;
        out.len = 0;
    }
    rc = 0;
cleanup:
    if (to >= 0) {
        close(to);
        close(from);
    }
    if (sock >= 0)
        close(sock);
    while (child > 0 && waitpid(child, NULL, 0) < 0 && errno == EINTR)
        ;
    free(in.p);
    free(out.p);
    free(req.p);
    free(resp.p);
    return rc;
}
