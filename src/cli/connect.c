/* SPDX-License-Identifier: MIT */
/*
** cli/connect.c: `toolhost connect [--start] unix:PATH`, the stdio command a
** client launches to reach one shared daemon: each line on stdin becomes a
** POST on a kept connection, whatever the daemon sends back becomes lines on
** stdout. One call at a time costs no thread: its answer is read on the
** thread that sent it, unless the client writes again first.
*/
#include "config.h"

#include <errno.h>
#include <json-c/json.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/base64.h"
#include "base/util.h"
#include "cli/autostart.h"
#include "cli/cli.h"
#include "cli/httpc.h"

#define META_VERSION "io.modelcontextprotocol/protocolVersion"
#define DRAIN_MS 5000 /* at end of input, answers still due get this long */
/* Idle connections kept for the next POSTs while calls overlap; one once
 * they no longer do (conn_done). */
#define POOL_MAX 4
/* A connection idle this long is closed, not used: the daemon closes one
 * idle for 75 s, and one it is closing must not be sent a request. */
#define KEEP_MS 60000

/* An idle connection, and since when it is. */
typedef struct kept {
    th_httpc *c;
    long long since;
} kept;

/* One relay: the daemon's socket and what the exchanges share. */
typedef struct relay {
    const char *sock, *endpoint;
    pthread_mutex_t lock;       /* everything below, and stdout */
    pthread_cond_t done;        /* inflight dropped */
    char sid[TH_HTTPC_SID_MAX]; /* the legacy session, once initialize opened one */
    bool listening;             /* the GET stream of the session runs */
    bool ending;                /* stdin ended: the GET stream stops */
    bool opening;               /* an initialize is out: what follows waits for its session id */
    bool out_gone;              /* stdout is closed: answers are dropped */
    int get_fd;                 /* the GET stream's connection, for shutdown */
    size_t inflight;            /* requests whose answers are still read */
    json_object *mirrors;       /* tool -> {argument: header}: its x-mcp-header arguments */
    kept idle[POOL_MAX];        /* connections for the next POSTs, the latest last */
    size_t nidle;
    pthread_t getter;
} relay;

static void conn_free(th_httpc *c)
{
    if (c)
        th_httpc_close(c);
    free(c);
}

/* The latest idle connection the daemon has not closed, or NULL. */
static th_httpc *conn_kept(relay *r)
{
    th_httpc *c = NULL;
    long long now = th_now_ms();
    pthread_mutex_lock(&r->lock);
    while (!c && r->nidle) {
        kept k = r->idle[--r->nidle];
        if (now - k.since < KEEP_MS && th_httpc_idle_ok(k.c))
            c = k.c;
        else
            conn_free(k.c);
    }
    pthread_mutex_unlock(&r->lock);
    return c;
}

static th_httpc *conn_new(relay *r)
{
    th_httpc *c = malloc(sizeof *c);
    if (!c)
        errno = ENOMEM;
    else if (!th_httpc_open(c, r->sock)) {
        int e = errno;
        free(c);
        c = NULL;
        errno = e;
    }
    return c;
}

/*
** A connection whose answer was read: kept for the next request. While
** other requests are out (calls overlap) up to POOL_MAX stay idle; once
** this one is the last, one does, for every idle connection counts
** against the daemon's per-uid share, and ten clients each holding a
** burst's worth would fill it.
*/
static void conn_done(relay *r, th_httpc *c)
{
    th_httpc *drop[POOL_MAX];
    size_t ndrop = 0;
    pthread_mutex_lock(&r->lock);
    bool keep = !r->ending && th_httpc_reusable(c);
    size_t room = r->inflight > 1 ? POOL_MAX : 1;
    while (r->nidle + keep > room)
        drop[ndrop++] = r->idle[--r->nidle].c;
    if (keep)
        r->idle[r->nidle++] = (kept){c, th_now_ms()};
    pthread_mutex_unlock(&r->lock);
    while (ndrop)
        conn_free(drop[--ndrop]);
    if (!keep)
        conn_free(c);
}

