/* SPDX-License-Identifier: MIT */
/*
** transport/otlp.c: the exporter behind --otlp-endpoint: a thread that
** drains base/trace.c's queue in batches, writes each as an OTLP/HTTP JSON
** ExportTraceServiceRequest and POSTs it over a kept-alive HTTP/1.1
** connection; its own CPU time is capped, so spans drop before calls slow.
*/
#include "config.h"

#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/compat.h"
#include "base/log.h"
#include "base/metrics.h"
#include "base/trace.h"
#include "base/util.h"
#include "transport/otlp.h"

/* The OpenTelemetry SDKs' batch processor defaults: a queue of 2048, sent
 * 512 at a time, at least every so often when fewer are queued. */
#define QUEUE_SPANS 2048
#define BATCH_SPANS 512
#define DELAY_MS 1000
/* A collector that does not answer in this long loses the batch. */
#define IO_TIMEOUT_S 2
/* The exporter's share of one CPU, at most: past it, it pauses, the queue
 * fills and spans are dropped (toolhost_spans_dropped_total) instead. */
#define CPU_SHARE_PERCENT 2

typedef struct endpoint {
    char host[256], port[8], path[512];
    char url[900];
} endpoint;

struct th_otlp {
    endpoint ep;
    const char *version;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    bool stopping;
    int fd;       /* the kept-alive connection, or -1 */
    bool failing; /* the last export failed: said once, not per batch */
    th_span batch[BATCH_SPANS];
    th_buf body;
};

/* ---- the URL ------------------------------------------------------------ */

static bool parse_url(const char *url, endpoint *ep, char *err, size_t errlen)
{
    memset(ep, 0, sizeof *ep);
    if (strncasecmp(url, "https://", 8) == 0) {
        snprintf(err, errlen, "'%s': https is not supported; export over http:// to a collector on this host "
                 "or a trusted network", url);
        return false;
    }
    if (strncasecmp(url, "http://", 7) != 0) {
        snprintf(err, errlen, "'%s' is not an http:// URL", url);
        return false;
    }
    const char *h = url + 7, *end;
    if (*h == '[') { /* an IPv6 literal */
        end = strchr(h, ']');
        if (!end || (size_t)(end - h - 1) >= sizeof ep->host) {
            snprintf(err, errlen, "'%s': the IPv6 address has no closing ']'", url);
            return false;
        }
        memcpy(ep->host, h + 1, (size_t)(end - h - 1));
        end++;
    } else {
        end = h + strcspn(h, ":/?#");
        if ((size_t)(end - h) >= sizeof ep->host) {
            snprintf(err, errlen, "'%s': the host name is too long", url);
            return false;
        }
        memcpy(ep->host, h, (size_t)(end - h));
    }
    if (!ep->host[0] || strpbrk(ep->host, "@ ")) {
        snprintf(err, errlen, "'%s' names no host (or has user information, which is not supported)", url);
        return false;
    }
    snprintf(ep->port, sizeof ep->port, "80");
    if (*end == ':') {
        size_t n = strspn(end + 1, "0123456789");
        long port = n && n < 6 ? strtol(end + 1, NULL, 10) : 0;
        if (port < 1 || port > 65535) {
            snprintf(err, errlen, "'%s': the port is not 1 to 65535", url);
            return false;
        }
        snprintf(ep->port, sizeof ep->port, "%ld", port);
        end += 1 + n;
    }
    if (*end && *end != '/') {
        snprintf(err, errlen, "'%s': expected a path after the host and port", url);
        return false;
    }
    /* The OTLP/HTTP default for traces when the URL names no path. */
    const char *path = *end && strcmp(end, "/") != 0 ? end : "/v1/traces";
    if (strlen(path) >= sizeof ep->path || strpbrk(path, " \r\n#")) {
        snprintf(err, errlen, "'%s': the path is too long or has spaces, line breaks or a fragment", url);
        return false;
    }
    snprintf(ep->path, sizeof ep->path, "%s", path);
    snprintf(ep->url, sizeof ep->url, "http://%s%s%s:%s%s", strchr(ep->host, ':') ? "[" : "", ep->host,
             strchr(ep->host, ':') ? "]" : "", ep->port, ep->path);
    return true;
}

