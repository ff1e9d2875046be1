/* SPDX-License-Identifier: MIT */
/*
** httpfloor.c: the HTTP floor of the benchmark: libmicrohttpd set up as
** toolhost's transport is (a thread per connection, poll()), answering
** every POST with a fixed tools/call result shape, into which it copies the
** request's id and text by searching bytes, as floor.c does over stdio
** (a notification gets 202; every answer names the one session "floor").
** No JSON parser, no MCP: what serving HTTP alone costs.
**   usage: httpfloor      (listens on 127.0.0.1, a free port, said on stderr)
*/
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <microhttpd.h>

typedef struct body {
    char *data;
    size_t len;
} body;

/* The bytes after KEY in BODY up to the next STOP, or NULL. */
static const char *after(const body *b, const char *key, char stop, size_t *n)
{
    const char *p = memmem(b->data, b->len, key, strlen(key));
    if (!p)
        return NULL;
    p += strlen(key);
    const char *e = memchr(p, stop, b->len - (size_t)(p - b->data));
    if (!e)
        return NULL;
    *n = (size_t)(e - p);
    return p;
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
    body *b = *con_cls;
    (void)cls, (void)url, (void)version;
    if (strcmp(method, "POST") != 0)
        return MHD_NO;
    if (!b) {
        if (!(b = calloc(1, sizeof *b)))
            return MHD_NO;
        *con_cls = b;
        return MHD_YES;
    }
    if (*upload_size) {
        char *grown = realloc(b->data, b->len + *upload_size + 1);
        if (!grown)
            return MHD_NO;
        memcpy(grown + b->len, upload, *upload_size);
        b->data = grown;
        b->len += *upload_size;
        *upload_size = 0;
        return MHD_YES;
    }
    size_t idn = 1, textn = 0;
    const char *id = b->data ? after(b, "\"id\":", ',', &idn) : NULL;
    if (!id) { /* a notification: accepted, nothing to say */
        struct MHD_Response *r = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
        if (!r)
            return MHD_NO;
        enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_ACCEPTED, r);
        MHD_destroy_response(r);
        return ret;
    }
    const char *text = b->data ? after(b, "\"text\":\"", '"', &textn) : NULL;
    char *out = malloc(textn + idn + 128);
    if (!out)
        return MHD_NO;
    int n = sprintf(out, "{\"jsonrpc\":\"2.0\",\"id\":%.*s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"%.*s\"}]}}",
                    (int)idn, id, (int)textn, text ? text : "");
    struct MHD_Response *r = MHD_create_response_from_buffer((size_t)n, out, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(out);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    MHD_add_response_header(r, "Mcp-Session-Id", "floor"); /* one session, never checked */
    enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ret;
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode why)
{
    body *b = *con_cls;
    (void)cls, (void)c, (void)why;
    if (b) {
        free(b->data);
        free(b);
        *con_cls = NULL;
    }
}

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
    (void)sig;
    stop = 1;
}

int main(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct MHD_Daemon *d =
        MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC | MHD_USE_POLL,
                         0, NULL, NULL, answer, NULL, MHD_OPTION_SOCK_ADDR, &a, MHD_OPTION_CONNECTION_LIMIT, 256,
                         MHD_OPTION_NOTIFY_COMPLETED, completed, NULL, MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "httpfloor: cannot listen\n");
        return 1;
    }
    const union MHD_DaemonInfo *i = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    fprintf(stderr, "httpfloor: listening on http://127.0.0.1:%u/mcp\n", i ? i->port : 0);
    signal(SIGTERM, on_term);
    signal(SIGINT, on_term);
    while (!stop)
        pause();
    MHD_stop_daemon(d);
    return 0;
}
