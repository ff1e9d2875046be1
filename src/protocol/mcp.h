/* SPDX-License-Identifier: MIT */
/*
** protocol/mcp.h: the MCP protocol, independent of any transport. A th_mcp holds what
** every connection shares (the registry, the configuration, the threads tool
** calls run on); a th_mcp_session is one connection's state: its era, its
** negotiated legacy version and log level, and its calls in flight. A
** transport feeds a session one message at a time and gives it a function to
** send messages back.
*/
#ifndef TH_MCP_H
#define TH_MCP_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "plugin/policy.h"
#include "plugin/registry.h"
#include "protocol/jsonrpc.h"
#include "protocol/mcptypes.h"
#include "protocol/subscriptions.h"

/* The newest protocol revision, and every revision served. */
#define TH_MCP_MODERN_VERSION "2026-07-28"

/* Sensible defaults for every field. */
void th_mcp_config_default(th_mcp_config *cfg);

/* Serve REG (a reference is taken) with CFG (copied; strings must outlive
 * the th_mcp). NULL on allocation failure. */
th_mcp *th_mcp_new(th_registry *reg, const th_mcp_config *cfg);

/*
** Release everything, waiting until DEADLINE_MS (th_now_ms clock) for tool
** threads. All sessions must have been freed. Returns false when a handler
** was still running at the deadline (its memory is then left alone).
*/
bool th_mcp_free(th_mcp *mcp, long long deadline_ms);

th_mcp_session *th_mcp_session_new(th_mcp *mcp, th_mcp_send_fn send, void *ctx);

/* Handle one incoming message of LEN bytes (no framing). */
void th_mcp_session_handle(th_mcp_session *s, const char *text, size_t len);
/* The same for a message the transport parsed already (th_rpc_parse of
** TEXT, which stays valid during the call): M is cleared. */
void th_mcp_session_handle_msg(th_mcp_session *s, th_rpc_msg *m, const char *text, size_t len);

/*
** Bracket the messages of one read: tool calls they start are woken together
** at th_mcp_batch_end instead of one by one, which matters for pipelined
** clients. Every begin needs its end, on the same thread.
*/
void th_mcp_batch_begin(th_mcp *mcp);
void th_mcp_batch_end(th_mcp *mcp);

/*
** MORE: the transport has already read further requests of S behind the one
** it hands over next (a pipelining client). A tool call that can end on
** another thread (process isolation: when its worker answers) then does,
** so that the next requests go out to the worker meanwhile and the answers
** come back together. The reading thread, before th_mcp_session_handle.
** A session whose transport never calls it has no call deferred (an HTTP
** connection's thread may expect its call's answer before handle returns).
*/
void th_mcp_session_more(th_mcp_session *s, bool more);

/*
** Let a tool call run on the thread that calls th_mcp_session_handle when a
** slot is free, without a thread switch (call it before the first
** message). BEGIN(CTX) and END(CTX) bracket each such call on that thread:
** a transport that uses this must hand its reading to another thread when
** a call outlasts a short budget, so a slow call never holds up the
** messages behind it. Calls of a JSON-RPC batch always go to the pool.
*/
void th_mcp_session_run_inline(th_mcp_session *s, void (*begin)(void *ctx), void (*end)(void *ctx), void *ctx);

/*
** The transport's thread waits for each call's answer anyway, for at most
** LIMIT_MS (an HTTP connection's, which writes it): a tool call whose
** handler only waits for another process (call/callctx.h,
** th_call_is_waiting_handler) and whose deadline comes within LIMIT_MS
** runs on it when a slot is free, without a hand-off to a pool thread.
** Such a handler lets go of its call at the deadline, so the thread is
** free to send the deadline's answer, as it would have been. Other calls
** still run on the pool (a handler that never returns cannot hold the
** thread, nor can one whose deadline is past the transport's own limit),
** and so do the calls of a JSON-RPC batch. Before the first message.
*/
void th_mcp_session_wait_here(th_mcp_session *s, long long limit_ms);

/* Give S a th_mcp_send_text_fn (protocol/mcptypes.h). */
void th_mcp_session_send_text(th_mcp_session *s, th_mcp_send_text_fn send_text);

