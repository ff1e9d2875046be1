/*
** jsonrpc.c: JSON-RPC 2.0 parsing and message building. Every way a line can
** be wrong maps to one error code here, so transports and the MCP layer never
** look at raw JSON structure themselves.
*/
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "jsonrpc.h"
#include "util.h"

static void invalid(th_rpc_msg *out, int code, const char *message)
{
    out->kind = TH_RPC_INVALID;
    out->error_code = code;
    snprintf(out->error_message, sizeof out->error_message, "%s", message);
}

/* MCP ids are strings or integers, never null (stricter than JSON-RPC). */
static int id_ok(json_object *id)
{
    return json_object_is_type(id, json_type_string) || json_object_is_type(id, json_type_int) ||
           json_object_is_type(id, json_type_double);
}

/* Is O the string LIT exactly (an embedded NUL would fool strcmp)? */
static bool string_is(json_object *o, const char *lit)
{
    return json_object_is_type(o, json_type_string) && (size_t)json_object_get_string_len(o) == strlen(lit) &&
           memcmp(json_object_get_string(o), lit, strlen(lit)) == 0;
}

void th_rpc_parse(const char *text, size_t len, th_rpc_msg *out)
{
    memset(out, 0, sizeof *out);
    /* json-c's default depth (32) refuses valid requests with deeply nested
     * arguments; 128 still bounds the recursion that frees the tree. */
    json_tokener *tok = json_tokener_new_ex(TH_RPC_MAX_DEPTH);
    if (!tok) {
        invalid(out, TH_RPC_INTERNAL_ERROR, "Internal error: out of memory");
        return;
    }
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    json_object *msg = json_tokener_parse_ex(tok, text, (int)len);
    enum json_tokener_error jerr = json_tokener_get_error(tok);
    size_t end = json_tokener_get_parse_end(tok);
    if (jerr == json_tokener_continue && end == len) {
        /* A top-level number or literal ends only at a delimiter: give the
         * tokener one, so "5" is a (non-object) value, not a truncation. */
        msg = json_tokener_parse_ex(tok, "", 1);
        jerr = json_tokener_get_error(tok);
    }
    /* Trailing white space is harmless; anything else is a second value. */
    while (jerr == json_tokener_success && end < len && strchr(" \t\r", text[end]))
        end++;
    /* json-c's UTF-8 check lets overlong forms, surrogates and code points
     * past U+10FFFF through; they would be echoed back in ids and names. */
    if (jerr == json_tokener_success && end == len && !th_utf8_valid(text, len))
        jerr = json_tokener_error_parse_utf8_string;
    /* json-c represents the JSON literal null as NULL: a valid value, which
     * the object check below refuses. */
    if (jerr != json_tokener_success || end != len) {
        char m[160];
        if (jerr == json_tokener_success || jerr == json_tokener_continue)
            snprintf(m, sizeof m, "Parse error: %s at offset %zu",
                     jerr == json_tokener_continue ? "unexpected end of input" : "trailing data", end);
        else
            snprintf(m, sizeof m, "Parse error: %s at offset %zu", json_tokener_error_desc(jerr), end);
        json_object_put(msg);
        json_tokener_free(tok);
        invalid(out, TH_RPC_PARSE_ERROR, m);
        return;
    }
    json_tokener_free(tok);
    out->msg = msg;

    if (json_object_is_type(msg, json_type_array)) {
        invalid(out, TH_RPC_INVALID_REQUEST, "Invalid Request: batches are not supported");
        return;
    }
    if (!json_object_is_type(msg, json_type_object)) {
        invalid(out, TH_RPC_INVALID_REQUEST, "Invalid Request: a message must be a JSON object");
        return;
    }

    json_object *v, *id = NULL, *method = NULL;
    bool has_id = json_object_object_get_ex(msg, "id", &id);
    bool has_method = json_object_object_get_ex(msg, "method", &method);
    if (has_id && id_ok(id))
        out->id = id;

    if (!json_object_object_get_ex(msg, "jsonrpc", &v) || !string_is(v, "2.0")) {
        invalid(out, TH_RPC_INVALID_REQUEST, "Invalid Request: \"jsonrpc\" must be \"2.0\"");
        return;
    }
    if (!has_method) {
        if (json_object_object_get_ex(msg, "result", NULL) || json_object_object_get_ex(msg, "error", NULL)) {
            out->kind = TH_RPC_RESPONSE;
            return;
        }
        invalid(out, TH_RPC_INVALID_REQUEST, "Invalid Request: missing \"method\"");
        return;
    }
    if (has_id && !id_ok(id)) {
        invalid(out, TH_RPC_INVALID_REQUEST,
                json_object_is_type(id, json_type_null) ? "Invalid Request: \"id\" must not be null"
                                                         : "Invalid Request: \"id\" must be a string or a number");
        return;
    }
    if (!json_object_is_type(method, json_type_string) ||
        strlen(json_object_get_string(method)) != (size_t)json_object_get_string_len(method)) {
        invalid(out, TH_RPC_INVALID_REQUEST, "Invalid Request: \"method\" must be a string without NUL characters");
        out->silent = !has_id && json_object_is_type(method, json_type_string); /* a notification */
        return;
    }
    out->method = json_object_get_string(method);
    if (json_object_object_get_ex(msg, "params", &v)) {
        if (!json_object_is_type(v, json_type_object)) {
            invalid(out, TH_RPC_INVALID_PARAMS, "Invalid params: \"params\" must be an object");
            out->silent = !has_id;
            return;
        }
        out->params = v;
    }
    out->kind = has_id ? TH_RPC_REQUEST : TH_RPC_NOTIFICATION;
}

