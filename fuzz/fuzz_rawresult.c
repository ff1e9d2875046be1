/* SPDX-License-Identifier: MIT */
/*
** fuzz/fuzz_rawresult.c: a differential libFuzzer harness for call/rawresult.c,
** the scan that lets a worker's CallToolResult text reach the client as its
** bytes, checked against json-c, the host's writer and call/result.c.
*/

/*
** The worker is not trusted, and the scan is all that stands between its
** bytes and the client's response line. The contract checked, both ways:
**
** 1. The input is taken as the text of a RESULT frame. Whatever
**    th_raw_result_new accepts must be one JSON value json-c's strict,
**    UTF-8-checking tokener parses in full; it must be valid UTF-8 with no
**    control byte (no newline can end the response line early); the host's
**    writer (th_rpc_result_spliced then th_rpc_write and th_rpc_serialize,
**    with and without the modern tail) must emit a response json-c parses
**    back to the same result (canonical prints compared); and the long
**    path (call/result.c's block and value checks, which an in-process
**    result passes) must not refuse it: the splice may skip that check
**    only because it would pass. Refusal is always allowed (the caller
**    parses the text and checks it the long way).
**    One exception, stated: a number json-c reads as a non-finite double
**    (1e999) is valid JSON text the splice may pass, which the long path
**    refuses because json-c cannot write such a double back.
** 2. The same bytes also build a result of the common shape (text, image,
**    audio and resource_link blocks from the input's pieces, perhaps
**    annotations, _meta, structuredContent parsed from a piece, isError),
**    written as a worker writes it (th_json_append): when that text is
**    valid UTF-8, json-c parses it back and the long path accepts it
**    (json-c's tokener passes "0.", which is no JSON number), the scan
**    must accept it, or every plain result would take the slow path.
** Any mismatch aborts, so that libFuzzer saves the input.
*/
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "base/jsontree.h"
#include "base/util.h"
#include "call/rawresult.h"
#include "call/result.h"
#include "fuzz_json.h"
#include "protocol/jsonrpc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define DIE(what, text, len) fz_die("fuzz_rawresult", what, (text), (len))

/* TEXT as json-c's strict tokener reads all of it (UTF-8 checked), or NULL. */
static json_object *strict_parse(const char *text, size_t len)
{
    json_tokener *tok = json_tokener_new_ex(TH_RESULT_MAX_DEPTH + 8);
    if (!tok)
        abort();
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    json_object *o = json_tokener_parse_ex(tok, text, (int)len);
    if (json_tokener_get_error(tok) != json_tokener_success || json_tokener_get_parse_end(tok) != len || !o) {
        json_object_put(o);
        o = NULL;
    }
    json_tokener_free(tok);
    return o;
}


/* Whether V holds a double that is not finite anywhere inside (the one
 * stated exception to the long path's agreement). */
static bool has_nonfinite(json_object *v, int depth)
{
    if (depth > TH_RESULT_MAX_DEPTH + 8)
        return false;
    switch (json_object_get_type(v)) {
    case json_type_double:
        return !isfinite(json_object_get_double(v));
    case json_type_array:
        for (size_t i = 0; i < json_object_array_length(v); i++)
            if (has_nonfinite(json_object_array_get_idx(v, i), depth + 1))
                return true;
        return false;
    case json_type_object: {
        json_object_object_foreach(v, key, m) {
            (void)key;
            if (has_nonfinite(m, depth + 1))
                return true;
        }
        return false;
    }
    default:
        return false;
    }
}

/* The response the host writes for RAW (taken), with TAIL, parsed back;
 * its "result" must print as REF does (plus TAIL's members). */
