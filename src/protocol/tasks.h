/*
** protocol/tasks.h: the tasks extension of 2026-07-28 (SEP-2663,
** io.modelcontextprotocol/tasks): tool calls that run as tasks, polled with
** tasks/get, answered with tasks/update, stopped with tasks/cancel. The
** store belongs to the server (th_mcp), not to a session: a modern client
** has none, and a task outlives the request that created it.
*/
#ifndef TH_TASKS_H
#define TH_TASKS_H

#include <stddef.h>

#include <json-c/json.h>

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
                             json_object *answers, const char *owner, unsigned caps, int *code, char *msg,
                             size_t msgsize);

/*
** Serve METHOD (tasks/get, tasks/update or tasks/cancel) with PARAMS for
** OWNER: its result, or NULL with *CODE and MSG for the error (-32602 for
** a bad or unknown taskId, -32601 for another method).
*/
json_object *th_tasks_request(th_tasks *ts, const char *method, json_object *params, const char *owner,
                              int *code, char *msg, size_t msgsize);

/* Tasks kept now (for tests). */
size_t th_tasks_count(th_tasks *ts);

#endif
