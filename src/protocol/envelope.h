/* SPDX-License-Identifier: MIT */
/*
** protocol/envelope.h: what an HTTP front may learn of a parsed message
** before it is served, without knowing MCP's structure itself.
*/
#ifndef TH_PROTOCOL_ENVELOPE_H
#define TH_PROTOCOL_ENVELOPE_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "protocol/jsonrpc.h"
#include "protocol/mcp.h"

/* The value of the request header NAME, *LEN bytes in place without the
 * white space around it; NULL when absent. */
typedef const char *(*th_mcp_header_fn)(void *ctx, const char *name, size_t *len);

/* The tool a tools/call in M names (a string), or NULL: another method, or
 * a name that is missing or not a string (such a call names no tool). */
const char *th_mcp_called_tool(const th_rpc_msg *m);

/* The protocol revision M's _meta claims (2026-07-28 requests carry it),
 * or NULL. */
const char *th_mcp_claimed_version(const th_rpc_msg *m);

/* True when M (not a batch) is an initialize request. */
bool th_mcp_is_initialize(const th_rpc_msg *m);

/* The progressToken of M's _meta (borrowed), or NULL. */
json_object *th_mcp_progress_token(const th_rpc_msg *m);

/* Of a message the server sends (a tree): the progressToken of a progress
 * notification (borrowed), or NULL. */
json_object *th_mcp_notice_progress(json_object *msg);

/* Whether MSG, sent by the server, is about the server rather than about a
 * request (a list changed, a resource updated): over HTTP it goes on the
 * session's standalone GET stream when a client opened one. */
bool th_mcp_notice_unbound(json_object *msg);

/*
** A 2026-07-28 request mirrors its body in headers: MCP-Protocol-Version
** (also in _meta, with the client's capabilities), Mcp-Method, Mcp-Name
** (the tool, prompt, resource or task it names) and one Mcp-Param-NAME per
** argument a tool marks with x-mcp-header (checked against the registry MCP
** serves now). Returns 0 when M agrees with the headers HEADER reads, else
** the JSON-RPC error code with its message in WHY. A tool outside CALLER
** (the caller's own set, or NULL) is not looked into: its call is refused
** as unknown later, and a header refusal must not tell it exists.
*/
int th_mcp_check_headers(th_mcp *mcp, const th_policy *caller, const th_rpc_msg *m, th_mcp_header_fn header,
                         void *ctx, char *why, size_t size);

#endif
