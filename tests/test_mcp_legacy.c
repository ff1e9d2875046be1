/* SPDX-License-Identifier: MIT */
/*
** test_mcp_legacy.c: integration tests of the legacy era (2024-11-05 to
** 2025-11-25) against the real toolhost: the initialize handshake and
** version negotiation, requests before initialize, ping, logging/setLevel
** with notifications/message, and tools/list fields per negotiated version.
*/
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "mcp_harness.h"
#include "check_main.h"

static const char *const legacy_versions[] = {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"};

static json_object *initialize(mh_proc *p, const char *version)
{
    return mh_rpc(p,
                  "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
                  "\"protocolVersion\":\"%s\",\"capabilities\":{},"
                  "\"clientInfo\":{\"name\":\"legacy-test\",\"version\":\"0.0.1\"}}}",
                  version);
}

/* The entry for NAME in a tools/list response, or NULL. */
static json_object *find_tool(json_object *list, const char *name)
{
    json_object *tools = mh_at(list, "result tools");
    for (size_t i = 0; i < json_object_array_length(tools); i++) {
        json_object *t = json_object_array_get_idx(tools, i);
        const char *n = mh_str(t, "name");
        if (n && strcmp(n, name) == 0)
            return t;
    }
    return NULL;
}

/* ---- initialize ------------------------------------------------------------ */

START_TEST(initialize_echoes_a_supported_version)
{
    mh_proc *p = mh_start(NULL);
    json_object *o = initialize(p, legacy_versions[_i]);
    MH_ASSERT_ID(o, "1");
    MH_ASSERT_RESULT(o);
    MH_ASSERT_STR(o, "result protocolVersion", legacy_versions[_i]);
    MH_ASSERT_STR(o, "result serverInfo name", "toolhost");
    ck_assert_msg(mh_str(o, "result serverInfo version") && *mh_str(o, "result serverInfo version"), "%s",
                  mh_json(o));
    ck_assert_msg(json_object_is_type(mh_at(o, "result capabilities tools"), json_type_object), "%s", mh_json(o));
    ck_assert_msg(mh_str(o, "result instructions") && *mh_str(o, "result instructions"), "%s", mh_json(o));
    MH_ASSERT_ABSENT(o, "result resultType");
    json_object_put(o);
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    mh_ping_is_next(p, 2);
    mh_finish(p);
}
END_TEST

START_TEST(initialize_with_an_unknown_version_gets_the_latest_legacy_one)
{
    static const char *const asked[] = {"1999-01-01", "2026-07-28", "2025-11-26", "not a date"};
    for (size_t i = 0; i < sizeof asked / sizeof asked[0]; i++) {
        mh_proc *p = mh_start(NULL);
        json_object *o = initialize(p, asked[i]);
        MH_ASSERT_RESULT(o);
        MH_ASSERT_STR(o, "result protocolVersion", "2025-11-25");
        json_object_put(o);
        mh_finish(p);
    }
}
END_TEST

START_TEST(initialize_without_a_version_is_invalid_params)
{
    mh_proc *p = mh_start(NULL);
    json_object *o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
                               "\"capabilities\":{}}}");
    MH_ASSERT_ERROR(o, -32602);
    json_object_put(o);
    o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\",\"params\":{"
                  "\"protocolVersion\":20251125,\"capabilities\":{}}}");
    MH_ASSERT_ERROR(o, -32602);
    json_object_put(o);
    /* A failed initialize leaves the session uninitialised. */
    o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}");
    MH_ASSERT_ERROR(o, -32600);
    json_object_put(o);
    mh_finish(p);
}
END_TEST

