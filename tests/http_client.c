/* SPDX-License-Identifier: MIT */
/*
** http_client.c: the plain socket HTTP/1.1 client of the --http tests (see
** http_client.h).
*/
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "http_client.h"

void hres_free(hres *r)
{
    free(r->headers);
    free(r->body);
}

/* Start toolhost serving HTTP on a free port (plus ARGS...); *PORT gets it. */
mh_proc *start_http(int *port, const char *a1, const char *a2, const char *a3)
{
    mh_proc *p = mh_start("--http", "127.0.0.1:0", a1, a2, a3, NULL);
    ck_assert_msg(mh_stderr_wait(p, LISTENING, MH_TIMEOUT_MS), "toolhost did not start listening");
    char *err = mh_stderr(p);
    const char *at = strstr(err, LISTENING);
    *port = atoi(at + strlen(LISTENING));
    free(err);
    ck_assert_int_gt(*port, 0);
    return p;
}

int connect_to(int port)
{
    return connect_from(port, NULL);
}

int connect_from(int port, const char *source)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(fd, 0);
    if (source) {
        struct sockaddr_in s = {.sin_family = AF_INET};
        ck_assert(inet_pton(AF_INET, source, &s.sin_addr) == 1);
        ck_assert_msg(bind(fd, (struct sockaddr *)&s, sizeof s) == 0, "bind %s: %s", source, strerror(errno));
    }
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_msg(connect(fd, (struct sockaddr *)&a, sizeof a) == 0, "connect: %s", strerror(errno));
    struct timeval tv = {.tv_sec = MH_TIMEOUT_MS / 1000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return fd;
}

/* Send METHOD with extra header lines HDRS ("Name: v\r\n"...) and BODY
 * (NULL: none); the connection closes after the response. */
int send_request(int port, const char *method, const char *path, const char *hdrs, const char *body)
{
    int fd = connect_to(port);
    char head[4096], len[128] = "";
    if (body)
        snprintf(len, sizeof len, "Content-Type: application/json\r\nContent-Length: %zu\r\n", strlen(body));
    int n = snprintf(head, sizeof head, "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n%s%s\r\n",
                     method, path, port, hdrs ? hdrs : "", len);
    ck_assert(n > 0 && (size_t)n < sizeof head);
    ck_assert(write(fd, head, (size_t)n) == n);
    if (body)
        ck_assert(write(fd, body, strlen(body)) == (ssize_t)strlen(body));
    return fd;
}

/* The value of header NAME in R (malloc'd), or NULL. */
char *header_of(const hres *r, const char *name)
{
    size_t n = strlen(name);
    for (const char *l = r->headers; l; l = strstr(l, "\r\n") ? strstr(l, "\r\n") + 2 : NULL) {
        if (strncasecmp(l, name, n) == 0 && l[n] == ':') {
            const char *v = l + n + 1;
            while (*v == ' ')
                v++;
            return strndup(v, strcspn(v, "\r\n"));
        }
    }
    return NULL;
}

/* Read the whole response from FD (closed afterwards). */
hres read_response(int fd)
{
    hres r = {0};
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (len + 1 >= cap)
            buf = realloc(buf, cap *= 2);
        ssize_t n = read(fd, buf + len, cap - len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    close(fd);
    buf[len] = '\0';
    char *end = strstr(buf, "\r\n\r\n");
    ck_assert_msg(end != NULL, "no complete HTTP response: '%s'", buf);
    *end = '\0';
    r.headers = strdup(buf);
    ck_assert_msg(sscanf(buf, "HTTP/1.1 %d", &r.status) == 1, "status line: %s", buf);
    const char *body = end + 4;
    char *te = header_of(&r, "Transfer-Encoding");
    bool chunked = te && strcasecmp(te, "chunked") == 0;
    free(te);
    if (chunked) {
        size_t out = 0;
        char *d = malloc(strlen(body) + 1);
        for (;;) {
            unsigned long sz = strtoul(body, NULL, 16);
            const char *data = strstr(body, "\r\n");
            if (!sz || !data)
                break;
            memcpy(d + out, data + 2, sz);
            out += sz;
            body = data + 2 + sz + 2;
        }
        d[out] = '\0';
        r.body = d;
    } else {
        r.body = strdup(body);
    }
    free(buf);
    return r;
}

/* Like read_response, but a connection closed without a response gives
 * status 0 instead of failing. */
hres read_response_or_empty(int fd)
{
    char c;
    ssize_t n = recv(fd, &c, 1, MSG_PEEK);
    if (n <= 0) {
        close(fd);
        return (hres){0};
    }
    return read_response(fd);
}

hres request(int port, const char *method, const char *hdrs, const char *body)
{
    return read_response(send_request(port, method, "/mcp", hdrs, body));
}