/* Answer a message the transport could not even read (e.g. too large) with
 * an error carrying "id": null. */
void th_mcp_session_reject(th_mcp_session *s, int code, const char *message);

/*
** REQ, a request the session sent its client for a handler (see
** th_call_ask), cannot be delivered (e.g. the HTTP client takes no event
** stream): the handler waiting for it gets TH_ERR_IO now, not at its
** deadline. WHY goes to the log. Any thread; REQ is borrowed.
*/
void th_mcp_session_undeliverable(th_mcp_session *s, json_object *req, const char *why);

/*
** Who the transport authenticated for this session's requests (copied;
** NULL: nobody), e.g. the Authorization header: a 2026-07-28 requestState
** issued to one principal is refused for another. Before the first message.
*/
void th_mcp_session_set_principal(th_mcp_session *s, const char *principal);

/*
** Who the session's calls are made by, as the audit log writes it and the
** per-principal limits count it (copied; NULL: "anonymous"): a name, never
** a secret ("stdio", "sha256:HEX" of a token's principal). Before the
** first message.
*/
void th_mcp_session_set_who(th_mcp_session *s, const char *who);

/*
** What carries this session, as a span's network.transport names it
** ("tcp", "unix"; a static string; the default is "pipe", for stdio), and
** its Mcp-Session-Id (copied; NULL: none). Before the first message.
*/
void th_mcp_session_set_transport(th_mcp_session *s, const char *transport, const char *session_id);

/*
** The caller's own set of tools (over HTTP, from the scopes of its token
** and --auth-tools), or NULL for none: a tool outside it is absent from
** this caller's tools/list and unknown to its tools/call, as a tool the
** server's policy hides is. Takes a reference, replacing any before; the
** messages handed over from then on see it.
*/
void th_mcp_session_set_caller(th_mcp_session *s, th_policy *caller);

/* Calls not yet answered: a call whose response (a timeout's, say) is
 * being or has been sent no longer counts, even if its handler runs on. */
size_t th_mcp_session_inflight(th_mcp_session *s);

/* Requests whose response is not yet written (or dropped): tool calls and
 * resource, prompt and completion requests still running. A transport that
 * cannot keep up with its client stops reading while many are owed. */
size_t th_mcp_session_open(th_mcp_session *s);

/* Wait until every call's response is written (or dropped) or DEADLINE_MS
 * passes; true if so. A timed-out handler still running is not waited for:
 * it was cancelled when its deadline answered. */
bool th_mcp_session_drain(th_mcp_session *s, long long deadline_ms);

/* Cancel every call in flight: handlers see th_call_cancelled(), and their
 * responses and notifications are dropped. */
void th_mcp_session_cancel_all(th_mcp_session *s);

/* The server ends the session's subscriptions/listen streams (shutdown):
 * each gets its graceful-closure response, then nothing more. */
void th_mcp_session_end_subscriptions(th_mcp_session *s);

/*
** Free the session. Calls still in flight keep what they need and are
** dropped when they finish; nothing is sent through SEND after this returns.
*/
void th_mcp_session_free(th_mcp_session *s);

/*
** Hot reload. th_mcp_registry: the registry served now, with a reference
** for the caller. th_mcp_swap_registry: serve REG from the next request on
** (requests and calls under way finish on the one they took) and, when the
** tools differ as clients see them, th_mcp_notify TH_SUB_TOOLS_LIST_CHANGED.
** th_mcp_notify: tell every session about EVENT (URI for per-resource
** events, else NULL): legacy sessions past initialize get the event's
** notification, subscriptions/listen streams that asked for it get it with
** their subscription id. Safe from any thread.
*/
th_registry *th_mcp_registry(th_mcp *mcp);
/* Shutdown: every session's subscriptions end with their response (so an
 * HTTP stream carrying one completes instead of holding the stop up). */
void th_mcp_end_subscriptions(th_mcp *mcp);
void th_mcp_swap_registry(th_mcp *mcp, th_registry *reg);
void th_mcp_notify(th_mcp *mcp, th_sub_event event, const char *uri);

#endif