START_TEST(second_initialize_is_an_error)
{
    mh_proc *p = mh_start(NULL);
    json_object *o = initialize(p, "2025-06-18");
    MH_ASSERT_RESULT(o);
    json_object_put(o);
    o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\",\"params\":{"
                  "\"protocolVersion\":\"2024-11-05\",\"capabilities\":{},"
                  "\"clientInfo\":{\"name\":\"x\",\"version\":\"1\"}}}");
    MH_ASSERT_ID(o, "2");
    MH_ASSERT_ERROR(o, -32600);
    json_object_put(o);
    /* The first negotiation stands: 2025-06-18 lists titles, 2024-11-05 would not. */
    o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}");
    MH_ASSERT_STR(find_tool(o, "echo"), "title", "Echo");
    json_object_put(o);
    mh_finish(p);
}
END_TEST

START_TEST(requests_before_initialize_are_refused_except_ping)
{
    static const char *const early[] = {
        "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/list\"}",
        "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
        "\"arguments\":{\"text\":\"x\"}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"logging/setLevel\",\"params\":{\"level\":\"info\"}}",
        "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/list\",\"params\":{\"_meta\":{\"progressToken\":1}}}",
    };
    mh_proc *p = mh_start(NULL);
    for (size_t i = 0; i < sizeof early / sizeof early[0]; i++) {
        json_object *o = mh_rpc(p, "%s", early[i]);
        MH_ASSERT_ID(o, "10");
        MH_ASSERT_ERROR(o, -32600);
        json_object_put(o);
    }
    mh_ping_is_next(p, 11);
    json_object *o = initialize(p, "2025-11-25");
    MH_ASSERT_RESULT(o);
    json_object_put(o);
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    o = mh_rpc(p, "%s", early[0]);
    MH_ASSERT_RESULT(o);
    json_object_put(o);
    mh_finish(p);
}
END_TEST

START_TEST(ping_returns_an_empty_result)
{
    mh_proc *p = mh_start(NULL);
    json_object *o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"ping\"}");
    MH_ASSERT_ID(o, "\"p\"");
    MH_ASSERT_JSON_EQ(mh_at(o, "result"), "{}");
    json_object_put(o);
    mh_initialize(p, "2025-03-26");
    o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":\"q\",\"method\":\"ping\",\"params\":{}}");
    MH_ASSERT_JSON_EQ(mh_at(o, "result"), "{}");
    json_object_put(o);
    mh_finish(p);
}
END_TEST

/* ---- logging ----------------------------------------------------------------- */

static const char *const levels[] = {"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"};

/* Call the logger tool tagged TAG; return the notifications/message seen
 * before its response (a new array), checking each one's shape. */
static json_object *call_logger(mh_proc *p, int id, const char *tag)
{
    char idtext[16];
    snprintf(idtext, sizeof idtext, "%d", id);
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"logger\","
               "\"arguments\":{\"tag\":\"%s\"}}}",
            id, tag);
    json_object *notes = json_object_new_array();
    json_object *o = mh_await(p, idtext, notes);
    MH_ASSERT_STR(o, "result content 0 text", "logged 8 lines");
    json_object_put(o);
    for (size_t i = 0; i < json_object_array_length(notes); i++)
        MH_ASSERT_STR(json_object_array_get_idx(notes, i), "method", "notifications/message");
    return notes;
}

/* NOTES holds exactly the lines of levels FROM..emergency, in order. */
static void assert_levels_from(json_object *notes, int from, const char *tag)
{
    ck_assert_msg(json_object_array_length(notes) == (size_t)(8 - from), "want %d log notifications, got %s",
                  8 - from, mh_json(notes));
    for (int l = from; l < 8; l++) {
        json_object *n = json_object_array_get_idx(notes, (size_t)(l - from));
        char data[64];
        snprintf(data, sizeof data, "logger[%s] %s", tag, levels[l]);
        MH_ASSERT_STR(n, "params level", levels[l]);
        MH_ASSERT_STR(n, "params logger", "logger");
        MH_ASSERT_STR(n, "params data", data);
    }
}