void th_rpc_msg_clear(th_rpc_msg *m)
{
    json_object_put(m->msg);
    memset(m, 0, sizeof *m);
}

static json_object *envelope(json_object *id)
{
    json_object *o = json_object_new_object();
    if (!o)
        return NULL;
    json_object_object_add(o, "jsonrpc", json_object_new_string("2.0"));
    json_object_object_add(o, "id", id ? json_object_get(id) : NULL);
    return o;
}

json_object *th_rpc_result(json_object *id, json_object *result)
{
    json_object *o = envelope(id);
    if (!o) {
        json_object_put(result);
        return NULL;
    }
    json_object_object_add(o, "result", result);
    return o;
}

json_object *th_rpc_error(json_object *id, int code, const char *message, json_object *data)
{
    json_object *o = envelope(id);
    json_object *e = json_object_new_object();
    if (!o || !e) {
        json_object_put(o);
        json_object_put(e);
        json_object_put(data);
        return NULL;
    }
    json_object_object_add(e, "code", json_object_new_int(code));
    json_object_object_add(e, "message", json_object_new_string(message));
    if (data)
        json_object_object_add(e, "data", data);
    json_object_object_add(o, "error", e);
    return o;
}

json_object *th_rpc_notification(const char *method, json_object *params)
{
    json_object *o = json_object_new_object();
    if (!o) {
        json_object_put(params);
        return NULL;
    }
    json_object_object_add(o, "jsonrpc", json_object_new_string("2.0"));
    json_object_object_add(o, "method", json_object_new_string(method));
    if (params)
        json_object_object_add(o, "params", params);
    return o;
}

const char *th_rpc_serialize(json_object *msg, size_t *len)
{
    return json_object_to_json_string_length(msg, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, len);
}

int th_rpc_id_key(json_object *id, char *buf, size_t size)
{
    /* The JSON text tells every id apart: strings keep an embedded NUL
     * escaped, and numbers are never confused with strings. */
    if (!id_ok(id))
        return 0;
    size_t len;
    const char *text = json_object_to_json_string_length(id, JSON_C_TO_STRING_PLAIN, &len);
    int n = snprintf(buf, size, "%c:%s", json_object_is_type(id, json_type_string) ? 's' : 'n', text);
    return n > 0 && (size_t)n < size;
}
