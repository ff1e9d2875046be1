/* SPDX-License-Identifier: MIT */
/*
** transport/http.c: MCP over Streamable HTTP on libmicrohttpd, one thread per
** connection (bounded by max_connections), so a POST simply waits for its
** answer. Owns admission (admit(): the one place every request passes),
** legacy sessions keyed by Mcp-Session-Id, the modern header checks, and
** the choice between an application/json body and a text/event-stream.
*/
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include "base/base64.h"
#include "base/compat.h"
#include "base/fastjson.h"
#include "base/log.h"
#include "base/metrics.h"
#include "base/util.h"
#include "plugin/policy.h"
#include "protocol/envelope.h"
#include "protocol/mcpasks.h"
#include "protocol/jsonrpc.h"
#include "protocol/mcp.h"
#include "transport/deadline.h"
#include "transport/http.h"
#include "transport/httphead.h"
#include "transport/mhd.h"
#include "transport/observe.h"
#include "transport/unixsock.h"

#define H_SESSION "Mcp-Session-Id"
#define H_VERSION "MCP-Protocol-Version"
/* The key of the exchange a JSON-RPC batch's array of responses goes to. */
#define BATCH_KEY "\x01" "batch"
/* How often a waiting thread looks at the stop flag. */
#define POLL_MS 200
/* A standalone GET stream writes an SSE comment after this long without an
 * event, so a client that went away is noticed (the write fails) and its
 * connection thread ends. */
#define KEEPALIVE_MS 10000
/* The longest a client may take to send the rest of a request (headers
 * and body) once its request line came, and to begin one on a connection
 * waiting for it; --http-timeout when that is shorter. The wait outlasts
 * nginx's upstream keepalive_timeout (60 s), so a proxy ends an idle
 * connection before the host does and never sends on one being closed. */
#define REQUEST_READ_MS 30000
#define REQUEST_WAIT_MS 75000
/* Events a standalone stream keeps for Last-Event-ID resumption; past
 * that the oldest half is forgotten. */
#define STANDALONE_KEEP 256
/* How often requests look for expired sessions (sess_sweep). */
#define SWEEP_MS 1000

