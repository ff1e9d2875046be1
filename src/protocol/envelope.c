/* SPDX-License-Identifier: MIT */
/*
** protocol/envelope.c: the MCP facts an HTTP front reads off a message: of
** a request, the tool a call names, _meta's revision and progress token,
** whether the per-request headers agree with the body; of what the server
** sends, where it is routed. The transport parses a body once, here, and
** never reads MCP structure itself.
*/
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "base/base64.h"
#include "plugin/registry.h"
#include "protocol/envelope.h"

#define META_VERSION "io.modelcontextprotocol/protocolVersion"
#define META_CAPS "io.modelcontextprotocol/clientCapabilities"
#define PARAM_PREFIX "Mcp-Param-"

/* M's method, also when the message was refused (it is still named). */
static const char *method_of(const th_rpc_msg *m)
{
    json_object *v;
    if (m->method)
        return m->method;
    if (json_object_is_type(m->msg, json_type_object) && json_object_object_get_ex(m->msg, "method", &v) &&
        json_object_is_type(v, json_type_string))
        return json_object_get_string(v);
    return NULL;
}

static json_object *params_of(const th_rpc_msg *m)
{
    json_object *v;
    if (m->params)
        return m->params;
    if (json_object_is_type(m->msg, json_type_object) && json_object_object_get_ex(m->msg, "params", &v) &&
        json_object_is_type(v, json_type_object))
        return v;
    return NULL;
}

/* Member KEY of M's params; a plain tools/call keeps its own (jsonrpc.h). */
static json_object *param(const th_rpc_msg *m, const char *key)
{
    json_object *v = NULL, *params = params_of(m);
    if (m->call_lite) {
        if (strcmp(key, "arguments") == 0)
            return m->call_args;
        if (strcmp(key, "_meta") == 0)
            return m->call_meta;
    }
    return params && json_object_object_get_ex(params, key, &v) ? v : NULL;
}

const char *th_mcp_called_tool(const th_rpc_msg *m)
{
    const char *method = method_of(m);
    if (!method || strcmp(method, "tools/call") != 0)
        return NULL;
    if (m->call_lite)
        return m->call_has_name ? m->call_name : NULL;
    json_object *name = param(m, "name");
    return json_object_is_type(name, json_type_string) ? json_object_get_string(name) : NULL;
}

static json_object *meta_member(const th_rpc_msg *m, const char *key)
{
    json_object *v = NULL, *meta = param(m, "_meta");
    return meta && json_object_object_get_ex(meta, key, &v) ? v : NULL;
}

const char *th_mcp_claimed_version(const th_rpc_msg *m)
{
    json_object *v = meta_member(m, META_VERSION);
    return v ? json_object_get_string(v) : NULL;
}

bool th_mcp_is_initialize(const th_rpc_msg *m)
{
    const char *method = method_of(m);
    return method && strcmp(method, "initialize") == 0;
}

json_object *th_mcp_progress_token(const th_rpc_msg *m)
{
    return meta_member(m, "progressToken");
}

json_object *th_mcp_notice_progress(json_object *msg)
{
    json_object *params, *token;
    if (th_rpc_member(msg, "params", &params) && json_object_object_get_ex(params, "progressToken", &token))
        return token;
    return NULL;
}

bool th_mcp_notice_unbound(json_object *msg)
{
    static const char *const unbound[] = {
        "notifications/tools/list_changed",
        "notifications/resources/list_changed",
        "notifications/resources/updated",
        "notifications/prompts/list_changed",
    };
    json_object *m, *id;
    if (!json_object_is_type(msg, json_type_object) || th_rpc_member(msg, "id", &id) ||
        !th_rpc_member(msg, "method", &m) || !json_object_is_type(m, json_type_string))
        return false;
    for (size_t i = 0; i < sizeof unbound / sizeof *unbound; i++)
        if (strcmp(json_object_get_string(m), unbound[i]) == 0)
            return true;
    return false;
}

/* The member of params that Mcp-Name mirrors for METHOD, or NULL. */
static const char *name_member(const char *method)
{
    static const struct {
        const char *method, *member;
    } names[] = {{"tools/call", "name"},  {"prompts/get", "name"},   {"resources/read", "uri"},
                 {"tasks/get", "taskId"}, {"tasks/update", "taskId"}, {"tasks/cancel", "taskId"}};
    for (size_t i = 0; method && i < sizeof names / sizeof names[0]; i++)
        if (strcmp(names[i].method, method) == 0)
            return names[i].member;
    return NULL;
}

/* An argument as a header carries it: strings as they are, anything else
 * as its JSON text. */
static const char *arg_text(json_object *v)
{
    return json_object_is_type(v, json_type_string) ? json_object_get_string(v)
                                                    : json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
}

/* Whether header HNAME carries ARG ("=?base64?...?=" wraps a Base64 value);
 * NULL when it does, else what is wrong. */
