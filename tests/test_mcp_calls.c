/* SPDX-License-Identifier: MIT */
/*
** test_mcp_calls.c: integration tests of tools/list and tools/call against
** the real toolhost: order and pagination, echo's exact text, argument and
** tool errors, every content kind, structured content, progress, calls
** running concurrently, and cancellation.
*/
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "protocol/jsonrpc.h"
#include "mcp_harness.h"
#include "check_main.h"

/* The era a test runs in: _i of a loop test. Legacy sessions initialize. */
enum { LEGACY, MODERN };

static mh_proc *start_era(int era, const char *opt, const char *val)
{
    mh_proc *p = opt ? mh_start(opt, val, NULL) : mh_start(NULL);
    if (era == LEGACY)
        mh_initialize(p, "2025-11-25");
    return p;
}

/* ",\"_meta\":{...}" for the era, with EXTRA members (e.g. a progressToken). */
static const char *meta(int era, const char *extra)
{
    static char buf[512];
    if (era == MODERN)
        snprintf(buf, sizeof buf, ",\"_meta\":{" MH_MODERN_META_FIELDS "%s%s}", *extra ? "," : "", extra);
    else if (*extra)
        snprintf(buf, sizeof buf, ",\"_meta\":{%s}", extra);
    else
        buf[0] = '\0';
    return buf;
}

/* Send tools/call NAME with ARGS_JSON (NULL: no "arguments") and EXTRA meta. */
static void send_call(mh_proc *p, int era, const char *id, const char *name, const char *args_json,
                      const char *extra_meta)
{
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\"%s%s%s}}", id,
            name, args_json ? ",\"arguments\":" : "", args_json ? args_json : "", meta(era, extra_meta));
}

/* Request ids are never reused within a session (the specification forbids
 * it); each test runs in its own process, so a counter suffices. */
static int last_id = 1000;

static json_object *call(mh_proc *p, int era, const char *name, const char *args_json)
{
    char id[16];
    snprintf(id, sizeof id, "%d", ++last_id);
    send_call(p, era, id, name, args_json, "");
    json_object *o = mh_next(p);
    MH_ASSERT_ID(o, id);
    return o;
}

static json_object *list_page(mh_proc *p, int era, const char *cursor_json)
{
    char cursor[256] = "";
    if (cursor_json)
        snprintf(cursor, sizeof cursor, "\"cursor\":%s%s", cursor_json, era == MODERN ? "," : "");
    const char *m = meta(era, "");
    char id[16];
    snprintf(id, sizeof id, "%d", ++last_id);
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"tools/list\",\"params\":{%s%s}}", id, cursor,
            *m ? m + 1 : "");
    json_object *o = mh_next(p);
    MH_ASSERT_ID(o, id);
    return o;
}

/* ---- tools/list --------------------------------------------------------------- */

START_TEST(tools_are_listed_in_registration_order)
{
    mh_proc *p = start_era(_i, NULL, NULL);
    json_object *o = list_page(p, _i, NULL);
    MH_ASSERT_RESULT(o);
    MH_ASSERT_ABSENT(o, "result nextCursor");
    ck_assert_uint_eq(mh_len(o, "result tools"), mh_tool_count);
    for (size_t i = 0; i < mh_tool_count; i++) {
        char path[64];
        snprintf(path, sizeof path, "result tools %zu name", i);
        MH_ASSERT_STR(o, path, mh_tool_order[i]);
        json_object *t = mh_at(o, "result tools");
        t = json_object_array_get_idx(t, i);
        ck_assert_msg(mh_str(t, "description") && strlen(mh_str(t, "description")) >= 10, "%s", mh_json(t));
        MH_ASSERT_STR(t, "inputSchema type", "object");
    }
    /* The tool's own description and schema, unchanged. */
    json_object *echo = json_object_array_get_idx(mh_at(o, "result tools"), mh_tool_count - 1);
    MH_ASSERT_STR(echo, "description", "Return the given text unchanged, as one text block.");
    MH_ASSERT_JSON_EQ(mh_at(echo, "inputSchema"),
                      "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\","
                      "\"description\":\"Text to echo back\"}},\"required\":[\"text\"],"
                      "\"additionalProperties\":false}");
    MH_ASSERT_JSON_EQ(mh_at(echo, "annotations"),
                      "{\"readOnlyHint\":true,\"idempotentHint\":true,\"openWorldHint\":false}");
    json_object_put(o);
    mh_finish(p);
}
END_TEST

START_TEST(tools_list_is_the_same_every_time)
{
    char *first = NULL;
    for (int run = 0; run < 2; run++) {
        mh_proc *p = start_era(MODERN, NULL, NULL);
        for (int again = 0; again < 2; again++) {
            json_object *o = list_page(p, MODERN, NULL);
            const char *tools = mh_json(mh_at(o, "result tools"));
            if (!first)
                first = strdup(tools);
            else
                ck_assert_str_eq(tools, first);
            json_object_put(o);
        }
        mh_finish(p);
    }
    free(first);
}
END_TEST

/* Follow nextCursor from the first page; return every name in order. */
static json_object *all_pages(mh_proc *p, int era, size_t page_size, size_t *pages)
{
    json_object *names = json_object_new_array();
    char *cursor = NULL;
    *pages = 0;
    for (;;) {
        ck_assert_msg(*pages <= mh_tool_count, "the cursor chain does not end");
        json_object *o = list_page(p, era, cursor);
        free(cursor);
        cursor = NULL;
        MH_ASSERT_RESULT(o);
        (*pages)++;
        size_t n = mh_len(o, "result tools");
        ck_assert_msg(n >= 1 && n <= page_size, "page of %zu tools with page size %zu: %s", n, page_size,
                      mh_json(o));
        for (size_t i = 0; i < n; i++) {
            char path[64];
            snprintf(path, sizeof path, "result tools %zu name", i);
            json_object_array_add(names, json_object_new_string(mh_str(o, path)));
        }
        if (era == MODERN) {
            MH_ASSERT_STR(o, "result resultType", "complete");
            MH_ASSERT_HAS(o, "result ttlMs");
        }
        if (!mh_has(o, "result nextCursor")) {
            json_object_put(o);
            break;
        }
        const char *next = mh_str(o, "result nextCursor");
        ck_assert_msg(next != NULL, "nextCursor must be a string: %s", mh_json(o));
        ck_assert_msg(n == page_size, "a short page before the last: %s", mh_json(o));
        json_object *nj = json_object_new_string(next);
        cursor = strdup(mh_json(nj));
        json_object_put(nj);
        json_object_put(o);
    }
    return names;
}

static void assert_names_in_order(json_object *names)
{
    ck_assert_msg(json_object_array_length(names) == mh_tool_count, "pages hold %s", mh_json(names));
    for (size_t i = 0; i < mh_tool_count; i++)
        ck_assert_str_eq(json_object_get_string(json_object_array_get_idx(names, i)), mh_tool_order[i]);
}

START_TEST(pagination_covers_every_tool_once)
{
    mh_proc *p = start_era(_i, "--page-size", "2");
    size_t pages;
    json_object *names = all_pages(p, _i, 2, &pages);
    assert_names_in_order(names);
    ck_assert_uint_eq(pages, (mh_tool_count + 1) / 2);
    json_object_put(names);
    /* The chain can be walked again: cursors are not single-use. */
    names = all_pages(p, _i, 2, &pages);
    assert_names_in_order(names);
    json_object_put(names);
    mh_finish(p);
}
END_TEST