/* True when a line of ERR holds NEEDLE and is not the protocol trace of
 * --log-level=debug (which shows every notification sent, "-> {...}"). */
static bool logged_apart_from_trace(const char *err, const char *needle)
{
    for (const char *at = strstr(err, needle); at; at = strstr(at + 1, needle)) {
        const char *start = at;
        while (start > err && start[-1] != '\n')
            start--;
        if (!strstr(start, "toolhost: debug: -> ") || strstr(start, "toolhost: debug: -> ") > at)
            return true;
    }
    return false;
}

START_TEST(set_level_filters_tool_logs)
{
    mh_proc *p = mh_start("--log-level", "debug", NULL);
    mh_initialize(p, "2025-11-25");
    json_object *o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"logging/setLevel\","
                               "\"params\":{\"level\":\"warning\"}}");
    MH_ASSERT_ID(o, "1");
    MH_ASSERT_JSON_EQ(mh_at(o, "result"), "{}");
    json_object_put(o);

    json_object *notes = call_logger(p, 2, "w");
    assert_levels_from(notes, 3, "w");
    json_object_put(notes);
    /* Below the level: on stderr, not lost. At or above: not on stderr. */
    for (int l = 0; l < 3; l++) {
        char line[64];
        snprintf(line, sizeof line, "logger[w] %s", levels[l]);
        ck_assert_msg(mh_stderr_wait(p, line, 2000), "'%s' is neither on stdout nor on stderr", line);
    }
    char *err = mh_stderr(p);
    for (int l = 3; l < 8; l++) {
        char line[64];
        snprintf(line, sizeof line, "logger[w] %s", levels[l]);
        ck_assert_msg(!logged_apart_from_trace(err, line), "'%s' went to the client and to stderr", line);
    }
    free(err);

    /* The level can change; emergency lets only emergency through. */
    o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"logging/setLevel\","
                  "\"params\":{\"level\":\"emergency\"}}");
    MH_ASSERT_RESULT(o);
    json_object_put(o);
    notes = call_logger(p, 4, "e");
    assert_levels_from(notes, 7, "e");
    json_object_put(notes);

    o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"logging/setLevel\","
                  "\"params\":{\"level\":\"debug\"}}");
    MH_ASSERT_RESULT(o);
    json_object_put(o);
    notes = call_logger(p, 6, "d");
    assert_levels_from(notes, 0, "d");
    json_object_put(notes);
    mh_finish(p);
}
END_TEST

START_TEST(set_level_with_a_bad_level_is_invalid_params)
{
    /* Each with the value the refusal names. */
    static const char *const params[][2] = {{"{\"level\":\"loud\"}", "\"loud\""},
                                            {"{\"level\":\"WARNING\"}", "\"WARNING\""},
                                            {"{\"level\":3}", "3"},
                                            {"{}", "none"}};
    mh_proc *p = mh_start(NULL);
    mh_initialize(p, "2025-11-25");
    for (size_t i = 0; i < sizeof params / sizeof params[0]; i++) {
        json_object *o =
            mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"logging/setLevel\",\"params\":%s}", params[i][0]);
        MH_ASSERT_ID(o, "7");
        MH_ASSERT_ERROR(o, -32602);
        char want[256];
        snprintf(want, sizeof want,
                 "Invalid params: \"level\" must be one of debug, info, notice, warning, error, critical, alert, "
                 "emergency, got %s",
                 params[i][1]);
        MH_ASSERT_STR(o, "error message", want);
        json_object_put(o);
    }
    json_object *o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"logging/setLevel\"}");
    MH_ASSERT_ERROR(o, -32602);
    json_object_put(o);
    /* A long level is shown cut at a character boundary: the answer
     * stays UTF-8 ("a, then two-byte characters: a 63-byte cut falls
     * inside one). */
    char level[256] = "a";
    for (int i = 0; i < 60; i++)
        strcat(level, "\xc3\xa9");
    o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"logging/setLevel\",\"params\":{\"level\":\"%s\"}}",
               level);
    MH_ASSERT_ERROR(o, -32602);
    const char *m = mh_str(o, "error message");
    ck_assert_msg(m && th_utf8_valid(m, strlen(m)) && strstr(m, "got \"a\xc3\xa9"), "%s", mh_json(o));
    json_object_put(o);
    mh_ping_is_next(p, 9);
    mh_finish(p);
}
END_TEST