/* Legacy revisions a session may name in MCP-Protocol-Version. */
static const char *const legacy_versions[] = {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"};

/* ---- exchanges: what one POST is waiting for ---------------------------- */

/* One message of an exchange; SSE event N+1 (0 is the priming event). */
typedef struct event {
    char *text;
    size_t len;
    bool final; /* the response: the POST is answered after it */
} event;

typedef struct exchange {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int refs;
    char *key;            /* th_rpc_id_key of the request's id (BATCH_KEY); owned */
    json_object *token;   /* its progress token, or NULL; owned */
    bool want_notes;      /* the client accepts text/event-stream */
    event *events;        /* everything received, kept for resumption */
    size_t nevents, cap;
    bool final_queued;
    bool delivered;       /* a reader wrote the final event */
    atomic_bool *abort;   /* the transport's hard-stop flag */
    unsigned long long stream; /* SSE event ids are "STREAM-N" */
    bool resumable;       /* in its session's stream list (GET Last-Event-ID) */
    size_t base;          /* events forgotten before events[0] (standalone only) */
    size_t keep;          /* forget the oldest past this many (0: keep all) */
    unsigned gen;         /* standalone: the newest GET reading it */
    bool closed;          /* standalone: its session ended */
    struct exchange *next; /* in its session's routing list */
    struct exchange *next_stream; /* in its session's stream list */
} exchange;

static atomic_ullong stream_counter;

static exchange *exchange_new(atomic_bool *abort, bool want_notes)
{
    exchange *ex = calloc(1, sizeof *ex);
    if (!ex)
        return NULL;
    pthread_mutex_init(&ex->lock, NULL);
    pthread_cond_init(&ex->cond, NULL);
    ex->refs = 1;
    ex->abort = abort;
    ex->want_notes = want_notes;
    ex->stream = atomic_fetch_add(&stream_counter, 1) + 1;
    return ex;
}

static void exchange_ref(exchange *ex)
{
    pthread_mutex_lock(&ex->lock);
    ex->refs++;
    pthread_mutex_unlock(&ex->lock);
}

static void exchange_unref(void *p)
{
    exchange *ex = p;
    if (!ex)
        return;
    pthread_mutex_lock(&ex->lock);
    bool last = --ex->refs == 0;
    pthread_mutex_unlock(&ex->lock);
    if (!last)
        return;
    for (size_t i = 0; i < ex->nevents; i++)
        free(ex->events[i].text);
    free(ex->events);
    free(ex->key);
    json_object_put(ex->token);
    pthread_mutex_destroy(&ex->lock);
    pthread_cond_destroy(&ex->cond);
    free(ex);
}

/* Record MSG (taken) for EX. A notification is dropped when the client takes
 * only JSON, and anything after the response is dropped. */
static void exchange_push(exchange *ex, json_object *msg, bool final)
{
    size_t len;
    const char *text = th_rpc_serialize(msg, &len);
    pthread_mutex_lock(&ex->lock);
    if (ex->final_queued || (!final && !ex->want_notes) || !text) {
        pthread_mutex_unlock(&ex->lock);
        json_object_put(msg);
        return;
    }
    char *copy = malloc(len + 1);
    if (copy && ex->nevents == ex->cap) {
        size_t cap = ex->cap ? 2 * ex->cap : 4;
        event *grown = realloc(ex->events, cap * sizeof *grown);
        if (grown) {
            ex->events = grown;
            ex->cap = cap;
        }
    }
    if (copy && ex->keep && ex->nevents >= ex->keep) {
        /* A standalone stream lives as long as its session: a client that
         * resumes this late has lost the oldest half. */
        size_t drop = ex->nevents / 2;
        for (size_t i = 0; i < drop; i++)
            free(ex->events[i].text);
        memmove(ex->events, ex->events + drop, (ex->nevents - drop) * sizeof *ex->events);
        ex->nevents -= drop;
        ex->base += drop;
    }
    bool kept = copy && ex->nevents < ex->cap;
    if (kept) {
        memcpy(copy, text, len + 1);
        ex->events[ex->nevents++] = (event){.text = copy, .len = len, .final = final};
        ex->final_queued = final;
    } else {
        free(copy);
        th_log(TH_LOG_ERROR, "http: out of memory keeping a message; it was dropped");
    }
    pthread_mutex_unlock(&ex->lock);
    /* Woken after the unlock, so that the connection thread does not run
     * only to block on the lock this one holds. EX stays alive meanwhile:
     * the sender holds a reference (sess_send), or the session being sent
     * through is not freed while a send is under way (modern_send). */
    if (kept)
        pthread_cond_broadcast(&ex->cond);
    json_object_put(msg);
}

/* Is MSG a response (or an array of them)? */
static bool is_response(json_object *msg)
{
    if (json_object_is_type(msg, json_type_array))
        return true;
    json_object *v;
    return th_rpc_member(msg, "id", &v) && !th_rpc_member(msg, "method", &v);
}

/* ---- the transport and its sessions ------------------------------------ */

typedef struct hsess {
    char id[TH_HTTP_SESSION_PREFIX_MAX + 33]; /* --http-session-prefix, 32 hex digits */
    th_mcp_session *ms;
    pthread_mutex_t lock;        /* exchanges */
    pthread_mutex_t handle_lock; /* one message into ms at a time, like a reader */
    exchange *exchanges;         /* POSTs of this session waiting for answers */
    exchange *streams;           /* SSE answers a client may resume (a reference each) */
    exchange *standalone;        /* the GET stream's messages, once a GET opened it; a reference */
    int refs;                    /* under th_http.lock */
    long long last_used;         /* th_now_ms of its last request; under th_http.lock */
    th_auth_principal owner;     /* who opened it (all zero without tokens); set once */
    struct hsess *next;
} hsess;

struct th_http {
    th_mcp *mcp;
    th_http_opts opts;
    bool loopback;          /* bound to a loopback address: Host is checked */
    bool unix_peers;        /* a Unix socket: without tokens, a peer's uid is its principal */
    const char *transport;  /* network.transport of its sessions' spans */
    struct MHD_Daemon *daemon;
    atomic_bool abort;      /* hard stop: waits end now */
    pthread_mutex_t lock;   /* everything below */
    pthread_cond_t idle;    /* active dropped to zero */
    hsess *sessions;
    size_t nsessions;
    long long next_sweep_ms; /* when sess_sweep looks for expired sessions again */
    size_t active;          /* requests being answered */
    struct conn *moderns;   /* modern requests being served (modern_track) */
    size_t open_conns;      /* connections open now */
    long long idle_since;   /* th_now_ms when the last connection and session went; 0: busy */
    th_deadlines *deadlines; /* every connection's whole-request deadline */
    /* A Unix socket's open connections by peer uid: every peer has the same
     * (empty) address, so MHD's per-address cap cannot tell them apart. */
    struct peer_slot {
        int fd;
        uid_t uid;
    } *peers;                /* max_connections of them */
    size_t npeers;
    long long peer_warned_ms; /* th_now_ms of the last refusal logged */
};

/* The exchange whose message this thread is handing to a legacy session: an
 * error that cannot name its request ("id": null, e.g. a refused batch) is
 * sent synchronously, from this thread, and belongs to it. */
static _Thread_local exchange *handling;

static void sess_trim_streams(hsess *s);

/* Route what a legacy session sends: a response to the POST that carries
 * its id, a progress notification to the POST with its token, a
 * notification about the server (th_mcp_notice_unbound) to the standalone GET stream,
 * anything else (a log message) to the newest POST of the session still
 * waiting, or to the GET stream when none is. */
static void sess_send(void *ctx, json_object *msg)
{
    hsess *s = ctx;
    bool final = is_response(msg);
    char *key = NULL;
    json_object *token = NULL, *v;
    /* A request a handler sends its client goes on the stream of the call
     * it serves: its id names that call. */
    char *origin = final ? NULL : th_asks_origin(msg);
    if (final && !json_object_is_type(msg, json_type_array) && th_rpc_member(msg, "id", &v))
        key = th_rpc_id_key(v);
    else if (!final && !origin)
        token = th_mcp_notice_progress(msg);
    const char *want = json_object_is_type(msg, json_type_array) ? BATCH_KEY : key;

    pthread_mutex_lock(&s->lock);
    exchange *to = NULL, **pp;
    bool to_standalone = !final && !origin && s->standalone && th_mcp_notice_unbound(msg);
    for (pp = &s->exchanges; !to_standalone && *pp; pp = &(*pp)->next) {
        exchange *ex = *pp;
        if (final    ? want && ex->key && strcmp(ex->key, want) == 0
            : origin ? ex->key && strcmp(ex->key, origin) == 0
            : token  ? ex->token && json_object_equal(ex->token, token)
                     : ex->key != NULL) {
            to = ex;
            break;
        }
    }
    if (!to && final && handling) {
        for (pp = &s->exchanges; *pp && *pp != handling; pp = &(*pp)->next)
            ;
        to = *pp;
    }
    if (to && final)
        *pp = to->next; /* answered: the id may be reused from now on */
    if (!to && !final && !origin)
        to = s->standalone;
    if (to)
        exchange_ref(to);
    pthread_mutex_unlock(&s->lock);
    free(key);
    bool asking = origin != NULL;
    free(origin);
    if (asking && (!to || !to->want_notes)) {
        /* Its handler would wait for an answer to a question never asked. */
        th_mcp_session_undeliverable(s->ms, msg,
                                     to ? "the client's POST does not accept text/event-stream, the only way to "
                                          "send it a request"
                                        : "the call it belongs to has no open stream");
        if (to)
            exchange_unref(to);
        json_object_put(msg);
        return;
    }
    if (!to) {
        th_log(TH_LOG_DEBUG, "http: session %.8s: a message no request waits for was dropped", s->id);
        json_object_put(msg);
        return;
    }
    exchange_push(to, msg, final);
    sess_trim_streams(s);
    if (final)
        exchange_unref(to); /* the session list's reference */
    exchange_unref(to);
}

/* A modern request's own session sends only for it. */
static void modern_send(void *ctx, json_object *msg)
{
    exchange_push(ctx, msg, is_response(msg));
}

static void sess_detach(hsess *s, exchange *ex)
{
    bool found = false;
    pthread_mutex_lock(&s->lock);
    for (exchange **pp = &s->exchanges; *pp; pp = &(*pp)->next) {
        if (*pp == ex) {
            *pp = ex->next;
            found = true;
            break;
        }
    }
    pthread_mutex_unlock(&s->lock);
    if (found)
        exchange_unref(ex);
}

/* EX's SSE answer may be resumed with GET and Last-Event-ID until its
 * response has been written. */
static void sess_add_stream(hsess *s, exchange *ex)
{
    exchange_ref(ex);
    pthread_mutex_lock(&s->lock);
    ex->resumable = true;
    ex->next_stream = s->streams;
    s->streams = ex;
    pthread_mutex_unlock(&s->lock);
}

static void sess_drop_stream(hsess *s, exchange *ex)
{
    bool found = false;
    pthread_mutex_lock(&s->lock);
    for (exchange **pp = &s->streams; *pp; pp = &(*pp)->next_stream) {
        if (*pp == ex) {
            *pp = ex->next_stream;
            found = true;
            break;
        }
    }
    pthread_mutex_unlock(&s->lock);
    if (found)
        exchange_unref(ex);
}

/*
** What a session's resumable answers may hold: past it the oldest streams
** are forgotten (a GET resuming one gets 404), the newest always kept. 48
** slow 1 MiB answers a client never resumed used to stay for the session's
** life, and sessions never ended.
*/
#define RETAIN_BYTES ((size_t)16 << 20)

static size_t exchange_bytes(exchange *ex)
{
    size_t n = 0;
    pthread_mutex_lock(&ex->lock);
    for (size_t i = 0; i < ex->nevents; i++)
        n += ex->events[i].len;
    pthread_mutex_unlock(&ex->lock);
    return n;
}

static void sess_trim_streams(hsess *s)
{
    exchange *drop = NULL;
    size_t total = 0;
    pthread_mutex_lock(&s->lock);
    for (exchange **pp = &s->streams; *pp; pp = &(*pp)->next_stream) {
        total += exchange_bytes(*pp);
        if (total > RETAIN_BYTES && pp != &s->streams) {
            drop = *pp;
            *pp = NULL;
            break;
        }
    }
    pthread_mutex_unlock(&s->lock);
    for (exchange *n; drop; drop = n) {
        n = drop->next_stream;
        th_log(TH_LOG_INFO, "http: session %.8s...: a stream nobody resumed was dropped (its session's resumable "
                            "answers passed %zu bytes)", s->id, RETAIN_BYTES);
        exchange_unref(drop);
    }
}

/* A reference to the resumable stream number STREAM of S, or NULL. */
static exchange *sess_find_stream(hsess *s, unsigned long long stream)
{
    pthread_mutex_lock(&s->lock);
    exchange *ex = s->streams;
    while (ex && ex->stream != stream)
        ex = ex->next_stream;
    if (ex)
        exchange_ref(ex);
    pthread_mutex_unlock(&s->lock);
    return ex;
}

static void sess_unref(th_http *h, hsess *s)
{
    pthread_mutex_lock(&h->lock);
    bool last = --s->refs == 0;
    pthread_mutex_unlock(&h->lock);
    if (!last)
        return;
    th_mcp_session_cancel_all(s->ms);
    th_mcp_session_free(s->ms); /* nothing reaches sess_send after this */
    for (exchange *ex = s->exchanges, *n; ex; ex = n) {
        n = ex->next;
        exchange_unref(ex);
    }
    for (exchange *ex = s->streams, *n; ex; ex = n) {
        n = ex->next_stream;
        exchange_unref(ex);
    }
    if (s->standalone) {
        /* Its GET reader, if any, ends now. */
        pthread_mutex_lock(&s->standalone->lock);
        s->standalone->closed = true;
        pthread_cond_broadcast(&s->standalone->cond);
        pthread_mutex_unlock(&s->standalone->lock);
        exchange_unref(s->standalone);
    }
    pthread_mutex_destroy(&s->lock);
    pthread_mutex_destroy(&s->handle_lock);
    free(s);
    if (th_metrics_enabled)
        th_metrics_sessions_add(-1);
}

static void sess_sweep(th_http *h);

/* A reference to the live session ID, or NULL: also when WHO did not open
 * it, so that another token holder cannot use, resume or end it, nor learn
 * that it exists. */
static hsess *sess_find(th_http *h, const char *id, const th_auth_principal *who)
{
    sess_sweep(h);
    pthread_mutex_lock(&h->lock);
    hsess *s = h->sessions;
    while (s && (strcmp(s->id, id) != 0 || memcmp(&s->owner, who, sizeof *who) != 0))
        s = s->next;
    if (s) {
        s->refs++;
        s->last_used = th_now_ms();
    }
    pthread_mutex_unlock(&h->lock);
    return s;
}

/* Unlink a session from the table (its table reference is dropped). */
static void sess_end(th_http *h, hsess *s)
{
    bool found = false;
    pthread_mutex_lock(&h->lock);
    for (hsess **pp = &h->sessions; *pp; pp = &(*pp)->next) {
        if (*pp == s) {
            *pp = s->next;
            h->nsessions--;
            found = true;
            break;
        }
    }
    pthread_mutex_unlock(&h->lock);
    if (found)
        sess_unref(h, s);
}

/*
** Sessions expire after --http-timeout without a request, like an idle
** connection: their client gets 404 and initializes again, as the
** specification has it. Until then a session is never ended for another:
** a flood of initialize calls used to evict live sessions of other clients.
*/
static bool sess_expired(const th_http *h, const hsess *s, long long now)
{
    return s->refs == 1 && now - s->last_used >= h->opts.request_timeout_ms;
}

/* Under h->lock: unlink the expired sessions onto *GONE (through next), and
 * give in *RETRY_S when the next one could expire (at least 1 s). */
static void sess_sweep_locked(th_http *h, hsess **gone, long long *retry_s)
{
    long long now = th_now_ms(), soonest = h->opts.request_timeout_ms;
    for (hsess **pp = &h->sessions; *pp;) {
        hsess *o = *pp;
        if (sess_expired(h, o, now)) {
            *pp = o->next;
            h->nsessions--;
            o->next = *gone;
            *gone = o;
            continue;
        }
        if (o->refs == 1 && o->last_used + h->opts.request_timeout_ms - now < soonest)
            soonest = o->last_used + h->opts.request_timeout_ms - now;
        pp = &o->next;
    }
    if (retry_s)
        *retry_s = soonest < 1000 ? 1 : (soonest + 999) / 1000;
}

/* End the sessions sess_sweep_locked unlinked (their table references). */
static void sess_end_gone(th_http *h, hsess *gone)
{
    for (hsess *n; gone; gone = n) {
        n = gone->next;
        th_log(TH_LOG_INFO, "http: session %.8s... expired (idle for --http-timeout)", gone->id);
        sess_unref(h, gone);
    }
}

/* Expire idle sessions now and then, so that what they hold (answers
 * never resumed) goes with them without waiting for a new session. */
static void sess_sweep(th_http *h)
{
    hsess *gone = NULL;
    pthread_mutex_lock(&h->lock);
    long long now = th_now_ms();
    if (now >= h->next_sweep_ms) {
        h->next_sweep_ms = now + SWEEP_MS;
        sess_sweep_locked(h, &gone, NULL);
    }
    pthread_mutex_unlock(&h->lock);
    sess_end_gone(h, gone);
}

/* Who MS's calls are made by, for the audit log and per-principal limits:
 * the principal's hash (auth.h), never the token; a Unix socket peer's
 * "uid:N" without tokens; else nobody. */
static void set_who(const th_http *h, th_mcp_session *ms, const th_auth_principal *who)
{
    if (!h->opts.auth) {
        if (h->unix_peers)
            th_mcp_session_set_who(ms, (const char *)who->id);
        return;
    }
    char name[7 + 2 * sizeof who->id + 1] = "sha256:";
    for (size_t i = 0; i < sizeof who->id; i++)
        snprintf(name + 7 + 2 * i, 3, "%02x", who->id[i]);
    th_mcp_session_set_who(ms, name);
}

/* A new session of WHO in the table, with a reference for the caller; NULL
 * when the table is full (*RETRY_S: when to try again) or memory is short. */
static hsess *sess_new(th_http *h, const th_auth_principal *who, const char **why, long long *retry_s)
{
    unsigned char rnd[16];
    hsess *s = calloc(1, sizeof *s);
    if (!s || th_random_bytes(rnd, sizeof rnd) != 0) {
        free(s);
        *why = "cannot create a session";
        return NULL;
    }
    /* The prefix lets a load balancer route a session back to the
     * instance that holds it (contrib/nginx/toolhost.conf). */
    size_t pl = (size_t)snprintf(s->id, sizeof s->id, "%s", h->opts.session_prefix ? h->opts.session_prefix : "");
    for (size_t i = 0; i < sizeof rnd; i++)
        snprintf(s->id + pl + 2 * i, 3, "%02x", rnd[i]);
    s->owner = *who;
    pthread_mutex_init(&s->lock, NULL);
    pthread_mutex_init(&s->handle_lock, NULL);
    s->ms = th_mcp_session_new(h->mcp, sess_send, s);
    if (s->ms)
        th_mcp_session_set_transport(s->ms, h->transport, s->id);
    if (!s->ms) {
        pthread_mutex_destroy(&s->lock);
        pthread_mutex_destroy(&s->handle_lock);
        free(s);
        *why = "out of memory";
        return NULL;
    }
    set_who(h, s->ms, who);
    pthread_mutex_lock(&h->lock);
    hsess *gone = NULL;
    sess_sweep_locked(h, &gone, retry_s);
    h->next_sweep_ms = th_now_ms() + SWEEP_MS;
    bool full = h->nsessions >= h->opts.max_sessions;
    if (!full) {
        s->last_used = th_now_ms();
        s->refs = 2; /* the table's and the caller's */
        s->next = h->sessions;
        h->sessions = s;
        h->nsessions++;
        if (th_metrics_enabled)
            th_metrics_sessions_add(1);
    }
    pthread_mutex_unlock(&h->lock);
    sess_end_gone(h, gone);
    if (full) {
        th_mcp_session_free(s->ms);
        pthread_mutex_destroy(&s->lock);
        pthread_mutex_destroy(&s->handle_lock);
        free(s);
        *why = "Service Unavailable: every session (--http-max-sessions) is in use; retry later";
        return NULL;
    }
    return s;
}

/* ---- small HTTP helpers ------------------------------------------------- */

/* A header's value with optional white space around it removed (RFC 9110
 * 5.5), copied to BUF; NULL when absent. */
static const char *header(struct MHD_Connection *c, const char *name, char *buf, size_t size)
{
    const char *v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
    if (!v)
        return NULL;
    while (*v == ' ' || *v == '\t')
        v++;
    size_t n = strlen(v);
    while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
        n--;
    if (n >= size)
        n = size - 1;
    memcpy(buf, v, n);
    buf[n] = '\0';
    return buf;
}

/* A header's value in place, *LEN bytes without the white space around it;
 * NULL when absent. */
static const char *header_value(struct MHD_Connection *c, const char *name, size_t *len)
{
    const char *v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
    if (!v)
        return NULL;
    v += strspn(v, " \t");
    size_t n = strlen(v);
    while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
        n--;
    *len = n;
    return v;
}

static enum MHD_Result send_body(struct MHD_Connection *c, unsigned status, const char *type, const char *body,
                                 size_t len, const char *sid, const char *hname, const char *hvalue)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (!r)
        return MHD_NO;
    if (type)
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    if (sid)
        MHD_add_response_header(r, H_SESSION, sid);
    if (hname && hvalue)
        MHD_add_response_header(r, hname, hvalue);
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

/* An HTTP error whose body is a JSON-RPC error, so MCP clients show it,
 * with one more header (HNAME:
 * HVALUE, when both are given); plain text when memory is too short for
 * JSON. */
static enum MHD_Result send_rpc_error_with(struct MHD_Connection *c, unsigned status, json_object *id, int code,
                                           const char *message, const char *hname, const char *hvalue)
{
    json_object *e = th_rpc_error(id, code, message, NULL); /* ID is copied */
    size_t len = 0;
    const char *text = e ? th_rpc_serialize(e, &len) : NULL;
    enum MHD_Result ret = text ? send_body(c, status, "application/json", text, len, NULL, hname, hvalue)
                               : send_body(c, status, "text/plain", message, strlen(message), NULL, hname, hvalue);
    json_object_put(e);
    return ret;
}

static enum MHD_Result send_rpc_error(struct MHD_Connection *c, unsigned status, json_object *id, int code,
                                      const char *message, const char *allow)
{
    return send_rpc_error_with(c, status, id, code, message, MHD_HTTP_HEADER_ALLOW, allow);
}

/* 503 for an initialize the session table has no room for (or no memory),
 * with Retry-After: when the next session could expire. */
static enum MHD_Result send_sessions_full(struct MHD_Connection *c, const char *why, long long retry_s)
{
    char after[24];
    snprintf(after, sizeof after, "%lld", retry_s > 0 ? retry_s : 1);
    return send_rpc_error_with(c, MHD_HTTP_SERVICE_UNAVAILABLE, NULL, TH_RPC_INTERNAL_ERROR, why,
                               MHD_HTTP_HEADER_RETRY_AFTER, after);
}

static enum MHD_Result send_auth_refusal(struct MHD_Connection *c, unsigned status, const char *message,
                                         const char *www_auth)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(message), (void *)message, MHD_RESPMEM_MUST_COPY);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain");
    MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, www_auth);
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static bool loopback_name(const char *host)
{
    return !strcmp(host, "localhost") || !strcmp(host, "127.0.0.1") || !strcmp(host, "[::1]");
}