START_TEST(pagination_with_an_exact_multiple)
{
    /* 9 tools in pages of 3: the third page is full and still the last. */
    mh_proc *p = start_era(MODERN, "--page-size", "3");
    size_t pages;
    json_object *names = all_pages(p, MODERN, 3, &pages);
    assert_names_in_order(names);
    ck_assert_uint_eq(pages, 3);
    json_object_put(names);
    mh_finish(p);
}
END_TEST

START_TEST(bad_cursor_is_invalid_params)
{
    static const char *const cursors[] = {"\"bogus\"", "\"\"", "\"th1:99999\"", "\"th1:-1\"", "\"th1:2x\"",
                                          "5", "{}", "[]", "true"};
    mh_proc *p = start_era(_i, "--page-size", "2");
    for (size_t i = 0; i < sizeof cursors / sizeof cursors[0]; i++) {
        json_object *o = list_page(p, _i, cursors[i]);
        ck_assert_msg(mh_has(o, "error"), "cursor %s accepted: %s", cursors[i], mh_json(o));
        MH_ASSERT_ERROR(o, -32602);
        json_object_put(o);
    }
    json_object *o = list_page(p, _i, NULL);
    MH_ASSERT_RESULT(o);
    json_object_put(o);
    mh_finish(p);
}
END_TEST

/* ---- tools/call: echo ------------------------------------------------------------ */

/* JSON string literals and the text each must come back as. */
static const char *const echo_texts[] = {
    "\"hello\"",
    "\"\"",
    "\"h\\u00e9llo w\\u00f6rld \\u2713 \\u65e5\\u672c\\u8a9e \\ud83d\\ude00\"",
    "\"h\xc3\xa9llo raw UTF-8 \xe2\x9c\x93 \xf0\x9f\x98\x80\"",
    "\"quote \\\" backslash \\\\ slash / \\/ newline \\n cr \\r tab \\t ctrl \\u0001 \\u001f del \\u007f\"",
    "\"{\\\"jsonrpc\\\":\\\"2.0\\\",\\\"id\\\":1,\\\"result\\\":{}}\\n{}\"",
    "\"line\\u2028separator and \\u2029 paragraph\"",
};

START_TEST(echo_returns_exactly_the_text)
{
    mh_proc *p = start_era(MODERN, NULL, NULL);
    for (size_t i = 0; i < sizeof echo_texts / sizeof echo_texts[0]; i++) {
        char args[1024];
        snprintf(args, sizeof args, "{\"text\":%s}", echo_texts[i]);
        json_object *o = call(p, MODERN, "echo", args);
        json_object *want = mh_parse(echo_texts[i]);
        ck_assert_ptr_nonnull(want);
        ck_assert_uint_eq(mh_len(o, "result content"), 1);
        MH_ASSERT_STR(o, "result content 0 type", "text");
        ck_assert_msg(json_object_equal(mh_at(o, "result content 0 text"), want), "sent %s, got %s",
                      echo_texts[i], mh_json(o));
        ck_assert_msg(!json_object_get_boolean(mh_at(o, "result isError")), "%s", mh_json(o));
        json_object_put(want);
        json_object_put(o);
    }
    mh_finish(p);
}
END_TEST

START_TEST(echo_keeps_an_embedded_nul)
{
    mh_proc *p = start_era(MODERN, NULL, NULL);
    json_object *o = call(p, MODERN, "echo", "{\"text\":\"before\\u0000after\"}");
    json_object *text = mh_at(o, "result content 0 text");
    ck_assert_msg(json_object_is_type(text, json_type_string) && json_object_get_string_len(text) == 12 &&
                      memcmp(json_object_get_string(text), "before\0after", 12) == 0,
                  "sent \"before\\u0000after\", got %s", mh_json(o));
    json_object_put(o);
    mh_finish(p);
}
END_TEST

START_TEST(echo_in_every_legacy_version)
{
    static const char *const versions[] = {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"};
    mh_proc *p = mh_start(NULL);
    mh_initialize(p, versions[_i]);
    json_object *o = call(p, LEGACY, "echo", "{\"text\":\"legacy\"}");
    MH_ASSERT_JSON_EQ(mh_at(o, "result"), "{\"content\":[{\"type\":\"text\",\"text\":\"legacy\"}]}");
    json_object_put(o);
    mh_finish(p);
}
END_TEST

START_TEST(echo_with_a_large_text)
{
    mh_proc *p = start_era(MODERN, NULL, NULL);
    size_t n = 1000000;
    char *args = malloc(n + 32);
    ck_assert(args != NULL);
    strcpy(args, "{\"text\":\"");
    size_t h = strlen(args);
    for (size_t i = 0; i < n; i++)
        args[h + i] = (char)('a' + i % 26);
    strcpy(args + h + n, "\"}");
    json_object *o = call(p, MODERN, "echo", args);
    const char *text = mh_str(o, "result content 0 text");
    ck_assert_msg(text && strlen(text) == n && memcmp(text, args + h, n) == 0, "a 1 MB text did not come back");
    json_object_put(o);
    free(args);
    mh_finish(p);
}
END_TEST

/* ---- tools/call: arguments and errors ------------------------------------------------ */

START_TEST(absent_arguments_are_an_empty_object)
{
    mh_proc *p = start_era(_i, NULL, NULL);
    /* logger needs nothing: it runs. */
    send_call(p, _i, "1", "logger", NULL, "");
    json_object *o = mh_await(p, "1", NULL);
    MH_ASSERT_STR(o, "result content 0 text", "logged 8 lines");
    json_object_put(o);
    /* echo needs "text": {} fails its schema, as a tool error the model can read. */
    o = call(p, _i, "echo", NULL);
    MH_ASSERT_RESULT(o);
    MH_ASSERT_TRUE(o, "result isError");
    const char *msg = mh_str(o, "result content 0 text");
    ck_assert_msg(msg && strstr(msg, "text"), "the error does not name the missing argument: %s", mh_json(o));
    json_object_put(o);
    mh_finish(p);
}
END_TEST

START_TEST(arguments_that_are_not_an_object_are_invalid_params)
{
    /* Each refusal names the type that was given. */
    static const char *const bad[][2] = {
        {"[]", "array"}, {"[{\"text\":\"x\"}]", "array"}, {"\"text\"", "string"}, {"5", "int"}, {"true", "boolean"}};
    mh_proc *p = start_era(_i, NULL, NULL);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_object *o = call(p, _i, "echo", bad[i][0]);
        ck_assert_msg(mh_has(o, "error"), "arguments %s: %s", bad[i][0], mh_json(o));
        MH_ASSERT_ERROR(o, -32602);
        char want[128];
        snprintf(want, sizeof want, "Invalid params: \"arguments\" must be an object, got %s", bad[i][1]);
        MH_ASSERT_STR(o, "error message", want);
        json_object_put(o);
    }
    mh_finish(p);
}
END_TEST

START_TEST(arguments_failing_the_schema_are_a_tool_error)
{
    mh_proc *p = start_era(_i, NULL, NULL);
    static const char *const bad[] = {"{\"text\":5}", "{\"text\":\"x\",\"extra\":1}", "{\"text\":null}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_object *o = call(p, _i, "echo", bad[i]);
        MH_ASSERT_RESULT(o);
        MH_ASSERT_TRUE(o, "result isError");
        ck_assert_msg(mh_str(o, "result content 0 text") != NULL, "%s", mh_json(o));
        json_object_put(o);
    }
    mh_finish(p);
}
END_TEST

