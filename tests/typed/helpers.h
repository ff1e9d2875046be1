/* SPDX-License-Identifier: MIT */
/*
** tests/typed/helpers.h: what the typed tests share: preparing a th_function
** (asserting success or the exact refusal) and running one call through
** th_typed_invoke, returning the CallToolResult to inspect.
*/
#ifndef TH_TEST_TYPED_HELPERS_H
#define TH_TEST_TYPED_HELPERS_H

#include <check.h>
#include <string.h>

#include "call/callctx.h"
#include "call/typed.h"

#define JSON_PLAIN (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

/* A prepared function with its schemas; free with prepared_free. */
typedef struct prepared {
    th_typed *typed;
    json_object *input, *output;
} prepared;

static inline prepared prepare_ok(const th_function *fn)
{
    prepared p = {0};
    th_err err = {0};
    th_rc rc = th_typed_prepare(fn, &p.typed, &p.input, &p.output, &err);
    ck_assert_msg(rc == TH_OK, "prepare failed: %s", err.msg);
    ck_assert_ptr_nonnull(p.typed);
    ck_assert_ptr_nonnull(p.input);
    return p;
}

static inline void prepared_free(prepared *p)
{
    th_typed_free(p->typed);
    json_object_put(p->input);
    json_object_put(p->output);
}

/* Assert that FN is refused with TH_ERR_VALUE and exactly MESSAGE. */
#define ck_assert_refused(fn, message)                                                   \
    do {                                                                                 \
        th_typed *t_ = (th_typed *)0x1;                                                  \
        json_object *i_ = (json_object *)0x1, *o_ = (json_object *)0x1;                  \
        th_err e_ = {0};                                                                 \
        ck_assert_int_eq(th_typed_prepare((fn), &t_, &i_, &o_, &e_), TH_ERR_VALUE);      \
        ck_assert_int_eq(e_.code, TH_ERR_VALUE);                                         \
        ck_assert_str_eq(e_.msg, (message));                                             \
        /* "sets nothing" on failure */                                                  \
        ck_assert_ptr_eq(t_, (th_typed *)0x1);                                           \
        ck_assert_ptr_eq(i_, (json_object *)0x1);                                        \
        ck_assert_ptr_eq(o_, (json_object *)0x1);                                        \
    } while (0)

/* Run one call with ARGS_JSON (NULL: no arguments object) and return the
** CallToolResult (caller puts it). */
static inline json_object *invoke(const prepared *p, const char *args_json)
{
    json_object *args = NULL;
    if (args_json) {
        args = json_tokener_parse(args_json);
        ck_assert_msg(args != NULL || strcmp(args_json, "null") == 0, "test JSON does not parse: %s", args_json);
    }
    th_call *call = th_call_new("t", NULL);
    ck_assert_ptr_nonnull(call);
    th_rc rc = th_typed_invoke(p->typed, call, args);
    ck_assert_int_eq(rc, TH_OK);
    json_object *res = th_call_finish(call, rc);
    th_call_free(call);
    json_object_put(args);
    ck_assert_ptr_nonnull(res);
    return res;
}

static inline bool result_is_error(json_object *res)
{
    json_object *e;
    return json_object_object_get_ex(res, "isError", &e) && json_object_get_boolean(e);
}

/* The text of content block I. */
static inline const char *result_text(json_object *res, size_t i)
{
    json_object *content, *block, *text;
    ck_assert(json_object_object_get_ex(res, "content", &content));
    ck_assert_uint_gt(json_object_array_length(content), i);
    block = json_object_array_get_idx(content, i);
    ck_assert(json_object_object_get_ex(block, "text", &text));
    return json_object_get_string(text);
}

static inline size_t result_blocks(json_object *res)
{
    json_object *content;
    ck_assert(json_object_object_get_ex(res, "content", &content));
    return json_object_array_length(content);
}

/* structuredContent's JSON text, or NULL when there is none. */
static inline const char *result_structured(json_object *res)
{
    json_object *sc;
    if (!json_object_object_get_ex(res, "structuredContent", &sc))
        return NULL;
    return json_object_to_json_string_ext(sc, JSON_PLAIN);
}

/* Call and expect success with TEXT and structuredContent STRUCTURED. */
#define ck_call_ok(p, args, text, structured)                                            \
    do {                                                                                 \
        json_object *r_ = invoke((p), (args));                                           \
        ck_assert_msg(!result_is_error(r_), "unexpected error: %s",                     \
                      json_object_to_json_string_ext(r_, JSON_PLAIN));                   \
        ck_assert_uint_eq(result_blocks(r_), 1);                                         \
        ck_assert_str_eq(result_text(r_, 0), (text));                                    \
        ck_assert_pstr_eq(result_structured(r_), (structured));                          \
        json_object_put(r_);                                                             \
    } while (0)

/* Call and expect an isError result whose only text is MESSAGE. */
#define ck_call_error(p, args, message)                                                  \
    do {                                                                                 \
        json_object *r_ = invoke((p), (args));                                           \
        ck_assert(result_is_error(r_));                                                  \
        ck_assert_uint_eq(result_blocks(r_), 1);                                         \
        ck_assert_str_eq(result_text(r_, 0), (message));                                 \
        ck_assert_ptr_null(result_structured(r_));                                       \
        json_object_put(r_);                                                             \
    } while (0)

#endif
