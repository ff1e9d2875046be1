/* SPDX-License-Identifier: MIT */
/*
** test_callctx.c: th_call and the result checks in-process: C strings
** repaired to UTF-8, non-finite progress refused, values JSON cannot carry
** and blocks the MCP schema refuses turned into an isError result naming
** the problem, the depth bound (freeing without recursion), and the size
** limit. Every finished result must serialise to strict, valid JSON.
*/
#include "config.h"

#include <check.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "call/callctx.h"
#include "base/handle.h"
#include "base/log.h"
#include "call/rawresult.h"
#include "call/result.h"
#include "base/util.h"
#include "check_main.h"

#define PLAIN (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

/* Notifications the hooks received. */
static json_object *sent;

static void record(void *ctx, json_object *n)
{
    (void)ctx;
    json_object_array_add(sent, n);
}

static th_call *new_call(const char *tool, size_t max_bytes)
{
    json_object_put(sent);
    sent = json_object_new_array();
    static json_object *token;
    if (!token)
        token = json_object_new_string("tok");
    th_call_hooks hooks = {.notify = record, .progress_token = token, .log_to_client = true,
                           .log_level = TH_LOG_DEBUG, .max_result_bytes = max_bytes};
    th_call *c = th_call_new(tool, &hooks);
    ck_assert_ptr_nonnull(c);
    return c;
}

/* Finish C, check the result is wire-valid JSON, and return its text. */
static char *finish(th_call *c, th_rc rc)
{
    json_object *r = th_call_finish(c, rc);
    ck_assert_ptr_nonnull(r);
    th_call_free(c);
    const char *text = json_object_to_json_string_ext(r, PLAIN);
    ck_assert_msg(th_utf8_valid(text, strlen(text)), "not UTF-8: %s", text);
    json_tokener *tok = json_tokener_new();
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    json_object *back = json_tokener_parse_ex(tok, text, (int)strlen(text) + 1);
    ck_assert_msg(back != NULL, "not strict JSON: %s", text);
    json_object_put(back);
    json_tokener_free(tok);
    char *copy = strdup(text);
    json_object_put(r);
    return copy;
}

#define ck_finish(c, want)                                                                                             \
    do {                                                                                                               \
        char *got_ = finish((c), TH_OK);                                                                               \
        ck_assert_str_eq(got_, (want));                                                                                \
        free(got_);                                                                                                    \
    } while (0)

#define REFUSED(tool, why)                                                                                             \
    "{\"content\":[{\"type\":\"text\",\"text\":\"Tool '" tool "' returned an invalid result: " why                     \
    "\"}],\"isError\":true}"

START_TEST(utf8_repair_replaces_each_bad_byte)
{
    size_t len;
    char *s = th_utf8_repair("caf\xe9.csv", 8, &len);
    ck_assert_str_eq(s, "caf\xef\xbf\xbd.csv");
    ck_assert_uint_eq(len, 10);
    free(s);
    /* A cut sequence, an overlong, a surrogate: one U+FFFD per byte. */
    s = th_utf8_repair("a\xe2\x82" "b\xc0\xaf\xed\xa0\x80\xf0\x9f\x98\x80", 14, &len);
    ck_assert_str_eq(s, "a\xef\xbf\xbd\xef\xbf\xbd" "b\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
                        "\xf0\x9f\x98\x80");
    free(s);
}
END_TEST

/* The check reads ASCII runs a word at a time: a bad or a good multi-byte
 * sequence at every offset after and inside such runs is still judged. */
START_TEST(utf8_valid_judges_every_offset_of_long_ascii_runs)
{
    static const char *const bad[] = {"\xe9", "\xc0\xaf", "\xed\xa0\x80", "\xe2\x82", "\xff"};
    static const char *const good[] = {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80"};
    char buf[64];
    for (size_t at = 0; at < 24; at++) {
        for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
            memset(buf, 'a', at);
            size_t n = strlen(bad[k]);
            memcpy(buf + at, bad[k], n);
            memset(buf + at + n, 'b', 9);
            ck_assert_msg(!th_utf8_valid(buf, at + n + 9), "bad sequence %zu at %zu passed", k, at);
            ck_assert_msg(!th_utf8_valid(buf, at + n), "bad sequence %zu at the end, %zu, passed", k, at);
        }
        for (size_t k = 0; k < sizeof good / sizeof *good; k++) {
            memset(buf, 'a', at);
            size_t n = strlen(good[k]);
            memcpy(buf + at, good[k], n);
            memset(buf + at + n, 'b', 9);
            ck_assert_msg(th_utf8_valid(buf, at + n + 9), "good sequence %zu at %zu refused", k, at);
            ck_assert_msg(!th_utf8_valid(buf, at + n - 1), "cut sequence %zu at %zu passed", k, at);
        }
    }
    ck_assert(th_utf8_valid("", 0));
}
END_TEST