bool th_otlp_check_url(const char *url, char *err, size_t errlen)
{
    endpoint ep;
    return parse_url(url, &ep, err, errlen);
}

/* ---- the JSON ----------------------------------------------------------- */

/* A span is written with plain stores into room reserved for its longest
 * form: the exporter writes one at every call's rate, and a capacity check
 * and call per piece cost more than the bytes (callgrind: the
 * exporter's 3,700 instructions a span that way, 2,300 this way). */
#define LIT(w, lit) (memcpy((w), (lit), sizeof lit - 1), (w) + sizeof lit - 1)
/* The longest escape of a byte: \u00XX. */
#define ESCAPED 6


/* S escaped for a JSON string, without the quotes. */
static char *put_escaped(char *w, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    for (unsigned char c; (c = (unsigned char)*s); s++) {
        if (c >= 0x20 && c != '"' && c != '\\') {
            *w++ = (char)c;
            continue;
        }
        *w++ = '\\';
        if (c >= 0x20) {
            *w++ = (char)c;
            continue;
        }
        w = LIT(w, "u00");
        *w++ = hex[c >> 4];
        *w++ = hex[c & 15];
    }
    return w;
}

static char *put_hex(char *w, const uint8_t *id, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    *w++ = '"';
    for (size_t i = 0; i < n; i++) {
        *w++ = digits[id[i] >> 4];
        *w++ = digits[id[i] & 15];
    }
    *w++ = '"';
    return w;
}

/* V in decimal, quoted (OTLP/JSON writes 64-bit integers as strings; a
 * request id is a string attribute). */