/*
** Send a request on a kept connection, else a new one; NULL (errno set)
** when neither took it. The daemon may have closed a kept connection a
** moment ago; the request then goes once more on a new connection, but
** only when the daemon cannot have read it whole: not one byte of it was
** sent (EPIPE at once). A request that went is never sent again from
** here, for a tools/call may have run (see answer_head for the one case
** where its failure proves otherwise).
*/
static th_httpc *conn_send(relay *r, const char *head, const char *body, size_t blen, bool *reused)
{
    th_httpc *c = conn_kept(r);
    *reused = c != NULL;
    if (c && !th_httpc_request(c, head, body, blen)) {
        bool untouched = c->sent == 0;
        conn_free(c);
        c = NULL;
        if (!untouched)
            return NULL;
        *reused = false;
    }
    if (!c && (c = conn_new(r)) != NULL && !th_httpc_request(c, head, body, blen)) {
        int e = errno;
        conn_free(c);
        c = NULL;
        errno = e;
    }
    return c;
}

/* One line to stdout, whole: lines of concurrent answers never mix. */
static void emit(relay *r, const char *msg, size_t len)
{
    pthread_mutex_lock(&r->lock);
    for (size_t i = 0; i < len; i++) /* a message is one line (newline-delimited JSON) */
        if (msg[i] == '\n' || msg[i] == '\r')
            ((char *)msg)[i] = ' ';
    if (!r->out_gone && (fwrite(msg, 1, len, stdout) != len || fputc('\n', stdout) == EOF || fflush(stdout) != 0))
        r->out_gone = true;
    pthread_mutex_unlock(&r->lock);
}

/* A JSON-RPC error answering ID, for a failure the daemon could not put in
 * a message (no connection, an HTTP refusal without a JSON-RPC body). */
static void emit_error(relay *r, json_object *id, const char *what)
{
    json_object *o = json_object_new_object(), *e = json_object_new_object();
    json_object_object_add(o, "jsonrpc", json_object_new_string("2.0"));
    json_object_object_add(o, "id", id ? json_object_get(id) : NULL);
    json_object_object_add(e, "code", json_object_new_int(-32603));
    json_object_object_add(e, "message", json_object_new_string(what));
    json_object_object_add(o, "error", e);
    const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
    emit(r, s, strlen(s));
    json_object_put(o);
}

/* params[KEY] of a message as a string, or NULL. */
static const char *param_string(json_object *msg, const char *key)
{
    json_object *p, *v;
    if (!json_object_object_get_ex(msg, "params", &p) || !json_object_object_get_ex(p, key, &v) ||
        !json_object_is_type(v, json_type_string))
        return NULL;
    return json_object_get_string(v);
}

/* The protocol version a 2026-07-28 message claims in params._meta. */
static const char *claimed_version(json_object *msg)
{
    json_object *p, *meta, *v;
    if (!json_object_object_get_ex(msg, "params", &p) || !json_object_object_get_ex(p, "_meta", &meta) ||
        !json_object_object_get_ex(meta, META_VERSION, &v) || !json_object_is_type(v, json_type_string))
        return NULL;
    return json_object_get_string(v);
}

/* Header fields a value may carry as it is: printable ASCII, no CR/LF. */
static bool header_safe(const char *v)
{
    for (; *v; v++)
        if ((unsigned char)*v < 0x20 || (unsigned char)*v > 0x7e)
            return false;
    return true;
}