START_TEST(c_strings_arrive_repaired)
{
    th_call *c = new_call("files", 0);
    ck_assert_int_eq(th_call_error(c, "cannot open %s", "caf\xe9.csv"), TH_OK);
    ck_assert_int_eq(th_call_resource_link(c, "file:///caf\xe9", "caf\xe9", "\xff", "text/\x80"), TH_OK);
    ck_assert_int_eq(th_call_image(c, "image/\xe9", "AA\xe9"), TH_OK);
    ck_assert_int_eq(th_call_resource_blob(c, "x:\xe9", "a/\xe9", "AA\xe9"), TH_OK);
    ck_assert_int_eq(th_call_log(c, TH_LOG_INFO, "read %s", "caf\xe9"), TH_OK);
    ck_assert_int_eq(th_call_progress(c, 1, 2, "caf\xe9"), TH_OK);
    ck_assert_str_eq(json_object_to_json_string_ext(sent, PLAIN),
                     "[{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\","
                     "\"logger\":\"files\",\"data\":\"read caf\xef\xbf\xbd\"}},"
                     "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"tok\","
                     "\"progress\":1.0,\"total\":2.0,\"message\":\"caf\xef\xbf\xbd\"}}]");
    ck_finish(c, "{\"content\":[{\"type\":\"text\",\"text\":\"cannot open caf\xef\xbf\xbd.csv\"},"
                 "{\"type\":\"resource_link\",\"uri\":\"file:///caf\xef\xbf\xbd\",\"name\":\"caf\xef\xbf\xbd\","
                 "\"description\":\"\xef\xbf\xbd\",\"mimeType\":\"text/\xef\xbf\xbd\"},"
                 "{\"type\":\"image\",\"data\":\"AA\xef\xbf\xbd\",\"mimeType\":\"image/\xef\xbf\xbd\"},"
                 "{\"type\":\"resource\",\"resource\":{\"uri\":\"x:\xef\xbf\xbd\",\"mimeType\":\"a/\xef\xbf\xbd\","
                 "\"blob\":\"AA\xef\xbf\xbd\"}}],\"isError\":true}");
}
END_TEST

/* The stderr log, to see the progress warning once. */
static int warnings;

static void count_warnings(th_log_level level, const char *line, void *ctx)
{
    (void)ctx;
    if (level == TH_LOG_WARNING && strstr(line, "tool avg: th_call_progress with a non-finite"))
        warnings++;
}

START_TEST(non_finite_progress_is_refused_and_logged_once)
{
    th_log_set_sink(count_warnings, NULL);
    warnings = 0;
    th_call *c = new_call("avg", 0);
    double zero = 0;
    ck_assert_int_eq(th_call_progress(c, zero / zero * 100, 100, NULL), TH_ERR_VALUE);
    ck_assert_int_eq(th_call_progress(c, 1, INFINITY, NULL), TH_ERR_VALUE);
    ck_assert_int_eq(th_call_progress(c, -INFINITY, 2, NULL), TH_ERR_VALUE);
    ck_assert_uint_eq(json_object_array_length(sent), 0);
    ck_assert_int_eq(warnings, 1);
    ck_assert_int_eq(th_call_progress(c, 1, 2, NULL), TH_OK);
    ck_assert_uint_eq(json_object_array_length(sent), 1);
    th_log_set_sink(NULL, NULL);
    ck_finish(c, "{\"content\":[]}");
}
END_TEST

static json_object *obj1(const char *key, json_object *v)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, key, v);
    return o;
}

static const struct {
    const char *json; /* NULL: built by the test from .kind */
    int kind;
    const char *want;
} structured_cases[] = {
    {NULL, 0, REFUSED("stats", "structuredContent.avg: NaN is not a JSON number")},
    {NULL, 1, REFUSED("stats", "structuredContent.avg: Infinity is not a JSON number")},
    {NULL, 2, REFUSED("stats", "structuredContent.avg: the number text \\\"1,5\\\" is not a JSON number")},
    {NULL, 3, REFUSED("stats", "structuredContent.caf\xef\xbf\xbd: key is not valid UTF-8")},
    {NULL, 4, REFUSED("stats", "structuredContent.rows[1].name: string is not valid UTF-8")},
    {NULL, 5, REFUSED("stats", "structuredContent.avg: the number text \\\"0x10\\\" is not a JSON number")},
    {"\"ok\"", 0, REFUSED("stats", "structuredContent: must be a JSON object, got a string")},
    {"[1]", 0, REFUSED("stats", "structuredContent: must be a JSON object, got an array")},
    {"3.5", 0, REFUSED("stats", "structuredContent: must be a JSON object, got a number")},
};

static json_object *build(int kind)
{
    switch (kind) {
    case 0: return obj1("avg", json_object_new_double(NAN));
    case 1: return obj1("avg", json_object_new_double(INFINITY));
    case 2: return obj1("avg", json_object_new_double_s(1.5, "1,5"));
    case 3: return obj1("caf\xe9", json_object_new_int(1));
    case 4: {
        json_object *rows = json_object_new_array();
        json_object_array_add(rows, obj1("name", json_object_new_string("ok")));
        json_object_array_add(rows, obj1("name", json_object_new_string("caf\xe9")));
        return obj1("rows", rows);
    }
    default: return obj1("avg", json_object_new_double_s(16, "0x10"));
    }
}