static bool origin_listed(const th_http *h, const char *origin)
{
    for (size_t i = 0; i < h->opts.norigins; i++)
        if (strcasecmp(h->opts.origins[i], origin) == 0)
            return true;
    return false;
}

/* HOST (no port) is the host of a listed origin. */
static bool host_listed(const th_http *h, const char *host)
{
    char oh[TH_HTTP_HOST_MAX];
    for (size_t i = 0; i < h->opts.norigins; i++)
        if (th_http_origin_host(h->opts.origins[i], oh, sizeof oh) && strcmp(oh, host) == 0)
            return true;
    return false;
}

/* A media type list (Accept) accepts TYPE (NULL: no header, it does). */
static bool accepts(const char *list, const char *type)
{
    return th_http_accepts(list, type);
}

/* ---- admission ------------------------------------------------------------ */

typedef struct conn {
    th_http *h;
    th_buf body;
    bool counted;      /* in h->active */
    bool too_large;    /* a chunked body passed the limit: the rest is dropped */
    exchange *ex;      /* the POST's answers, or NULL */
    th_mcp_session *ms; /* a modern request's own session, or NULL */
    hsess *sess;       /* a legacy session reference, or NULL */
    th_auth_principal who; /* whose token admitted it (all zero without tokens) */
    th_policy *caller; /* the tools its token may see (--auth-tools), or NULL: no set of its own */
    bool tracked;      /* in h->moderns; under h->lock */
    struct conn *prev, *next; /* in h->moderns */
} conn;

/* A modern request's session is known to the transport while it is served,
 * so that a stop cancels its call: the thread serving it may be waiting in
 * that call (th_mcp_session_wait_here), not only in answer(). False when
 * the stop has begun already (its cancelling may have passed it by). */
static bool modern_track(th_http *h, conn *k)
{
    pthread_mutex_lock(&h->lock);
    k->prev = NULL;
    k->next = h->moderns;
    if (h->moderns)
        h->moderns->prev = k;
    h->moderns = k;
    k->tracked = true;
    bool stopping = atomic_load(&h->abort);
    pthread_mutex_unlock(&h->lock);
    return !stopping;
}

static void modern_untrack(th_http *h, conn *k)
{
    pthread_mutex_lock(&h->lock);
    if (k->tracked) {
        if (k->prev)
            k->prev->next = k->next;
        else
            h->moderns = k->next;
        if (k->next)
            k->next->prev = k->prev;
        k->tracked = false;
    }
    pthread_mutex_unlock(&h->lock);
}

typedef struct refusal {
    unsigned status;
    const char *message;
    const char *allow;
    char www_auth[512]; /* WWW-Authenticate of a 401 or 403, or "" */
    th_auth_principal who; /* admitted: whose token it was (all zero without tokens) */
    char granted[1024];    /* admitted: the scopes its token carries, space-separated */
} refusal;

#define WELL_KNOWN "/.well-known/oauth-protected-resource"

/* "http://HOST" this request reached, from the Host header (RFC 9728 wants
 * the metadata beside the resource, so its URL follows the resource's). */
static void request_origin(struct MHD_Connection *c, char *out, size_t size)
{
    char buf[256];
    const char *host = header(c, "Host", buf, sizeof buf);
    snprintf(out, size, "http://%s", host ? host : "localhost");
}

/* The resource URI: --http-resource-url, or derived from Host and the path. */
static void resource_uri(const th_http *h, struct MHD_Connection *c, char *out, size_t size)
{
    char origin[300];
    if (h->opts.resource_url) {
        snprintf(out, size, "%s", h->opts.resource_url);
        return;
    }
    request_origin(c, origin, sizeof origin);
    snprintf(out, size, "%s%s", origin, h->opts.path);
}

/* The metadata URL: the resource URI's origin, the well-known prefix, then
 * the resource's path (the path-suffixed form of RFC 9728 section 3.1). */
static void metadata_url(const th_http *h, struct MHD_Connection *c, char *out, size_t size)
{
    char res[512];
    resource_uri(h, c, res, sizeof res);
    const char *scheme_end = strstr(res, "://");
    const char *path = scheme_end ? strchr(scheme_end + 3, '/') : NULL;
    int olen = path ? (int)(path - res) : (int)strlen(res);
    snprintf(out, size, "%.*s" WELL_KNOWN "%s", olen, res, path ? path : "");
}

/* Refuses a request without a good bearer token (RFC 6750 section 3). */
static bool authorize_scope(th_http *h, struct MHD_Connection *c, const char *scope, refusal *r)
{
    if (!h->opts.auth)
        return true;
    /* JWTs from real authorization servers run to a few KB (RS256 alone
     * adds 342 bytes of signature); a truncated one would fail as invalid. */
    char buf[8192], meta[600];
    th_auth_result res = th_auth_check_grants(h->opts.auth, header(c, MHD_HTTP_HEADER_AUTHORIZATION, buf, sizeof buf),
                                              scope, &r->who, r->granted, sizeof r->granted);
    if (res == TH_AUTH_OK)
        return true;
    metadata_url(h, c, meta, sizeof meta);
    static const struct {
        th_auth_result res;
        unsigned status;
        const char *error; /* NULL: no error attribute (no token was given) */
        const char *message;
    } table[] = {
        {TH_AUTH_MISSING, MHD_HTTP_UNAUTHORIZED, NULL, "Unauthorized: a bearer token is required"},
        {TH_AUTH_INVALID, MHD_HTTP_UNAUTHORIZED, "invalid_token", "Unauthorized: the bearer token is not valid"},
        {TH_AUTH_SCOPE, MHD_HTTP_FORBIDDEN, "insufficient_scope", "Forbidden: the bearer token lacks the scope"},
    };
    for (size_t i = 0; i < sizeof table / sizeof *table; i++) {
        if (table[i].res != res)
            continue;
        r->status = table[i].status;
        r->message = table[i].message;
        const char *sc = scope ? scope : th_auth_scopes(h->opts.auth);
        int n = snprintf(r->www_auth, sizeof r->www_auth, "Bearer resource_metadata=\"%s\"", meta);
        if (n > 0 && (size_t)n < sizeof r->www_auth && *sc)
            n += snprintf(r->www_auth + n, sizeof r->www_auth - (size_t)n, ", scope=\"%s\"", sc);
        if (n > 0 && (size_t)n < sizeof r->www_auth && table[i].error)
            snprintf(r->www_auth + n, sizeof r->www_auth - (size_t)n, ", error=\"%s\"", table[i].error);
    }
    return false;
}

static bool authorize(th_http *h, struct MHD_Connection *c, refusal *r)
{
    return authorize_scope(h, c, h->opts.auth_scope, r);
}