static const char *param_header_differs(th_mcp_header_fn header, void *ctx, const char *hname, json_object *arg)
{
    size_t hl = 0;
    const char *hv = header(ctx, hname, &hl);
    if (!hv)
        return "an Mcp-Param header is missing for an argument the tool mirrors in headers";
    unsigned char *dec = NULL;
    if (hl >= 11 && strncmp(hv, "=?base64?", 9) == 0 && memcmp(hv + hl - 2, "?=", 2) == 0) {
        if (!(dec = th_base64_decode(hv + 9, hl - 11, &hl)))
            return "an Mcp-Param header holds invalid Base64";
        hv = (const char *)dec;
    }
    const char *want = arg_text(arg);
    bool same = strlen(want) == hl && memcmp(want, hv, hl) == 0;
    free(dec);
    return same ? NULL : "an Mcp-Param header does not match its argument in the body";
}

/* The tool's x-mcp-header arguments against their Mcp-Param-NAME headers. */
static const char *param_headers_differ(const th_registry *reg, const th_policy *caller, const th_rpc_msg *m,
                                        th_mcp_header_fn header, void *ctx)
{
    json_object *args = param(m, "arguments"), *props;
    const char *tool = th_mcp_called_tool(m);
    char why[512];
    const th_entry *e = tool ? th_tool_resolve_for(reg, caller, tool, why, sizeof why) : NULL;
    if (!e || !args || !json_object_object_get_ex(e->input_schema, "properties", &props) ||
        !json_object_is_type(props, json_type_object) || !json_object_is_type(args, json_type_object))
        return NULL;
    json_object_object_foreach(props, pname, pschema)
    {
        json_object *hn, *arg;
        if (!json_object_is_type(pschema, json_type_object) || !json_object_object_get_ex(pschema, "x-mcp-header", &hn) ||
            !json_object_object_get_ex(args, pname, &arg))
            continue;
        char hname[160];
        snprintf(hname, sizeof hname, PARAM_PREFIX "%s", json_object_get_string(hn));
        const char *bad = param_header_differs(header, ctx, hname, arg);
        if (bad)
            return bad;
    }
    return NULL;
}

static int refuse(char *why, size_t size, int code, const char *message)
{
    snprintf(why, size, "%s", message);
    return code;
}

/* Mcp-Name against the member it mirrors, compared in place: a resource URI
 * may be TH_URI_MAX bytes long. */
static bool name_differs(const th_rpc_msg *m, const char *member, th_mcp_header_fn header, void *ctx, bool *missing)
{
    size_t hlen = 0;
    const char *hn = header(ctx, "Mcp-Name", &hlen);
    const char *bn = NULL;
    if (m->call_lite && strcmp(member, "name") == 0)
        bn = m->call_has_name ? m->call_name : NULL;
    else if (param(m, member))
        bn = json_object_get_string(param(m, member));
    *missing = !hn;
    return (hn || bn) && (!hn || !bn || strlen(bn) != hlen || memcmp(hn, bn, hlen) != 0);
}

int th_mcp_check_headers(th_mcp *mcp, const th_policy *caller, const th_rpc_msg *m, th_mcp_header_fn header,
                         void *ctx, char *why, size_t size)
{
    size_t len = 0;
    const char *pv = header(ctx, "MCP-Protocol-Version", &len);
    if (!pv)
        return refuse(why, size, TH_RPC_HEADER_MISMATCH, "Header mismatch: MCP-Protocol-Version is missing");
    json_object *mv = meta_member(m, META_VERSION);
    if (m->kind == TH_RPC_REQUEST && (!mv || !meta_member(m, META_CAPS)))
        return refuse(why, size, TH_RPC_INVALID_PARAMS,
                      "Invalid params: _meta needs \"" META_VERSION "\" and \"" META_CAPS "\"");
    const char *claimed = mv ? json_object_get_string(mv) : NULL;
    if (claimed && (strlen(claimed) != len || memcmp(claimed, pv, len) != 0))
        return refuse(why, size, TH_RPC_HEADER_MISMATCH,
                      "Header mismatch: MCP-Protocol-Version differs from _meta[\"" META_VERSION "\"]");
    const char *method = method_of(m), *hm = header(ctx, "Mcp-Method", &len);
    if (!method)
        method = "";
    if (!hm || strlen(method) != len || memcmp(hm, method, len) != 0)
        return refuse(why, size, TH_RPC_HEADER_MISMATCH,
                      hm ? "Header mismatch: Mcp-Method differs from the body's method"
                         : "Header mismatch: Mcp-Method is missing");
    const char *member = name_member(method);
    if (!member)
        return 0;
    bool missing;
    if (name_differs(m, member, header, ctx, &missing))
        return refuse(why, size, TH_RPC_HEADER_MISMATCH,
                      missing ? "Header mismatch: Mcp-Name is missing" : "Header mismatch: Mcp-Name differs from the body");
    if (strcmp(method, "tools/call") != 0)
        return 0;
    th_registry *reg = th_mcp_registry(mcp);
    const char *bad = reg ? param_headers_differ(reg, caller, m, header, ctx) : NULL;
    th_registry_unref(reg);
    if (bad)
        snprintf(why, size, "Header mismatch: %s", bad);
    return bad ? TH_RPC_HEADER_MISMATCH : 0;
}
