/* SPDX-License-Identifier: MIT */
/*
** bench/otlpsink.c: an OTLP/HTTP collector that accepts and discards, for
** the --otlp-endpoint rows of run.sh: reads each POST's body (by its
** Content-Length) and answers 200 on the same kept-alive connection.
** Prints "listening on http://127.0.0.1:PORT" and serves until killed.
*/
#define _GNU_SOURCE /* memmem */
#include <netinet/in.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

static const char answer[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";

/* One connection: requests until the peer closes. */
static void *serve(void *p)
{
    int fd = (int)(intptr_t)p;
    char buf[65536];
    size_t len = 0;
    for (;;) {
        char *end = len ? memmem(buf, len, "\r\n\r\n", 4) : NULL;
        if (!end) {
            if (len == sizeof buf)
                break;
            ssize_t r = read(fd, buf + len, sizeof buf - len);
            if (r <= 0)
                break;
            len += (size_t)r;
            continue;
        }
        size_t head = (size_t)(end + 4 - buf), body = 0;
        for (char *l = buf; l < end; l = strstr(l, "\r\n") + 2)
            if (strncasecmp(l, "Content-Length:", 15) == 0)
                body = strtoul(l + 15, NULL, 10);
        /* Discard the body: what is buffered, then the rest as it comes. */
        size_t have = len - head;
        while (have < body) {
            ssize_t r = read(fd, buf, sizeof buf);
            if (r <= 0)
                goto done;
            have += (size_t)r;
        }
        size_t extra = have - body; /* a pipelined next request */
        memmove(buf, buf + len - extra, extra);
        len = extra;
        if (write(fd, answer, sizeof answer - 1) != (ssize_t)(sizeof answer - 1))
            break;
    }
done:
    close(fd);
    return NULL;
}

int main(void)
{
    int ls = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof a) != 0 || listen(ls, 16) != 0 ||
        getsockname(ls, (struct sockaddr *)&a, &alen) != 0) {
        perror("otlpsink");
        return 1;
    }
    printf("listening on http://127.0.0.1:%u\n", ntohs(a.sin_port));
    fflush(stdout);
    for (;;) {
        int fd = accept(ls, NULL, NULL);
        pthread_t t;
        if (fd >= 0 && pthread_create(&t, NULL, serve, (void *)(intptr_t)fd) == 0)
            pthread_detach(t);
        else if (fd >= 0)
            close(fd);
    }
}