static char *put_quoted_ll(char *w, long long v)
{
    char d[24];
    size_t i = sizeof d;
    unsigned long long u = v < 0 ? 0 - (unsigned long long)v : (unsigned long long)v;
    d[--i] = '"';
    do {
        d[--i] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        d[--i] = '-';
    d[--i] = '"';
    memcpy(w, d + i, sizeof d - i);
    return w + (sizeof d - i);
}

/* One string attribute after the first. HEAD is the literal up to the
 * value's opening quote: the keys are the conventions' names. */
#define ATTR_HEAD(key) ",{\"key\":\"" key "\",\"value\":{\"stringValue\":\""
#define ATTR_TAIL "\"}}"
static char *put_attr(char *w, const char *head, size_t head_len, const char *value)
{
    memcpy(w, head, head_len);
    w = put_escaped(w + head_len, value);
    return LIT(w, ATTR_TAIL);
}
#define PUT_ATTR(w, key, value) put_attr((w), ATTR_HEAD(key), sizeof ATTR_HEAD(key) - 1, (value))

/* The attributes of the OpenTelemetry MCP conventions a span has (the
 * method's, which is always there, is written by the caller). */
static char *put_attrs(char *w, const th_span *sp)
{
    if (sp->target_key) {
        w = LIT(w, ",{\"key\":\"");
        w = put_escaped(w, sp->target_key);
        w = LIT(w, "\",\"value\":{\"stringValue\":\"");
        w = put_escaped(w, sp->target);
        w = LIT(w, ATTR_TAIL);
    }
    if (sp->operation)
        w = PUT_ATTR(w, "gen_ai.operation.name", sp->operation);
    if (sp->version)
        w = PUT_ATTR(w, "mcp.protocol.version", sp->version);
    if (sp->int_id) {
        w = LIT(w, ",{\"key\":\"jsonrpc.request.id\",\"value\":{\"stringValue\":");
        w = put_quoted_ll(w, sp->int_id_value);
        w = LIT(w, "}}");
    } else if (sp->request_id[0]) {
        w = PUT_ATTR(w, "jsonrpc.request.id", sp->request_id);
    }
    w = PUT_ATTR(w, "network.transport", sp->transport);
    if (sp->session_id[0])
        w = PUT_ATTR(w, "mcp.session.id", sp->session_id);
    if (sp->error_type[0])
        w = PUT_ATTR(w, "error.type", sp->error_type);
    return w;
}

/* The most SP can take written: its strings all escaped at the longest,
 * and every literal (well under the allowance). */
static size_t span_bound(const th_span *sp)
{
    size_t strings = strlen(sp->method) + (sp->target_key ? strlen(sp->target_key) : 0) +
                     (sp->operation ? strlen(sp->operation) : 0) + (sp->version ? strlen(sp->version) : 0) +
                     strlen(sp->transport) + sizeof sp->request_id + 2 * sizeof sp->target + sizeof sp->session_id +
                     sizeof sp->error_type + sizeof sp->status;
    return 2048 + ESCAPED * strings;
}

/* SP, its times moved from th_now_ns's clock to the Unix epoch by
 * EPOCH_NS (what CLOCK_REALTIME read minus CLOCK_MONOTONIC, once a batch). */
static bool put_span(th_buf *b, const th_span *sp, bool first, long long epoch_ns)
{
    if (!th_buf_reserve(b, span_bound(sp)))
        return false;
    char *w = b->data + b->len;
    if (!first)
        *w++ = ',';
    w = LIT(w, "{\"traceId\":");
    w = put_hex(w, sp->trace_id, 16);
    w = LIT(w, ",\"spanId\":");
    w = put_hex(w, sp->span_id, 8);
    if (sp->has_parent) {
        w = LIT(w, ",\"parentSpanId\":");
        w = put_hex(w, sp->parent_id, 8);
    }
    /* {mcp.method.name} {target}, or the method alone. */
    w = LIT(w, ",\"name\":\"");
    w = put_escaped(w, sp->method);
    if (sp->target[0]) {
        *w++ = ' ';
        w = put_escaped(w, sp->target);
    }
    w = LIT(w, "\",\"kind\":2,\"startTimeUnixNano\":");
    w = put_quoted_ll(w, sp->start_ns + epoch_ns);
    w = LIT(w, ",\"endTimeUnixNano\":");
    w = put_quoted_ll(w, sp->end_ns + epoch_ns);
    w = LIT(w, ",\"attributes\":[{\"key\":\"mcp.method.name\",\"value\":{\"stringValue\":\"");
    w = put_escaped(w, sp->method);
    w = LIT(w, ATTR_TAIL);
    w = put_attrs(w, sp);
    *w++ = ']';
    if (sp->error_type[0]) {
        w = LIT(w, ",\"status\":{\"code\":2,\"message\":\"");
        w = put_escaped(w, sp->status);
        w = LIT(w, "\"}");
    }
    *w++ = '}';
    *w = '\0';
    b->len = (size_t)(w - b->data);
    return true;
}

/* The whole of an attribute of the resource, first or not. */
static bool put_resource_attr(th_buf *b, bool first, const char *key, const char *value)
{
    if (!th_buf_reserve(b, 64 + strlen(key) + ESCAPED * strlen(value)))
        return false;
    char *w = b->data + b->len;
    if (!first)
        *w++ = ',';
    w = LIT(w, "{\"key\":\"");
    w = put_escaped(w, key);
    w = LIT(w, "\",\"value\":{\"stringValue\":\"");
    w = put_escaped(w, value);
    w = LIT(w, ATTR_TAIL);
    *w = '\0';
    b->len = (size_t)(w - b->data);
    return true;
}

#define PUT(b, lit) th_buf_append(b, lit, sizeof lit - 1)

static long long clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static bool encode(th_otlp *o, size_t n)
{
    th_buf *b = &o->body;
    b->len = 0;
    /* Spans are timed on the clock --metrics reads (one read serves both);
     * dating them here follows a stepped wall clock from the next batch. */
    long long epoch_ns = clock_ns(CLOCK_REALTIME) - th_now_ns();
    bool ok = PUT(b, "{\"resourceSpans\":[{\"resource\":{\"attributes\":[") &&
              put_resource_attr(b, true, "service.name", "toolhost") &&
              put_resource_attr(b, false, "service.version", o->version) &&
              PUT(b, "]},\"scopeSpans\":[{\"scope\":{\"name\":\"toolhost\",\"version\":\"") &&
              th_buf_reserve(b, ESCAPED * strlen(o->version));
    if (ok) {
        char *w = put_escaped(b->data + b->len, o->version);
        b->len = (size_t)(w - b->data);
        ok = PUT(b, "\"},\"spans\":[");
    }
    for (size_t i = 0; ok && i < n; i++)
        ok = put_span(b, &o->batch[i], i == 0, epoch_ns);
    return ok && PUT(b, "]}]}]}");
}

/* ---- the POST ----------------------------------------------------------- */

static int connect_to(const endpoint *ep, char *err, size_t errlen)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
    int rc = getaddrinfo(ep->host, ep->port, &hints, &res);
    if (rc != 0) {
        snprintf(err, errlen, "cannot resolve '%s': %s", ep->host, gai_strerror(rc));
        return -1;
    }
    int fd = -1, saved = 0;
    struct timeval tv = {.tv_sec = IO_TIMEOUT_S};
    for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            saved = errno;
            continue;
        }
        /* Linux bounds a blocking connect by the send timeout too. */
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        if (connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
            saved = errno;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0)
        snprintf(err, errlen, "cannot connect to %s port %s: %s", ep->host, ep->port, strerror(saved));
    return fd;
}