/*
** Remember the arguments each listed tool mirrors in Mcp-Param headers
** (x-mcp-header), from a tools/list answer (TEXT) relayed to the client:
** a 2026-07-28 server holds a call's headers to them, and the client,
** speaking stdio, sends none.
*/
static void learn_mirrors(relay *r, const char *text)
{
    json_object *msg = json_tokener_parse(text), *res, *tools;
    if (!json_object_object_get_ex(msg, "result", &res) || !json_object_object_get_ex(res, "tools", &tools) ||
        !json_object_is_type(tools, json_type_array)) {
        json_object_put(msg);
        return;
    }
    pthread_mutex_lock(&r->lock);
    for (size_t i = 0; i < json_object_array_length(tools); i++) {
        json_object *t = json_object_array_get_idx(tools, i), *name, *schema, *props, *map = NULL;
        if (!json_object_object_get_ex(t, "name", &name) || !json_object_object_get_ex(t, "inputSchema", &schema) ||
            !json_object_object_get_ex(schema, "properties", &props) || !json_object_is_type(props, json_type_object))
            continue;
        json_object_object_foreach(props, arg, ps)
        {
            json_object *h;
            if (!json_object_object_get_ex(ps, "x-mcp-header", &h) || !json_object_is_type(h, json_type_string))
                continue;
            if (!map)
                map = json_object_new_object();
            json_object_object_add(map, arg, json_object_get(h));
        }
        if (map) {
            if (!r->mirrors)
                r->mirrors = json_object_new_object();
            json_object_object_add(r->mirrors, json_object_get_string(name), map);
        }
    }
    pthread_mutex_unlock(&r->lock);
    json_object_put(msg);
}

/* Mcp-Param-NAME fields for the mirrored arguments of a tools/call: a
 * string as it is, anything else as its JSON text, Base64-wrapped when it
 * cannot go as it is. Under r->lock. */
static int add_mirrors(relay *r, json_object *msg, char *head, size_t size)
{
    json_object *map, *p, *args, *v;
    const char *tool = param_string(msg, "name");
    int n = 0;
    if (!tool || !r->mirrors || !json_object_object_get_ex(r->mirrors, tool, &map) ||
        !json_object_object_get_ex(msg, "params", &p) || !json_object_object_get_ex(p, "arguments", &args))
        return 0;
    json_object_object_foreach(map, arg, hname)
    {
        if (!json_object_object_get_ex(args, arg, &v) || (size_t)n >= size)
            continue;
        const char *text = json_object_is_type(v, json_type_string)
                               ? json_object_get_string(v)
                               : json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
        size_t tl = strlen(text);
        bool plain = header_safe(text) && (!tl || (text[0] != ' ' && text[tl - 1] != ' '));
        char *b64 = plain ? NULL : th_base64_encode(text, tl);
        n += snprintf(head + n, size - (size_t)n, plain ? "\r\nMcp-Param-%s: %s" : "\r\nMcp-Param-%s: =?base64?%s?=",
                      json_object_get_string(hname), plain ? text : b64 ? b64 : "");
        free(b64);
    }
    return n;
}

/*
** The request head for MSG: the session once there is one, and for a
** message claiming a per-request version the headers the server holds
** against its body (MCP-Protocol-Version, Mcp-Method, Mcp-Name). The
** client spoke stdio, which has no headers: they are read off the body.
*/
static void build_head(relay *r, json_object *msg, size_t blen, char *head, size_t size)
{
    static const struct {
        const char *method, *member;
    } named[] = {{"tools/call", "name"},  {"prompts/get", "name"},   {"resources/read", "uri"},
                 {"tasks/get", "taskId"}, {"tasks/update", "taskId"}, {"tasks/cancel", "taskId"}};
    json_object *m;
    const char *version = claimed_version(msg);
    const char *method = json_object_object_get_ex(msg, "method", &m) ? json_object_get_string(m) : NULL;
    int n = snprintf(head, size,
                     "POST %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                     "Accept: application/json, text/event-stream\r\nContent-Length: %zu",
                     r->endpoint, blen);
    pthread_mutex_lock(&r->lock);
    if (r->sid[0] && n > 0 && (size_t)n < size)
        n += snprintf(head + n, size - (size_t)n, "\r\nMcp-Session-Id: %s", r->sid);
    pthread_mutex_unlock(&r->lock);
    if (!version || !header_safe(version) || n < 0 || (size_t)n >= size)
        return;
    n += snprintf(head + n, size - (size_t)n, "\r\nMCP-Protocol-Version: %s", version);
    if (method && header_safe(method) && (size_t)n < size)
        n += snprintf(head + n, size - (size_t)n, "\r\nMcp-Method: %s", method);
    for (size_t i = 0; method && i < sizeof named / sizeof named[0] && (size_t)n < size; i++) {
        const char *v = strcmp(named[i].method, method) == 0 ? param_string(msg, named[i].member) : NULL;
        if (v && header_safe(v))
            n += snprintf(head + n, size - (size_t)n, "\r\nMcp-Name: %s", v);
    }
    if (method && strcmp(method, "tools/call") == 0 && (size_t)n < size) {
        pthread_mutex_lock(&r->lock);
        add_mirrors(r, msg, head + n, size - (size_t)n);
        pthread_mutex_unlock(&r->lock);
    }
}