static void check_writer(json_object *raw, const char *tail, json_object *ref, const char *text, size_t len)
{
    json_object *id = json_object_new_int(7);
    json_object *msg = th_rpc_result_spliced(id, raw, tail);
    if (!msg)
        abort();
    th_buf out = {0};
    if (!th_rpc_write(msg, &out))
        abort();
    size_t slen;
    const char *s = th_rpc_serialize(msg, &slen);
    if (!s || slen != out.len || memcmp(s, out.data, slen) != 0)
        DIE("th_rpc_write and th_rpc_serialize wrote different responses", text, len);
    for (size_t i = 0; i < out.len; i++)
        if ((unsigned char)out.data[i] < 0x20)
            DIE("the response holds a control byte (it would break the line)", text, len);
    if (!th_utf8_valid(out.data, out.len))
        DIE("the response is not valid UTF-8", text, len);
    json_object *back = strict_parse(out.data, out.len), *result = NULL;
    if (!back || !json_object_object_get_ex(back, "result", &result))
        DIE("json-c cannot parse the response the host wrote", text, len);
    json_object *want = json_object_get(ref);
    if (tail) {
        json_object *t = strict_parse(tail, strlen(tail)), *copy = NULL;
        if (!t || json_object_deep_copy(ref, &copy, NULL) != 0)
            abort();
        json_object_object_foreach(t, k, v) json_object_object_add(copy, k, json_object_get(v));
        json_object_put(t);
        json_object_put(want);
        want = copy;
    }
    if (!fz_same_text(result, want))
        DIE("the response's result is not the text's value", text, len);
    json_object_put(want);
    json_object_put(back);
    json_object_put(msg);
    json_object_put(id);
    free(out.data);
}

/* Part 1: the bytes as a RESULT frame's payload. */
static void check_scan(const char *text, size_t len)
{
    json_object *raw = th_raw_result_new(text, len);
    if (!raw)
        return; /* refused: the long path decides; nothing leaks (ASan) */
    if (!th_raw_result_is(raw))
        DIE("th_raw_result_new made an object th_raw_result_is denies", text, len);
    size_t rlen;
    const char *rtext = th_raw_result_text(raw, &rlen);
    if (!rtext || rlen != len || memcmp(rtext, text, len) != 0 || rtext[len] != '\0')
        DIE("th_raw_result_text is not the text", text, len);
    json_object *ref = strict_parse(text, len);
    if (!ref)
        DIE("the scan accepted text json-c's strict tokener refuses", text, len);
    if (!th_utf8_valid(text, len))
        DIE("the scan accepted text that is not valid UTF-8", text, len);
    /* The long path's checks, as apply_result would run them. */
    json_object *content, *v;
    if (!json_object_is_type(ref, json_type_object) || !json_object_object_get_ex(ref, "content", &content) ||
        !json_object_is_type(content, json_type_array))
        DIE("the scan accepted a result with no content array", text, len);
    if (!has_nonfinite(ref, 0)) {
        th_buf why = {0};
        size_t bytes = 0;
        for (size_t i = 0; i < json_object_array_length(content); i++)
            if (!th_result_check_block(json_object_array_get_idx(content, i), "content", &bytes, &why))
                DIE(why.data ? why.data : "the long path refuses a block the scan accepted", text, len);
        if (json_object_object_get_ex(ref, "structuredContent", &v) &&
            (!json_object_is_type(v, json_type_object) || !th_result_check_value(v, "structuredContent", &bytes, &why)))
            DIE("the long path refuses structuredContent the scan accepted", text, len);
        if (json_object_object_get_ex(ref, "isError", &v) && !json_object_is_type(v, json_type_boolean))
            DIE("the scan accepted an isError that is no boolean", text, len);
        free(why.data);
    }
    /* As a tree, through th_raw_result_tree (takes a reference). */
    json_object *tree = th_raw_result_tree(json_object_get(raw));
    if (!tree || !fz_same_text(tree, ref))
        DIE("th_raw_result_tree is not the text's value", text, len);
    json_object_put(tree);
    json_object_get(raw);
    check_writer(raw, NULL, ref, text, len);
    check_writer(raw, "{\"resultType\":\"complete\"}", ref, text, len);
    json_object_put(ref);
}

/* ---- part 2: a result of the common shape must be accepted ---------------- */

/* The next piece of the input: bytes up to a 0xFF byte (or the end). */
static bool next_piece(const char **p, const char *end, const char **s, size_t *n)
{
    if (*p >= end)
        return false;
    const char *q = memchr(*p, 0xFF, (size_t)(end - *p));
    if (!q)
        q = end;
    *s = *p;
    *n = (size_t)(q - *p);
    *p = q < end ? q + 1 : end;
    return true;
}

static void add_string(json_object *o, const char *key, const char *s, size_t n)
{
    json_object_object_add(o, key, json_object_new_string_len(s, (int)n));
}

/* Whether call/result.c's checks (the long path's) pass RESULT's blocks
 * and structuredContent. json-c's tokener is laxer than RFC 8259 about
 * numbers ("0." passes, and json-c writes it back as it read it): the
 * long path refuses those by their text, and so must the scan. */