/* Whether the space-separated LIST holds the word W (LEN bytes). */
static bool carries(const char *list, const char *w, size_t len)
{
    for (const char *p = list + strspn(list, " "); *p; p += strspn(p, " ")) {
        size_t n = strcspn(p, " ");
        if (n == len && memcmp(p, w, len) == 0)
            return true;
        p += n;
    }
    return false;
}

/*
** The tools a caller whose token carries GRANTED may see: those matching
** the globs of every --auth-tools SCOPE=GLOB,... whose SCOPE is among
** them, and no other (a token with none of those scopes sees no tool).
** NULL without --auth-tools, or when out of memory (*NOMEM then).
*/
static th_policy *caller_set(const th_http *h, const char *granted, bool *nomem)
{
    *nomem = false;
    if (!h->opts.ncaller_tools)
        return NULL;
    th_policy *p = th_policy_new_closed();
    for (size_t i = 0; p && i < h->opts.ncaller_tools; i++) {
        const char *e = h->opts.caller_tools[i], *eq = strchr(e, '=');
        th_err err;
        /* The host checked each rule when it parsed it: only memory can fail. */
        if (eq && carries(granted, e, (size_t)(eq - e)) &&
            th_policy_add(p, TH_POLICY_TOOLS, "auth-tools", eq + 1, &err) != TH_OK) {
            th_policy_unref(p);
            p = NULL;
        }
    }
    *nomem = !p;
    return p;
}

/* The scope --auth-tool-scope asks of a call of TOOL (NULL: the message
 * names no tool), or NULL. tools/list is not filtered: a client may see
 * what it cannot call. */
static const char *tool_scope(const th_http *h, const char *tool)
{
    size_t n = tool ? strlen(tool) : 0;
    for (size_t i = 0; tool && i < h->opts.ntool_scopes; i++) {
        const char *e = h->opts.tool_scopes[i];
        if (strncmp(e, tool, n) == 0 && e[n] == '=')
            return e + n + 1;
    }
    return NULL;
}

/* Refuses M (a message or a batch) when a tools/call in it needs a scope
 * the token lacks. */
static bool authorize_tools(th_http *h, struct MHD_Connection *c, const th_rpc_msg *m, refusal *r)
{
    if (!h->opts.auth)
        return true;
    if (m->kind != TH_RPC_BATCH) {
        const char *scope = tool_scope(h, th_mcp_called_tool(m));
        return !scope || authorize_scope(h, c, scope, r);
    }
    bool ok = true;
    for (size_t i = 0; ok && i < json_object_array_length(m->msg); i++) {
        th_rpc_msg one;
        th_rpc_parse_value(json_object_array_get_idx(m->msg, i), &one);
        const char *scope = tool_scope(h, th_mcp_called_tool(&one));
        ok = !scope || authorize_scope(h, c, scope, r);
        th_rpc_msg_clear(&one);
    }
    return ok;
}

/* The protected resource metadata document (RFC 9728). */
static enum MHD_Result serve_metadata(th_http *h, struct MHD_Connection *c)
{
    char res[512];
    resource_uri(h, c, res, sizeof res);
    json_object *o = json_object_new_object(), *servers = json_object_new_array(),
                *scopes = json_object_new_array(), *methods = json_object_new_array();
    enum MHD_Result ret = MHD_NO;
    if (!o || !servers || !scopes || !methods) {
        json_object_put(servers);
        json_object_put(scopes);
        json_object_put(methods);
        goto cleanup;
    }
    json_object_object_add(o, "resource", json_object_new_string(res));
    if (h->opts.auth_issuer)
        json_object_array_add(servers, json_object_new_string(h->opts.auth_issuer));
    json_object_object_add(o, "authorization_servers", servers);
    char *copy = strdup(th_auth_scopes(h->opts.auth)), *save = NULL;
    for (char *w = copy ? strtok_r(copy, " ", &save) : NULL; w; w = strtok_r(NULL, " ", &save))
        json_object_array_add(scopes, json_object_new_string(w));
    free(copy);
    json_object_object_add(o, "scopes_supported", scopes);
    json_object_array_add(methods, json_object_new_string("header"));
    json_object_object_add(o, "bearer_methods_supported", methods);
    const char *text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    ret = send_body(c, MHD_HTTP_OK, "application/json", text, strlen(text), NULL, NULL, NULL);
cleanup:
    json_object_put(o);
    return ret;
}

/* The metadata paths: the bare well-known one and the path-suffixed one. */
static bool is_metadata_path(const th_http *h, const char *url)
{
    size_t n = strlen(WELL_KNOWN);
    return strncmp(url, WELL_KNOWN, n) == 0 && (url[n] == '\0' || strcmp(url + n, h->opts.path) == 0);
}

/* ---- framing ------------------------------------------------------------- */

/* The header fields that decide where a request ends, and the Host. */
enum { FR_HOST, FR_LENGTH, FR_CODING, FR_COUNT };
static const char *const framing_fields[FR_COUNT] = {MHD_HTTP_HEADER_HOST, MHD_HTTP_HEADER_CONTENT_LENGTH,
                                                     MHD_HTTP_HEADER_TRANSFER_ENCODING};

typedef struct framing {
    unsigned n[FR_COUNT];     /* field lines of each */
    const char *v[FR_COUNT];  /* the first one's value */
} framing;

static enum MHD_Result count_framing(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    framing *f = cls;
    (void)kind;
    for (size_t i = 0; i < FR_COUNT; i++)
        if (strcasecmp(key, framing_fields[i]) == 0 && f->n[i]++ == 0)
            f->v[i] = value;
    return MHD_YES;
}

/* VALUE without the white space around it in BUF; NULL when absent or
 * longer than BUF (no Host or Content-Length that long is valid). */
static const char *trimmed(const char *value, char *buf, size_t size)
{
    if (!value)
        return NULL;
    value += strspn(value, " \t");
    size_t n = strlen(value);
    while (n > 0 && (value[n - 1] == ' ' || value[n - 1] == '\t'))
        n--;
    if (n >= size)
        return NULL;
    memcpy(buf, value, n);
    buf[n] = '\0';
    return buf;
}

/*
** RFC 9112: a request whose end two parsers could place differently is
** refused and its connection closed, so that no byte of it can be read as
** the start of another request (6.1, 6.3); HTTP/1.1 needs exactly one valid
** Host (3.2). libmicrohttpd takes the first Content-Length of several, and
** chunked over Content-Length without closing, which a proxy in front may
** frame otherwise. False with R filled when the request is refused.
*/
static bool framing_ok(struct MHD_Connection *c, const char *version, refusal *r)
{
    framing f = {0};
    char hb[TH_HTTP_HOST_MAX + 8], lb[32], cb[32], host[TH_HTTP_HOST_MAX];
    size_t len;
    MHD_get_connection_values(c, MHD_HEADER_KIND, count_framing, &f);
    bool v11 = strcmp(version, MHD_HTTP_VERSION_1_1) == 0;
    const char *hv = trimmed(f.v[FR_HOST], hb, sizeof hb), *lv = trimmed(f.v[FR_LENGTH], lb, sizeof lb),
               *cv = trimmed(f.v[FR_CODING], cb, sizeof cb);
    const struct {
        bool bad;
        unsigned status;
        const char *message;
    } rules[] = {
        {f.n[FR_HOST] > 1, MHD_HTTP_BAD_REQUEST, "Bad Request: more than one Host header"},
        {f.n[FR_HOST] == 0 && v11, MHD_HTTP_BAD_REQUEST, "Bad Request: an HTTP/1.1 request needs a Host header"},
        {f.n[FR_HOST] == 1 && (!hv || !th_http_authority(hv, host, sizeof host)), MHD_HTTP_BAD_REQUEST,
         "Bad Request: the Host header is not host[:port]"},
        {f.n[FR_LENGTH] > 1, MHD_HTTP_BAD_REQUEST, "Bad Request: more than one Content-Length header"},
        {f.n[FR_LENGTH] == 1 && (!lv || !th_http_length(lv, &len)), MHD_HTTP_BAD_REQUEST,
         "Bad Request: Content-Length is not a number"},
        {f.n[FR_LENGTH] && f.n[FR_CODING], MHD_HTTP_BAD_REQUEST,
         "Bad Request: both Content-Length and Transfer-Encoding frame the body"},
        {f.n[FR_CODING] && !v11, MHD_HTTP_BAD_REQUEST, "Bad Request: Transfer-Encoding in an HTTP/1.0 request"},
        {f.n[FR_CODING] > 1 || (f.n[FR_CODING] && (!cv || strcasecmp(cv, "chunked") != 0)),
         MHD_HTTP_NOT_IMPLEMENTED, "Not Implemented: the only transfer coding accepted is chunked"},
    };
    for (size_t i = 0; i < sizeof rules / sizeof *rules; i++) {
        if (rules[i].bad) {
            *r = (refusal){.status = rules[i].status, .message = rules[i].message};
            return false;
        }
    }
    return true;
}

/* An error after which the connection is closed: what follows the refused
 * request on it cannot be told apart from a request of its own. */
static enum MHD_Result send_and_close(struct MHD_Connection *c, unsigned status, const char *message)
{
    return send_rpc_error_with(c, status, NULL, TH_RPC_INVALID_REQUEST, message, MHD_HTTP_HEADER_CONNECTION, "close");
}

/* The request on C has been read whole (or is answered before its body):
 * its connection is off the request clock until the next one. */
static void request_read(th_http *h, struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *i = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    if (i)
        th_deadline_disarm(h->deadlines, i->socket_context);
}