/* Relay a response body: JSON, or SSE events until the stream ends. False
 * when nothing that answers came (the caller then answers ID itself). */
static bool relay_body(relay *r, th_httpc *c, char *last_id, size_t idsize, bool list)
{
    bool any = false;
    if (c->sse) {
        char *data;
        while ((data = th_httpc_event(c, last_id, idsize)) != NULL) {
            if (data[strspn(data, " \t\n")]) { /* a priming event carries no message */
                if (list)
                    learn_mirrors(r, data);
                emit(r, data, strlen(data));
                any = true;
            }
            free(data);
        }
        return any;
    }
    size_t len;
    char *body = th_httpc_body(c, &len);
    json_object *parsed = body && len ? json_tokener_parse(body) : NULL;
    if (parsed && list)
        learn_mirrors(r, body);
    if (parsed) /* a JSON-RPC answer, also with a 4xx (a refused request) */
        emit(r, body, len);
    any = parsed != NULL;
    json_object_put(parsed);
    free(body);
    return any;
}

static void *listen_stream(void *arg);

/* A session opened (initialize answered with an id): remember it, and open
 * its GET stream, where messages unrelated to a request come. */
static void note_session(relay *r, const char *sid)
{
    pthread_mutex_lock(&r->lock);
    bool start = !r->sid[0] && sid[0];
    if (start) {
        snprintf(r->sid, sizeof r->sid, "%s", sid);
        r->listening = pthread_create(&r->getter, NULL, listen_stream, r) == 0;
    }
    pthread_mutex_unlock(&r->lock);
}

/* The legacy session's GET stream, opened again when the server ends it
 * (--http-retry-ms), resumed from the last event seen. */
static void *listen_stream(void *arg)
{
    relay *r = arg;
    char last[128] = "", head[512];
    for (;;) {
        pthread_mutex_lock(&r->lock);
        bool ending = r->ending;
        int n = snprintf(head, sizeof head,
                         "GET %s HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nMcp-Session-Id: %s\r\n"
                         "Connection: close",
                         r->endpoint, r->sid);
        pthread_mutex_unlock(&r->lock);
        if (ending)
            break;
        if (last[0] && n > 0 && (size_t)n < sizeof head)
            snprintf(head + n, sizeof head - (size_t)n, "\r\nLast-Event-ID: %s", last);
        th_httpc c;
        bool ok = th_httpc_send(&c, r->sock, head, NULL, 0);
        pthread_mutex_lock(&r->lock);
        r->get_fd = c.fd;
        ending = r->ending;
        pthread_mutex_unlock(&r->lock);
        ok = ok && !ending && th_httpc_head(&c) && c.status == 200 && c.sse;
        if (ok)
            relay_body(r, &c, last, sizeof last, false);
        pthread_mutex_lock(&r->lock);
        r->get_fd = -1;
        pthread_mutex_unlock(&r->lock);
        th_httpc_close(&c);
        if (!ok) /* no stream here (refused, or the daemon is gone): stop trying */
            break;
    }
    return NULL;
}

/* The lines of stdin, read with read(2) into a buffer of our own, so that
 * whether a whole line waits is known without blocking (stdio hides it). */
typedef struct input {
    char *p;              /* cap bytes and one for the NUL of a last line */
    size_t len, cap, off; /* [off, len) is not yet handed out */
    bool eof;
} input;

