/* SPDX-License-Identifier: MIT */
/*
** call/callctx.h: the host side of th_call, the call context a handler builds
** its result through. The protocol layer creates one per tools/call, runs the
** handler, then takes the finished CallToolResult object.
*/
#ifndef TH_CALLCTX_H
#define TH_CALLCTX_H

#include <stdbool.h>

#include <json-c/json.h>

#include "base/util.h"
#include "toolhost/plugin.h"

/*
** How a call reaches its client while it runs. NOTIFY receives a complete
** JSON-RPC notification object (ownership passes to it) and must be
** thread-safe. PROGRESS_TOKEN is borrowed for the call's duration (NULL: the
** client asked for no progress). Log messages at or above LOG_LEVEL go to
** the client when LOG_TO_CLIENT, otherwise to stderr.
*/
typedef struct th_call_hooks {
    void (*notify)(void *ctx, json_object *notification);
    void *ctx;
    json_object *progress_token;
    bool log_to_client;
    th_log_level log_level;
    size_t max_result_bytes;
    /* Asking the client (th_call_ask, call/ask.c). CLIENT_CAPS: the TH_ASK_*
     * bits the client declared. ASK receives a checked request (PARAMS
     * taken) and answers it, or records it (2026-07-28): see th_call_ask.
     * CALL is the host's pointer, for th_call_cancelled. NULL: nobody to
     * ask (TH_ERR_IO). */
    unsigned client_caps;
    th_rc (*ask)(void *ctx, th_call *call, const char *key, const char *method, json_object *params,
                 json_object **result);
    void *ask_ctx;
    /* Told of the call when it is created (CALL) and just before it is
     * freed (NULL), on the creating thread: so that whoever started it can
     * cancel it meanwhile (a resource read's deadline, notifications/
     * cancelled) although the call is made further down. NULL: nobody. */
    void (*bind)(void *ctx, th_call *call);
    void *bind_ctx;
    /* The arguments' JSON text as the client sent it, when the host has it
     * (borrowed for the call's duration; NULL: print the tree). It parses
     * to the very tree the handler gets: a worker is sent this text. */
    const char *args_text;
    size_t args_len;
    /* Deferred ends (th_call_defer): the host that runs the handler sets
     * RESUME when it can finish the call on another thread. RESUME(
     * RESUME_CTX, rc) then does what would follow the handler's return. */
    void (*resume)(void *ctx, th_rc handler_rc);
    void *resume_ctx;
    /* The host holds further requests of the same client behind this
     * call (a pipelining client): worth deferring even when nothing else
     * waits. */
    bool pipelined;
    /* The thread running the handler must be free again once the call is
     * cancelled (it sends the deadline's answer: th_mcp_session_wait_here):
     * a waiting handler (th_call_is_waiting_handler) then defers what is
     * left of its call and returns. */
    bool let_go;
} th_call_hooks;

/* A new call of TOOL_NAME (copied). HOOKS is copied; NULL means none. */
th_call *th_call_new(const char *tool_name, const th_call_hooks *hooks);

/*
** th_call_new in MEM, TH_CALL_SIZE bytes aligned for any object, which the
** caller owns (a call's own record, one allocation for both): th_call_free
** then ends and empties the call but leaves MEM to the caller. NULL when
** out of memory (a long name is copied to the heap); MEM is then unused.
*/
extern const size_t th_call_size;
th_call *th_call_new_in(void *mem, const char *tool_name, const th_call_hooks *hooks);

/*
** What to pass the handler instead of CALL: a handle (base/handle.h) that
** every public th_call_* function resolves, so a handler's (or its thread's)
** use after th_call_end is refused with TH_ERR_MISUSE and logged once,
** instead of reaching freed memory. The public functions accept the host's
** own pointer too (for the host's own additions, such as argument errors).
** Falls back to CALL itself when no handle can be had.
*/
th_call *th_call_handle(th_call *call);

/*
** The handler has returned: its handle is refused from now on. Waits for a
** thread inside a th_call_* function on it to leave. th_call_finish and
** th_call_free do this too.
*/
void th_call_end(th_call *call);

/* Ask the handler to stop; also silences its notifications. Any thread. */
void th_call_cancel(th_call *call);

/*
** Finish the call: HANDLER_RC is what the handler returned. Returns the
** CallToolResult object ({"content":[...], "structuredContent":...,
** "isError":...}) as a new reference; the call keeps nothing. A result that
** could not go on the wire as handed over (a value JSON cannot carry, a
** block the MCP schema refuses, too deep, too big) is replaced by an
** isError result whose text names the problem.
*/
json_object *th_call_finish(th_call *call, th_rc handler_rc);