START_TEST(structured_values_json_cannot_carry_become_tool_errors)
{
    th_call *c = new_call("stats", 0);
    json_object *v = structured_cases[_i].json ? json_tokener_parse(structured_cases[_i].json)
                                               : build(structured_cases[_i].kind);
    ck_assert_int_eq(th_call_text(c, "before"), TH_OK);
    ck_assert_int_eq(th_call_structured(c, v), TH_ERR_VALUE);
    /* Later content is refused too: the result is already lost. */
    ck_assert_int_eq(th_call_text(c, "after"), TH_ERR_VALUE);
    ck_finish(c, structured_cases[_i].want);
}
END_TEST

/* A refused value a plugin still holds part of is left whole. */
START_TEST(a_refused_value_leaves_shared_parts_alone)
{
    th_call *c = new_call("stats", 0);
    json_object *shared = json_tokener_parse("{\"rows\":[1,2,3]}");
    json_object *v = obj1("avg", json_object_new_double(NAN));
    json_object_object_add(v, "shared", json_object_get(shared));
    ck_assert_int_eq(th_call_structured(c, v), TH_ERR_VALUE);
    ck_assert_str_eq(json_object_to_json_string_ext(shared, PLAIN), "{\"rows\":[1,2,3]}");
    json_object_put(shared);
    ck_finish(c, REFUSED("stats", "structuredContent.avg: NaN is not a JSON number"));
}
END_TEST

static const struct {
    const char *block;
    const char *want;
} block_cases[] = {
    {"{\"type\":\"text\"}", REFUSED("t", "content[1]: a \\\"text\\\" block needs a string \\\"text\\\", got none")},
    {"{\"type\":\"text\",\"text\":42}",
     REFUSED("t", "content[1]: a \\\"text\\\" block needs a string \\\"text\\\", got number")},
    {"{\"type\":\"video\"}", REFUSED("t", "content[1]: unknown content block type \\\"video\\\"")},
    {"{\"type\":\"image\",\"mimeType\":\"image/png\"}",
     REFUSED("t", "content[1]: a \\\"image\\\" block needs a string \\\"data\\\", got none")},
    {"{\"type\":\"audio\",\"data\":\"AA\",\"mimeType\":null}",
     REFUSED("t", "content[1]: a \\\"audio\\\" block needs a string \\\"mimeType\\\", got null")},
    {"{\"type\":\"resource_link\",\"name\":\"n\"}",
     REFUSED("t", "content[1]: a \\\"resource_link\\\" block needs a string \\\"uri\\\", got none")},
    {"{\"type\":\"resource\",\"resource\":{\"text\":\"x\"}}",
     REFUSED("t", "content[1]: an embedded resource needs a string \\\"uri\\\", got none")},
    {"{\"type\":\"resource\",\"resource\":{\"uri\":\"x:\"}}",
     REFUSED("t", "content[1]: an embedded resource needs a string \\\"text\\\" or \\\"blob\\\"")},
    {"{\"type\":\"resource\"}", REFUSED("t", "content[1]: a \\\"resource\\\" block needs an object \\\"resource\\\"")},
};

START_TEST(blocks_the_schema_refuses_become_tool_errors)
{
    th_call *c = new_call("t", 0);
    ck_assert_int_eq(th_call_text(c, "fine"), TH_OK);
    json_object *b = json_tokener_parse(block_cases[_i].block);
    ck_assert_ptr_nonnull(b);
    ck_assert_int_eq(th_call_content(c, b), TH_ERR_VALUE);
    ck_finish(c, block_cases[_i].want);
}
END_TEST

/* What is no content block at all is a mistake at the call site: the
 * call says so, and what the handler built before and after stands. */
static const char *const not_blocks[] = {"[1]", "[{\"type\":\"text\",\"text\":\"x\"}]", "{\"text\":\"x\"}",
                                         "{\"type\":7,\"text\":\"x\"}", "{\"type\":null}", "\"text\"", NULL};

START_TEST(what_is_no_block_is_misuse_and_the_result_stands)
{
    th_call *c = new_call("t", 0);
    ck_assert_int_eq(th_call_text(c, "before"), TH_OK);
    json_object *b = not_blocks[_i] ? json_tokener_parse(not_blocks[_i]) : NULL;
    ck_assert(b || !not_blocks[_i]);
    ck_assert_int_eq(th_call_content(c, b), TH_ERR_MISUSE);
    ck_assert_int_eq(th_call_text(c, "after"), TH_OK);
    ck_finish(c, "{\"content\":[{\"type\":\"text\",\"text\":\"before\"},{\"type\":\"text\",\"text\":\"after\"}]}");
}
END_TEST