/* ---- tools/list per version ------------------------------------------------------ */

START_TEST(tools_list_fields_follow_the_negotiated_version)
{
    mh_proc *p = mh_start(NULL);
    json_object *o = initialize(p, legacy_versions[_i]);
    MH_ASSERT_RESULT(o);
    json_object_put(o);
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
    MH_ASSERT_RESULT(o);
    MH_ASSERT_ABSENT(o, "result resultType");
    MH_ASSERT_ABSENT(o, "result ttlMs");
    MH_ASSERT_ABSENT(o, "result cacheScope");
    MH_ASSERT_ABSENT(o, "result nextCursor");
    ck_assert_uint_eq(mh_len(o, "result tools"), mh_tool_count);

    json_object *rs = find_tool(o, "rich_structured");
    ck_assert_ptr_nonnull(rs);
    MH_ASSERT_STR(rs, "description", "Return structured content only.");
    ck_assert(json_object_is_type(mh_at(rs, "inputSchema"), json_type_object));
    bool annotations = _i >= 1; /* 2025-03-26 */
    bool titled = _i >= 2;      /* 2025-06-18: title and outputSchema */
    if (annotations)
        MH_ASSERT_JSON_EQ(mh_at(rs, "annotations"), "{\"readOnlyHint\":true,\"openWorldHint\":false}");
    else
        MH_ASSERT_ABSENT(rs, "annotations");
    if (titled) {
        MH_ASSERT_STR(rs, "title", "Rich structured");
        MH_ASSERT_STR(rs, "outputSchema type", "object");
        MH_ASSERT_HAS(rs, "outputSchema properties temperature");
    } else {
        MH_ASSERT_ABSENT(rs, "title");
        MH_ASSERT_ABSENT(rs, "outputSchema");
    }
    if (_i >= 3) /* 2025-11-25: icons */
        MH_ASSERT_STR(rs, "icons 0 src", "data:image/svg+xml;base64,PHN2Zy8+");
    else
        MH_ASSERT_ABSENT(rs, "icons");
    /* echo has a title and annotations, but no output schema. */
    json_object *echo = find_tool(o, "echo");
    ck_assert_ptr_nonnull(echo);
    MH_ASSERT_ABSENT(echo, "outputSchema");
    if (titled)
        MH_ASSERT_STR(echo, "title", "Echo");
    else
        MH_ASSERT_ABSENT(echo, "title");
    /* A tool with neither has neither, in any version. */
    json_object *slow = find_tool(o, "slow");
    ck_assert_ptr_nonnull(slow);
    MH_ASSERT_ABSENT(slow, "title");
    MH_ASSERT_ABSENT(slow, "annotations");
    MH_ASSERT_ABSENT(slow, "outputSchema");
    json_object_put(o);
    mh_finish(p);
}
END_TEST