static bool long_path_accepts(json_object *result)
{
    json_object *content, *v;
    th_buf why = {0};
    size_t bytes = 0;
    bool ok = json_object_object_get_ex(result, "content", &content);
    for (size_t i = 0; ok && i < json_object_array_length(content); i++)
        ok = th_result_check_block(json_object_array_get_idx(content, i), "content", &bytes, &why);
    if (ok && json_object_object_get_ex(result, "structuredContent", &v))
        ok = th_result_check_value(v, "structuredContent", &bytes, &why);
    free(why.data);
    return ok;
}

static void check_common_shape(const char *data, size_t size)
{
    const char *p = data, *end = data + size, *s;
    size_t n;
    if (!next_piece(&p, end, &s, &n) || n < 1)
        return;
    unsigned char ctl = (unsigned char)s[0];
    json_object *result = json_object_new_object(), *content = json_object_new_array();
    if (ctl & 0x80) /* members in another order than usual */
        json_object_object_add(result, "isError", json_object_new_boolean(ctl & 0x40));
    json_object_object_add(result, "content", content);
    unsigned k = 0;
    while (next_piece(&p, end, &s, &n)) {
        /* A piece's first byte chooses its block; the rest is its text. */
        unsigned char b = n ? (unsigned char)s[0] : 0;
        const char *t = n ? s + 1 : s;
        size_t tn = n ? n - 1 : 0;
        if ((b & 7) == 7 && !json_object_object_get_ex(result, "structuredContent", NULL)) {
            json_tokener *tok = json_tokener_new_ex(64);
            json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
            json_object *sc = json_tokener_parse_ex(tok, t, (int)tn);
            if (json_tokener_get_error(tok) == json_tokener_success && json_object_is_type(sc, json_type_object))
                json_object_object_add(result, "structuredContent", sc);
            else
                json_object_put(sc);
            json_tokener_free(tok);
            continue;
        }
        json_object *blk = json_object_new_object();
        static const char *const types[] = {"text", "image", "audio", "resource_link"};
        const char *type = types[b & 3];
        if (b & 0x40) /* "type" need not come first */
            add_string(blk, "_x", t, tn);
        json_object_object_add(blk, "type", json_object_new_string(type));
        switch (b & 3) {
        case 0:
            add_string(blk, "text", t, tn);
            break;
        case 1:
        case 2:
            add_string(blk, "data", t, tn);
            add_string(blk, "mimeType", b & 0x20 ? "image/png" : "audio/wav", 9);
            break;
        default:
            add_string(blk, "uri", t, tn);
            add_string(blk, "name", t, tn);
            break;
        }
        if (b & 0x10) {
            json_object *ann = json_object_new_object(), *aud = json_object_new_array();
            json_object_array_add(aud, json_object_new_string("user"));
            json_object_object_add(ann, "audience", aud);
            json_object_object_add(ann, "priority", json_object_new_double(0.5));
            json_object_object_add(blk, "annotations", ann);
        }
        if (b & 0x08) {
            json_object *meta = json_object_new_object();
            json_object_object_add(meta, "n", json_object_new_int64((int64_t)k * 1000003 - 7));
            json_object_object_add(meta, "ok", json_object_new_boolean(1));
            json_object_object_add(meta, "z", NULL);
            json_object_object_add(blk, "_meta", meta);
        }
        json_object_array_add(content, blk);
        if (++k > 64)
            break;
    }
    if (!(ctl & 0x80) && (ctl & 0x20))
        json_object_object_add(result, "isError", json_object_new_boolean(ctl & 0x40));
    th_buf out = {0};
    if (!th_json_append(&out, result))
        abort();
    json_object *back = NULL;
    if (th_utf8_valid(out.data, out.len) && (back = strict_parse(out.data, out.len)) && long_path_accepts(back)) {
        json_object *raw = th_raw_result_new(out.data, out.len);
        if (!raw)
            DIE("the scan refused a plain result of the common shape", out.data, out.len);
        json_object_put(raw);
    }
    json_object_put(back);
    free(out.data);
    json_object_put(result);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* An exact-size copy, so that ASan sees a read past the end. */
    char *text = malloc(size ? size : 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    check_scan(text, size);
    check_common_shape(text, size);
    free(text);
    return 0;
}