/* Whether the next line is there without reading (or there is none). */
static bool line_waiting(const input *in)
{
    return in->eof || memchr(in->p + in->off, '\n', in->len - in->off) != NULL;
}

/* The next line, without its end, NUL-terminated in the buffer; valid
 * until the next call. NULL at the end of input (or a read error). */
static char *next_line(input *in, size_t *len)
{
    for (;;) {
        char *start = in->p + in->off, *nl = memchr(start, '\n', in->len - in->off);
        if (nl || (in->eof && in->off < in->len)) {
            char *end = nl ? nl : in->p + in->len;
            *end = '\0';
            *len = (size_t)(end - start);
            in->off = (size_t)(end - in->p) + (nl != NULL);
            return start;
        }
        if (in->eof)
            return NULL;
        memmove(in->p, start, in->len - in->off);
        in->len -= in->off;
        in->off = 0;
        if (in->cap - in->len < 4096) {
            char *more = realloc(in->p, in->cap * 2 + 1);
            if (!more)
                return NULL;
            in->p = more;
            in->cap *= 2;
        }
        ssize_t n;
        while ((n = read(0, in->p + in->len, in->cap - in->len)) < 0 && errno == EINTR)
            ;
        if (n <= 0)
            in->eof = true;
        else
            in->len += (size_t)n;
    }
}

/* A request in flight: its answer is read on the sending thread, or, once
 * the client writes again first, on a thread of its own, so a slow call
 * holds up neither the next line nor a cancellation. */
typedef struct pending {
    relay *r;
    th_httpc *c;
    const char *head, *body; /* the request, while it may go once more (reused) */
    size_t blen;
    bool owned;              /* a copy, with copies of head and body, on a thread of its own */
    bool reused;             /* sent on a kept connection */
    json_object *id;
    bool initialize;
    bool list; /* tools/list: its answer names the arguments mirrored in headers */
} pending;

/*
** The head of P's answer. A kept connection reset before one byte of the
** answer came is the one failure that proves the request did not run: a
** Unix socket's peer gets ECONNRESET only when the daemon closed it with
** bytes unread (the kernel's unix_release_sock), and the daemon reads a
** request whole before it runs it, while no other was sent on it. Then,
** once, it goes on a new connection. Its plain end (EOF) proves nothing:
** the daemon may have read it, run it and gone; the client hears of it.
*/
static bool answer_head(relay *r, pending *p)
{
    if (th_httpc_head(p->c))
        return true;
    if (!p->reused || !p->c->reset || p->c->got || !p->head)
        return false;
    int e = errno;
    th_httpc *c = conn_new(r);
    if (!c || !th_httpc_request(c, p->head, p->body, p->blen)) {
        conn_free(c);
        errno = e;
        return false;
    }
    conn_free(p->c);
    p->c = c;
    p->reused = false;
    return th_httpc_head(p->c);
}

static void pending_free(pending *p)
{
    json_object_put(p->id);
    if (p->owned) {
        free((char *)p->head);
        free((char *)p->body);
        free(p);
    }
}

/* The head of P's answer, true when it came; an initialize's session is
 * noted, and the lines held back for it go on. */
static bool answer_begin(relay *r, pending *p)
{
    bool head = answer_head(r, p);
    if (p->initialize) {
        if (head && p->c->sid[0])
            note_session(r, p->c->sid);
        pthread_mutex_lock(&r->lock);
        r->opening = false;
        pthread_cond_broadcast(&r->done);
        pthread_mutex_unlock(&r->lock);
    }
    return head;
}