START_TEST(valid_blocks_and_structured_pass)
{
    th_call *c = new_call("t", 0);
    json_object *b = json_tokener_parse("{\"type\":\"text\",\"text\":\"a\\\"b\\n\",\"annotations\":"
                                        "{\"audience\":[\"user\"],\"priority\":0.5,\"x\":null,\"n\":-12}}");
    ck_assert_int_eq(th_call_content(c, b), TH_OK);
    ck_assert_int_eq(th_call_structured(c, json_tokener_parse("{\"k\":[1,2.5,true,null,\"\xe2\x82\xac\"]}")),
                     TH_OK);
    ck_finish(c, "{\"content\":[{\"type\":\"text\",\"text\":\"a\\\"b\\n\",\"annotations\":{\"audience\":[\"user\"],"
                 "\"priority\":0.5,\"x\":null,\"n\":-12}}],\"structuredContent\":{\"k\":[1,2.5,true,null,"
                 "\"\xe2\x82\xac\"]}}");
}
END_TEST

/* The size estimate is near the serialised size: at least it, and at most
 * a byte per member or element more. */
START_TEST(size_estimate_tracks_serialised_size)
{
    const char *text = "{\"a\":[1,-20,300,2.5,1e+300,true,false,null,\"x\\\"\\\\\\n\\u0001y\"],\"b\":{\"c\":{}},\"d\":[]}";
    json_object *v = json_tokener_parse(text);
    ck_assert_ptr_nonnull(v);
    size_t est = 0;
    th_buf why = {0};
    ck_assert(th_result_check_value(v, "v", &est, &why));
    size_t real = strlen(json_object_to_json_string_ext(v, PLAIN));
    ck_assert_msg(est >= real && est <= real + 16, "estimate %zu for %zu bytes", est, real);
    json_object_put(v);
}
END_TEST

/* A plain text block (checked without the walk) is sized as the walk
 * sizes it, and one that is not plain still gets the walk's checks. */
START_TEST(text_blocks_are_sized_as_the_walk_sizes_them)
{
    static const char *const blocks[] = {
        "{\"type\":\"text\",\"text\":\"\"}",
        "{\"type\":\"text\",\"text\":\"plain\"}",
        "{\"text\":\"q\\\" \\\\ \\n\\u0001 \u00e9\",\"type\":\"text\"}",
    };
    for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++) {
        json_object *b = json_tokener_parse(blocks[i]);
        ck_assert_ptr_nonnull(b);
        size_t quick = 0, walked = 0;
        th_buf why = {0};
        ck_assert(th_result_check_block(b, "content[0]", &quick, &why));
        ck_assert(th_result_check_value(b, "content[0]", &walked, &why));
        ck_assert_uint_eq(quick, walked);
        json_object_put(b);
    }
    /* Invalid UTF-8 in a text block: refused, with the walk's path. */
    json_object *b = json_object_new_object();
    json_object_object_add(b, "type", json_object_new_string("text"));
    json_object_object_add(b, "text", json_object_new_string_len("a\xff", 2));
    size_t n = 0;
    th_buf why = {0};
    ck_assert(!th_result_check_block(b, "content[0]", &n, &why));
    ck_assert_str_eq(why.data, "content[0].text: string is not valid UTF-8");
    free(why.data);
    json_object_put(b);
}
END_TEST

/* th_utf8_valid takes ASCII eight bytes at a time: a bad sequence, or a
 * good multi-byte one, at every position of strings of many lengths. */
START_TEST(utf8_checked_at_every_position)
{
    static const struct {
        const char *seq;
        bool valid;
    } seqs[] = {{"\xc3\xa9", true}, {"\xf0\x9f\x98\x80", true}, {"\xff", false}, {"\xc0\x80", false},
                {"\xed\xa0\x80", false}, {"\xc3", false}, {"\x80", false}};
    char t[64];
    for (size_t len = 0; len < 40; len++) {
        for (size_t at = 0; at <= len; at++) {
            for (size_t k = 0; k < sizeof seqs / sizeof seqs[0]; k++) {
                size_t n = strlen(seqs[k].seq);
                memset(t, 'a', len);
                memmove(t + at + n, t + at, len - at);
                memcpy(t + at, seqs[k].seq, n);
                ck_assert_msg(th_utf8_valid(t, len + n) == seqs[k].valid, "len %zu at %zu seq %zu", len, at, k);
            }
        }
    }
}
END_TEST

/* A string's estimate is its exact serialised size, escapes anywhere in
 * long and short strings included. */
START_TEST(string_estimates_are_exact)
{
    char t[300];
    for (size_t len = 0; len < sizeof t; len += len < 40 ? 1 : 37) {
        for (size_t at = 0; at <= len; at += 1 + len / 9) {
            memset(t, 'x', len);
            if (at < len)
                t[at] = "\"\\\n\x01\x1f/\x7f"[at % 7];
            json_object *o = json_object_new_string_len(t, (int)len);
            size_t est = 0;
            th_buf why = {0};
            ck_assert(th_result_check_value(o, "v", &est, &why));
            ck_assert_uint_eq(est, strlen(json_object_to_json_string_ext(o, PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)));
            json_object_put(o);
        }
    }
}
END_TEST