/*
** The one gate every request passes before its body is read: the endpoint,
** the method, and where it comes from. An authorization check belongs here
** too. Returns false with R filled when the request is refused.
*/
static bool admit(th_http *h, struct MHD_Connection *c, const char *url, const char *method, refusal *r)
{
    char buf[512], host[TH_HTTP_HOST_MAX];
    if (strcmp(url, h->opts.path) != 0) {
        *r = (refusal){.status = MHD_HTTP_NOT_FOUND, .message = "Not Found: the MCP endpoint is elsewhere"};
        return false;
    }
    const char *origin = header(c, "Origin", buf, sizeof buf);
    if (origin) {
        /* Parsed whole: "http://[::1].evil" only begins like loopback. */
        bool parsed = th_http_origin_host(origin, host, sizeof host);
        if (!origin_listed(h, origin) && !(h->loopback && parsed && loopback_name(host))) {
            *r = (refusal){.status = MHD_HTTP_FORBIDDEN,
                           .message = "Forbidden: this Origin is not allowed (see --http-allow-origin)"};
            return false;
        }
    }
    /* DNS rebinding: a browser led to a loopback server by a foreign name
     * still sends that name as Host. */
    const char *hostport = header(c, "Host", buf, sizeof buf);
    if (h->loopback && hostport) {
        th_http_authority(hostport, host, sizeof host); /* framing_ok() refused one that is not */
        if (!loopback_name(host) && !host_listed(h, host)) {
            *r = (refusal){.status = MHD_HTTP_FORBIDDEN,
                           .message = "Forbidden: this Host is not allowed on a loopback server"};
            return false;
        }
    }
    if (strcmp(method, "POST") && strcmp(method, "DELETE") && strcmp(method, "GET")) {
        *r = (refusal){.status = MHD_HTTP_METHOD_NOT_ALLOWED,
                       .message = "Method Not Allowed: POST a JSON-RPC message, GET to resume, DELETE a session",
                       .allow = "GET, POST, DELETE"};
        return false;
    }
    if (strcmp(method, "POST") == 0) {
        const char *type = header(c, MHD_HTTP_HEADER_CONTENT_TYPE, buf, sizeof buf);
        size_t tlen = type ? strcspn(type, "; ") : 0;
        if (!type || tlen != strlen("application/json") || strncasecmp(type, "application/json", tlen) != 0) {
            *r = (refusal){.status = MHD_HTTP_UNSUPPORTED_MEDIA_TYPE,
                           .message = "Unsupported Media Type: the body must be application/json"};
            return false;
        }
        const char *acc = header(c, MHD_HTTP_HEADER_ACCEPT, buf, sizeof buf);
        if (!accepts(acc, "application/json") && !accepts(acc, "text/event-stream")) {
            *r = (refusal){.status = MHD_HTTP_NOT_ACCEPTABLE,
                           .message = "Not Acceptable: accept application/json and text/event-stream"};
            return false;
        }
        const char *cl = header(c, MHD_HTTP_HEADER_CONTENT_LENGTH, buf, sizeof buf);
        if (cl && strtoull(cl, NULL, 10) > h->opts.max_body_bytes) {
            *r = (refusal){.status = MHD_HTTP_CONTENT_TOO_LARGE,
                           .message = "Content Too Large: the message passes --max-message-bytes"};
            return false;
        }
    }
    return authorize(h, c, r);
}

/* ---- answering a POST ---------------------------------------------------- */

/* HTTP statuses of modern JSON-RPC errors (as the suite's stateless
 * reference server answers them); any other response is 200. */
static const struct {
    int code;
    unsigned status;
} error_status[] = {
    {TH_RPC_PARSE_ERROR, 400},      {TH_RPC_INVALID_REQUEST, 400},  {TH_RPC_INVALID_PARAMS, 400},
    {TH_RPC_METHOD_NOT_FOUND, 404}, {TH_RPC_INTERNAL_ERROR, 500},   {TH_RPC_HEADER_MISMATCH, 400},
    {TH_RPC_MISSING_CAPABILITY, 400}, {TH_RPC_UNSUPPORTED_VERSION, 400},
};

static unsigned modern_status(const char *text, size_t len)
{
    /* A response without the bytes "error" (quotes included) anywhere is a
     * result: the parse below was a ninth of an echo call's instructions. A
     * member of that name deeper in a result is found too, and then the
     * parse decides. TEXT ends in a NUL (exchange_push). */
    (void)len;
    if (!strstr(text, "\"error\""))
        return 200;
    json_object *m = json_tokener_parse(text), *e, *code;
    unsigned status = 200;
    if (m && json_object_object_get_ex(m, "error", &e) && json_object_object_get_ex(e, "code", &code)) {
        int c = json_object_get_int(code);
        for (size_t i = 0; i < sizeof error_status / sizeof error_status[0]; i++)
            if (error_status[i].code == c)
                status = error_status[i].status;
    }
    json_object_put(m);
    return status;
}

/*
** Whether the response TEXT (LEN bytes) refuses a call under a limit (TH_RPC_RATE_LIMITED),
** in either era: then AFTER is its Retry-After, data.retryAfterMs in whole
** seconds rounded up (at least 1), so the client's HTTP stack backs off too.
*/
static bool rate_limited(const char *text, size_t len, char *after, size_t size)
{
    char code[16];
    snprintf(code, sizeof code, "%d", TH_RPC_RATE_LIMITED);
    /* Such an error is a few hundred bytes: a result is never scanned
     * through (a huge request id merely goes without the 429). */
    if (len > 4096 || !strstr(text, code)) /* TEXT ends in a NUL (exchange_push) */
        return false;
    json_object *m = json_tokener_parse(text), *e, *v, *data, *ms;
    bool limited = m && json_object_object_get_ex(m, "error", &e) && json_object_object_get_ex(e, "code", &v) &&
                   json_object_get_int(v) == TH_RPC_RATE_LIMITED;
    long long retry_ms = limited && json_object_object_get_ex(e, "data", &data) &&
                                 json_object_object_get_ex(data, "retryAfterMs", &ms)
                             ? json_object_get_int64(ms)
                             : 1000;
    json_object_put(m);
    long long s = (retry_ms + 999) / 1000;
    snprintf(after, size, "%lld", s < 1 ? 1 : s);
    return limited;
}

/* One SSE response being written: EX's events from NEXT on. */
typedef struct reader {
    th_http *h;
    exchange *ex;        /* a reference */
    hsess *sess;         /* a reference when EX is resumable, else NULL */
    size_t next;         /* index of the next event to write */
    bool prime;          /* write the priming event (id, retry, no data) first */
    long long until;     /* polling: end the response then (0: never) */
    unsigned gen;        /* a standalone stream's reader: EX->gen when it began (0: not one) */
    long long quiet_since; /* standalone: when it last wrote */
    th_buf out;          /* the event being written */
    size_t out_off;
} reader;

static void reader_free(void *cls)
{
    reader *rd = cls;
    if (rd->sess) {
        pthread_mutex_lock(&rd->ex->lock);
        bool done = rd->ex->delivered;
        pthread_mutex_unlock(&rd->ex->lock);
        if (done)
            sess_drop_stream(rd->sess, rd->ex);
        sess_unref(rd->h, rd->sess);
    }
    exchange_unref(rd->ex);
    free(rd->out.data);
    free(rd);
}

/* MHD content reader of an SSE answer: each message becomes one event whose
 * id ("STREAM-N") a client can resume after. It ends after the response,
 * or, when polling, after --http-retry-ms (the client then resumes with
 * GET and Last-Event-ID). */
static ssize_t sse_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    reader *rd = cls;
    exchange *ex = rd->ex;
    (void)pos;
    pthread_mutex_lock(&ex->lock);
    while (!rd->out.data) {
        bool ok = true;
        if (rd->next < ex->base)
            rd->next = ex->base; /* a standalone stream forgot those */
        if (rd->prime) {
            ok = rd->h->opts.retry_ms > 0
                     ? th_buf_printf(&rd->out, "id: %llu-%zu\nretry: %lld\ndata: \n\n", ex->stream, rd->next,
                                     rd->h->opts.retry_ms)
                     : th_buf_printf(&rd->out, "id: %llu-%zu\ndata: \n\n", ex->stream, rd->next);
            rd->prime = false;
        } else if (rd->next < ex->base + ex->nevents) {
            event *e = &ex->events[rd->next++ - ex->base];
            ok = th_buf_printf(&rd->out, "id: %llu-%zu\ndata: %s\n\n", ex->stream, rd->next, e->text);
            if (e->final)
                ex->delivered = true;
        } else if ((rd->next > ex->base && ex->events[rd->next - 1 - ex->base].final) ||
                   (rd->until && th_now_ms() >= rd->until) || (rd->gen && (ex->closed || rd->gen != ex->gen))) {
            /* Answered, polled long enough, or a standalone stream whose
             * session ended or that a newer GET took over. */
            pthread_mutex_unlock(&ex->lock);
            return MHD_CONTENT_READER_END_OF_STREAM;
        } else if (atomic_load(ex->abort)) {
            pthread_mutex_unlock(&ex->lock);
            return MHD_CONTENT_READER_END_WITH_ERROR;
        } else if (rd->gen && th_now_ms() - rd->quiet_since >= KEEPALIVE_MS) {
            ok = th_buf_printf(&rd->out, ": keepalive\n\n");
        } else {
            long long wake = th_now_ms() + POLL_MS;
            th_cond_wait_until(&ex->cond, &ex->lock, rd->until && rd->until < wake ? rd->until : wake);
        }
        if (!ok) {
            pthread_mutex_unlock(&ex->lock);
            return MHD_CONTENT_READER_END_WITH_ERROR;
        }
    }
    pthread_mutex_unlock(&ex->lock);
    rd->quiet_since = th_now_ms();
    size_t n = rd->out.len - rd->out_off < max ? rd->out.len - rd->out_off : max;
    memcpy(buf, rd->out.data + rd->out_off, n);
    rd->out_off += n;
    if (rd->out_off == rd->out.len) {
        free(rd->out.data);
        rd->out = (th_buf){0};
        rd->out_off = 0;
    }
    return (ssize_t)n;
}

/* Queue an SSE response of EX from event NEXT; SESS (may be NULL) makes it
 * resumable, gets a reference, and with polling on ends the response after
 * OPEN_MS (0: once what is there has been written). */
static enum MHD_Result start_sse(th_http *h, struct MHD_Connection *c, exchange *ex, hsess *sess, size_t next,
                                 bool prime, long long open_ms, const char *sid)
{
    reader *rd = calloc(1, sizeof *rd);
    if (!rd)
        return MHD_NO;
    exchange_ref(ex);
    rd->h = h;
    rd->ex = ex;
    rd->next = next;
    rd->prime = prime;
    if (sess && h->opts.retry_ms > 0) {
        pthread_mutex_lock(&h->lock);
        sess->refs++;
        pthread_mutex_unlock(&h->lock);
        rd->sess = sess;
        rd->until = th_now_ms() + open_ms;
    }
    struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, sse_read, rd, reader_free);
    if (!r) {
        reader_free(rd);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    if (sid)
        MHD_add_response_header(r, H_SESSION, sid);
    enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ret;
}