START_TEST(unknown_tool_is_invalid_params)
{
    mh_proc *p = start_era(_i, NULL, NULL);
    json_object *o = call(p, _i, "nonexistent", "{}");
    MH_ASSERT_ERROR(o, -32602);
    MH_ASSERT_STR(o, "error message", "Unknown tool: nonexistent");
    json_object_put(o);
    /* Names are case-sensitive. */
    o = call(p, _i, "Echo", "{\"text\":\"x\"}");
    MH_ASSERT_ERROR(o, -32602);
    MH_ASSERT_STR(o, "error message", "Unknown tool: Echo");
    json_object_put(o);
    mh_finish(p);
}
END_TEST

START_TEST(missing_or_bad_tool_name_is_invalid_params)
{
    mh_proc *p = start_era(_i, NULL, NULL);
    static const char *const members[] = {"", "\"name\":5", "\"name\":null", "\"arguments\":{}",
                                          "\"name\":[\"echo\"]"};
    for (size_t i = 0; i < sizeof members / sizeof members[0]; i++) {
        const char *sep = *members[i] && _i == MODERN ? "," : "";
        json_object *o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{%s%s%s}}",
                                members[i], sep, _i == MODERN ? MH_MODERN_META : "");
        MH_ASSERT_ID(o, "3");
        MH_ASSERT_ERROR(o, -32602);
        json_object_put(o);
    }
    mh_finish(p);
}
END_TEST

START_TEST(handler_error_is_a_result_with_its_message)
{
    mh_proc *p = start_era(_i, NULL, NULL);
    json_object *o = call(p, _i, "failer", "{\"reason\":\"the widget is broken\"}");
    MH_ASSERT_RESULT(o);
    MH_ASSERT_TRUE(o, "result isError");
    MH_ASSERT_JSON_EQ(mh_at(o, "result content"),
                      "[{\"type\":\"text\",\"text\":\"failer could not comply: the widget is broken\"}]");
    json_object_put(o);
    /* th_call_error() and a failing return: one message, not two. */
    o = call(p, _i, "failer", "{\"reason\":\"twice\",\"also_fail\":true}");
    MH_ASSERT_TRUE(o, "result isError");
    MH_ASSERT_JSON_EQ(mh_at(o, "result content"),
                      "[{\"type\":\"text\",\"text\":\"failer could not comply: twice\"}]");
    json_object_put(o);
    mh_finish(p);
}
END_TEST

START_TEST(handler_failure_without_a_message_names_the_tool)
{
    mh_proc *p = start_era(_i, NULL, NULL);
    json_object *o = call(p, _i, "failer_bare", "{}");
    MH_ASSERT_RESULT(o);
    MH_ASSERT_TRUE(o, "result isError");
    ck_assert_uint_eq(mh_len(o, "result content"), 1);
    MH_ASSERT_STR(o, "result content 0 type", "text");
    const char *text = mh_str(o, "result content 0 text");
    ck_assert_msg(text && strstr(text, "failer_bare"), "the message does not name the tool: %s", mh_json(o));
    json_object_put(o);
    mh_finish(p);
}
END_TEST

/* ---- tools/call: content ---------------------------------------------------------------- */

START_TEST(rich_content_blocks_come_back_exactly)
{
    mh_proc *p = start_era(_i, NULL, NULL);
    json_object *o = call(p, _i, "rich", "{}");
    MH_ASSERT_RESULT(o);
    MH_ASSERT_ABSENT(o, "result isError");
    MH_ASSERT_ABSENT(o, "result structuredContent");
    MH_ASSERT_JSON_EQ(
        mh_at(o, "result content"),
        "[{\"type\":\"text\",\"text\":\"rich text\"},"
        "{\"type\":\"image\",\"data\":\"iVBORw0KGgo=\",\"mimeType\":\"image/png\"},"
        "{\"type\":\"audio\",\"data\":\"UklGRg==\",\"mimeType\":\"audio/wav\"},"
        "{\"type\":\"resource_link\",\"uri\":\"file:///tmp/rich.txt\",\"name\":\"rich.txt\","
        "\"description\":\"A linked file\",\"mimeType\":\"text/plain\"},"
        "{\"type\":\"resource_link\",\"uri\":\"https://example.com/x\",\"name\":\"x\"},"
        "{\"type\":\"resource\",\"resource\":{\"uri\":\"test://rich/text\",\"mimeType\":\"text/plain\","
        "\"text\":\"embedded text\"}},"
        "{\"type\":\"resource\",\"resource\":{\"uri\":\"test://rich/blob\",\"blob\":\"AAEC\"}},"
        "{\"type\":\"text\",\"text\":\"annotated\",\"annotations\":{\"audience\":[\"user\"],\"priority\":0.5}}]");
    json_object_put(o);
    mh_finish(p);
}
END_TEST

START_TEST(structured_content_is_also_sent_as_text)
{
    mh_proc *p = start_era(_i, NULL, NULL);
    json_object *o = call(p, _i, "rich_structured", NULL);
    MH_ASSERT_RESULT(o);
    MH_ASSERT_ABSENT(o, "result isError");
    const char *want = "{\"temperature\":22.5,\"conditions\":\"sunny\",\"tags\":[\"a/b\",\"\\\"q\\\"\"]}";
    MH_ASSERT_JSON_EQ(mh_at(o, "result structuredContent"), want);
    ck_assert_uint_eq(mh_len(o, "result content"), 1);
    MH_ASSERT_STR(o, "result content 0 type", "text");
    const char *text = mh_str(o, "result content 0 text");
    ck_assert_ptr_nonnull(text);
    json_object *parsed = mh_parse(text);
    ck_assert_msg(parsed != NULL, "the text is not JSON: %s", text);
    MH_ASSERT_JSON_EQ(parsed, want);
    json_object_put(parsed);
    json_object_put(o);
    mh_finish(p);
}
END_TEST

/* ---- progress ---------------------------------------------------------------------------- */

/* Call progress with TOKEN_JSON (NULL: none); return the notifications. */
static json_object *progress_call(mh_proc *p, int era, const char *token_json, const char *args)
{
    char extra[128] = "";
    if (token_json)
        snprintf(extra, sizeof extra, "\"progressToken\":%s", token_json);
    send_call(p, era, "\"pc\"", "progress", args, extra);
    json_object *notes = json_object_new_array();
    json_object *o = mh_await(p, "\"pc\"", notes);
    MH_ASSERT_RESULT(o);
    const char *text = mh_str(o, "result content 0 text");
    ck_assert_msg(text && strncmp(text, "progress: ", 10) == 0, "%s", mh_json(o));
    json_object_put(o);
    return notes;
}

