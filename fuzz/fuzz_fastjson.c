/* SPDX-License-Identifier: MIT */
/*
** fuzz/fuzz_fastjson.c: a differential libFuzzer harness for base/fastjson.c:
** whatever text fastjson accepts, json-c's strict tokener must accept too and
** build the same tree (types, values, member order), and th_rpc_parse must.
*/

/*
** fastjson is the parser every plain request and every worker IPC frame
** goes through, so a tree that differs from json-c's is a request the host
** misreads. Declining is always allowed (the caller falls back to json-c);
** accepting text json-c refuses, or building another tree, is a bug. The
** input is the text itself; its first byte is not special.
*/
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "base/fastjson.h"
#include "fuzz_json.h"
#include "protocol/jsonrpc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define DIE(what) fz_die("fuzz_fastjson", what, (const char *)data, size)

/* The tree json-c's strict tokener builds from all of TEXT (white space
 * may follow the value), or NULL with *OK false when it refuses TEXT. */
static json_object *reference(const char *text, size_t len, bool *ok)
{
    json_tokener *tok = json_tokener_new_ex(TH_RPC_MAX_DEPTH);
    json_object *o = NULL;
    *ok = false;
    if (!tok)
        abort();
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    o = json_tokener_parse_ex(tok, text, (int)len);
    if (json_tokener_get_error(tok) == json_tokener_success) {
        size_t end = json_tokener_get_parse_end(tok);
        while (end < len && strchr(" \t\r\n", text[end]) && text[end])
            end++;
        *ok = end == len;
    }
    json_tokener_free(tok);
    if (!*ok) {
        json_object_put(o);
        o = NULL;
    }
    return o;
}


/* A plain tools/call's params, read as their members (call_lite): PARAMS
 * must have those members and no other. */
static bool same_call_params(json_object *params, const th_rpc_msg *m)
{
    json_object *v;
    if (m->params || strcmp(m->method, "tools/call") != 0 || !json_object_is_type(params, json_type_object))
        return false;
    size_t n = (size_t)m->call_has_name + m->call_has_args + m->call_has_meta;
    if ((size_t)json_object_object_length(params) != n)
        return false;
    if (m->call_has_name && (!json_object_object_get_ex(params, "name", &v) || !json_object_is_type(v, json_type_string) ||
                             strlen(m->call_name) != (size_t)json_object_get_string_len(v) ||
                             strcmp(m->call_name, json_object_get_string(v)) != 0))
        return false;
    if (m->call_has_args && (!json_object_object_get_ex(params, "arguments", &v) || (v == NULL) != (m->call_args == NULL) ||
                             (v && !fz_same_text(v, m->call_args))))
        return false;
    if (m->call_has_meta && (!json_object_object_get_ex(params, "_meta", &v) || (v == NULL) != (m->call_meta == NULL) ||
                             (v && !fz_same_text(v, m->call_meta))))
        return false;
    return true;
}

/* A plain request or notification is read without an envelope object
 * (th_rpc_msg's own_id, own_params; a plain tools/call's params without
 * one either): then its parts must be FAST's. */
static bool same_parts(json_object *fast, const th_rpc_msg *m)
{
    if (m->kind != TH_RPC_REQUEST && m->kind != TH_RPC_NOTIFICATION)
        return false;
    json_object *id = NULL, *method = NULL, *params = NULL;
    json_object_object_get_ex(fast, "id", &id);
    json_object_object_get_ex(fast, "method", &method);
    json_object_object_get_ex(fast, "params", &params);
    if ((id == NULL) != (m->id == NULL) || (id && !fz_same_text(id, m->id)))
        return false;
    if (!method || !m->method || strcmp(json_object_get_string(method), m->method) != 0)
        return false;
    if (m->call_lite)
        return same_call_params(params, m);
    return (params == NULL) == (m->params == NULL) && (!params || fz_same_text(params, m->params));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* An exact-size copy, so that ASan sees a read past the end. */
    char *text = malloc(size ? size : 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    json_object *fast = th_fastjson_parse(text, size);
    if (fast) {
        bool ok;
        json_object *ref = reference(text, size, &ok);
        if (!ok)
            DIE("fastjson accepted text json-c's strict tokener refuses");
        if (!json_object_equal(fast, ref))
            DIE("fastjson built another tree than json-c (json_object_equal)");
        if (!fz_same_text(fast, ref))
            DIE("fastjson built another tree than json-c (member order or number type)");
        json_object_put(ref);
        /* The message layer must see what fastjson built. */
        th_rpc_msg m;
        th_rpc_parse(text, size, &m);
        if (m.msg) {
            if (!fz_same_text(fast, m.msg))
                DIE("th_rpc_parse kept another tree than fastjson built");
        } else if (!same_parts(fast, &m)) {
            DIE("th_rpc_parse read another id, method or params than fastjson built");
        }
        th_rpc_msg_clear(&m);
        json_object_put(fast);
    }
    free(text);
    return 0;
}