/*
** Wait for the first thing EX receives, then answer: the response alone as
** application/json, or, when a notification comes first, an SSE stream that
** carries the rest. MODERN maps JSON-RPC errors to HTTP statuses. In a
** legacy session with polling on (--http-retry-ms), a request still silent
** after that long gets an SSE stream that a client resumes with GET.
*/
static enum MHD_Result answer(conn *k, struct MHD_Connection *c, bool modern, const char *sid)
{
    th_http *h = k->h;
    exchange *ex = k->ex;
    bool poll = !modern && k->sess && ex->want_notes && h->opts.retry_ms > 0;
    long long deadline = th_now_ms() + (poll ? h->opts.retry_ms : h->opts.request_timeout_ms);
    pthread_mutex_lock(&ex->lock);
    /* Until the deadline, not the next look at the stop flag: a retry
     * under POLL_MS used to act as POLL_MS. */
    for (long long now; !ex->nevents && !atomic_load(ex->abort) && (now = th_now_ms()) < deadline;)
        th_cond_wait_until(&ex->cond, &ex->lock, now + POLL_MS < deadline ? now + POLL_MS : deadline);
    if (!ex->nevents && !poll) {
        pthread_mutex_unlock(&ex->lock);
        return send_rpc_error(c, atomic_load(ex->abort) ? MHD_HTTP_SERVICE_UNAVAILABLE : MHD_HTTP_GATEWAY_TIMEOUT,
                              NULL, TH_RPC_INTERNAL_ERROR,
                              atomic_load(ex->abort) ? "Service Unavailable: the server is stopping"
                                                     : "Gateway Timeout: no answer within the request time limit",
                              NULL);
    }
    if (ex->nevents && ex->events[0].final) {
        event *e = &ex->events[0];
        ex->delivered = true;
        pthread_mutex_unlock(&ex->lock);
        unsigned status = modern ? modern_status(e->text, e->len) : 200;
        char after[24];
        bool limited = rate_limited(e->text, e->len, after, sizeof after);
        return send_body(c, limited ? MHD_HTTP_TOO_MANY_REQUESTS : status, "application/json", e->text, e->len, sid,
                         limited ? MHD_HTTP_HEADER_RETRY_AFTER : NULL, limited ? after : NULL);
    }
    bool silent = ex->nevents == 0;
    pthread_mutex_unlock(&ex->lock);
    if (poll)
        sess_add_stream(k->sess, ex);
    /* Still silent: only the priming event, then the client polls. */
    return start_sse(h, c, ex, poll ? k->sess : NULL, 0, poll, silent ? 0 : h->opts.retry_ms, sid);
}

/* The request no longer counts as in flight: a standalone stream may stay
 * open for hours, and shutdown must not wait for it. */
static void uncount(conn *k)
{
    if (!k->counted)
        return;
    k->counted = false;
    pthread_mutex_lock(&k->h->lock);
    if (--k->h->active == 0)
        pthread_cond_broadcast(&k->h->idle);
    pthread_mutex_unlock(&k->h->lock);
}

/* Serve session S's standalone stream from event NEXT on (PRIME: a fresh
 * GET, from the newest event, after a priming event). A newer GET takes the
 * stream over; the session ending closes it. */
static enum MHD_Result serve_standalone(conn *k, struct MHD_Connection *c, hsess *s, size_t next, bool prime)
{
    pthread_mutex_lock(&s->lock);
    if (!s->standalone && (s->standalone = exchange_new(&k->h->abort, true)))
        s->standalone->keep = STANDALONE_KEEP;
    exchange *ex = s->standalone;
    if (ex)
        exchange_ref(ex);
    pthread_mutex_unlock(&s->lock);
    if (!ex)
        return send_rpc_error(c, 500, NULL, TH_RPC_INTERNAL_ERROR, "Internal error: out of memory", NULL);
    reader *rd = calloc(1, sizeof *rd);
    if (!rd) {
        exchange_unref(ex);
        return MHD_NO;
    }
    rd->h = k->h;
    rd->ex = ex; /* the reference taken above */
    rd->prime = prime;
    rd->quiet_since = th_now_ms();
    pthread_mutex_lock(&ex->lock);
    if (++ex->gen == 0) /* wrapped: 0 marks the readers of POST answers */
        ex->gen = 1;
    rd->gen = ex->gen;
    rd->next = prime || next > ex->base + ex->nevents ? ex->base + ex->nevents : next;
    pthread_cond_broadcast(&ex->cond); /* the reader it replaces ends */
    pthread_mutex_unlock(&ex->lock);
    struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, sse_read, rd, reader_free);
    if (!r) {
        reader_free(rd);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    /* The stream holds no session reference, so DELETE (or eviction) ends
     * the session, and with it the stream. */
    sess_unref(k->h, k->sess);
    k->sess = NULL;
    uncount(k);
    return ret;
}

/* GET on the endpoint, for a legacy session only (a modern request has no
 * session to listen to: 405). Without Last-Event-ID it opens the session's
 * standalone stream (messages not tied to a request: list_changed after a
 * reload). With Last-Event-ID "STREAM-N" it resumes that stream, or an SSE
 * answer of a POST (polling), after event N. */
static enum MHD_Result serve_get(conn *k, struct MHD_Connection *c)
{
    char sidb[128], lastb[64], accb[256];
    const char *sid = header(c, H_SESSION, sidb, sizeof sidb);
    const char *last = header(c, "Last-Event-ID", lastb, sizeof lastb);
    unsigned long long stream;
    size_t n;
    if (!sid && !last)
        return send_rpc_error(c, MHD_HTTP_METHOD_NOT_ALLOWED, NULL, TH_RPC_INVALID_REQUEST,
                              "Method Not Allowed: a standalone SSE stream is offered to a session (Mcp-Session-Id) "
                              "only",
                              "GET, POST, DELETE");
    if (!sid)
        return send_rpc_error(c, 400, NULL, TH_RPC_INVALID_REQUEST, "Bad Request: Mcp-Session-Id is required", NULL);
    const char *acc = header(c, MHD_HTTP_HEADER_ACCEPT, accb, sizeof accb);
    if (!acc || !accepts(acc, "text/event-stream"))
        return send_rpc_error(c, MHD_HTTP_NOT_ACCEPTABLE, NULL, TH_RPC_INVALID_REQUEST,
                              "Not Acceptable: a GET must accept text/event-stream", NULL);
    if (last && sscanf(last, "%llu-%zu", &stream, &n) != 2)
        return send_rpc_error(c, 400, NULL, TH_RPC_INVALID_REQUEST, "Bad Request: Last-Event-ID is not one of ours",
                              NULL);
    if (!(k->sess = sess_find(k->h, sid, &k->who)))
        return send_rpc_error(c, MHD_HTTP_NOT_FOUND, NULL, TH_RPC_INVALID_REQUEST, "Not Found: no such session", NULL);
    if (!last)
        return serve_standalone(k, c, k->sess, 0, true);
    pthread_mutex_lock(&k->sess->lock);
    bool own = k->sess->standalone && k->sess->standalone->stream == stream;
    pthread_mutex_unlock(&k->sess->lock);
    if (own)
        return serve_standalone(k, c, k->sess, n, false);
    exchange *ex = k->h->opts.retry_ms > 0 ? sess_find_stream(k->sess, stream) : NULL;
    if (!ex)
        return send_rpc_error(c, MHD_HTTP_NOT_FOUND, NULL, TH_RPC_INVALID_REQUEST,
                              "Not Found: that stream has ended or never was", NULL);
    pthread_mutex_lock(&ex->lock);
    if (n > ex->nevents)
        n = ex->nevents;
    pthread_mutex_unlock(&ex->lock);
    enum MHD_Result ret = start_sse(k->h, c, ex, k->sess, n, false, k->h->opts.retry_ms, NULL);
    exchange_unref(ex);
    return ret;
}

/* A new exchange for M's answers: keyed by its id, with its progress token. */
static exchange *exchange_for(th_http *h, struct MHD_Connection *c, const th_rpc_msg *m)
{
    char buf[256];
    const char *acc = header(c, MHD_HTTP_HEADER_ACCEPT, buf, sizeof buf);
    exchange *ex = exchange_new(&h->abort, accepts(acc, "text/event-stream"));
    if (!ex)
        return NULL;
    if (m->kind == TH_RPC_BATCH) {
        ex->key = strdup(BATCH_KEY);
    } else {
        json_object *token = th_mcp_progress_token(m);
        if (m->id)
            ex->key = th_rpc_id_key(m->id);
        if (token)
            ex->token = json_object_get(token);
    }
    /* An id that cannot be a key (absent, null, an object): its answer has
     * "id": null and comes back while the message is handled (see
     * handling). */
    if (!ex->key && !(ex->key = strdup("\x02"))) {
        exchange_unref(ex);
        return NULL;
    }
    return ex;
}

static enum MHD_Result accepted(struct MHD_Connection *c, const char *sid)
{
    return send_body(c, MHD_HTTP_ACCEPTED, NULL, "", 0, sid, NULL, NULL);
}

static enum MHD_Result legacy_post(conn *k, struct MHD_Connection *c, hsess *s, th_rpc_msg *m, bool opened)
{
    bool request = th_rpc_expects_answer(m);
    if (request) {
        if (!(k->ex = exchange_for(k->h, c, m)))
            return send_rpc_error(c, 500, NULL, TH_RPC_INTERNAL_ERROR, "Internal error: out of memory", NULL);
        exchange_ref(k->ex); /* the session list's */
        pthread_mutex_lock(&s->lock);
        k->ex->next = s->exchanges;
        s->exchanges = k->ex;
        pthread_mutex_unlock(&s->lock);
    }
    pthread_mutex_lock(&s->handle_lock);
    /* Each POST speaks with its own token: the set follows the latest. */
    th_mcp_session_set_caller(s->ms, k->caller);
    handling = k->ex;
    th_mcp_session_handle_msg(s->ms, m, k->body.data, k->body.len);
    handling = NULL;
    pthread_mutex_unlock(&s->handle_lock);
    if (!request)
        return accepted(c, NULL);
    if (!opened)
        return answer(k, c, false, NULL);
    /* initialize: the session lives only if the handshake succeeded. */
    enum MHD_Result ret;
    pthread_mutex_lock(&k->ex->lock);
    while (!k->ex->nevents && !atomic_load(k->ex->abort))
        th_cond_wait_until(&k->ex->cond, &k->ex->lock, th_now_ms() + POLL_MS);
    bool ok = k->ex->nevents && k->ex->events[0].final && !strstr(k->ex->events[0].text, "\"error\":{");
    pthread_mutex_unlock(&k->ex->lock);
    ret = answer(k, c, false, ok ? s->id : NULL);
    if (!ok)
        sess_end(k->h, s);
    return ret;
}

/* th_mcp_header_fn over an MHD connection. */
static const char *request_header(void *ctx, const char *name, size_t *len)
{
    return header_value(ctx, name, len);
}