static void assert_progress(json_object *notes, const char *token_json, int steps, bool total, bool message)
{
    ck_assert_msg(json_object_array_length(notes) == (size_t)steps, "want %d progress notifications, got %s",
                  steps, mh_json(notes));
    json_object *token = mh_parse(token_json);
    double last = -1;
    for (int i = 0; i < steps; i++) {
        json_object *n = json_object_array_get_idx(notes, (size_t)i);
        MH_ASSERT_STR(n, "method", "notifications/progress");
        ck_assert_msg(json_object_equal(mh_at(n, "params progressToken"), token), "token %s in %s", token_json,
                      mh_json(n));
        json_object *pr = mh_at(n, "params progress");
        ck_assert_msg(json_object_is_type(pr, json_type_double) || json_object_is_type(pr, json_type_int),
                      "%s", mh_json(n));
        double v = json_object_get_double(pr);
        ck_assert_msg(v > last, "progress does not increase: %s", mh_json(notes));
        last = v;
        if (total)
            ck_assert_msg(json_object_get_double(mh_at(n, "params total")) == steps, "%s", mh_json(n));
        else
            MH_ASSERT_ABSENT(n, "params total");
        if (message) {
            char want[64];
            snprintf(want, sizeof want, "step %d of %d", i + 1, steps);
            MH_ASSERT_STR(n, "params message", want);
        } else {
            MH_ASSERT_ABSENT(n, "params message");
        }
    }
    json_object_put(token);
}

START_TEST(progress_with_a_string_token)
{
    mh_proc *p = start_era(_i, NULL, NULL);
    json_object *notes = progress_call(p, _i, "\"tok-1\"", "{\"steps\":3}");
    assert_progress(notes, "\"tok-1\"", 3, true, true);
    json_object_put(notes);
    mh_finish(p);
}
END_TEST

START_TEST(progress_with_an_integer_token)
{
    mh_proc *p = start_era(_i, NULL, NULL);
    json_object *notes = progress_call(p, _i, "42", "{\"steps\":5,\"with_total\":false,\"with_message\":false}");
    assert_progress(notes, "42", 5, false, false);
    json_object_put(notes);
    mh_finish(p);
}
END_TEST

START_TEST(no_progress_without_a_token)
{
    mh_proc *p = start_era(_i, NULL, NULL);
    json_object *notes = progress_call(p, _i, NULL, "{\"steps\":4}");
    ck_assert_msg(json_object_array_length(notes) == 0, "progress sent without a token: %s", mh_json(notes));
    json_object_put(notes);
    mh_finish(p);
}
END_TEST

/* ---- concurrency ---------------------------------------------------------------------------- */

START_TEST(a_slow_call_does_not_delay_other_requests)
{
    mh_proc *p = start_era(LEGACY, NULL, NULL);
    send_call(p, LEGACY, "1", "slow", "{\"ms\":3000,\"tag\":\"bg\"}", "");
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}");
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}");
    send_call(p, LEGACY, "4", "echo", "{\"text\":\"quick\"}", "");
    send_call(p, MODERN, "5", "echo", "{\"text\":\"quick too\"}", "");
    bool seen[6] = {false};
    for (int n = 0; n < 5; n++) {
        json_object *o = mh_next(p);
        int id = (int)json_object_get_int(mh_at(o, "id"));
        ck_assert_msg(id >= 1 && id <= 5 && !seen[id], "unexpected %s", mh_json(o));
        MH_ASSERT_RESULT(o);
        if (id == 1) {
            for (int k = 2; k <= 5; k++)
                ck_assert_msg(seen[k], "the slow call answered before request %d", k);
            const char *text = mh_str(o, "result content 0 text");
            ck_assert_msg(text && strstr(text, "slow[bg]: slept"), "%s", mh_json(o));
        }
        seen[id] = true;
        json_object_put(o);
    }
    mh_finish(p);
}
END_TEST

/* Each call runs until four have run at once (until_peak): calls that
 * cannot overlap are not answered. It used to be four 1 s calls that had
 * to be answered within 3 s, which a loaded machine need not do. */
START_TEST(slow_calls_run_at_the_same_time)
{
    mh_proc *p = start_era(MODERN, NULL, NULL);
    for (int i = 1; i <= 4; i++) {
        char id[16];
        snprintf(id, sizeof id, "%d", i);
        send_call(p, MODERN, id, "slow", "{\"ms\":0,\"until_peak\":4}", "");
    }
    int peak = 0;
    for (int i = 0; i < 4; i++) {
        json_object *o = mh_next(p);
        MH_ASSERT_RESULT(o);
        const char *text = mh_str(o, "result content 0 text");
        const char *pk = text ? strstr(text, "peak ") : NULL;
        ck_assert_msg(pk != NULL, "%s", mh_json(o));
        int v = atoi(pk + 5);
        peak = v > peak ? v : peak;
        json_object_put(o);
    }
    ck_assert_msg(peak == 4, "at most %d of 4 calls ran at once", peak);
    mh_finish(p);
}
END_TEST

/*
** Calls that arrive in one read behind slow ones: with the core threads
** busy, the instant call must get a thread of its own at once (the pool
** once counted woken-but-not-yet-running threads as free and let it
** wait). The slow calls run until the test has the instant call's answer
** (a gate file): held up behind them, it is never answered. (They used to
** sleep 3 s, and the instant answer had to come within 2 s.)
*/
START_TEST(instant_call_read_with_slow_ones_is_not_held_up)
{
    mh_proc *p = start_era(MODERN, NULL, NULL);
    /* Warm the core threads so they are idle, not yet to be started. */
    for (int i = 1; i <= 2; i++) {
        char id[16];
        snprintf(id, sizeof id, "%d", i);
        send_call(p, MODERN, id, "slow", "{\"ms\":0}", "");
        json_object_put(mh_next(p));
    }
    char line[3][1024];
    char gate[64], slow_args[128];
    snprintf(gate, sizeof gate, "/tmp/mh-gate-%ld", (long)getpid());
    unlink(gate);
    snprintf(slow_args, sizeof slow_args, "\"ms\":0,\"gate\":\"%s\"", gate);
    const char *args[3] = {slow_args, slow_args, "\"ms\":0"};
    size_t total = 0;
    static char batch[4096];
    for (int i = 0; i < 3; i++) {
        int n = snprintf(line[i], sizeof line[i],
                         "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"slow\","
                         "\"arguments\":{%s}%s}}\n",
                         10 + i, args[i], meta(MODERN, ""));
        memcpy(batch + total, line[i], (size_t)n);
        total += (size_t)n;
    }
    mh_send_raw(p, batch, total); /* one write: one read, one batch */
    json_object *o = mh_next(p);
    MH_ASSERT_ID(o, "12");
    MH_ASSERT_RESULT(o);
    json_object_put(o);
    FILE *g = fopen(gate, "w");
    ck_assert(g && fclose(g) == 0);
    json_object_put(mh_next(p));
    json_object_put(mh_next(p));
    unlink(gate);
    mh_finish(p);
}
END_TEST

/* ---- cancellation ---------------------------------------------------------------------------- */

/* The next message that is not progress, NULL at EOF. Progress the slow
 * call sent before its handler saw the cancellation may still be on its
 * way (from the worker, through the host's output queue: seen later than
 * 300 ms after the handler's log line on a loaded machine), in any number. */
static json_object *next_past_progress(mh_proc *p)
{
    for (;;) {
        json_object *o = mh_read(p, MH_TIMEOUT_MS);
        if (!o || !mh_has(o, "method"))
            return o;
        MH_ASSERT_STR(o, "method", "notifications/progress");
        json_object_put(o);
    }
}

/* Start a slow call with progress, wait until it runs (first progress),
 * cancel it, wait until the handler saw it, and check nothing more comes
 * for it: not before the answers to the requests sent after, nor after
 * them until the host has ended (EOF on its stdout). */