/*
** th_call_finish for a caller that only prints the result (a worker): when
** it has the common shape (content blocks, perhaps isError; no structured
** content, no raw result, nothing refused, HANDLER_RC TH_OK), append its
** compact JSON text to OUT, the bytes th_json_append writes for the object
** th_call_finish returns, and return true: the call is finished, without
** that object. Otherwise false with OUT as it was (the handle has ended):
** the caller calls th_call_finish.
*/
bool th_call_finish_text(th_call *call, th_rc handler_rc, th_buf *out);

/*
** For a proxy handler whose answer comes later on another thread (process
** isolation): when the host set hooks.resume, mark CALL (the handler's
** handle or the host's pointer) deferred and return the host's pointer,
** which the proxy uses until it calls th_call_resume; the handler then
** returns at once, and the host does not finish the call. NULL when the
** host cannot defer (the handler must answer before it returns).
*/
th_call *th_call_defer(th_call *call);
bool th_call_deferred(const th_call *call); /* the host's pointer */

/* The deferred CALL's handler is done with HANDLER_RC: the host finishes
 * it (hooks.resume). CALL is the host's pointer th_call_defer returned. */
void th_call_resume(th_call *call, th_rc handler_rc);

/*
** A deferring proxy may hold what it sends for its call, to send it with
** the next deferred calls' (one write for many): it registers FLUSH, for
** this thread, and the host calls th_call_flush_held before the thread
** waits for anything (the end of the batch of requests it read, the end
** of a call on a pool thread). FLUSH runs once per registration.
*/
void th_call_hold(void (*flush)(void));
void th_call_flush_held(void);

/*
** A handler that only waits for another process to answer (process
** isolation's proxy) and, once its call is cancelled (a deadline,
** notifications/cancelled), stops waiting if the host can defer the call
** (hooks.resume), leaving what is left to the thread that reads that
** process's answers. The host may run such a handler on a thread that must
** stay free to send a deadline's answer (an HTTP connection's), with no
** hand-off to a pool thread. Marked once, by the layer that owns it.
*/
void th_call_mark_waiting_handler(th_handler handler);
bool th_call_is_waiting_handler(th_handler handler);

/* Set the result's isError flag without adding text: for a result that
 * crossed the process boundary with its own message blocks. */
void th_call_mark_error(th_call *call);

/* The call ended because the process running it died (a worker crash):
 * its log line says "crash" rather than "error". */
void th_call_mark_crashed(th_call *call);
bool th_call_crashed(const th_call *call);

/* True when the handler called th_call_error(). */
bool th_call_is_error(const th_call *call);

/*
** The host's own side of a failed call, not the plugin's answer: th_call_error
** with the failure marked as the host's (a crash, a quarantine, a worker
** that cannot start, arguments refused, a handler's error code, a result
** that cannot be sent). th_call_mark_failed marks one whose text is there
** already (crossed from a worker). Those texts are worded as delegation
** errors (doc/registry-rules.md, 7) when names are qualified (protocol/mcp.c).
*/
th_rc th_call_fail(th_call *call, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void th_call_mark_failed(th_call *call);
bool th_call_failed(const th_call *call);

/*
** Time the call spends waiting for what will run it to start (a worker
** process: it has its own limit), which its deadline does not count. The
** handler's thread brackets that wait with begin and end; the deadline's
** thread reads the total so far, including a wait in progress, with
** th_call_startup_ms. CALL may be a handle.
*/
void th_call_startup_begin(th_call *call);
void th_call_startup_end(th_call *call);
long long th_call_startup_ms(th_call *call);

/*
** The call's whole result, RESULT (taken), as a worker sent it
** (th_raw_result_new): th_call_finish returns it as it is, unless the
** handler's side added to the call too (then it is dropped). CALL may be
** a handle.
*/
void th_call_set_raw(th_call *call, json_object *result);
/* True when the host refused the result as handed over (invalid, or past
 * max_result_bytes): th_call_finish then returned its own isError result. */
bool th_call_refused(const th_call *call);

/* The host, not the handler, ended CALL (its worker crashed or could not
 * be started): a task of it fails instead of completing with isError
 * (narrower than th_call_failed, which also covers refused arguments and
 * results). CALL may be a handle for th_call_abort; any thread. */
void th_call_abort(th_call *call);
bool th_call_aborted(const th_call *call); /* the host's pointer */

void th_call_free(th_call *call);

/* The hooks CALL runs with (borrowed; NULL for an ended handle): for
 * call/ask.c, which resolves handles itself. */
const th_call_hooks *th_call_hooks_of(th_call *call, th_call **resolved, const char *fn);
void th_call_release(const th_call *call, th_call *resolved);

#endif