/*
** A modern (2026-07-28) request: its headers must agree with its body, then
** it is served in a session of its own that lives as long as the POST.
*/
static enum MHD_Result modern_post(conn *k, struct MHD_Connection *c, th_rpc_msg *m)
{
    th_http *h = k->h;
    if (m->kind == TH_RPC_BATCH || json_object_is_type(m->msg, json_type_array))
        return send_rpc_error(c, 400, NULL, TH_RPC_INVALID_REQUEST,
                              "Invalid Request: a " TH_MCP_MODERN_VERSION " POST carries one JSON-RPC message", NULL);
    char why[256];
    int code = th_mcp_check_headers(h->mcp, k->caller, m, request_header, c, why, sizeof why);
    if (code)
        return send_rpc_error(c, 400, m->id, code, why, NULL);
    bool request = th_rpc_expects_answer(m);
    if (request && !(k->ex = exchange_for(h, c, m)))
        return send_rpc_error(c, 500, NULL, TH_RPC_INTERNAL_ERROR, "Internal error: out of memory", NULL);
    if (!k->ex && !(k->ex = exchange_new(&h->abort, false)))
        return send_rpc_error(c, 500, NULL, TH_RPC_INTERNAL_ERROR, "Internal error: out of memory", NULL);
    if (!(k->ms = th_mcp_session_new(h->mcp, modern_send, k->ex)))
        return send_rpc_error(c, 500, NULL, TH_RPC_INTERNAL_ERROR, "Internal error: out of memory", NULL);
    /* This thread waits for the answer below anyway (up to the request
     * time limit): a call that only waits for a worker may wait on it,
     * with no pool thread between. Not in a legacy session, whose
     * handle_lock would hold its other requests (a cancellation among
     * them) up meanwhile. */
    th_mcp_session_wait_here(k->ms, h->opts.request_timeout_ms);
    th_mcp_session_set_transport(k->ms, h->transport, NULL);
    if (!modern_track(h, k))
        return send_rpc_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, NULL, TH_RPC_INTERNAL_ERROR,
                              "Service Unavailable: the server is stopping", NULL);
    if (h->opts.auth) /* a requestState is bound to the credentials that earned it (whole, not cut) */
        th_mcp_session_set_principal(k->ms,
                                     MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION));
    else if (h->unix_peers)
        th_mcp_session_set_principal(k->ms, (const char *)k->who.id);
    set_who(h, k->ms, &k->who);
    th_mcp_session_set_caller(k->ms, k->caller);
    th_mcp_session_handle_msg(k->ms, m, k->body.data, k->body.len);
    return request ? answer(k, c, true, NULL) : accepted(c, NULL);
}

static bool known_legacy(const char *v)
{
    for (size_t i = 0; i < sizeof legacy_versions / sizeof legacy_versions[0]; i++)
        if (strcmp(legacy_versions[i], v) == 0)
            return true;
    return false;
}

/*
** The body, parsed once: the protocol serves the parsed message. Text that
** is not one JSON object or array is refused here with 400, before any
** session is found or made.
*/
static bool parse_body(const th_buf *body, th_rpc_msg *m)
{
    if (!body->data) {
        memset(m, 0, sizeof *m);
        return false;
    }
    th_rpc_parse(body->data, body->len, m);
    if (m->kind == TH_RPC_INVALID && !m->msg)
        return m->error_code != TH_RPC_PARSE_ERROR;
    return !m->msg || json_object_is_type(m->msg, json_type_object) || json_object_is_type(m->msg, json_type_array);
}

static enum MHD_Result serve_post(conn *k, struct MHD_Connection *c)
{
    th_http *h = k->h;
    char sidb[128], pvb[64];
    th_rpc_msg m;
    if (!parse_body(&k->body, &m)) {
        th_rpc_msg_clear(&m);
        return send_rpc_error(c, 400, NULL, TH_RPC_PARSE_ERROR, "Parse error: the body is not one JSON-RPC message",
                              NULL);
    }
    enum MHD_Result ret;
    refusal denied = {0};
    if (!authorize_tools(h, c, &m, &denied)) {
        th_rpc_msg_clear(&m);
        return send_auth_refusal(c, denied.status, denied.message, denied.www_auth);
    }
    const char *sid = header(c, H_SESSION, sidb, sizeof sidb);
    const char *pv = header(c, H_VERSION, pvb, sizeof pvb);
    bool single = m.kind != TH_RPC_BATCH && !json_object_is_type(m.msg, json_type_array);
    bool init = single && th_mcp_is_initialize(&m);
    if (sid) {
        if (pv && !known_legacy(pv) && strcmp(pv, TH_MCP_MODERN_VERSION) != 0) {
            ret = send_rpc_error(c, 400, NULL, TH_RPC_INVALID_REQUEST,
                                 "Bad Request: unsupported MCP-Protocol-Version", NULL);
        } else if (!(k->sess = sess_find(h, sid, &k->who))) {
            ret = send_rpc_error(c, MHD_HTTP_NOT_FOUND, NULL, TH_RPC_INVALID_REQUEST,
                                 "Not Found: no such session (it ended, or the server restarted); initialize again",
                                 NULL);
        } else {
            ret = legacy_post(k, c, k->sess, &m, false);
        }
    } else if ((pv && strcmp(pv, TH_MCP_MODERN_VERSION) == 0) || (single && th_mcp_claimed_version(&m) && !init)) {
        ret = modern_post(k, c, &m);
    } else if (init) {
        const char *why = NULL;
        long long retry_s = 0;
        if (!(k->sess = sess_new(h, &k->who, &why, &retry_s)))
            ret = send_sessions_full(c, why, retry_s);
        else
            ret = legacy_post(k, c, k->sess, &m, true);
    } else {
        ret = send_rpc_error(c, 400, NULL, TH_RPC_INVALID_REQUEST,
                             "Bad Request: Mcp-Session-Id is required (send initialize first), or use protocol "
                             TH_MCP_MODERN_VERSION " with its per-request headers",
                             NULL);
    }
    th_rpc_msg_clear(&m); /* when the session did not take it */
    return ret;
}

static enum MHD_Result serve_delete(conn *k, struct MHD_Connection *c)
{
    char sidb[128];
    const char *sid = header(c, H_SESSION, sidb, sizeof sidb);
    if (!sid)
        return send_rpc_error(c, 400, NULL, TH_RPC_INVALID_REQUEST, "Bad Request: Mcp-Session-Id is required", NULL);
    hsess *s = sess_find(k->h, sid, &k->who);
    if (!s)
        return send_rpc_error(c, MHD_HTTP_NOT_FOUND, NULL, TH_RPC_INVALID_REQUEST, "Not Found: no such session", NULL);
    sess_end(k->h, s);
    sess_unref(k->h, s);
    return send_body(c, MHD_HTTP_OK, NULL, "", 0, NULL, NULL, NULL);
}

/* /healthz and /readyz for probes that hold no token; /metrics names the
 * tools, so it asks what /mcp asks. */
static enum MHD_Result serve_observe(th_http *h, struct MHD_Connection *c, const char *url)
{
    refusal r = {0};
    request_read(h, c);
    if (strcmp(url, "/metrics") == 0 && h->opts.auth && !authorize(h, c, &r))
        return send_auth_refusal(c, r.status, r.message, r.www_auth);
    return th_observe_answer(c, url);
}

/*
** A Unix socket peer without tokens: its uid, read from the kernel
** (SO_PEERCRED), is who it is: "uid:N" names its sessions (WHO, the text
** zero-padded) and is the one scope it carries for --auth-tools (GRANTED).
** False when the kernel does not say (the connection is then dropped).
*/
static bool peer_principal(struct MHD_Connection *c, th_auth_principal *who, char *granted, size_t size)
{
    const union MHD_ConnectionInfo *i = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    uid_t uid;
    if (!i || !th_unixsock_peer_uid(i->connect_fd, &uid)) {
        th_log(TH_LOG_WARNING, "http: cannot read a Unix socket peer's credentials: %s", strerror(errno));
        return false;
    }
    *who = (th_auth_principal){0};
    snprintf((char *)who->id, sizeof who->id, "uid:%lu", (unsigned long)uid);
    snprintf(granted, size, "%s", (const char *)who->id);
    return true;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
    th_http *h = cls;
    conn *k = *con_cls;
    if (!k) {
        refusal r = {0};
        if (!framing_ok(c, version, &r)) {
            request_read(h, c);
            return send_and_close(c, r.status, r.message);
        }
        if (h->opts.auth && strcmp(method, "GET") == 0 && is_metadata_path(h, url)) {
            request_read(h, c);
            return serve_metadata(h, c);
        }
        if (strcmp(method, "GET") == 0 && th_observe_path(url, h->opts.metrics))
            return serve_observe(h, c, url);
        if (!admit(h, c, url, method, &r)) {
            request_read(h, c);
            if (r.www_auth[0])
                return send_auth_refusal(c, r.status, r.message, r.www_auth);
            return send_rpc_error(c, r.status, NULL, TH_RPC_INVALID_REQUEST, r.message, r.allow);
        }
        if (!(k = calloc(1, sizeof *k)))
            return MHD_NO;
        k->h = h;
        k->who = r.who;
        if (h->unix_peers && !h->opts.auth && !peer_principal(c, &k->who, r.granted, sizeof r.granted)) {
            free(k);
            return MHD_NO;
        }
        bool nomem;
        k->caller = caller_set(h, r.granted, &nomem);
        if (nomem) {
            free(k);
            return MHD_NO;
        }
        pthread_mutex_lock(&h->lock);
        h->active++;
        pthread_mutex_unlock(&h->lock);
        k->counted = true;
        *con_cls = k;
        return MHD_YES;
    }
    if (*upload_size) {
        /* A chunked body's size is known only as it comes. libmicrohttpd
         * cannot answer in the middle of a body, so the rest is read and
         * dropped (the request deadline bounds that), then 413 closes. */
        if (k->too_large || k->body.len + *upload_size > k->h->opts.max_body_bytes) {
            k->too_large = true;
            free(k->body.data);
            k->body = (th_buf){0};
            *upload_size = 0;
            return MHD_YES;
        }
        if (!th_buf_append(&k->body, upload, *upload_size))
            return MHD_NO;
        *upload_size = 0;
        return MHD_YES;
    }
    request_read(h, c);
    if (k->too_large)
        return send_and_close(c, MHD_HTTP_CONTENT_TOO_LARGE,
                              "Content Too Large: the message passes --max-message-bytes");
    if (atomic_load(&h->abort))
        return send_rpc_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, NULL, TH_RPC_INTERNAL_ERROR,
                              "Service Unavailable: the server is stopping", NULL);
    if (strcmp(method, "GET") == 0)
        return serve_get(k, c);
    return strcmp(method, "POST") == 0 ? serve_post(k, c) : serve_delete(k, c);
}

/* The request is over (answered, or the client went away). */
static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode why)
{
    th_http *h = cls;
    conn *k = *con_cls;
    /* A kept-alive connection waits for its next request from now on. */
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    if (ci)
        th_deadline_wait(h->deadlines, ci->socket_context);
    if (!k)
        return;
    *con_cls = NULL;
    if (k->ms) {
        /* A modern request whose client left, or that got 504, is
         * cancelled: nobody will see its result. */
        bool delivered = true;
        if (k->ex) {
            pthread_mutex_lock(&k->ex->lock);
            delivered = k->ex->delivered || !k->ex->key;
            pthread_mutex_unlock(&k->ex->lock);
        }
        modern_untrack(h, k); /* before the free: a stop may be cancelling it */
        if (why != MHD_REQUEST_TERMINATED_COMPLETED_OK || !delivered)
            th_mcp_session_cancel_all(k->ms);
        th_mcp_session_free(k->ms);
    }
    if (k->sess) {
        /* A resumable answer keeps receiving after its client left. */
        if (k->ex && !k->ex->resumable)
            sess_detach(k->sess, k->ex);
        sess_unref(h, k->sess);
    }
    exchange_unref(k->ex);
    th_policy_unref(k->caller);
    free(k->body.data);
    if (k->counted) {
        pthread_mutex_lock(&h->lock);
        if (--h->active == 0)
            pthread_cond_broadcast(&h->idle);
        pthread_mutex_unlock(&h->lock);
    }
    free(k);
}

