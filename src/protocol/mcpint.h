/* SPDX-License-Identifier: MIT */
/*
** protocol/mcpint.h: what protocol/mcp.c and its tools/call half,
** protocol/mcpcall.c, share and no other file sees: the server, session,
** request and call-job structures, and the sending and bookkeeping both do.
*/
#ifndef TH_PROTOCOL_MCPINT_H
#define TH_PROTOCOL_MCPINT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "base/log.h"
#include "base/sha256.h"
#include "call/calllog.h"
#include "call/callctx.h"
#include "call/workpool.h"
#include "plugin/reload.h"
#include "protocol/jsonrpc.h"
#include "protocol/mcptypes.h"
#include "protocol/mcpasks.h"
#include "protocol/mrtr.h"
#include "protocol/ratelimit.h"
#include "protocol/subscriptions.h"
#include "protocol/tasks.h"

/* Every revision, oldest first; the index orders features by revision. */
extern const char *const th_mcpi_versions[];
enum { V_2024_11_05, V_2025_03_26, V_2025_06_18, V_2025_11_25, V_MODERN, N_VERSIONS };
#define LATEST_LEGACY V_2025_11_25

#define META_VERSION "io.modelcontextprotocol/protocolVersion"
#define META_CAPS "io.modelcontextprotocol/clientCapabilities"
#define META_CLIENT "io.modelcontextprotocol/clientInfo"
#define META_LOGLEVEL "io.modelcontextprotocol/logLevel"
#define META_SERVER "io.modelcontextprotocol/serverInfo"

#define CURSOR_PREFIX "th1:"
#define INFLIGHT_BUCKETS 4096
/* A session starts with this many buckets, inline: an HTTP 2026-07-28
 * request is a session of its own with one call, and zeroing 4096 buckets
 * (32 KB) for it was a sixth of its instructions. Past FEW_LOAD calls a
 * bucket it grows to INFLIGHT_BUCKETS once. */
#define FEW_BUCKETS 8
#define FEW_LOAD 4
/* Calls one session may have in flight; past it a tools/call is refused
 * (TH_RPC_SERVER_BUSY) instead of taking unbounded memory. */
#define MAX_INFLIGHT 4096

struct th_mcp {
    th_regslot *slot;       /* the registry served now (hot reload swaps it) */
    th_mcp_config cfg;
    th_pool *pool;
    char *result_tail; /* what th_mcpi_finish_result adds to a modern result, as text */
    th_tasks *tasks;   /* the tasks extension's store (protocol/tasks.c) */
    pthread_mutex_t sessions_lock; /* sessions: who th_mcp_notify tells */
    struct th_mcp_session *sessions;
    atomic_int deferred; /* calls a worker still answers (th_call_defer) */
};

typedef struct job job;

/* What a call carries from its admission to its end (protocol/callgate.c). */
typedef struct th_gate {
    th_limit_hold hold;                          /* its concurrency slot, if a limit applies */
    char args_sha256[TH_SHA256_DIGEST_LEN + 1]; /* its arguments' hash with --audit-log, else "" */
} th_gate;

struct th_mcp_session {
    th_mcp *mcp;
    th_mcp_send_fn send;
    th_mcp_send_text_fn send_text; /* or NULL */
    void *send_ctx;
    atomic_int refs;          /* the transport's, plus one per job */
    bool more;                /* th_mcp_session_more; the reading thread's */
    bool says_more;           /* its transport calls th_mcp_session_more: it
                               * takes an answer that comes later (stdio) */

    pthread_mutex_t lock;     /* everything below */
    pthread_cond_t idle;      /* nopen dropped to zero */
    bool initialized;         /* legacy initialize received */
    int legacy_version;       /* index into th_mcpi_versions[] */
    th_log_level legacy_log_level;
    job **inflight;           /* NBUCKETS chains: FEW, or INFLIGHT_BUCKETS allocated */
    size_t nbuckets;
    job *few[FEW_BUCKETS];
    size_t ninflight;         /* calls whose handler has not returned */
    size_t nunanswered;       /* calls whose response has not begun */
    size_t nopen;             /* calls whose response is not yet written
                               * (or dropped); drain waits for these */
    size_t inflight_bytes;    /* request text of the calls in flight */
    size_t msg_len;           /* the message being handled (reader thread) */
    job *finished;            /* answered calls for the reader to free */
    bool closing;             /* th_mcp_session_free began: free your own */

