/* SPDX-License-Identifier: MIT */
/*
** cli/hostproc.c: a toolhost server as a child on pipes: starting it, one
** line in, one JSON message out, with or without a time limit, and its end.
*/
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/compat.h"
#include "base/util.h"
#include "cli/hostproc.h"

bool th_hostproc_start(th_hostproc *h, char **argv)
{
    *h = (th_hostproc){.pid = -1, .to = -1, .from = -1};
    /* The executable by name: exec of /proc/self/exe itself would start a
     * wrapper's binary (valgrind's launcher) instead of toolhost. The path
     * is argv[0] too: it is how a server without /proc/self/exe finds its
     * executable for its workers. */
    static char self[PATH_MAX];
    int up[2], down[2];
    if (!th_self_exe(self, sizeof self) || th_pipe_cloexec(up, false) != 0)
        return false;
    if (th_pipe_cloexec(down, false) != 0) {
        close(up[0]);
        close(up[1]);
        return false;
    }
    argv[0] = self;
    /* A server that exits early must not kill us with SIGPIPE. */
    signal(SIGPIPE, SIG_IGN);
    fflush(NULL);
    h->pid = fork();
    if (h->pid == 0) {
        dup2(down[0], 0);
        dup2(up[1], 1);
        execv(self, argv);
        _exit(127);
    }
    int err = errno;
    close(down[0]);
    close(up[1]);
    h->to = down[1];
    h->from = up[0];
    if (h->pid < 0) {
        th_hostproc_stop(h, false);
        errno = err;
        return false;
    }
    return true;
}

/* All N bytes of P on the pipe FD (SIGPIPE is ignored: see start). */
static bool write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        p += w;
        n -= (size_t)w;
    }
    return true;
}

bool th_hostproc_send(th_hostproc *h, const char *line)
{
    return h->to >= 0 && write_all(h->to, line, strlen(line)) && write_all(h->to, "\n", 1);
}

bool th_hostproc_initialize(th_hostproc *h, const char *name)
{
    return th_hostproc_initialize_within(h, name, -1, NULL);
}

/* The response with id ID by UNTIL (-1: no limit), else NULL. */
static json_object *await_until(th_hostproc *h, int id, long long until, bool *timed_out)
{
    json_object *o, *v;
    for (;;) {
        long long left = until < 0 ? -1 : until - th_now_ms();
        if (!(o = th_hostproc_read(h, left < 0 && until >= 0 ? 0 : (int)left, timed_out)))
            return NULL;
        if (json_object_object_get_ex(o, "id", &v) && json_object_is_type(v, json_type_int) &&
            json_object_get_int(v) == id && !json_object_object_get_ex(o, "method", NULL))
            return o;
        json_object_put(o);
    }
}

bool th_hostproc_initialize_within(th_hostproc *h, const char *name, long long timeout_ms, bool *timed_out)
{
    long long until = timeout_ms < 0 ? -1 : th_now_ms() + timeout_ms;
    char msg[512];
    snprintf(msg, sizeof msg,
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\","
             "\"capabilities\":{},\"clientInfo\":{\"name\":\"%s\",\"version\":\"%s\"}}}",
             name, PACKAGE_VERSION);
    if (!th_hostproc_send(h, msg))
        return false;
    json_object *r = await_until(h, 1, until, timed_out);
    bool ok = r && json_object_object_get_ex(r, "result", NULL);
    json_object_put(r);
    return ok && th_hostproc_send(h, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
}

/* A whole line from the buffer as JSON (NULL when it is not); *FOUND
 * tells whether there was a line. */
static json_object *take_line(th_hostproc *h, bool *found)
{
    char *nl = h->len ? memchr(h->buf, '\n', h->len) : NULL;
    *found = nl != NULL;
    if (!nl)
        return NULL;
    size_t n = (size_t)(nl - h->buf);
    json_object *o = NULL;
    json_tokener *tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH);
    if (tok) {
        o = json_tokener_parse_ex(tok, h->buf, (int)n);
        json_tokener_free(tok);
    }
    memmove(h->buf, nl + 1, h->len - n - 1);
    h->len -= n + 1;
    return o;
}

json_object *th_hostproc_read(th_hostproc *h, int timeout_ms, bool *timed_out)
{
    long long until = timeout_ms < 0 ? -1 : th_now_ms() + timeout_ms;
    if (timed_out)
        *timed_out = false;
    while (h->from >= 0) {
        bool found;
        json_object *o = take_line(h, &found);
        if (o)
            return o;
        if (found)
            continue;
        int wait = until < 0 ? -1 : (int)(until - th_now_ms() > 0 ? until - th_now_ms() : 0);
        struct pollfd p = {.fd = h->from, .events = POLLIN};
        int n = poll(&p, 1, wait);
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0) {
            if (timed_out)
                *timed_out = true;
            return NULL;
        }
        if (h->cap - h->len < 65536) {
            char *b = realloc(h->buf, h->cap + 65536);
            if (!b)
                return NULL;
            h->buf = b;
            h->cap += 65536;
        }
        ssize_t got = n < 0 ? -1 : read(h->from, h->buf + h->len, h->cap - h->len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            close(h->from);
            h->from = -1;
        } else {
            h->len += (size_t)got;
        }
    }
    return NULL;
}

json_object *th_hostproc_await(th_hostproc *h, int id)
{
    return await_until(h, id, -1, NULL);
}

int th_hostproc_stop(th_hostproc *h, bool kill_it)
{
    int status = -1;
    if (h->to >= 0)
        close(h->to);
    if (kill_it && h->pid > 0)
        kill(h->pid, SIGKILL);
    if (h->from >= 0)
        close(h->from);
    if (h->pid > 0)
        while (waitpid(h->pid, &status, 0) < 0 && errno == EINTR)
            ;
    free(h->buf);
    *h = (th_hostproc){.pid = -1, .to = -1, .from = -1};
    return status;
}