/*
** A Unix socket peer's new connection FD: one uid may hold at most
** --http-max-client-connections of the slots, as one address may over TCP,
** so one user's flood of the shared daemon leaves room for the others.
** The daemon's own uid and root are not counted against it: they can stop
** the daemon anyway, so a cap on them protects no one, and their many
** clients are what the shared daemon is for. False when FD is over that
** share (it is then shut down unanswered).
*/
static bool peer_admit(th_http *h, int fd)
{
    uid_t uid;
    if (!th_unixsock_peer_uid(fd, &uid))
        return true; /* its first request is refused (peer_principal) */
    size_t held = 0;
    bool warn = false;
    pthread_mutex_lock(&h->lock);
    for (size_t i = 0; i < h->npeers; i++)
        held += h->peers[i].uid == uid;
    bool owner = uid == geteuid() || uid == 0;
    bool ok = (owner || held < h->opts.max_client_connections) && h->npeers < h->opts.max_connections;
    if (ok) {
        h->peers[h->npeers++] = (struct peer_slot){fd, uid};
    } else if (th_now_ms() - h->peer_warned_ms >= 60000) { /* a flood is one line a minute */
        h->peer_warned_ms = th_now_ms();
        warn = true;
    }
    pthread_mutex_unlock(&h->lock);
    if (warn)
        th_log(TH_LOG_WARNING, "http: uid %lu already holds %zu connections (%s); its further connections are closed",
               (unsigned long)uid, held, owner ? "--http-max-connections" : "--http-max-client-connections");
    if (!ok)
        shutdown(fd, SHUT_RDWR);
    return ok;
}

static void peer_gone(th_http *h, int fd)
{
    pthread_mutex_lock(&h->lock);
    for (size_t i = 0; i < h->npeers; i++)
        if (h->peers[i].fd == fd) {
            h->peers[i] = h->peers[--h->npeers];
            break;
        }
    pthread_mutex_unlock(&h->lock);
}

/* Every connection is on the request clock from its start to its end. */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    th_http *h = cls;
    const union MHD_ConnectionInfo *i = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    pthread_mutex_lock(&h->lock);
    h->open_conns += toe == MHD_CONNECTION_NOTIFY_CLOSED ? (size_t)-1 : 1;
    pthread_mutex_unlock(&h->lock);
    if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        if (h->peers && i)
            peer_gone(h, i->connect_fd); /* before MHD closes it: the fd is still this one */
        th_deadline_remove(h->deadlines, *socket_context);
        *socket_context = NULL;
        return;
    }
    if (h->peers && i)
        peer_admit(h, i->connect_fd);
    *socket_context = i ? th_deadline_add(h->deadlines, i->connect_fd) : NULL;
}

/* A request line came: its headers and body are due. Returns the request's
 * first context: none (on_request makes it). */
static void *on_request_line(void *cls, const char *uri, struct MHD_Connection *c)
{
    th_http *h = cls;
    (void)uri;
    const union MHD_ConnectionInfo *i = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    if (i)
        th_deadline_request(h->deadlines, i->socket_context);
    return NULL;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    char m[512];
    (void)cls;
    vsnprintf(m, sizeof m, fmt, ap);
    m[strcspn(m, "\n")] = '\0';
    th_log(TH_LOG_WARNING, "http: %s", m);
}

/* ---- start and stop -------------------------------------------------------- */

th_http *th_http_start(th_mcp *mcp, const th_http_opts *opts, char *err, size_t errlen)
{
    struct sockaddr_storage ss = {0};
    struct sockaddr_in *v4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
    const char *addr = opts->addr ? opts->addr : "127.0.0.1";
    /* poll(), not select(): workers and connections may push descriptors past
     * FD_SETSIZE. */
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC | MHD_USE_POLL;
    bool loopback, h_unix = false;
    socklen_t sslen = sizeof ss;
    /* libmicrohttpd is opened here, not at every start (transport/mhd.h). */
    if (!th_mhd_open(err, errlen))
        return NULL;
    if (opts->use_listen_fd) {
        /* A passed socket: its own address says the family and whether the
         * Host check of loopback servers applies. */
        if (getsockname(opts->listen_fd, (struct sockaddr *)&ss, &sslen) != 0) {
            snprintf(err, errlen, "descriptor %d: %s", opts->listen_fd, strerror(errno));
            return NULL;
        }
        h_unix = ss.ss_family == AF_UNIX;
        loopback = ss.ss_family == AF_UNIX ||
                   (ss.ss_family == AF_INET && (ntohl(v4->sin_addr.s_addr) >> 24) == 127) ||
                   (ss.ss_family == AF_INET6 && IN6_IS_ADDR_LOOPBACK(&v6->sin6_addr));
        if (ss.ss_family == AF_INET6)
            flags |= MHD_USE_IPv6;
    } else if (inet_pton(AF_INET, addr, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)opts->port);
        loopback = (ntohl(v4->sin_addr.s_addr) >> 24) == 127;
    } else if (inet_pton(AF_INET6, addr, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)opts->port);
        loopback = IN6_IS_ADDR_LOOPBACK(&v6->sin6_addr);
        flags |= MHD_USE_IPv6;
    } else {
        snprintf(err, errlen, "'%s' is not an IPv4 or IPv6 address", addr);
        return NULL;
    }
    th_http *h = calloc(1, sizeof *h);
    if (!h) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    h->mcp = mcp;
    h->opts = *opts;
    if (!h->opts.path)
        h->opts.path = "/mcp";
    if (!h->opts.max_sessions)
        h->opts.max_sessions = 1024;
    if (!h->opts.max_connections)
        h->opts.max_connections = 64;
    if (h->opts.request_timeout_ms <= 0)
        h->opts.request_timeout_ms = 300000;
    /* One address may not take every slot (a slow sender can hold one
     * until its request deadline, then reconnect). */
    if (!h->opts.max_client_connections)
        h->opts.max_client_connections = (h->opts.max_connections + 1) / 2;
    if (h->opts.max_client_connections > h->opts.max_connections)
        h->opts.max_client_connections = h->opts.max_connections;
    h->loopback = loopback;
    h->unix_peers = h_unix;
    h->transport = h_unix ? "unix" : "tcp";
    if (h_unix && !(h->peers = calloc(h->opts.max_connections, sizeof *h->peers))) {
        snprintf(err, errlen, "out of memory");
        free(h);
        return NULL;
    }
    long long limit = h->opts.request_timeout_ms;
    if (!(h->deadlines = th_deadlines_new(limit < REQUEST_WAIT_MS ? limit : REQUEST_WAIT_MS,
                                          limit < REQUEST_READ_MS ? limit : REQUEST_READ_MS, err, errlen))) {
        free(h->peers);
        free(h);
        return NULL;
    }
    atomic_init(&h->abort, false);
    pthread_mutex_init(&h->lock, NULL);
    pthread_cond_init(&h->idle, NULL);
    unsigned idle_s = (unsigned)((h->opts.request_timeout_ms + 999) / 1000);
    struct MHD_OptionItem where[] = {
        opts->use_listen_fd ? (struct MHD_OptionItem){MHD_OPTION_LISTEN_SOCKET, opts->listen_fd, NULL}
                            : (struct MHD_OptionItem){MHD_OPTION_SOCK_ADDR, 0, &ss},
        {MHD_OPTION_END, 0, NULL},
    };
    h->daemon = MHD_start_daemon(flags, 0, NULL, NULL, on_request, h, MHD_OPTION_ARRAY, where,
                                 MHD_OPTION_CONNECTION_LIMIT, h->opts.max_connections,
                                 MHD_OPTION_PER_IP_CONNECTION_LIMIT, h->opts.max_client_connections,
                                 MHD_OPTION_CONNECTION_TIMEOUT, idle_s, MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
                                 MHD_OPTION_NOTIFY_CONNECTION, on_connection, h, MHD_OPTION_URI_LOG_CALLBACK,
                                 on_request_line, h, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_END);
    if (!h->daemon) {
        if (opts->use_listen_fd)
            snprintf(err, errlen, "cannot serve on descriptor %d: %s", opts->listen_fd, strerror(errno));
        else
            snprintf(err, errlen, "cannot listen on %s port %u: %s", addr, opts->port, strerror(errno));
        th_deadlines_free(h->deadlines);
        pthread_mutex_destroy(&h->lock);
        pthread_cond_destroy(&h->idle);
        free(h->peers);
        free(h);
        return NULL;
    }
    return h;
}

long long th_http_idle_ms(th_http *h)
{
    sess_sweep(h); /* a session whose client vanished counts until it expires */
    long long now = th_now_ms(), idle = 0;
    pthread_mutex_lock(&h->lock);
    if (h->open_conns || h->nsessions)
        h->idle_since = 0;
    else if (!h->idle_since)
        h->idle_since = now;
    else
        idle = now - h->idle_since;
    pthread_mutex_unlock(&h->lock);
    return idle;
}

unsigned th_http_port(const th_http *h)
{
    const union MHD_DaemonInfo *i = MHD_get_daemon_info(h->daemon, MHD_DAEMON_INFO_BIND_PORT);
    return i ? i->port : 0;
}

void th_http_stop(th_http *h, long long deadline_ms)
{
    if (!h)
        return;
    /* No new connections; requests being answered may finish. */
    MHD_socket fd = MHD_quiesce_daemon(h->daemon);
    pthread_mutex_lock(&h->lock);
    while (h->active > 0 && th_cond_wait_until(&h->idle, &h->lock, deadline_ms))
        ;
    size_t left = h->active;
    pthread_mutex_unlock(&h->lock);
    if (left)
        th_log(TH_LOG_WARNING, "http: %zu request%s still open at shutdown; cancelling", left, left == 1 ? "" : "s");
    atomic_store(&h->abort, true);
    pthread_mutex_lock(&h->lock);
    for (hsess *s = h->sessions; s; s = s->next)
        th_mcp_session_cancel_all(s->ms);
    for (conn *k = h->moderns; k; k = k->next)
        th_mcp_session_cancel_all(k->ms);
    pthread_mutex_unlock(&h->lock);
    MHD_stop_daemon(h->daemon); /* joins every connection thread */
    th_deadlines_free(h->deadlines);
    if (fd != MHD_INVALID_SOCKET)
        close(fd);
    while (h->sessions)
        sess_end(h, h->sessions);
    pthread_mutex_destroy(&h->lock);
    pthread_cond_destroy(&h->idle);
    free(h->peers);
    free(h);
}