/* The rest of P's answer relayed (or its failure answered); P is done. */
static void answer_end(relay *r, pending *p, bool head)
{
    char last[128] = "";
    if (!head) {
        char what[512];
        snprintf(what, sizeof what, "toolhost connect: unix:%s: no answer: %s", r->sock, strerror(errno));
        fprintf(stderr, "%s\n", what);
        if (p->id)
            emit_error(r, p->id, what);
    } else if (!relay_body(r, p->c, last, sizeof last, p->list) && (p->id || p->c->status >= 400)) {
        char what[96];
        snprintf(what, sizeof what, "toolhost connect: the daemon answered HTTP %d without a message", p->c->status);
        emit_error(r, p->id, what);
    }
    if (head)
        conn_done(r, p->c);
    else
        conn_free(p->c);
    pending_free(p);
    pthread_mutex_lock(&r->lock);
    if (--r->inflight == 0)
        pthread_cond_broadcast(&r->done);
    pthread_mutex_unlock(&r->lock);
}

static void *read_answer(void *arg)
{
    pending *p = arg;
    answer_end(p->r, p, answer_begin(p->r, p));
    return NULL;
}

static void *read_rest(void *arg)
{
    pending *p = arg;
    answer_end(p->r, p, true);
    return NULL;
}

/* P (on the sender's stack, pointing into its buffers) goes on on a thread
 * of its own running FN, with copies of what it points to; without memory
 * or a thread, FN runs here: slower, never lost. */
static void hand_off(pending *p, void *(*fn)(void *))
{
    pending *q = malloc(sizeof *q);
    if (!q) {
        fn(p);
        return;
    }
    *q = *p;
    q->owned = true;
    q->head = q->body = NULL;
    /* Kept for answer_head's one case; without them it answers the failure. */
    char *h = p->reused ? strdup(p->head) : NULL, *b = h ? malloc(p->blen) : NULL;
    if (b) {
        memcpy(b, p->body, p->blen);
        q->head = h;
        q->body = b;
    } else {
        free(h);
    }
    pthread_t t;
    if (pthread_create(&t, NULL, fn, q) == 0)
        pthread_detach(t);
    else
        fn(q);
}

/*
** P's answer: read here when it comes before the client's next line (one
** call at a time, the common case: no thread started, none woken), on a
** thread of its own otherwise; so is an SSE stream, which may carry an ask
** the client answers on stdin meanwhile.
*/
static void await_answer(relay *r, input *in, pending *p)
{
    struct pollfd fds[2] = {{.fd = p->c->fd, .events = POLLIN}, {.fd = 0, .events = POLLIN}};
    int n = 0;
    while (!line_waiting(in) && (n = poll(fds, 2, -1)) < 0 && errno == EINTR)
        ;
    if (n <= 0 || fds[1].revents || !fds[0].revents) {
        hand_off(p, read_answer);
        return;
    }
    bool head = answer_begin(r, p);
    if (head && p->c->sse)
        hand_off(p, read_rest);
    else
        answer_end(r, p, head);
}

/* Send one line from stdin. It reaches the daemon before the next line is
 * read (the order the client wrote is the order the daemon sees). */
static void forward(relay *r, input *in, char *line, size_t len)
{
    /* What is no message object (a batch, a parse error) goes as it is:
     * the daemon answers it. */
    json_object *msg = json_tokener_parse(line), *id = NULL, *m = NULL;
    char head[2048];
    bool request = json_object_is_type(msg, json_type_object) && json_object_object_get_ex(msg, "id", &id) &&
                   json_object_object_get_ex(msg, "method", &m);
    /* A client that does not wait for initialize's answer (stdio allows
     * it) must not have its next message sent without the session id. */
    pthread_mutex_lock(&r->lock);
    while (r->opening)
        pthread_cond_wait(&r->done, &r->lock);
    pthread_mutex_unlock(&r->lock);
    build_head(r, msg, len, head, sizeof head);
    pending p = {.r = r, .head = head, .body = line, .blen = len, .id = request ? json_object_get(id) : NULL};
    p.initialize = request && strcmp(json_object_get_string(m), "initialize") == 0;
    p.list = request && strcmp(json_object_get_string(m), "tools/list") == 0;
    json_object_put(msg);
    if (!(p.c = conn_send(r, head, line, len, &p.reused))) {
        char what[512];
        snprintf(what, sizeof what, "toolhost connect: unix:%s: %s", r->sock, strerror(errno));
        fprintf(stderr, "%s\n", what);
        if (request)
            emit_error(r, p.id, what);
        json_object_put(p.id);
        return;
    }
    pthread_mutex_lock(&r->lock);
    r->inflight++;
    r->opening = p.initialize;
    pthread_mutex_unlock(&r->lock);
    await_answer(r, in, &p);
}

