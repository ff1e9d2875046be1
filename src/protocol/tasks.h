/* SPDX-License-Identifier: MIT */
/*
** protocol/tasks.h: tool calls that run as tasks, in both shapes MCP has
** given them: the tasks extension of 2026-07-28 (SEP-2663,
** io.modelcontextprotocol/tasks: tasks/get, tasks/update, tasks/cancel) and
** the experimental core tasks of 2025-11-25 (tasks/get, tasks/result,
** tasks/list, tasks/cancel, asked through the session). One store for both;
** what differs between them is a row of data (tasks.c's shapes). The store
** belongs to the server (th_mcp), not to a session: a task outlives the
** request that created it.
*/
#ifndef TH_TASKS_H
#define TH_TASKS_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "base/log.h"
#include "call/callctx.h"
#include "call/workpool.h"
#include "plugin/registry.h"

#define TH_TASKS_EXTENSION "io.modelcontextprotocol/tasks"

typedef struct th_tasks th_tasks;

typedef struct th_tasks_config {
    long long ttl_ms;     /* a task is kept this long after its creation */
    long long poll_ms;    /* the pollIntervalMs suggested to clients */
    size_t max_active;    /* unfinished tasks one owner may have */
    size_t max_stored;    /* tasks kept, finished or not, all owners */
    size_t max_result_bytes; /* as for a call (th_call_hooks) */
    /* Each run's end, after its log line: for the audit log, as a call's
     * end is (protocol/callgate.c). WHO as given at creation; ARGS
     * borrowed. NULL: nothing. */
    void (*run_over)(const char *who, const th_entry *e, th_call_outcome o, long long ms, json_object *args);
} th_tasks_config;

/* What the server does to a finished call's RESULT (taken) of E before it
 * is kept: the outputSchema check of a synchronous call. */
typedef json_object *(*th_tasks_output_fn)(const th_entry *e, json_object *result);

/* A store whose calls run on POOL (borrowed; it must outlive the store's
 * use). NULL when out of memory. */
th_tasks *th_tasks_new(th_pool *pool, const th_tasks_config *cfg, th_tasks_output_fn output);

/* Ask every running task's handler to stop (before the pool shuts down). */
void th_tasks_cancel_all(th_tasks *ts);

/* Free the store; only once no task runs (the pool has been shut down). */
void th_tasks_free(th_tasks *ts);

/*
** Start a task calling E of REG (referenced while the task runs) with ARGS
** (taken) and the ANSWERS its client already gave (inputResponses by key,
** taken; NULL: none) for OWNER (the principal the transport authenticated, or NULL;
** only the same owner sees the task), whose client declared CAPS (TH_ASK_*).
** Returns the CreateTaskResult, the task already visible to tasks/get; or
** NULL with *CODE and MSG (MSGSIZE bytes) for the JSON-RPC error (a limit
** reached, out of memory).
*/
json_object *th_tasks_create(th_tasks *ts, th_registry *reg, const th_entry *e, json_object *args,
                             json_object *answers, const char *owner, const char *who, unsigned caps, int *code,
                             char *msg, size_t msgsize);

/*
** Serve METHOD (tasks/get, tasks/update or tasks/cancel) with PARAMS for
** OWNER: its result, or NULL with *CODE and MSG for the error (-32602 for
** a bad or unknown taskId, -32601 for another method).
*/
json_object *th_tasks_request(th_tasks *ts, const char *method, json_object *params, const char *owner,
                              int *code, char *msg, size_t msgsize);

/*
** The requester of a 2025-11-25 task: its session, which hears the task's
** progress, log and status notifications, is asked its questions while the
** task is input_required, and gets the deferred answers of tasks/result.
** The store copies this struct; CTX stays valid while held (HOLD/RELEASE).
** WAIT_BEGIN/WAIT_END bracket a deferred response (a session drains it as
** a call in flight). Every function may be called from any thread.
*/
typedef struct th_tasks_peer {
    void *ctx;
    void (*send)(void *ctx, json_object *msg); /* takes MSG */
    th_rc (*ask)(void *ctx, th_call *call, const char *key, const char *method, json_object *params,
                 json_object **result); /* as th_call_hooks.ask, waits for the answer */
    void (*hold)(void *ctx);
    void (*release)(void *ctx);
    void (*wait_begin)(void *ctx);
    void (*wait_end)(void *ctx);
    bool log_to_client;
    th_log_level log_level;
} th_tasks_peer;

/*
** Start a 2025-11-25 task (tools/call with params.task) calling E of REG
** with ARGS (taken) for OWNER (the session's own name: only it sees the
** task), whose client declared CAPS (TH_ASK_*). TTL_MS: the ttl the client
** asked for (<= 0: none), capped at the store's. TOKEN: the call's
** progressToken (borrowed, copied; NULL: none), valid for the task's life.
** Returns the CreateTaskResult ({task:{...}}), or NULL with *CODE and MSG.
** The handler waits for th_tasks_start: nothing the task sends (a status
** notification, a question to the client) may reach the client before the
** CreateTaskResult that tells it the task's id.
*/
json_object *th_tasks_create_core(th_tasks *ts, th_registry *reg, const th_entry *e, json_object *args,
                                  const char *owner, const char *who, unsigned caps, long long ttl_ms,
                                  json_object *token, const th_tasks_peer *peer, int *code, char *msg,
                                  size_t msgsize);

/*
** Let the task ID of OWNER, made by th_tasks_create_core, begin: call it
** once its CreateTaskResult was sent. A task cancelled meanwhile stays
** cancelled; an unknown ID is ignored.
*/
void th_tasks_start(th_tasks *ts, const char *id, const char *owner);

/*
** Serve the 2025-11-25 METHOD (tasks/get, tasks/result, tasks/list,
** tasks/cancel) with PARAMS for OWNER, whose request has ID (borrowed).
** Returns the whole JSON-RPC response (result or error) to send now, or
** NULL when it was deferred: tasks/result of an unfinished task is
** answered through PEER once the task ends, expires or is cancelled (or
** dropped silently by th_tasks_drop_owner). PEER is copied.
*/
json_object *th_tasks_core_request(th_tasks *ts, const char *method, json_object *params, const char *owner,
                                   json_object *id, const th_tasks_peer *peer);

/* OWNER's session ended: its tasks are cancelled and forgotten, and the
 * deferred tasks/result waits of them end without a response. */
void th_tasks_drop_owner(th_tasks *ts, const char *owner);

/* Tasks kept now (for tests). */
size_t th_tasks_count(th_tasks *ts);

#endif