    void (*inline_begin)(void *ctx); /* th_mcp_session_run_inline */
    void (*inline_end)(void *ctx);
    void *inline_ctx;
    long long wait_limit_ms;  /* th_mcp_session_wait_here; 0: not */

    pthread_rwlock_t send_lock; /* senders read, closing writes; guards closed */
    bool closed;

    struct side_op *ops;  /* reads, gets, completions running; under lock */
    unsigned legacy_caps; /* TH_ASK_* the initialize declared; under lock */
    char *principal;      /* th_mcp_session_set_principal, or NULL */
    char *who;            /* th_mcp_session_set_who, or NULL */
    th_policy *caller;    /* th_mcp_session_set_caller, or NULL; under lock */
    th_asks *asks;        /* legacy requests to the client awaiting answers */
    th_subs *subs;            /* subscriptions/listen streams; under lock */
    struct th_mcp_session *prev, *next; /* in mcp->sessions */
    char *task_owner;         /* whose 2025-11-25 tasks are ours (legacy_tasks_owner) */
    const char *trace_transport; /* th_mcp_session_set_transport; NULL: "pipe" */
    char *trace_session;      /* the transport's session id, or NULL */
};

/* The per-request context a method handler gets. */
typedef struct request {
    th_mcp_session *s;
    th_registry *reg;      /* the registry this request sees, referenced */
    th_policy *caller;     /* the session's caller set when it came, referenced, or NULL */
    th_rpc_msg *msg;
    bool modern;
    int version;           /* index into th_mcpi_versions[] */
    json_object *meta;     /* params._meta or NULL */
    th_log_level log_level;
    bool log_to_client;
    unsigned legacy_caps;  /* legacy: TH_ASK_* the session's initialize declared */
} request;

struct job {
    th_mcp_session *s;
    th_registry *reg;
    const th_entry *entry;
    json_object *id;        /* a copy of the request's id */
    json_object *args;      /* detached from the request, owned */
    json_object *token;     /* a copy of the progress token, or NULL */
    size_t bytes;           /* the request's text length, plus TREE */
    size_t tree;            /* what parsing ARGS took (tree_cost); 0 once dropped */
    bool args_as_text;      /* the call carries its arguments' text (args_room) */
    bool modern;
    int version;            /* index into th_mcpi_versions[] */
    th_call *call;
    bool cancelled;         /* under s->lock */
    char *key;              /* th_rpc_id_key of id: key_here, or malloc'd */
    char key_here[32];
    size_t hash;            /* key_hash(key), once it is in flight */
    struct rpc_batch *batch; /* the JSON-RPC batch it came in, or NULL */
    job *next;              /* bucket chain */
    th_pool_timer deadline; /* armed while the handler runs */
    long long timeout_ms;   /* the deadline it was given */
    long long armed_ms;     /* when its handler started */
    bool answered;          /* its one response is out; under s->lock */
    unsigned client_caps;   /* TH_ASK_* its client declared */
    unsigned missing_caps;  /* asked for undeclared ones (handler thread) */
    th_mrtr *mrtr;          /* modern: its round state, else NULL */
    long long started_ms;   /* when it was read, for its log line */
    long long started_ns;   /* the same, finer, with --metrics only */
    bool failed;            /* the host failed it (th_call_failed); handler thread */
    bool run_by_reader;     /* in th_pool_run_here, called by the reader */
    atomic_int defer_state; /* DEFER_*: who finishes a deferred call */
    th_rc resume_rc;        /* what th_call_resume passed, once DEFER_RESUMED */
    th_gate gate;           /* from th_mcpi_gate_admit */
    struct th_reqobs *obs;  /* its metrics and span (protocol/mcpobserve.h), or NULL */
    /* CALL's memory (th_call_new_in): one allocation for the two. */
    max_align_t call_room[];
};

/* A deferred call (th_call_defer) may be resumed before its proxy handler
 * has returned: whichever of the two comes second finishes it. */
enum { DEFER_RUNNING, DEFER_RETURNED, DEFER_RESUMED };

/*
** A JSON-RPC batch being answered (2025-03-26): the responses of its
** requests are collected and sent as one array once the last has one. The
** reader holds one reference while it dispatches the elements, and each
** tool call from the batch one more until its response is in.
*/
typedef struct rpc_batch {
    th_mcp_session *s;   /* a session reference */
    pthread_mutex_t lock; /* replies, refs, bytes */
    json_object *replies; /* each kept as its text (batch_add) */
    int refs;
    size_t bytes;        /* the replies' text so far */
    size_t max_bytes;    /* past it, results become busy errors */
} rpc_batch;