/*
** Results fit the negotiated revision: audio (2025-03-26) and resource_link
** (2025-06-18) blocks become text for older clients, whose schemas reject
** them, and structuredContent (2025-06-18) is left out before its revision.
*/
START_TEST(call_results_follow_the_negotiated_version)
{
    mh_proc *p = mh_start(NULL);
    json_object *o = initialize(p, legacy_versions[_i]);
    MH_ASSERT_RESULT(o);
    json_object_put(o);
    o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"rich\"}}");
    MH_ASSERT_RESULT(o);
    ck_assert_uint_eq(mh_len(o, "result content"), 8);
    if (_i >= 1) {
        MH_ASSERT_STR(o, "result content 2 type", "audio");
    } else {
        MH_ASSERT_STR(o, "result content 2 type", "text");
        MH_ASSERT_STR(o, "result content 2 text",
                      "[audio content (audio/wav) omitted: protocol 2024-11-05 cannot carry it]");
    }
    if (_i >= 2) {
        MH_ASSERT_STR(o, "result content 3 type", "resource_link");
        MH_ASSERT_STR(o, "result content 3 uri", "file:///tmp/rich.txt");
    } else {
        MH_ASSERT_STR(o, "result content 3 type", "text");
        MH_ASSERT_STR(o, "result content 3 text", "[resource: rich.txt <file:///tmp/rich.txt>]");
        MH_ASSERT_STR(o, "result content 4 text", "[resource: x <https://example.com/x>]");
    }
    /* Blocks every revision knows pass unchanged. */
    MH_ASSERT_STR(o, "result content 1 type", "image");
    MH_ASSERT_STR(o, "result content 5 resource uri", "test://rich/text");
    json_object_put(o);

    o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"rich_structured\"}}");
    MH_ASSERT_RESULT(o);
    if (_i >= 2)
        MH_ASSERT_HAS(o, "result structuredContent temperature");
    else
        MH_ASSERT_ABSENT(o, "result structuredContent");
    /* The text serialisation is there either way. */
    MH_ASSERT_STR(o, "result content 0 type", "text");
    ck_assert_ptr_nonnull(strstr(mh_str(o, "result content 0 text"), "\"temperature\":22.5"));
    json_object_put(o);
    mh_finish(p);
}
END_TEST

START_TEST(legacy_results_carry_no_modern_fields)
{
    mh_proc *p = mh_start(NULL);
    mh_initialize(p, "2025-11-25");
    static const char *const reqs[] = {
        "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"ping\"}",
        "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"logging/setLevel\",\"params\":{\"level\":\"info\"}}",
        "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/list\"}",
        "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
        "\"arguments\":{\"text\":\"x\"}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"failer\"}}",
    };
    for (size_t i = 0; i < sizeof reqs / sizeof reqs[0]; i++) {
        json_object *o = mh_rpc(p, reqs[i], (int)i + 1);
        MH_ASSERT_RESULT(o);
        MH_ASSERT_ABSENT(o, "result resultType");
        MH_ASSERT_ABSENT(o, "result _meta");
        json_object_put(o);
    }
    mh_finish(p);
}
END_TEST

START_TEST(discover_without_modern_meta_is_an_error)
{
    mh_proc *p = mh_start(NULL);
    mh_initialize(p, "2025-11-25");
    json_object *o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"server/discover\"}");
    MH_ASSERT_ID(o, "4");
    ck_assert_msg(mh_has(o, "error"), "server/discover served without _meta: %s", mh_json(o));
    json_object_put(o);
    mh_finish(p);
}
END_TEST

/* A request whose _meta names another revision than the session
 * negotiated is refused naming both, never served in the wrong revision;
 * the negotiated one, named, is served. */
START_TEST(meta_version_other_than_the_negotiated_one_is_refused)
{
    mh_proc *p = mh_start(NULL);
    mh_initialize(p, "2025-11-25");
    json_object *o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/list\",\"params\":{\"_meta\":"
                               "{\"io.modelcontextprotocol/protocolVersion\":\"2025-06-18\"}}}");
    MH_ASSERT_ID(o, "4");
    MH_ASSERT_ERROR(o, -32600);
    ck_assert_msg(strstr(mh_str(o, "error message"), "names 2025-06-18, but initialize negotiated 2025-11-25"), "%s",
                  mh_json(o));
    json_object_put(o);
    o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                  "\"arguments\":{\"text\":\"x\"},\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2024-11-05\"}}}");
    MH_ASSERT_ID(o, "5");
    MH_ASSERT_ERROR(o, -32600);
    ck_assert_msg(strstr(mh_str(o, "error message"), "names 2024-11-05, but initialize negotiated 2025-11-25"), "%s",
                  mh_json(o));
    json_object_put(o);
    o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/list\",\"params\":{\"_meta\":"
                  "{\"io.modelcontextprotocol/protocolVersion\":\"2025-11-25\"}}}");
    MH_ASSERT_ID(o, "6");
    MH_ASSERT_RESULT(o);
    json_object_put(o);
    mh_finish(p);
}
END_TEST