/* The response's status; its body is read and discarded so the connection
 * can carry the next POST (*KEEP: it can). 0 when there was none. */
static int read_response(int fd, bool *keep)
{
    char buf[8192];
    size_t len = 0;
    char *end = NULL;
    *keep = false;
    while (!end) {
        if (len == sizeof buf - 1)
            return 0; /* headers this long are not a collector's */
        ssize_t r = recv(fd, buf + len, sizeof buf - 1 - len, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return 0;
        len += (size_t)r;
        buf[len] = '\0';
        end = strstr(buf, "\r\n\r\n");
    }
    int status = 0;
    if (sscanf(buf, "HTTP/1.%*d %d", &status) != 1)
        return 0;
    long long body = -1;
    for (char *line = strstr(buf, "\r\n"); line && line < end; line = strstr(line + 2, "\r\n")) {
        if (strncasecmp(line + 2, "Content-Length:", 15) == 0)
            body = strtoll(line + 17, NULL, 10);
        else if (strncasecmp(line + 2, "Connection: close", 17) == 0)
            body = -2; /* closes after it anyway */
    }
    /* Without a length (chunked, or to the close) the end is not worth
     * finding: the connection is closed and the next POST opens one. */
    long long have = (long long)(len - (size_t)(end + 4 - buf));
    while (body >= 0 && have < body) {
        ssize_t r = recv(fd, buf, sizeof buf, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return status;
        have += r;
    }
    *keep = body >= 0 && have == body;
    return status;
}

/* POST the encoded body on the kept connection, or a new one when that
 * was closed meanwhile. False with ERR set when it was not accepted. */
static bool post(th_otlp *o, char *err, size_t errlen)
{
    char head[1024];
    int hl = snprintf(head, sizeof head,
                      "POST %s HTTP/1.1\r\nHost: %s%s%s:%s\r\nUser-Agent: toolhost/%s\r\n"
                      "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
                      o->ep.path, strchr(o->ep.host, ':') ? "[" : "", o->ep.host, strchr(o->ep.host, ':') ? "]" : "",
                      o->ep.port, o->version, o->body.len);
    for (int attempt = 0; attempt < 2; attempt++) {
        bool reused = o->fd >= 0;
        if (!reused && (o->fd = connect_to(&o->ep, err, errlen)) < 0)
            return false;
        bool keep = false;
        int status = th_send_all(o->fd, head, (size_t)hl) && th_send_all(o->fd, o->body.data, o->body.len)
                         ? read_response(o->fd, &keep)
                         : 0;
        if (!keep) {
            close(o->fd);
            o->fd = -1;
        }
        if (status >= 200 && status < 300)
            return true;
        if (status) {
            snprintf(err, errlen, "%s answered HTTP %d", o->ep.url, status);
            return false;
        }
        snprintf(err, errlen, "%s sent no response: %s", o->ep.url, errno ? strerror(errno) : "closed");
        if (!reused)
            return false; /* else the kept connection had been closed: once more on a new one */
    }
    return false;
}

static void export_batch(th_otlp *o, size_t n)
{
    char err[1100];
    bool ok = encode(o, n);
    if (!ok)
        snprintf(err, sizeof err, "out of memory");
    ok = ok && post(o, err, sizeof err);
    if (th_metrics_enabled)
        th_metrics_spans_exported(n, ok);
    if (!ok && !o->failing)
        th_log(TH_LOG_WARNING, "--otlp-endpoint: %zu spans were not exported: %s (further failures are counted in "
               "toolhost_spans_export_failed_total, not logged)", n, err);
    else if (ok && o->failing)
        th_log(TH_LOG_NOTICE, "--otlp-endpoint: exporting to %s again", o->ep.url);
    o->failing = !ok;
}

/* ---- the thread --------------------------------------------------------- */

static long long cpu_ns(void)
{
    return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

/* Sleep MS unless a stop comes first. */
static void pause_ms(th_otlp *o, long long ms)
{
    long long until = th_now_ms() + ms;
    pthread_mutex_lock(&o->lock);
    while (!o->stopping && th_cond_wait_until(&o->wake, &o->lock, until))
        ;
    pthread_mutex_unlock(&o->lock);
}

static void *exporter(void *p)
{
    th_otlp *o = p;
    long long owed_ns = 0; /* pause earned by the CPU time spent so far */
    for (;;) {
        bool closing = th_trace_closed();
        size_t n = th_trace_drain(o->batch, BATCH_SPANS, closing ? 0 : DELAY_MS);
        if (n == 0 && closing)
            break;
        if (n == 0)
            continue;
        long long t0 = cpu_ns();
        export_batch(o, n);
        /* What this batch cost, times the rest of the CPU left alone; a
         * batch takes well under a millisecond, so the pause is owed in
         * nanoseconds and taken once it is worth a sleep. */
        owed_ns += (cpu_ns() - t0) * (100 - CPU_SHARE_PERCENT) / CPU_SHARE_PERCENT;
        if (!closing && owed_ns >= 1000000) {
            pause_ms(o, owed_ns / 1000000);
            owed_ns %= 1000000;
        }
    }
    return NULL;
}

th_otlp *th_otlp_start(const char *url, const char *version, char *err, size_t errlen)
{
    th_otlp *o = calloc(1, sizeof *o);
    if (!o) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    o->fd = -1;
    o->version = version;
    pthread_mutex_init(&o->lock, NULL);
    pthread_cond_init(&o->wake, NULL);
    if (!parse_url(url, &o->ep, err, errlen))
        goto fail;
    if (!th_trace_open(QUEUE_SPANS)) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    int rc = pthread_create(&o->thread, NULL, exporter, o);
    if (rc != 0) {
        snprintf(err, errlen, "cannot start the exporter thread: %s", strerror(rc));
        goto fail;
    }
    return o;
fail:
    pthread_mutex_destroy(&o->lock);
    pthread_cond_destroy(&o->wake);
    free(o);
    return NULL;
}

void th_otlp_stop(th_otlp *o)
{
    if (!o)
        return;
    pthread_mutex_lock(&o->lock);
    o->stopping = true;
    pthread_cond_broadcast(&o->wake);
    pthread_mutex_unlock(&o->lock);
    th_trace_close();
    pthread_join(o->thread, NULL);
    if (o->fd >= 0)
        close(o->fd);
    free(o->body.data);
    pthread_mutex_destroy(&o->lock);
    pthread_cond_destroy(&o->wake);
    free(o);
}