static void cancel_in_flight_as(int era, const char *id_json, const char *cancel_json)
{
    mh_proc *p = start_era(era, NULL, NULL);
    send_call(p, era, id_json, "slow", "{\"ms\":20000,\"progress\":true,\"tag\":\"victim\"}",
              "\"progressToken\":\"pt\"");
    json_object *o = mh_next(p);
    MH_ASSERT_STR(o, "method", "notifications/progress");
    json_object_put(o);
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":%s,"
               "\"reason\":\"test\"}}",
            cancel_json);
    ck_assert_msg(mh_stderr_wait(p, "slow[victim]: saw cancellation", MH_TIMEOUT_MS),
                  "the handler never saw the cancellation");
    if (era == LEGACY)
        mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":77,\"method\":\"ping\"}");
    else
        mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":77,\"method\":\"tools/list\",\"params\":{" MH_MODERN_META "}}");
    o = next_past_progress(p); /* a response to the cancelled call fails here */
    ck_assert_msg(o != NULL, "no answer to the request after the cancellation");
    MH_ASSERT_ID(o, "77");
    MH_ASSERT_RESULT(o);
    json_object_put(o);
    send_call(p, era, "78", "echo", "{\"text\":\"after\"}", "");
    o = next_past_progress(p);
    ck_assert_msg(o != NULL, "no answer to the call after the cancellation");
    MH_ASSERT_ID(o, "78");
    MH_ASSERT_STR(o, "result content 0 text", "after");
    json_object_put(o);
    /* The handler has returned: whatever its call could still cause is
     * out before the host ends. */
    mh_close_stdin(p);
    o = next_past_progress(p);
    ck_assert_msg(o == NULL, "a response was sent for the cancelled call: %s", mh_json(o));
    ck_assert_msg(mh_eof(p), "stdout did not close after EOF on stdin");
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
}

static void cancel_in_flight(int era, const char *id_json)
{
    cancel_in_flight_as(era, id_json, id_json);
}

START_TEST(cancelled_call_sends_nothing_more)
{
    cancel_in_flight(_i, "7");
}
END_TEST

START_TEST(cancelled_call_with_a_string_id)
{
    cancel_in_flight(_i, "\"call-7\"");
}
END_TEST

START_TEST(cancelling_with_the_wrong_id_type_changes_nothing)
{
    /* 8 and "8" are different requests. */
    mh_proc *p = start_era(LEGACY, NULL, NULL);
    send_call(p, LEGACY, "8", "slow", "{\"ms\":800,\"tag\":\"kept\"}", "");
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":\"8\"}}");
    json_object *o = mh_await(p, "8", NULL);
    const char *text = mh_str(o, "result content 0 text");
    ck_assert_msg(text && strstr(text, "slow[kept]: slept"), "%s", mh_json(o));
    json_object_put(o);
    mh_finish(p);
}
END_TEST

/* Numeric ids compare by value: requestId 8.0 names the call 8. */
START_TEST(cancelling_with_an_equal_number)
{
    cancel_in_flight_as(_i, "8", "8.0");
}
END_TEST

/* Ids json-c would change (clamp, or decode to U+FFFD) are cancelled by
 * exactly what was sent. */
START_TEST(cancelled_call_with_an_id_json_c_would_change)
{
    cancel_in_flight(LEGACY, _i == 0 ? "18446744073709551616" : "\"\\ud800\"");
}
END_TEST

/* Distinct ids that json-c would make equal stay distinct: the second call
 * is not refused as "in flight", and each answer carries its own id. */
START_TEST(ids_json_c_would_merge_stay_apart)
{
    static const char *const pairs[][2] = {
        {"18446744073709551615", "18446744073709551616"},
        {"-9223372036854775808", "-9223372036854775809"},
        {"\"\\ud800\"", "\"\\udbff\""},
        {"\"\\ud800\"", "\"\xef\xbf\xbd\""}, /* U+FFFD itself */
    };
    mh_proc *p = start_era(LEGACY, NULL, NULL);
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        send_call(p, LEGACY, pairs[i][0], "slow", "{\"ms\":1500,\"tag\":\"first\"}", "");
        send_call(p, LEGACY, pairs[i][1], "echo", "{\"text\":\"second\"}", "");
        /* Raw lines: a JSON parser here would clamp or decode the ids too. */
        for (int k = 1; k >= 0; k--) {
            char want[128];
            snprintf(want, sizeof want, "\"id\":%s,\"result\":", pairs[i][k]);
            char *line = mh_read_line(p, MH_TIMEOUT_MS);
            ck_assert_msg(line && strstr(line, want), "want %s in %s", want, line ? line : "(nothing)");
            ck_assert_msg(strstr(line, k ? "second" : "slow[first]"), "%s", line);
            free(line);
        }
    }
    mh_finish(p);
}
END_TEST

/* Many calls in flight in one session (past the few buckets a session
 * starts with, so its table of calls grows while they run): each is still
 * found by its id, for a duplicate (refused) and for a cancellation, and
 * each answer carries its own id. */
START_TEST(many_calls_in_flight_keep_their_ids)
{
    enum { N = 48 };
    mh_proc *p = start_era(LEGACY, NULL, NULL);
    for (int i = 1; i <= N; i++) {
        char id[16], args[64];
        snprintf(id, sizeof id, "%d", i);
        /* 5 and 7 run until cancelled: 5 is surely in flight when its id
         * comes again (800 ms was not always enough under load). */
        snprintf(args, sizeof args, "{\"ms\":%d,\"tag\":\"t%d\"}", i == 5 || i == 7 ? 20000 : 800, i);
        send_call(p, LEGACY, id, "slow", args, "");
    }
    send_call(p, LEGACY, "5", "echo", "{\"text\":\"again\"}", "");
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":7}}");
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":5}}");
    bool seen[N + 1] = {false}, refused = false;
    for (int k = 0; k < N - 1; k++) { /* N-2 results (5 and 7 were cancelled) and the refusal */
        json_object *o = mh_next(p);
        ck_assert_msg(o && mh_has(o, "id"), "a response: %s", o ? mh_json(o) : "(nothing)");
        int id = json_object_get_int(mh_at(o, "id"));
        if (mh_has(o, "error")) {
            ck_assert_msg(id == 5 && !refused && strstr(mh_json(o), "in flight"), "%s", mh_json(o));
            refused = true;
        } else {
            char want[32];
            snprintf(want, sizeof want, "slow[t%d]", id);
            ck_assert_msg(id >= 1 && id <= N && id != 5 && id != 7 && !seen[id], "%s", mh_json(o));
            ck_assert_msg(strstr(mh_json(o), want), "want %s: %s", want, mh_json(o));
            seen[id] = true;
        }
        json_object_put(o);
    }
    ck_assert(refused);
    mh_ping_is_next(p, 77); /* and nothing for the cancelled calls */
    mh_finish(p);
}
END_TEST

/* tools/call takes any id the other methods take: no fixed key size. */
START_TEST(long_string_ids_on_tools_call)
{
    char id[1003];
    id[0] = '"';
    memset(id + 1, 'i', 1000);
    id[1001] = '"';
    id[1002] = '\0';
    mh_proc *p = start_era(_i, NULL, NULL);
    send_call(p, _i, id, "echo", "{\"text\":\"long id\"}", "");
    json_object *o = mh_next(p);
    MH_ASSERT_ID(o, id);
    MH_ASSERT_STR(o, "result content 0 text", "long id");
    json_object_put(o);
    mh_finish(p);
}
END_TEST