/* Deep trees, on a thread with a small stack as tool threads have: checking
 * and freeing must not recurse. DEEP levels of recursion would need several
 * times DEEP_STACK (a level is a few calls deep in json-c, 48+ bytes each);
 * 200,000 levels on 1 MiB took the ASan build past Check's 4 s under load. */
enum { DEEP = 40000, DEEP_STACK = 256 * 1024 };
static json_object *chain(int depth)
{
    json_object *v = json_object_new_int(1);
    for (int i = 0; i < depth; i++) {
        if (i % 2) {
            v = obj1("k", v);
        } else {
            json_object *a = json_object_new_array();
            json_object_array_add(a, v);
            v = a;
        }
    }
    return v;
}

static void *deep_on_small_stack(void *arg)
{
    (void)arg;
    th_call *c = new_call("deep", 0);
    ck_assert_int_eq(th_call_structured(c, obj1("tree", chain(DEEP))), TH_ERR_VALUE);
    json_object *b = obj1("type", json_object_new_string("text"));
    json_object_object_add(b, "text", json_object_new_string("x"));
    json_object_object_add(b, "_meta", chain(DEEP));
    ck_assert_int_eq(th_call_content(c, b), TH_ERR_VALUE);
    json_object *r = th_call_finish(c, TH_OK);
    th_call_free(c);
    json_object *t = json_object_array_get_idx(json_object_object_get(r, "content"), 0);
    const char *text = json_object_get_string(json_object_object_get(t, "text"));
    ck_assert_msg(strncmp(text, "Tool 'deep' returned an invalid result: structuredContent.tree.k[0].k[0]", 72) == 0,
                  "%s", text);
    ck_assert_msg(strstr(text, ": nested deeper than 128 levels") != NULL, "%s", text);
    json_object_put(r);
    /* Exactly the limit passes. */
    c = new_call("deep", 0);
    ck_assert_int_eq(th_call_structured(c, obj1("t", chain(TH_RESULT_MAX_DEPTH - 1))), TH_OK);
    r = th_call_finish(c, TH_OK);
    th_call_free(c);
    ck_assert_ptr_null(json_object_object_get(r, "isError"));
    json_object_put(r);
    th_result_free(chain(DEEP + 1));
    return NULL;
}

/* A text block with LEN bytes of TEXT, its members in either order. */
static json_object *text_block(const char *text, size_t len, bool text_first)
{
    json_object *b = json_object_new_object();
    if (text_first)
        json_object_object_add(b, "text", json_object_new_string_len(text, (int)len));
    json_object_object_add(b, "type", json_object_new_string("text"));
    if (!text_first)
        json_object_object_add(b, "text", json_object_new_string_len(text, (int)len));
    return b;
}

/* Fill C as shape K of finish_text_prints_what_finish_returns: blocks of
 * every ASCII byte, no text, a NUL inside, members in either order; an
 * image; no block at all; eleven blocks; blocks not quite plain text;
 * isError on some. */
static void fill(th_call *c, int k)
{
    char every[160];
    size_t n = 0;
    for (int ch = 1; ch < 0x80; ch++) /* controls, quote, backslash, slash, DEL */
        every[n++] = (char)ch;
    memcpy(every + n, "caf\xc3\xa9 \xf0\x9f\x98\x80", 10);
    n += 10;
    if (k == 0 || k == 1) {
        ck_assert_int_eq(th_call_content(c, text_block(every, n, false)), TH_OK);
        ck_assert_int_eq(th_call_content(c, text_block("", 0, false)), TH_OK);
        ck_assert_int_eq(th_call_content(c, text_block("a\0b", 3, true)), TH_OK);
    } else if (k == 2) {
        ck_assert_int_eq(th_call_image(c, "image/png", "AA=="), TH_OK);
        ck_assert_int_eq(th_call_text(c, "after"), TH_OK);
    } else if (k == 5) {
        /* Text blocks with one member more, and with a text that has a
         * serializer of its own: written as json-c writes them. */
        json_object *b = text_block("x", 1, false);
        json_object_object_add(b, "annotations", json_tokener_parse("{\"priority\":1}"));
        ck_assert_int_eq(th_call_content(c, b), TH_OK);
        json_object *raw = json_object_new_string("x");
        json_object_set_serializer(raw, json_object_userdata_to_json_string, (void *)"\"kept\\u0078\"", NULL);
        b = json_object_new_object();
        json_object_object_add(b, "type", json_object_new_string("text"));
        json_object_object_add(b, "text", raw);
        ck_assert_int_eq(th_call_content(c, b), TH_OK);
    } else if (k == 4) {
        /* More blocks than a call keeps inside itself: in order still. */
        for (int i = 0; i < 11; i++) {
            char t[24];
            snprintf(t, sizeof t, "block %d", i);
            ck_assert_int_eq(th_call_text(c, t), TH_OK);
        }
    }
    if (k == 1 || k == 3)
        th_call_mark_error(c);
}