/* ---- JSON-RPC batches (2025-03-26 only) ---------------------------------------- */

#define RPC "{\"jsonrpc\":\"2.0\","

/* Read one line that must be a JSON array (a batch reply); parsed. */
static json_object *next_array(mh_proc *p)
{
    char *line = mh_read_line(p, MH_TIMEOUT_MS);
    ck_assert_msg(line != NULL, "no batch reply");
    json_object *a = mh_parse(line);
    ck_assert_msg(json_object_is_type(a, json_type_array), "want a JSON array, got %s", line);
    free(line);
    return a;
}

/* The element of batch reply A answering ID_JSON (the test fails if none). */
static json_object *reply_for(json_object *a, const char *id_json)
{
    for (size_t i = 0; i < json_object_array_length(a); i++) {
        json_object *o = json_object_array_get_idx(a, i);
        if (mh_has(o, "id") && strcmp(mh_json(mh_at(o, "id")), id_json) == 0)
            return o;
    }
    ck_abort_msg("no response for id %s in %s", id_json, mh_json(a));
    return NULL;
}

START_TEST(batches_are_served_in_2025_03_26)
{
    mh_proc *p = mh_start(NULL);
    mh_initialize(p, "2025-03-26");
    /* Requests, a notification, an invalid element, and two slow calls,
     * which must run at the same time: one array answers them all. */
    mh_send(p, "[" RPC "\"id\":1,\"method\":\"ping\"}," RPC "\"method\":\"notifications/initialized\"},"
               RPC "\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"b\"}}},"
               RPC "\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"slow\",\"arguments\":{\"ms\":1500}}},"
               RPC "\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"slow\",\"arguments\":{\"ms\":1500}}},"
               "5," RPC "\"id\":6,\"method\":\"tools/list\"}," RPC "\"id\":7,\"method\":\"no/such\"}]");
    json_object *a = next_array(p);
    ck_assert_msg(json_object_array_length(a) == 7, "want 7 responses in %s", mh_json(a));
    MH_ASSERT_RESULT(reply_for(a, "1"));
    MH_ASSERT_STR(reply_for(a, "2"), "result content 0 text", "b");
    json_object *r3 = reply_for(a, "3"), *r4 = reply_for(a, "4");
    const char *t3 = mh_str(r3, "result content 0 text"), *t4 = mh_str(r4, "result content 0 text");
    ck_assert_msg(t3 && t4 && (strstr(t3, "peak 2") || strstr(t4, "peak 2")),
                  "the batch's calls did not run at the same time: %s", mh_json(a));
    MH_ASSERT_RESULT(reply_for(a, "6"));
    MH_ASSERT_ERROR(reply_for(a, "7"), -32601);
    MH_ASSERT_ERROR(reply_for(a, "null"), -32600);
    json_object_put(a);
    mh_ping_is_next(p, 50); /* nothing else was sent */
    mh_finish(p);
}
END_TEST