/* Wait until PATH exists (a test plugin creates it as it starts); Check's
 * timeout bounds the wait. */
static void await_file(const char *path)
{
    while (access(path, F_OK) != 0) {
        struct timespec ts = {0, 5 * 1000000L};
        nanosleep(&ts, NULL);
    }
}

/* A file name of this test process, removed before use. */
static void temp_path(char *buf, size_t size, const char *what)
{
    snprintf(buf, size, "%s/%s", mh_marks_dir(), what);
    unlink(buf);
}

/*
** A call cancelled while it waits for the only thread never runs, in
** either isolation mode: its handler would act after the cancel. The
** blocker holds the thread until the gate opens; the queued call would
** create its mark as it starts. Its arguments are plain enough for slow's
** schema to take them without a walk, so no cancellation check in schema
** validation can stand in for the queue's.
*/
START_TEST(a_call_cancelled_in_the_queue_never_runs)
{
    char gate[64], started[64], ran[64], args[256];
    temp_path(gate, sizeof gate, "gate");
    temp_path(started, sizeof started, "started");
    temp_path(ran, sizeof ran, "ran");
    mh_proc *p = start_era(_i, "--max-concurrent-calls", "1");
    snprintf(args, sizeof args, "{\"ms\":0,\"gate\":\"%s\",\"mark\":\"%s\",\"tag\":\"blocker\"}", gate, started);
    send_call(p, _i, "1", "slow", args, "");
    await_file(started); /* the blocker runs: the only thread is taken */
    snprintf(args, sizeof args, "{\"ms\":0,\"mark\":\"%s\",\"tag\":\"queued\"}", ran);
    send_call(p, _i, "2", "slow", args, "");
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":2}}");
    /* The host has read the cancel once it answers what came after it. */
    mh_ping_is_next(p, 3);
    FILE *g = fopen(gate, "w");
    ck_assert(g && fclose(g) == 0);
    json_object *o = mh_await(p, "1", NULL);
    MH_ASSERT_RESULT(o);
    json_object_put(o);
    /* FIFO on the one thread, and the same plugin: once this is answered,
     * the cancelled call had its turn. */
    send_call(p, _i, "4", "slow", "{\"ms\":0,\"tag\":\"after\"}", "");
    o = mh_next(p);
    MH_ASSERT_ID(o, "4");
    MH_ASSERT_RESULT(o);
    json_object_put(o);
    bool ran_anyway = access(ran, F_OK) == 0;
    unlink(gate);
    unlink(started);
    unlink(ran);
    ck_assert_msg(!ran_anyway, "the call cancelled in the queue ran (%s was created)", ran);
    mh_ping_is_next(p, 5); /* and nothing was sent for it */
    mh_finish(p);
}
END_TEST

/* With every thread held by a call that ignores cancellation, a new call
 * waits at most --queue-timeout-ms, then gets a busy error naming the
 * limits, and never runs. */
START_TEST(a_queued_call_waits_at_most_the_queue_timeout)
{
    mh_proc *p = mh_start("--max-concurrent-calls", "1", "--queue-timeout-ms", "300", NULL);
    mh_initialize(p, "2025-11-25");
    send_call(p, LEGACY, "1", "slow",
              "{\"ms\":4000,\"ignore_cancel\":true,\"progress\":true,\"tag\":\"stuck\"}", "\"progressToken\":\"s\"");
    json_object *o = mh_next(p);
    MH_ASSERT_STR(o, "method", "notifications/progress");
    json_object_put(o);
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":1}}");
    send_call(p, LEGACY, "2", "slow", "{\"ms\":0,\"tag\":\"waiting\"}", "");
    o = mh_await(p, "2", NULL);
    MH_ASSERT_ERROR(o, TH_RPC_SERVER_BUSY); /* outside -32768..-32000 */
    const char *m = mh_str(o, "error message");
    ck_assert_msg(strstr(m, "--queue-timeout-ms") && strstr(m, "--max-concurrent-calls"), "%s", mh_json(o));
    json_object_put(o);
    mh_ping_is_next(p, 3);
    /* The stuck call ends; the expired one never ran, and the pool serves
     * again. */
    ck_assert(mh_stderr_wait(p, "slow[stuck]", MH_TIMEOUT_MS));
    o = call(p, LEGACY, "echo", "{\"text\":\"free again\"}");
    MH_ASSERT_STR(o, "result content 0 text", "free again");
    json_object_put(o);
    char *err = mh_stderr(p);
    ck_assert_msg(!strstr(err, "slow[waiting]"), "the expired call ran: %s", err);
    free(err);
    mh_finish(p);
}
END_TEST

START_TEST(cancelling_a_finished_call_is_harmless)
{
    mh_proc *p = start_era(LEGACY, NULL, NULL);
    json_object *o = call(p, LEGACY, "echo", "{\"text\":\"done\"}");
    json_object_put(o);
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":%d}}",
            last_id);
    mh_ping_is_next(p, 2);
    mh_finish(p);
}
END_TEST

START_TEST(modern_ids_may_be_reused_once_answered)
{
    /* 2026-07-28 forbids only reusing the id of a request still awaiting
     * its response: once answered, the same id is a new request. */
    mh_proc *p = start_era(MODERN, NULL, NULL);
    for (int i = 0; i < 2000; i++) {
        send_call(p, MODERN, "5", "echo", "{\"text\":\"again\"}", "");
        json_object *o = mh_next(p);
        MH_ASSERT_ID(o, "5");
        ck_assert_msg(mh_has(o, "result"), "call %d with id 5, sent after the previous one was answered: %s", i,
                      mh_json(o));
        json_object_put(o);
    }
    mh_finish(p);
}
END_TEST

/* ---- deadlines ------------------------------------------------------------------------ */

/* toolhost serving only hostile/overrun.so (DIR receives the directory to
 * remove), with OPT VAL when OPT is not NULL, in era ERA. */
static mh_proc *start_overrun(int era, char **dir, const char *opt, const char *val)
{
    *dir = mh_private_dir(mh_hostile("overrun"), NULL);
    mh_proc *p = opt ? mh_spawn("-d", *dir, opt, val, NULL) : mh_spawn("-d", *dir, NULL);
    if (era == LEGACY)
        mh_initialize(p, "2025-11-25");
    return p;
}

static void assert_timed_out(json_object *o, const char *text)
{
    MH_ASSERT_RESULT(o);
    ck_assert_msg(json_object_get_boolean(mh_at(o, "result isError")), "%s", mh_json(o));
    MH_ASSERT_STR(o, "result content 0 text", text);
    ck_assert_msg(mh_len(o, "result content") == 1, "%s", mh_json(o));
}

/* The answer comes at expiry, while the handler still sleeps; its late
 * result never arrives; the id may be reused at once. */