/*
** th_call_finish_text writes, for the results it takes, byte for byte what
** json-c prints for the object th_call_finish returns for the same call: a
** worker sends the one, the host would have sent the other.
*/
START_TEST(finish_text_prints_what_finish_returns)
{
    th_call *a = new_call("t", 0), *b = new_call("t", 0);
    fill(a, _i);
    fill(b, _i);
    th_buf text = {0};
    ck_assert(th_buf_append(&text, "x", 1)); /* appended to what is there */
    ck_assert(th_call_finish_text(a, TH_OK, &text));
    json_object *r = th_call_finish(b, TH_OK);
    const char *want = json_object_to_json_string_ext(r, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    ck_assert_uint_eq(text.len, 1 + strlen(want));
    ck_assert_str_eq(text.data + 1, want);
    json_object_put(r);
    free(text.data);
    th_call_free(a);
    th_call_free(b);
}
END_TEST

/* Every other result is left to th_call_finish, the buffer as it was. */
/* A call in its caller's memory works as one of its own, names longer
 * than its own room included, and its end leaves that memory alone (the
 * sanitizers and valgrind see a free() of it as an error). */
START_TEST(call_in_callers_memory)
{
    static const char *const names[] = {"t", "a_tool_name_of_more_than_forty_eight_bytes_for_the_heap"};
    for (size_t i = 0; i < 2; i++) {
        max_align_t *mem = malloc(th_call_size);
        ck_assert_ptr_nonnull(mem);
        memset(mem, 0xa5, th_call_size); /* not zeroed: the call clears it */
        th_call_hooks hooks = {0};
        th_call *c = th_call_new_in(mem, names[i], &hooks);
        ck_assert_ptr_eq(c, (th_call *)mem);
        ck_assert_str_eq(th_call_tool_name(c), names[i]);
        for (int k = 0; k < 6; k++)
            ck_assert_int_eq(th_call_text(c, "x"), TH_OK);
        th_buf text = {0};
        ck_assert(th_call_finish_text(c, TH_OK, &text));
        ck_assert_str_eq(text.data, "{\"content\":[{\"type\":\"text\",\"text\":\"x\"},{\"type\":\"text\",\"text\":\"x\"},"
                                    "{\"type\":\"text\",\"text\":\"x\"},{\"type\":\"text\",\"text\":\"x\"},"
                                    "{\"type\":\"text\",\"text\":\"x\"},{\"type\":\"text\",\"text\":\"x\"}]}");
        th_call_free(c);
        free(text.data);
        free(mem);
    }
}
END_TEST

START_TEST(finish_text_leaves_other_results_to_finish)
{
    for (int k = 0; k < 4; k++) {
        th_call *c = new_call("t", 0);
        th_rc rc = TH_OK;
        if (k == 0)
            ck_assert_int_eq(th_call_structured(c, json_tokener_parse("{\"a\":1}")), TH_OK);
        else if (k == 1)
            rc = TH_ERR_IO; /* the host words the failure */
        else if (k == 2)
            th_call_content(c, json_tokener_parse("{\"type\":\"text\"}")); /* refused: no text */
        else
            th_call_set_raw(c, th_raw_result_new("{\"content\":[]}", 14));
        th_buf text = {0};
        ck_assert(th_buf_append(&text, "x", 1));
        ck_assert_msg(!th_call_finish_text(c, rc, &text), "case %d was taken", k);
        ck_assert_uint_eq(text.len, 1);
        json_object *r = th_call_finish(c, rc);
        ck_assert_ptr_nonnull(r);
        json_object_put(r);
        free(text.data);
        th_call_free(c);
    }
}
END_TEST

START_TEST(deep_values_are_refused_and_freed_without_recursion)
{
    pthread_attr_t attr;
    pthread_t t;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, DEEP_STACK);
    ck_assert_int_eq(pthread_create(&t, &attr, deep_on_small_stack, NULL), 0);
    pthread_join(t, NULL);
    pthread_attr_destroy(&attr);
}
END_TEST

