/* SPDX-License-Identifier: MIT */
/*
** fuzz/fuzz_json.h: how the harnesses turn fuzz bytes into JSON exactly as
** the host would: schema text as the registry parses a plugin's schema, and
** argument text as the JSON-RPC layer parses a tools/call message.
*/
#ifndef TH_FUZZ_JSON_H
#define TH_FUZZ_JSON_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "base/util.h"
#include "call/result.h"
#include "protocol/jsonrpc.h"

/* Stop the run with WHAT and (the start of) TEXT: libFuzzer saves the input. */
static inline void fz_die(const char *harness, const char *what, const char *text, size_t len)
{
    fprintf(stderr, "%s: %s: %.*s\n", harness, what, (int)(len > 2000 ? 2000 : len), text ? text : "");
    abort();
}

/* Stricter than json_object_equal: member order and the int/double split
 * count too, as the serialisations show them. */
static inline bool fz_same_text(json_object *a, json_object *b)
{
    const int flags = JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE;
    size_t la, lb;
    const char *ta = json_object_to_json_string_length(a, flags, &la);
    const char *tb = json_object_to_json_string_length(b, flags, &lb);
    return ta && tb && la == lb && memcmp(ta, tb, la) == 0;
}

/* Whether TEXT is what the host may put on a client's line: valid UTF-8
 * JSON that json-c parses in full (nested as deep as a result may be, and
 * a little more), no control byte. */
static inline bool fz_is_line(const char *text, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)text[i] < 0x20)
            return false;
    if (!th_utf8_valid(text, len))
        return false;
    json_tokener *tok = json_tokener_new_ex(TH_RESULT_MAX_DEPTH + 16);
    if (!tok)
        abort();
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    json_object *o = json_tokener_parse_ex(tok, text, (int)len);
    bool ok = json_tokener_get_error(tok) == json_tokener_success && (size_t)json_tokener_get_parse_end(tok) == len &&
              o != NULL;
    json_object_put(o);
    json_tokener_free(tok);
    return ok;
}

/* Whether notification N, as the host serialises it, is fz_is_line; N is
 * taken (a notify hook's argument). */
static inline bool fz_notice_is_line(json_object *n)
{
    size_t len;
    const char *text = th_rpc_serialize(n, &len);
    if (!text)
        abort();
    bool ok = fz_is_line(text, len);
    json_object_put(n);
    return ok;
}

/*
** Parse LEN bytes of schema text as the registry parses a plugin's
** input_schema: strict RFC 8259, UTF-8 checked (json-c's check and
** th_utf8_valid, which also refuses overlongs), json-c's default depth,
** up to the first NUL. Sets *OUT (a new reference; NULL for null) and
** returns true when the text is JSON.
*/
static inline bool fz_parse_schema(const char *text, size_t len, json_object **out)
{
    *out = NULL;
    char *copy = malloc(len + 1);
    if (!copy)
        return false;
    memcpy(copy, text, len);
    copy[len] = '\0';
    json_tokener *tok = json_tokener_new();
    bool ok = false;
    if (tok) {
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
        json_object *obj = json_tokener_parse_ex(tok, copy, -1);
        ok = json_tokener_get_error(tok) == json_tokener_success && json_tokener_get_parse_end(tok) == strlen(copy) &&
             th_utf8_valid(copy, strlen(copy));
        if (ok)
            *out = obj;
        else
            json_object_put(obj);
        json_tokener_free(tok);
    }
    free(copy);
    return ok;
}

/*
** Parse LEN bytes as the "arguments" of a tools/call request, through
** th_rpc_parse, so numbers past 64 bits and lone surrogates arrive as the
** host keeps them. Returns true and sets *ARGS (a new reference; NULL for
** null) when the whole request parses.
*/
static inline bool fz_parse_args(const char *text, size_t len, json_object **args)
{
    static const char head[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"arguments\":";
    static const char tail[] = "\n}}";
    *args = NULL;
    size_t n = sizeof head - 1 + len + sizeof tail - 1;
    char *msg = malloc(n);
    if (!msg)
        return false;
    memcpy(msg, head, sizeof head - 1);
    memcpy(msg + sizeof head - 1, text, len);
    memcpy(msg + sizeof head - 1 + len, tail, sizeof tail - 1);
    th_rpc_msg m;
    th_rpc_parse(msg, n, &m);
    free(msg);
    json_object *a = NULL;
    bool ok = m.kind == TH_RPC_REQUEST;
    /* A plain tools/call is read without a params object (call_lite). */
    if (ok && m.call_lite)
        ok = m.call_has_args, a = m.call_args;
    else
        ok = ok && m.params && json_object_object_get_ex(m.params, "arguments", &a);
    if (ok)
        *args = json_object_get(a);
    th_rpc_msg_clear(&m);
    return ok;
}

#endif