START_TEST(a_call_past_its_deadline_is_answered_at_expiry)
{
    char *dir;
    mh_proc *p = start_overrun(_i, &dir, "--call-timeout", "0.5");
    send_call(p, _i, "1", "overrun_ignore", "{\"ms\":4000}", "");
    json_object *o = mh_next(p);
    MH_ASSERT_ID(o, "1");
    assert_timed_out(o, "tool 'overrun_ignore' timed out after 500 ms");
    json_object_put(o);
    char *err = mh_stderr(p);
    ck_assert_msg(!strstr(err, "overrun_ignore returning"), "answered only when the handler returned: %s", err);
    free(err);
    /* Released with the answer: the same id is a new request. */
    send_call(p, _i, "1", "overrun", "{}", "");
    o = mh_next(p);
    MH_ASSERT_ID(o, "1");
    MH_ASSERT_STR(o, "result content 0 text", "quick");
    json_object_put(o);
    ck_assert(mh_stderr_wait(p, "overrun_ignore returning", MH_TIMEOUT_MS));
    mh_ping_is_next(p, 2); /* the late result was discarded */
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

/* The deadline is the one asked for, not a multiple of it: a handler that
 * returns halfway between the deadline and twice it gets the timeout, not
 * its result (half a deadline of slack on either side, not a measure of
 * speed). */
START_TEST(a_handler_past_its_deadline_gets_the_timeout_not_its_result)
{
    char *dir;
    mh_proc *p = start_overrun(_i, &dir, "--call-timeout", "1");
    send_call(p, _i, "1", "overrun_ignore", "{\"ms\":1500}", "");
    json_object *o = mh_next(p);
    MH_ASSERT_ID(o, "1");
    assert_timed_out(o, "tool 'overrun_ignore' timed out after 1 s");
    json_object_put(o);
    ck_assert(mh_stderr_wait(p, "overrun_ignore returning", MH_TIMEOUT_MS));
    mh_ping_is_next(p, 2); /* its late result was discarded */
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

/* A descriptor's shorter deadline applies, and the handler sees the
 * cancellation it brings. */
START_TEST(a_tool_may_ask_for_a_shorter_deadline)
{
    char *dir;
    mh_proc *p = start_overrun(_i, &dir, NULL, NULL);
    send_call(p, _i, "1", "overrun_poll", "{}", "");
    json_object *o = mh_next(p);
    assert_timed_out(o, "tool 'overrun_poll' timed out after 300 ms");
    json_object_put(o);
    ck_assert(mh_stderr_wait(p, "saw the cancellation", MH_TIMEOUT_MS));
    mh_ping_is_next(p, 2);
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

/* A longer one is cut to the host's. */
START_TEST(a_tool_cannot_ask_for_a_longer_deadline)
{
    char *dir;
    mh_proc *p = start_overrun(MODERN, &dir, "--call-timeout", "1");
    send_call(p, MODERN, "1", "overrun_greedy", "{\"ms\":3000}", "");
    json_object *o = mh_next(p);
    assert_timed_out(o, "tool 'overrun_greedy' timed out after 1 s");
    json_object_put(o);
    ck_assert(mh_stderr_wait(p, "overrun_greedy returning", MH_TIMEOUT_MS));
    mh_ping_is_next(p, 2);
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

/* Count O, a response of deadline_races_give_one_response_per_request
 * (N calls), in SEEN; false for the ping's, which ends them. */
static bool count_race_response(json_object *o, int *seen, int n)
{
    json_object *id = mh_at(o, "id");
    if (json_object_is_type(id, json_type_string)) {
        json_object_put(o);
        return false;
    }
    int i = json_object_get_int(id);
    ck_assert_msg(i >= 1 && i <= n, "%s", mh_json(o));
    seen[i]++;
    const char *text = mh_str(o, "result content 0 text");
    ck_assert_msg(text && (!strcmp(text, "late result") || strstr(text, "timed out after 200 ms")), "%s",
                  mh_json(o));
    json_object_put(o);
    return true;
}

/*
** Handlers that end around their deadline, some cancelled by the client
** around it too: every call gets exactly one response (a cancelled one at
** most one), either the result or the timeout, never both.
*/
START_TEST(deadline_races_give_one_response_per_request)
{
    enum { N = 40 };
    char *dir;
    int seen[N + 1] = {0};
    mh_proc *p = start_overrun(MODERN, &dir, "--call-timeout", "0.2");
    for (int i = 1; i <= N; i++) {
        char id[16], args[32];
        snprintf(id, sizeof id, "%d", i);
        snprintf(args, sizeof args, "{\"ms\":%d}", 170 + (i % 7) * 10);
        send_call(p, MODERN, id, "overrun_ignore", args, "");
    }
    /* The first response, a result at 170 ms or a timeout at 200 ms, says
     * the handlers are at their deadlines: the cancels land among them
     * however late a loaded machine started them. */
    ck_assert(count_race_response(mh_next(p), seen, N));
    for (int i = 3; i <= N; i += 3)
        mh_send(p, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":%d}}",
                i);
    /* Every handler has returned once stderr shows N lines; a ping sent
     * then is answered after anything they could still cause. */
    long long until = mh_now_ms() + MH_TIMEOUT_MS;
    for (;;) {
        char *err = mh_stderr(p);
        int n = 0;
        for (const char *q = err; (q = strstr(q, "overrun_ignore returning")); q++)
            n++;
        free(err);
        if (n == N)
            break;
        ck_assert_msg(mh_now_ms() < until, "only %d of %d handlers returned", n, N);
        usleep(20 * 1000);
    }
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":\"ping\",\"method\":\"ping\"}");
    while (count_race_response(mh_next(p), seen, N))
        ;
    for (int i = 1; i <= N; i++)
        ck_assert_msg(i % 3 == 0 ? seen[i] <= 1 : seen[i] == 1, "request %d got %d responses", i, seen[i]);
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

/* ---- use after end --------------------------------------------------------------------- */

static int count_of(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *q = hay; (q = strstr(q, needle)); q++)
        n++;
    return n;
}

#define ALL_REFUSED                                                                                                    \
    "text=7 textf=7 error=7 structured=7 content=7 image=7 link=7 progress=7 log=7 cancelled=1 name=''"

/* A th_call kept in a global and used from the next call (which may hold
 * the very slot the old handle named) is refused, and logged once. */
START_TEST(a_kept_call_used_from_the_next_call_is_refused)
{
    char *dir = mh_private_dir(mh_hostile("keep_call"), NULL);
    mh_proc *p = mh_spawn("-d", dir, NULL);
    if (_i == LEGACY)
        mh_initialize(p, "2025-11-25");
    json_object *o = call(p, _i, "keep_call", "{\"op\":\"stash\"}");
    MH_ASSERT_STR(o, "result content 0 text", "stashed");
    json_object_put(o);
    for (int k = 0; k < 2; k++) {
        o = call(p, _i, "keep_call", "{\"op\":\"use\"}");
        MH_ASSERT_STR(o, "result content 0 text", ALL_REFUSED);
        ck_assert_msg(mh_len(o, "result content") == 1, "%s", mh_json(o));
        json_object_put(o);
    }
    mh_ping_is_next(p, 2);
    /* A worker's stderr reaches the host's log on its own thread, not
     * before the response: wait for the line, then count. */
    mh_stderr_wait(p, "used its th_call after", MH_TIMEOUT_MS);
    char *err = mh_stderr(p);
    ck_assert_msg(count_of(err, "tool 'keep_call': th_call_text() used its th_call after the handler returned") == 1 &&
                      count_of(err, "used its th_call after") == 1,
                  "%s", err);
    free(err);
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

/* From a detached thread after the handler returned: refused too, and the
 * call's response is the one it had. */
START_TEST(a_kept_call_used_from_a_detached_thread_is_refused)
{
    char *dir = mh_private_dir(mh_hostile("keep_call"), NULL);
    mh_proc *p = mh_spawn("-d", dir, NULL);
    json_object *o = call(p, MODERN, "keep_call", "{\"op\":\"thread\"}");
    MH_ASSERT_STR(o, "result content 0 text", "thread started");
    ck_assert_msg(mh_len(o, "result content") == 1, "%s", mh_json(o));
    json_object_put(o);
    ck_assert(mh_stderr_wait(p, "keep_call thread: ", MH_TIMEOUT_MS));
    char *err = mh_stderr(p);
    ck_assert_msg(strstr(err, "keep_call thread: " ALL_REFUSED "\n"), "%s", err);
    ck_assert_msg(count_of(err, "used its th_call after") == 1, "%s", err);
    free(err);
    mh_ping_is_next(p, 2);
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

/* A th_server kept past registration: th_server_add_tool from a tool call
 * and from a thread is refused, and the registry stays as it was. */
START_TEST(a_kept_server_is_refused_after_registration)
{
    char *dir = mh_private_dir(mh_hostile("keep_server"), NULL);
    mh_proc *p = mh_spawn("-d", dir, NULL);
    /* The call first: in process mode the plugin's thread starts with the
     * worker, which the first call starts. */
    json_object *o = call(p, MODERN, "keep_server", "{}");
    MH_ASSERT_STR(o, "result content 0 text", "add=7 errmsg=''");
    json_object_put(o);
    ck_assert(mh_stderr_wait(p, "keep_server thread: ", MH_TIMEOUT_MS));
    o = list_page(p, MODERN, NULL);
    ck_assert_msg(mh_len(o, "result tools") == 1, "%s", mh_json(o));
    MH_ASSERT_STR(o, "result tools 0 name", "keep_server");
    json_object_put(o);
    char *err = mh_stderr(p);
    ck_assert_msg(strstr(err, "keep_server thread: add=7 errmsg=''\n"), "%s", err);
    ck_assert_msg(count_of(err, "plugin keep_server: th_server_add_tool() used its th_server after "
                                "register_keep_server_tool returned") == 1 &&
                      count_of(err, "used its th_server after") == 1,
                  "%s", err);
    free(err);
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

static Suite *calls_suite(void)
{
    Suite *s = suite_create("mcp_calls");
    TCase *tc = tcase_create("list");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_loop_test(tc, tools_are_listed_in_registration_order, LEGACY, MODERN + 1);
    tcase_add_test(tc, tools_list_is_the_same_every_time);
    tcase_add_loop_test(tc, pagination_covers_every_tool_once, LEGACY, MODERN + 1);
    tcase_add_test(tc, pagination_with_an_exact_multiple);
    tcase_add_loop_test(tc, bad_cursor_is_invalid_params, LEGACY, MODERN + 1);
    suite_add_tcase(s, tc);

    tc = tcase_create("echo");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_test(tc, echo_returns_exactly_the_text);
    tcase_add_test(tc, echo_keeps_an_embedded_nul);
    tcase_add_loop_test(tc, echo_in_every_legacy_version, 0, 4);
    tcase_add_test(tc, echo_with_a_large_text);
    suite_add_tcase(s, tc);

    tc = tcase_create("errors");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_loop_test(tc, absent_arguments_are_an_empty_object, LEGACY, MODERN + 1);
    tcase_add_loop_test(tc, arguments_that_are_not_an_object_are_invalid_params, LEGACY, MODERN + 1);
    tcase_add_loop_test(tc, arguments_failing_the_schema_are_a_tool_error, LEGACY, MODERN + 1);
    tcase_add_loop_test(tc, unknown_tool_is_invalid_params, LEGACY, MODERN + 1);
    tcase_add_loop_test(tc, missing_or_bad_tool_name_is_invalid_params, LEGACY, MODERN + 1);
    tcase_add_loop_test(tc, handler_error_is_a_result_with_its_message, LEGACY, MODERN + 1);
    tcase_add_loop_test(tc, handler_failure_without_a_message_names_the_tool, LEGACY, MODERN + 1);
    suite_add_tcase(s, tc);

    tc = tcase_create("content");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_loop_test(tc, rich_content_blocks_come_back_exactly, LEGACY, MODERN + 1);
    tcase_add_loop_test(tc, structured_content_is_also_sent_as_text, LEGACY, MODERN + 1);
    suite_add_tcase(s, tc);

    tc = tcase_create("progress");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_loop_test(tc, progress_with_a_string_token, LEGACY, MODERN + 1);
    tcase_add_loop_test(tc, progress_with_an_integer_token, LEGACY, MODERN + 1);
    tcase_add_loop_test(tc, no_progress_without_a_token, LEGACY, MODERN + 1);
    suite_add_tcase(s, tc);

    tc = tcase_create("concurrency");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_test(tc, a_slow_call_does_not_delay_other_requests);
    tcase_add_test(tc, slow_calls_run_at_the_same_time);
    tcase_add_test(tc, instant_call_read_with_slow_ones_is_not_held_up);
    tcase_add_test(tc, modern_ids_may_be_reused_once_answered);
    suite_add_tcase(s, tc);

    tc = tcase_create("cancellation");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_loop_test(tc, cancelled_call_sends_nothing_more, LEGACY, MODERN + 1);
    tcase_add_loop_test(tc, cancelled_call_with_a_string_id, LEGACY, MODERN + 1);
    tcase_add_test(tc, cancelling_with_the_wrong_id_type_changes_nothing);
    tcase_add_test(tc, cancelling_a_finished_call_is_harmless);
    tcase_add_loop_test(tc, a_call_cancelled_in_the_queue_never_runs, LEGACY, MODERN + 1);
    tcase_add_test(tc, a_queued_call_waits_at_most_the_queue_timeout);
    tcase_add_loop_test(tc, cancelling_with_an_equal_number, LEGACY, MODERN + 1);
    tcase_add_loop_test(tc, cancelled_call_with_an_id_json_c_would_change, 0, 2);
    tcase_add_test(tc, ids_json_c_would_merge_stay_apart);
    tcase_add_loop_test(tc, long_string_ids_on_tools_call, LEGACY, MODERN + 1);
    tcase_add_test(tc, many_calls_in_flight_keep_their_ids);
    tcase_add_loop_test(tc, a_call_past_its_deadline_is_answered_at_expiry, LEGACY, MODERN + 1);
    tcase_add_loop_test(tc, a_handler_past_its_deadline_gets_the_timeout_not_its_result, LEGACY, MODERN + 1);
    tcase_add_loop_test(tc, a_tool_may_ask_for_a_shorter_deadline, LEGACY, MODERN + 1);
    tcase_add_test(tc, a_tool_cannot_ask_for_a_longer_deadline);
    tcase_add_test(tc, deadline_races_give_one_response_per_request);
    tcase_add_loop_test(tc, a_kept_call_used_from_the_next_call_is_refused, LEGACY, MODERN + 1);
    tcase_add_test(tc, a_kept_call_used_from_a_detached_thread_is_refused);
    tcase_add_test(tc, a_kept_server_is_refused_after_registration);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN_WITH(calls_suite, mh_global_setup, mh_global_teardown)