START_TEST(results_past_the_size_limit_become_tool_errors)
{
    char *big = malloc(5001);
    memset(big, 'x', 5000);
    big[5000] = '\0';
    th_call *c = new_call("big", 4096);
    ck_assert_int_eq(th_call_text(c, big), TH_ERR_VALUE);
    ck_finish(c, "{\"content\":[{\"type\":\"text\",\"text\":\"Tool 'big' returned 5000 bytes, more than "
                 "--max-result-bytes (4096)\"}],\"isError\":true}");
    /* Many small blocks add up the same way. */
    c = new_call("big", 4096);
    big[1000] = '\0';
    th_rc rc = TH_OK;
    int n = 0;
    while (rc == TH_OK && n < 10)
        rc = th_call_text(c, big), n++;
    ck_assert_int_eq(rc, TH_ERR_VALUE);
    ck_assert_int_eq(n, 4);
    char *got = finish(c, TH_OK);
    ck_assert_msg(strstr(got, "more than --max-result-bytes (4096)") && strstr(got, "\"isError\":true"), "%s", got);
    free(got);
    /* Structured content counts twice when it is also sent as text. */
    c = new_call("big", 4096);
    big[1000] = 'x';
    big[3000] = '\0';
    ck_assert_int_eq(th_call_structured(c, obj1("s", json_object_new_string(big))), TH_ERR_VALUE);
    got = finish(c, TH_OK);
    ck_assert_msg(strstr(got, "more than --max-result-bytes (4096)"), "%s", got);
    free(got);
    /* Under the limit nothing changes. */
    c = new_call("big", 4096);
    big[1500] = '\0';
    ck_assert_int_eq(th_call_structured(c, obj1("s", json_object_new_string(big))), TH_OK);
    got = finish(c, TH_OK);
    ck_assert_msg(!strstr(got, "isError"), "%s", got);
    free(got);
    free(big);
}
END_TEST

/* ---- use after end -------------------------------------------------------- */

static int misuse_logs;
static char misuse_line[512];

static void count_misuse(th_log_level level, const char *line, void *ctx)
{
    (void)ctx;
    if (level == TH_LOG_ERROR && strstr(line, "after the handler returned")) {
        misuse_logs++;
        snprintf(misuse_line, sizeof misuse_line, "%s", line);
    }
}

/* Every public function refuses an ended handle, also when its slot now
 * serves another call; ownership-taking ones still free what they got. */
START_TEST(an_ended_handle_is_refused)
{
    misuse_logs = 0;
    th_log_set_sink(count_misuse, NULL);
    th_call *c = new_call("resize", 0);
    th_call *h = th_call_handle(c);
    ck_assert_ptr_ne(h, c);
    ck_assert_ptr_eq(th_call_handle(c), h); /* one handle per call */
    ck_assert_int_eq(th_call_text(h, "live"), TH_OK);
    ck_assert_str_eq(th_call_tool_name(h), "resize");
    ck_assert(!th_call_cancelled(h));
    char *got = finish(c, TH_OK); /* ends the handle, frees the call */
    ck_assert_str_eq(got, "{\"content\":[{\"type\":\"text\",\"text\":\"live\"}]}");
    free(got);

    th_call *c2 = new_call("other", 0);
    th_call *h2 = th_call_handle(c2); /* most likely the same slot, next generation */
    ck_assert_ptr_ne(h2, h);
    ck_assert_int_eq(th_call_text(h, "ghost"), TH_ERR_MISUSE);
    ck_assert_int_eq(th_call_textf(h, "ghost %d", 1), TH_ERR_MISUSE);
    ck_assert_int_eq(th_call_error(h, "ghost"), TH_ERR_MISUSE);
    ck_assert_int_eq(th_call_structured(h, json_object_new_object()), TH_ERR_MISUSE); /* freed */
    ck_assert_int_eq(th_call_content(h, json_object_new_object()), TH_ERR_MISUSE);    /* freed */
    ck_assert_int_eq(th_call_image(h, "image/png", "AAAA"), TH_ERR_MISUSE);
    ck_assert_int_eq(th_call_audio(h, "audio/wav", "AAAA"), TH_ERR_MISUSE);
    ck_assert_int_eq(th_call_resource_link(h, "file:///x", "x", NULL, NULL), TH_ERR_MISUSE);
    ck_assert_int_eq(th_call_resource_text(h, "file:///x", NULL, "x"), TH_ERR_MISUSE);
    ck_assert_int_eq(th_call_resource_blob(h, "file:///x", NULL, "AAAA"), TH_ERR_MISUSE);
    ck_assert_int_eq(th_call_progress(h, 1, 2, NULL), TH_ERR_MISUSE);
    ck_assert_int_eq(th_call_log(h, TH_LOG_ERROR, "ghost"), TH_ERR_MISUSE);
    ck_assert(th_call_cancelled(h)); /* a thread left behind must stop */
    ck_assert_str_eq(th_call_tool_name(h), "");
    ck_assert(!th_call_is_error(h));
    ck_assert_int_eq(misuse_logs, 1);
    ck_assert_msg(strstr(misuse_line, "tool 'resize': th_call_text()"), "%s", misuse_line);
    /* A made-up handle is refused as well. */
    ck_assert_int_eq(th_call_text((th_call *)(uintptr_t)0x7fff0001, "x"), TH_ERR_MISUSE);

    ck_assert_int_eq(th_call_text(h2, "fine"), TH_OK);
    ck_assert_str_eq(th_call_tool_name(h2), "other");
    got = finish(c2, TH_OK);
    ck_assert_msg(strstr(got, "fine") && !strstr(got, "ghost"), "%s", got);
    free(got);
    th_log_set_sink(NULL, NULL);
}
END_TEST

