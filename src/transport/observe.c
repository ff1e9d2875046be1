/* SPDX-License-Identifier: MIT */
/*
** transport/observe.c: /metrics (base/metrics.c rendered, with the RSS read
** here, where I/O belongs), /healthz and /readyz, and the small listener of
** their own that --metrics ADDR starts.
*/
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/health.h"
#include "base/metrics.h"
#include "base/util.h"
#include "transport/observe.h"

struct th_observe {
    struct MHD_Daemon *daemon;
};

#define PROM_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* The resident set, from /proc/self/statm (pages); 0 where there is none. */
static long long rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "re");
    unsigned long long size = 0, resident = 0;
    if (!f)
        return 0;
    int n = fscanf(f, "%llu %llu", &size, &resident);
    fclose(f);
    long page = sysconf(_SC_PAGESIZE);
    return n == 2 && page > 0 ? (long long)(resident * (unsigned long long)page) : 0;
}

static enum MHD_Result send_text(struct MHD_Connection *c, unsigned status, const char *type, const char *body,
                                 size_t len)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result answer_metrics(struct MHD_Connection *c)
{
    th_buf b = {0};
    if (!th_metrics_render(&b, rss_bytes())) {
        free(b.data);
        static const char oom[] = "out of memory\n";
        return send_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain", oom, sizeof oom - 1);
    }
    enum MHD_Result ret = send_text(c, MHD_HTTP_OK, PROM_TYPE, b.data, b.len);
    free(b.data);
    return ret;
}

static enum MHD_Result answer_healthz(struct MHD_Connection *c)
{
    return send_text(c, MHD_HTTP_OK, "text/plain", "ok\n", 3);
}

/* 503 while plugins load, during a stop, and before workers can start. */
static enum MHD_Result answer_readyz(struct MHD_Connection *c)
{
    if (th_health_ready())
        return send_text(c, MHD_HTTP_OK, "text/plain", "ready\n", 6);
    static const char no[] = "not ready: plugins are loading or the host is stopping\n";
    return send_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain", no, sizeof no - 1);
}

static const struct endpoint {
    const char *path;
    bool metrics; /* only where metrics are served */
    enum MHD_Result (*answer)(struct MHD_Connection *c);
} endpoints[] = {
    {"/metrics", true, answer_metrics},
    {"/healthz", false, answer_healthz},
    {"/readyz", false, answer_readyz},
};

static const struct endpoint *find(const char *url)
{
    for (size_t i = 0; i < sizeof endpoints / sizeof endpoints[0]; i++)
        if (strcmp(url, endpoints[i].path) == 0)
            return &endpoints[i];
    return NULL;
}

bool th_observe_path(const char *url, bool metrics)
{
    const struct endpoint *e = find(url);
    return e && (metrics || !e->metrics);
}

enum MHD_Result th_observe_answer(struct MHD_Connection *c, const char *url)
{
    const struct endpoint *e = find(url);
    static const char nf[] = "Not Found\n";
    return e ? e->answer(c) : send_text(c, MHD_HTTP_NOT_FOUND, "text/plain", nf, sizeof nf - 1);
}

/* The listener's handler: GET or HEAD of an endpoint, nothing else. A body
 * is never read, so the first call answers. */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
    (void)cls;
    (void)version;
    (void)upload;
    (void)upload_size;
    (void)con_cls;
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
        static const char na[] = "Method Not Allowed\n";
        return send_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", na, sizeof na - 1);
    }
    return th_observe_answer(c, url);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    (void)fmt;
    (void)ap; /* a scraper's broken connection is not the operator's news */
}

/* ADDR and PORT as a socket address; false when ADDR is no literal. */
static bool address(const char *addr, unsigned port, struct sockaddr_storage *ss, unsigned *flags)
{
    struct sockaddr_in *v4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;
    memset(ss, 0, sizeof *ss);
    if (inet_pton(AF_INET, addr, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)port);
        return true;
    }
    if (inet_pton(AF_INET6, addr, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)port);
        *flags |= MHD_USE_IPv6;
        return true;
    }
    return false;
}

th_observe *th_observe_start(const char *addr, unsigned port, char *err, size_t errlen)
{
    struct sockaddr_storage ss;
    /* One thread polls every scraper: a scrape is one short answer. */
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL;
    if (!addr || !*addr)
        addr = "127.0.0.1";
    if (!th_mhd_open(err, errlen))
        return NULL;
    if (!address(addr, port, &ss, &flags)) {
        snprintf(err, errlen, "'%s' is not an IPv4 or IPv6 address", addr);
        return NULL;
    }
    th_observe *o = calloc(1, sizeof *o);
    if (!o) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    o->daemon = MHD_start_daemon(flags, 0, NULL, NULL, on_request, NULL, MHD_OPTION_SOCK_ADDR, &ss,
                                 MHD_OPTION_CONNECTION_LIMIT, 16u, MHD_OPTION_CONNECTION_TIMEOUT, 10u,
                                 MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_END);
    if (!o->daemon) {
        snprintf(err, errlen, "cannot listen on %s port %u: %s", addr, port, strerror(errno));
        free(o);
        return NULL;
    }
    return o;
}

unsigned th_observe_port(const th_observe *o)
{
    const union MHD_DaemonInfo *i = MHD_get_daemon_info(o->daemon, MHD_DAEMON_INFO_BIND_PORT);
    return i ? i->port : 0;
}

void th_observe_stop(th_observe *o)
{
    if (!o)
        return;
    MHD_stop_daemon(o->daemon);
    free(o);
}