/* The batch whose responses the calling thread is producing, or NULL
 * (mcp.c says when it is set). */
extern _Thread_local rpc_batch *th_mcpi_answering;

/* ---- sending and helpers (mcp.c) -------------------------------------- */
/* A reference on B, which a call answering into it holds. */
void th_mcpi_batch_hold(rpc_batch *b);
/* Drop a reference; the last sends the batch's array. */
void th_mcpi_batch_release(rpc_batch *b);
/* A modern request's RESULT gets its resultType and the server's _meta. */
void th_mcpi_finish_result(const request *r, json_object *result);
/* O's text when it is a string without an embedded NUL, else NULL. */
const char *th_mcpi_plain_string(json_object *o);
void th_mcpi_push(json_object *arr, json_object *val);
void th_mcpi_put(json_object *obj, const char *key, json_object *val);
/* Answer R with RESULT (taken). */
void th_mcpi_reply(const request *r, json_object *result);
/* Send a JSON-RPC error (into the batch being answered, if any). */
void th_mcpi_send_error(th_mcp_session *s, json_object *id, int code, const char *message, json_object *data);
void th_mcpi_send_errorf(th_mcp_session *s, json_object *id, int code, const char *fmt, ...)
    TH_PRINTF(4, 5);
/* Send MSG (taken) to S, or into the batch being answered. */
void th_mcpi_send_msg(th_mcp_session *s, json_object *msg);
void th_mcpi_send_text_msg(th_mcp_session *s, const char *text, size_t len);
/* Drop a reference on S; the last frees it. */
void th_mcpi_session_unref(th_mcp_session *s);

/* ---- the tools/call side (mcpcall.c) ---------------------------------- */
/* RESULT checked against E's output schema (for tasks too). */
json_object *th_mcpi_check_output(const th_entry *e, json_object *result, bool *failed);
/* The call in flight under the request id KEY, under s->lock. */
job *th_mcpi_find_job(th_mcp_session *s, const char *key);
/* "500 ms", "60 s", "1.5 s": how a deadline reads in a message. */
void th_mcpi_format_duration(char *buf, size_t size, long long ms);
/* Free the answered calls handed back by pool threads. Reader thread. */
void th_mcpi_free_finished(job *j);
/* A call's handler has returned: it no longer counts. Under s->lock. */
void th_mcpi_job_done(th_mcp_session *s);
/* capabilities.tasks of a 2025-11-25 initialize. */
json_object *th_mcpi_legacy_tasks_capability(void);
/* tasks/get, tasks/update, tasks/cancel of the tasks extension. */
void th_mcpi_m_tasks(request *r);
/* tools/call. */
void th_mcpi_m_tools_call(request *r);
/* th_call_hooks.notify: a handler's notification to its session. */
void th_mcpi_notify_hook(void *ctx, json_object *notification);
/* A call's response is written, or dropped. Under s->lock. */
void th_mcpi_response_out(th_mcp_session *s);
/* th_validate_opts.cancelled for a call being checked. */
bool th_mcpi_validation_cancelled(void *call);

/* ---- limits and audit (callgate.c) ------------------------------------ */
/* May R's call of E with ARGS start? *G then holds what its end gives back;
 * false once R is answered as limited (and audited). Reader thread. */
bool th_mcpi_gate_admit(request *r, const th_entry *e, json_object *args, th_gate *g);
/* R's call was refused as invalid (-32602) before it was admitted: E is its
 * tool, or NULL when none of that name is served to R's caller (the name
 * asked for is audited then: probing for tools shows). */
void th_mcpi_gate_refused(request *r, const th_entry *e);
/* Give back what G holds, for a call that ends before it has a job. */
void th_mcpi_gate_drop(th_gate *g);
/* J ended with OUTCOME (CODE: the JSON-RPC error it got, or 0): its
 * concurrency slot is given back and its audit line written. Once. */
void th_mcpi_gate_over(job *j, th_call_outcome o, int code);

/* A task's run ended (th_tasks_config.run_over): its audit line, the
 * principal being the session's th_mcp_session_set_who (NULL: anonymous). */
void th_mcpi_gate_task_over(const char *principal, const th_entry *e, th_call_outcome o, long long ms,
                            json_object *args);

#endif