START_TEST(batch_edge_cases_in_2025_03_26)
{
    mh_proc *p = mh_start(NULL);
    mh_initialize(p, "2025-03-26");
    /* Only notifications: no reply at all. */
    mh_send(p, "[" RPC "\"method\":\"notifications/initialized\"}," RPC "\"method\":\"notifications/cancelled\","
               "\"params\":{\"requestId\":99}}]");
    mh_ping_is_next(p, 51);
    /* An empty array: one -32600, not an array. */
    json_object *o = mh_rpc(p, "[]");
    MH_ASSERT_ID(o, "null");
    MH_ASSERT_ERROR(o, -32600);
    json_object_put(o);
    /* initialize must not be part of a batch; the rest is served. */
    mh_send(p, "[" RPC "\"id\":8,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-03-26\","
               "\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}," RPC "\"id\":9,\"method\":\"ping\"}]");
    json_object *a = next_array(p);
    ck_assert_uint_eq(json_object_array_length(a), 2);
    o = reply_for(a, "8");
    MH_ASSERT_ERROR(o, -32600);
    ck_assert_msg(strstr(mh_str(o, "error message"), "batch"), "%s", mh_json(o));
    MH_ASSERT_RESULT(reply_for(a, "9"));
    json_object_put(a);
    /* A 2026-07-28 request has no batches. */
    mh_send(p, "[" RPC "\"id\":10,\"method\":\"tools/list\",\"params\":{" MH_MODERN_META "}}]");
    a = next_array(p);
    MH_ASSERT_ERROR(reply_for(a, "10"), -32600);
    json_object_put(a);
    mh_finish(p);
}
END_TEST

/* Elsewhere a batch is one -32600 (id null) saying why. */
START_TEST(batches_are_refused_elsewhere)
{
    static const char *const versions[] = {NULL, "2024-11-05", "2025-06-18", "2025-11-25"};
    mh_proc *p = mh_start(NULL);
    if (versions[_i])
        mh_initialize(p, versions[_i]);
    json_object *o = mh_rpc(p, "[" RPC "\"id\":1,\"method\":\"ping\"}]");
    MH_ASSERT_ID(o, "null");
    MH_ASSERT_ERROR(o, -32600);
    const char *m = mh_str(o, "error message");
    ck_assert_msg(strstr(m, "batch") && strstr(m, "2025-03-26") && strstr(m, versions[_i] ? versions[_i] : "initial"),
                  "%s", mh_json(o));
    json_object_put(o);
    mh_ping_is_next(p, 2);
    mh_finish(p);
}
END_TEST

static Suite *legacy_suite(void)
{
    Suite *s = suite_create("mcp_legacy");
    TCase *tc = tcase_create("initialize");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_loop_test(tc, initialize_echoes_a_supported_version, 0, 4);
    tcase_add_test(tc, initialize_with_an_unknown_version_gets_the_latest_legacy_one);
    tcase_add_test(tc, initialize_without_a_version_is_invalid_params);
    tcase_add_test(tc, second_initialize_is_an_error);
    tcase_add_test(tc, requests_before_initialize_are_refused_except_ping);
    tcase_add_test(tc, ping_returns_an_empty_result);
    suite_add_tcase(s, tc);

    tc = tcase_create("logging");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_test(tc, set_level_filters_tool_logs);
    tcase_add_test(tc, set_level_with_a_bad_level_is_invalid_params);
    suite_add_tcase(s, tc);

    tc = tcase_create("tools");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_loop_test(tc, tools_list_fields_follow_the_negotiated_version, 0, 4);
    tcase_add_loop_test(tc, call_results_follow_the_negotiated_version, 0, 4);
    tcase_add_test(tc, legacy_results_carry_no_modern_fields);
    tcase_add_test(tc, discover_without_modern_meta_is_an_error);
    tcase_add_test(tc, meta_version_other_than_the_negotiated_one_is_refused);
    suite_add_tcase(s, tc);

    tc = tcase_create("batches");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_test(tc, batches_are_served_in_2025_03_26);
    tcase_add_test(tc, batch_edge_cases_in_2025_03_26);
    tcase_add_loop_test(tc, batches_are_refused_elsewhere, 0, 4);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN_WITH(legacy_suite, mh_global_setup, mh_global_teardown)