/* End of input: answers still due get DRAIN_MS, the session is ended
 * (DELETE) and its GET stream closed. */
static void finish(relay *r)
{
    long long until = th_now_ms() + DRAIN_MS;
    pthread_mutex_lock(&r->lock);
    while (r->inflight && th_cond_wait_until(&r->done, &r->lock, until))
        ;
    r->ending = true;
    if (r->get_fd >= 0)
        shutdown(r->get_fd, SHUT_RDWR);
    bool listening = r->listening;
    char head[512];
    snprintf(head, sizeof head, "DELETE %s HTTP/1.1\r\nHost: localhost\r\nMcp-Session-Id: %s\r\nConnection: close",
             r->endpoint, r->sid);
    bool session = r->sid[0] != '\0';
    while (r->nidle)
        conn_free(r->idle[--r->nidle].c);
    pthread_mutex_unlock(&r->lock);
    th_httpc c;
    if (session && th_httpc_send(&c, r->sock, head, NULL, 0))
        th_httpc_head(&c);
    if (session)
        th_httpc_close(&c);
    if (listening)
        pthread_join(r->getter, NULL);
}

/* --http-path among the daemon's options: the endpoint to POST to. */
static const char *endpoint_of(int argc, char **argv)
{
    const char *e = "/mcp";
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], "--http-path=", 12) == 0)
            e = argv[i] + 12;
        else if (strcmp(argv[i], "--http-path") == 0 && i + 1 < argc)
            e = argv[++i];
    }
    return e;
}

static int usage(FILE *out, int status)
{
    fprintf(out, "Usage: toolhost connect [--start] unix:PATH [DAEMON OPTION]...\n"
                    "Relay MCP on stdin/stdout to the toolhost daemon serving unix:PATH; with --start,\n"
                    "start one (with the DAEMON OPTIONs) when none answers.\n");
    return status;
}

int th_cli_connect(int argc, char **argv)
{
    bool start = false;
    int i = 1;
    for (int k = 1; k < argc; k++) /* anywhere, as the daemon's own --help would be */
        if (strcmp(argv[k], "--help") == 0 || strcmp(argv[k], "-h") == 0)
            return usage(stdout, 0);
    if (i < argc && strcmp(argv[i], "--start") == 0) {
        start = true;
        i++;
    }
    if (i >= argc || strncmp(argv[i], "unix:", 5) != 0 || !argv[i][5])
        return usage(stderr, 2);
    relay r = {.sock = argv[i] + 5, .get_fd = -1, .endpoint = endpoint_of(argc - i - 1, argv + i + 1)};
    /* A client gone mid-answer is a write error, not a signal. */
    signal(SIGPIPE, SIG_IGN);
    char err[512];
    if (!th_autostart(r.sock, start, argc - i - 1, argv + i + 1, err, sizeof err)) {
        fprintf(stderr, "toolhost connect: %s\n", err);
        return 1;
    }
    pthread_mutex_init(&r.lock, NULL);
    pthread_cond_init(&r.done, NULL);
    input in = {.p = malloc(65536 + 1), .cap = 65536};
    char *line;
    size_t n;
    while (in.p && (line = next_line(&in, &n)) != NULL) {
        while (n && line[n - 1] == '\r')
            line[--n] = '\0';
        if (n)
            forward(&r, &in, line, n);
    }
    if (!in.p)
        fprintf(stderr, "toolhost connect: no memory for the input buffer\n");
    free(in.p);
    finish(&r);
    json_object_put(r.mirrors);
    pthread_mutex_destroy(&r.lock);
    pthread_cond_destroy(&r.done);
    return 0;
}