/* A made-up handle naming a free slot's next generation resolves to
 * nothing and leaves the slot as it was: reopening and closing it again
 * does not wait for a thread that never left. */
START_TEST(a_made_up_handle_for_a_free_slot_is_refused)
{
    int obj;
    th_handle h = th_handle_open(&obj, TH_HANDLE_CALL, "x");
    ck_assert(h != 0);
    th_handle_close(h);
    th_handle made = h + ((th_handle)1 << 21); /* same slot, next generation */
    ck_assert_ptr_null(th_handle_enter(made, TH_HANDLE_CALL));
    th_handle open[4096];
    size_t n = 0;
    bool same = false;
    while (!same && n < 4096) {
        open[n] = th_handle_open(&obj, TH_HANDLE_CALL, "y");
        same = ((open[n] >> 1) & 0xfffff) == ((h >> 1) & 0xfffff);
        n++;
    }
    ck_assert(same);
    ck_assert_ptr_eq(th_handle_enter(open[n - 1], TH_HANDLE_CALL), &obj);
    th_handle_leave(open[n - 1]);
    for (size_t i = 0; i < n; i++)
        th_handle_close(open[i]); /* would spin for ever on a leaked count */
}
END_TEST

static atomic_int landed;

static void *hammer(void *p)
{
    th_call *h = p;
    while (th_call_text(h, "x") == TH_OK)
        atomic_fetch_add(&landed, 1);
    return NULL;
}

/* A thread the handler left behind goes on using the handle while the call
 * ends: each use either lands before the end or is refused; none touches
 * freed memory (the sanitizer and valgrind runs check that). */
START_TEST(an_ending_handle_waits_for_threads_inside)
{
    th_log_set_sink(count_misuse, NULL);
    for (int round = 0; round < 20; round++) {
        atomic_store(&landed, 0);
        th_call *c = new_call("race", 0);
        th_call *h = th_call_handle(c);
        pthread_t t;
        ck_assert_int_eq(pthread_create(&t, NULL, hammer, h), 0);
        while (atomic_load(&landed) < 10)
            sched_yield();
        json_object *r = th_call_finish(c, TH_OK); /* the end waits for the thread to leave */
        size_t n = json_object_array_length(json_object_object_get(r, "content"));
        th_call_free(c);
        pthread_join(t, NULL);
        ck_assert_uint_eq(n, (size_t)atomic_load(&landed));
        json_object_put(r);
    }
    th_log_set_sink(NULL, NULL);
}
END_TEST

static Suite *callctx_suite(void)
{
    Suite *s = suite_create("callctx");
    TCase *tc = tcase_create("wire");
    tcase_add_test(tc, utf8_repair_replaces_each_bad_byte);
    tcase_add_test(tc, utf8_valid_judges_every_offset_of_long_ascii_runs);
    tcase_add_test(tc, c_strings_arrive_repaired);
    tcase_add_test(tc, non_finite_progress_is_refused_and_logged_once);
    tcase_add_loop_test(tc, structured_values_json_cannot_carry_become_tool_errors, 0,
                        (int)(sizeof structured_cases / sizeof structured_cases[0]));
    tcase_add_loop_test(tc, blocks_the_schema_refuses_become_tool_errors, 0,
                        (int)(sizeof block_cases / sizeof block_cases[0]));
    tcase_add_loop_test(tc, what_is_no_block_is_misuse_and_the_result_stands, 0,
                        (int)(sizeof not_blocks / sizeof not_blocks[0]));
    tcase_add_test(tc, a_refused_value_leaves_shared_parts_alone);
    tcase_add_test(tc, valid_blocks_and_structured_pass);
    tcase_add_test(tc, size_estimate_tracks_serialised_size);
    tcase_add_test(tc, deep_values_are_refused_and_freed_without_recursion);
    tcase_add_test(tc, results_past_the_size_limit_become_tool_errors);
    tcase_add_test(tc, an_ended_handle_is_refused);
    tcase_add_test(tc, an_ending_handle_waits_for_threads_inside);
    tcase_add_test(tc, a_made_up_handle_for_a_free_slot_is_refused);
    tcase_add_test(tc, text_blocks_are_sized_as_the_walk_sizes_them);
    tcase_add_test(tc, string_estimates_are_exact);
    tcase_add_test(tc, utf8_checked_at_every_position);
    tcase_add_loop_test(tc, finish_text_prints_what_finish_returns, 0, 6);
    tcase_add_test(tc, finish_text_leaves_other_results_to_finish);
    tcase_add_test(tc, call_in_callers_memory);
    suite_add_tcase(s, tc);
    return s;
}

static void cleanup(void)
{
    json_object_put(sent);
}

TH_CHECK_MAIN_WITH(callctx_suite, th_check_nothing, cleanup)
