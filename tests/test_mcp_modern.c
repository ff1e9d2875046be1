/* SPDX-License-Identifier: MIT */
/*
** test_mcp_modern.c: integration tests of the modern era (2026-07-28)
** against the real toolhost: per-request _meta, server/discover, version and
** capability errors, methods the revision removed, resultType and serverInfo
** on every result, per-request log levels, and both eras in one process.
*/
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp_harness.h"
#include "check_main.h"

#define META_WITH(extra) "\"_meta\":{" MH_MODERN_META_FIELDS extra "}"

/* Every modern result: resultType "complete" and the server's identity. */
static void assert_modern_result(json_object *o)
{
    MH_ASSERT_RESULT(o);
    MH_ASSERT_STR(o, "result resultType", "complete");
    MH_ASSERT_STR(o, "result _meta " MH_K_SERVERINFO " name", "toolhost");
    ck_assert_msg(mh_str(o, "result _meta " MH_K_SERVERINFO " version") != NULL, "%s", mh_json(o));
}

static void assert_cacheable(json_object *o, long long ttl)
{
    if (ttl >= 0)
        MH_ASSERT_INT(o, "result ttlMs", ttl);
    else
        ck_assert_msg(json_object_is_type(mh_at(o, "result ttlMs"), json_type_int) &&
                          json_object_get_int64(mh_at(o, "result ttlMs")) >= 0,
                      "ttlMs: want a non-negative integer in %s", mh_json(o));
    const char *scope = mh_str(o, "result cacheScope");
    ck_assert_msg(scope && (strcmp(scope, "public") == 0 || strcmp(scope, "private") == 0), "cacheScope in %s",
                  mh_json(o));
}

/* ---- server/discover -------------------------------------------------------- */

START_TEST(discover_describes_the_server)
{
    mh_proc *p = mh_start(NULL);
    json_object *o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":\"discover-1\",\"method\":\"server/discover\","
                               "\"params\":{" META_WITH(",\"io.modelcontextprotocol/clientInfo\":"
                                                        "{\"name\":\"t\",\"version\":\"1\"}") "}}");
    MH_ASSERT_ID(o, "\"discover-1\"");
    assert_modern_result(o);
    json_object *sv = mh_at(o, "result supportedVersions");
    ck_assert_msg(json_object_is_type(sv, json_type_array) && json_object_array_length(sv) >= 1, "%s", mh_json(o));
    bool modern = false;
    for (size_t i = 0; i < json_object_array_length(sv); i++) {
        const char *v = json_object_get_string(json_object_array_get_idx(sv, i));
        modern |= v && strcmp(v, "2026-07-28") == 0;
    }
    ck_assert_msg(modern, "2026-07-28 not among supportedVersions: %s", mh_json(o));
    ck_assert(json_object_is_type(mh_at(o, "result capabilities tools"), json_type_object));
    ck_assert_msg(mh_str(o, "result instructions") && *mh_str(o, "result instructions"), "%s", mh_json(o));
    assert_cacheable(o, -1);
    json_object_put(o);
    mh_finish(p);
}
END_TEST

START_TEST(discover_reflects_the_options)
{
    mh_proc *p = mh_start("--instructions", "Use echo to repeat things.", "--list-ttl-ms", "1234", NULL);
    json_object *o =
        mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{" MH_MODERN_META "}}");
    assert_modern_result(o);
    MH_ASSERT_STR(o, "result instructions", "Use echo to repeat things.");
    MH_ASSERT_INT(o, "result ttlMs", 1234);
    json_object_put(o);
    o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{" MH_MODERN_META "}}");
    assert_cacheable(o, 1234);
    json_object_put(o);
    mh_finish(p);
}
END_TEST

/* ---- version and capability errors -------------------------------------------- */

static const char *const requests_of_every_kind[] = {
    "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"server/discover\",\"params\":{%s}}",
    "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\",\"params\":{%s}}",
    "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
    "\"arguments\":{\"text\":\"x\"},%s}}",
};

START_TEST(unsupported_version_lists_the_supported_ones)
{
    static const char *const asked[] = {"1900-01-01", "2026-07-29", "2025-11-24", ""};
    mh_proc *p = mh_start(NULL);
    for (size_t i = 0; i < sizeof asked / sizeof asked[0]; i++) {
        char meta[256];
        snprintf(meta, sizeof meta,
                 "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"%s\","
                 "\"io.modelcontextprotocol/clientCapabilities\":{}}",
                 asked[i]);
        char line[512];
        snprintf(line, sizeof line, requests_of_every_kind[_i], meta);
        json_object *o = mh_rpc(p, "%s", line);
        MH_ASSERT_ID(o, "5");
        MH_ASSERT_ERROR(o, -32022);
        MH_ASSERT_STR(o, "error data requested", asked[i]);
        json_object *sup = mh_at(o, "error data supported");
        ck_assert_msg(json_object_is_type(sup, json_type_array), "%s", mh_json(o));
        bool modern = false;
        for (size_t k = 0; k < json_object_array_length(sup); k++) {
            const char *v = json_object_get_string(json_object_array_get_idx(sup, k));
            ck_assert_msg(v && strcmp(v, asked[i]) != 0, "the refused version is listed as supported: %s",
                          mh_json(o));
            modern |= strcmp(v, "2026-07-28") == 0;
        }
        ck_assert_msg(modern, "%s", mh_json(o));
        json_object_put(o);
    }
    mh_finish(p);
}
END_TEST

/* Every revision served is advertised, newest first, as in the versioning
 * page's dual-era example: a client that speaks only a legacy revision
 * learns that initialize will serve it instead of giving up. */
static void assert_every_revision(json_object *o, const char *path)
{
    MH_ASSERT_JSON_EQ(mh_at(o, path), "[\"2026-07-28\",\"2025-11-25\",\"2025-06-18\",\"2025-03-26\",\"2024-11-05\"]");
}

START_TEST(every_revision_is_advertised)
{
    mh_proc *p = mh_start(NULL);
    json_object *o =
        mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{" MH_MODERN_META "}}");
    assert_every_revision(o, "result supportedVersions");
    json_object_put(o);
    o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{\"_meta\":{"
                  "\"io.modelcontextprotocol/protocolVersion\":\"2099-01-01\","
                  "\"io.modelcontextprotocol/clientCapabilities\":{}}}}");
    MH_ASSERT_ERROR(o, -32022);
    assert_every_revision(o, "error data supported");
    json_object_put(o);
    mh_finish(p);
}
END_TEST

/* A legacy revision named in _meta is a legacy request, never -32022 (which
 * would list it as supported): initialize with it is the handshake. */
START_TEST(initialize_naming_a_legacy_version_in_meta_is_the_handshake)
{
    mh_proc *p = mh_start(NULL);
    json_object *o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"_meta\":{"
                               "\"io.modelcontextprotocol/protocolVersion\":\"2025-06-18\"}}}");
    MH_ASSERT_ERROR(o, -32600); /* not initialized: send initialize */
    ck_assert_msg(strstr(mh_str(o, "error message"), "initialize"), "%s", mh_json(o));
    json_object_put(o);
    o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                  "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"},"
                  "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2025-06-18\"}}}");
    MH_ASSERT_ID(o, "2");
    MH_ASSERT_RESULT(o);
    MH_ASSERT_STR(o, "result protocolVersion", "2025-06-18");
    json_object_put(o);
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\",\"params\":{\"_meta\":{"
                  "\"io.modelcontextprotocol/protocolVersion\":\"2025-06-18\"}}}");
    MH_ASSERT_RESULT(o);
    json_object_put(o);
    mh_finish(p);
}
END_TEST

START_TEST(missing_client_capabilities_is_invalid_params)
{
    static const char *const metas[] = {
        "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}",
        "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
        "\"io.modelcontextprotocol/clientCapabilities\":[]}",
        "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
        "\"io.modelcontextprotocol/clientCapabilities\":null}",
    };
    mh_proc *p = mh_start(NULL);
    for (size_t i = 0; i < sizeof metas / sizeof metas[0]; i++) {
        char line[512];
        snprintf(line, sizeof line, requests_of_every_kind[_i], metas[i]);
        json_object *o = mh_rpc(p, "%s", line);
        MH_ASSERT_ID(o, "5");
        MH_ASSERT_ERROR(o, -32602);
        json_object_put(o);
    }
    mh_finish(p);
}
END_TEST

START_TEST(bad_meta_values_are_invalid_params)
{
    static const char *const metas[] = {
        "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":20260728,"
        "\"io.modelcontextprotocol/clientCapabilities\":{}}",
        "\"_meta\":{" MH_MODERN_META_FIELDS ",\"io.modelcontextprotocol/logLevel\":\"loud\"}",
        "\"_meta\":{" MH_MODERN_META_FIELDS ",\"io.modelcontextprotocol/logLevel\":3}",
    };
    mh_proc *p = mh_start(NULL);
    for (size_t i = 0; i < sizeof metas / sizeof metas[0]; i++) {
        char line[512];
        snprintf(line, sizeof line, requests_of_every_kind[1], metas[i]);
        json_object *o = mh_rpc(p, "%s", line);
        MH_ASSERT_ERROR(o, -32602);
        json_object_put(o);
    }
    mh_finish(p);
}
END_TEST

START_TEST(removed_methods_are_not_found)
{
    static const char *const reqs[] = {
        "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\",\"params\":{" MH_MODERN_META "}}",
        "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"logging/setLevel\",\"params\":{\"level\":\"debug\","
        MH_MODERN_META "}}",
        "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\","
        "\"capabilities\":{},\"clientInfo\":{\"name\":\"x\",\"version\":\"1\"}," MH_MODERN_META "}}",
    };
    mh_proc *p = mh_start(NULL);
    for (size_t i = 0; i < sizeof reqs / sizeof reqs[0]; i++) {
        json_object *o = mh_rpc(p, "%s", reqs[i]);
        MH_ASSERT_ID(o, "6");
        MH_ASSERT_ERROR(o, -32601);
        json_object_put(o);
    }
    /* The modern initialize did not start a legacy session. */
    json_object *o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\"}");
    MH_ASSERT_ERROR(o, -32600);
    json_object_put(o);
    mh_finish(p);
}
END_TEST

/* ---- results ------------------------------------------------------------------ */

START_TEST(modern_requests_need_no_initialize)
{
    mh_proc *p = mh_start(NULL);
    json_object *o =
        mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{" MH_MODERN_META "}}");
    assert_modern_result(o);
    assert_cacheable(o, 60000);
    ck_assert_uint_eq(mh_len(o, "result tools"), mh_tool_count);
    /* Modern lists carry every field a tool has. */
    json_object *tools = mh_at(o, "result tools");
    bool seen = false;
    for (size_t i = 0; i < json_object_array_length(tools); i++) {
        json_object *t = json_object_array_get_idx(tools, i);
        if (strcmp(mh_str(t, "name"), "rich_structured") != 0)
            continue;
        seen = true;
        MH_ASSERT_STR(t, "title", "Rich structured");
        MH_ASSERT_STR(t, "outputSchema type", "object");
        MH_ASSERT_JSON_EQ(mh_at(t, "annotations"), "{\"readOnlyHint\":true,\"openWorldHint\":false}");
        MH_ASSERT_JSON_EQ(mh_at(t, "icons"), "[{\"src\":\"data:image/svg+xml;base64,PHN2Zy8+\","
                                             "\"mimeType\":\"image/svg+xml\",\"sizes\":[\"any\"],\"theme\":\"light\"}]");
    }
    ck_assert(seen);
    json_object_put(o);

    o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                  "\"arguments\":{\"text\":\"modern\"}," MH_MODERN_META "}}");
    assert_modern_result(o);
    MH_ASSERT_STR(o, "result content 0 text", "modern");
    json_object_put(o);

    /* An error result is still a result, with resultType. */
    o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"failer\","
                  "\"arguments\":{}," MH_MODERN_META "}}");
    assert_modern_result(o);
    MH_ASSERT_TRUE(o, "result isError");
    json_object_put(o);

    /* Modern requests did not initialize a legacy session. */
    o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/list\"}");
    MH_ASSERT_ERROR(o, -32600);
    json_object_put(o);
    mh_finish(p);
}
END_TEST

START_TEST(errors_to_modern_requests_keep_their_codes)
{
    mh_proc *p = mh_start(NULL);
    json_object *o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
                               "\"name\":\"nonexistent\",\"arguments\":{}," MH_MODERN_META "}}");
    MH_ASSERT_ERROR(o, -32602);
    MH_ASSERT_STR(o, "error message", "Unknown tool: nonexistent");
    json_object_put(o);
    /* A method nobody serves (prompts/list is served now). */
    o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"no/such-method\",\"params\":{" MH_MODERN_META "}}");
    MH_ASSERT_ERROR(o, -32601);
    json_object_put(o);
    o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\",\"params\":{\"cursor\":\"bogus\","
                  MH_MODERN_META "}}");
    MH_ASSERT_ERROR(o, -32602);
    json_object_put(o);
    mh_finish(p);
}
END_TEST

/* ---- logging by per-request level -------------------------------------------- */

static const char *const levels[] = {"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"};

/* Call logger with the given extra _meta members; return the log
 * notifications that preceded its response. */
static json_object *modern_logger(mh_proc *p, int id, const char *tag, const char *extra_meta)
{
    char idtext[16];
    snprintf(idtext, sizeof idtext, "%d", id);
    mh_send(p,
            "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"logger\","
            "\"arguments\":{\"tag\":\"%s\"},\"_meta\":{" MH_MODERN_META_FIELDS "%s}}}",
            id, tag, extra_meta);
    json_object *notes = json_object_new_array();
    json_object *o = mh_await(p, idtext, notes);
    assert_modern_result(o);
    MH_ASSERT_STR(o, "result content 0 text", "logged 8 lines");
    json_object_put(o);
    return notes;
}

static void assert_levels_from(json_object *notes, int from, const char *tag)
{
    ck_assert_msg(json_object_array_length(notes) == (size_t)(8 - from), "want %d log notifications, got %s",
                  8 - from, mh_json(notes));
    for (int l = from; l < 8; l++) {
        json_object *n = json_object_array_get_idx(notes, (size_t)(l - from));
        char data[64];
        snprintf(data, sizeof data, "logger[%s] %s", tag, levels[l]);
        MH_ASSERT_STR(n, "method", "notifications/message");
        MH_ASSERT_STR(n, "params level", levels[l]);
        MH_ASSERT_STR(n, "params logger", "logger");
        MH_ASSERT_STR(n, "params data", data);
    }
}

START_TEST(no_log_notifications_without_a_log_level)
{
    mh_proc *p = mh_start("--log-level", "debug", NULL);
    json_object *notes = modern_logger(p, 1, "none", "");
    assert_levels_from(notes, 8, "none");
    json_object_put(notes);
    /* Nothing is lost: every line went to stderr instead. */
    for (int l = 0; l < 8; l++) {
        char line[64];
        snprintf(line, sizeof line, "logger[none] %s", levels[l]);
        ck_assert_msg(mh_stderr_wait(p, line, 2000), "'%s' is neither on stdout nor on stderr", line);
    }
    mh_finish(p);
}
END_TEST

START_TEST(log_level_in_meta_filters_notifications)
{
    mh_proc *p = mh_start("--log-level", "debug", NULL);
    json_object *notes = modern_logger(p, 1, "err", ",\"io.modelcontextprotocol/logLevel\":\"error\"");
    assert_levels_from(notes, 4, "err");
    json_object_put(notes);
    for (int l = 0; l < 4; l++) {
        char line[64];
        snprintf(line, sizeof line, "logger[err] %s", levels[l]);
        ck_assert_msg(mh_stderr_wait(p, line, 2000), "'%s' is neither on stdout nor on stderr", line);
    }
    notes = modern_logger(p, 2, "dbg", ",\"io.modelcontextprotocol/logLevel\":\"debug\"");
    assert_levels_from(notes, 0, "dbg");
    json_object_put(notes);
    /* The level belongs to one request: the next one without it gets none. */
    notes = modern_logger(p, 3, "after", "");
    assert_levels_from(notes, 8, "after");
    json_object_put(notes);
    mh_finish(p);
}
END_TEST

/* ---- both eras in one process --------------------------------------------------- */

START_TEST(modern_requests_after_a_legacy_initialize)
{
    mh_proc *p = mh_start(NULL);
    mh_initialize(p, "2024-11-05");
    json_object *o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"logging/setLevel\","
                               "\"params\":{\"level\":\"emergency\"}}");
    MH_ASSERT_RESULT(o);
    json_object_put(o);

    /* Modern: its own fields and version, whatever the session negotiated. */
    o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{" MH_MODERN_META "}}");
    assert_modern_result(o);
    assert_cacheable(o, -1);
    json_object *tools = mh_at(o, "result tools");
    bool titled = false;
    for (size_t i = 0; i < json_object_array_length(tools); i++)
        titled |= mh_str(json_object_array_get_idx(tools, i), "title") != NULL;
    ck_assert_msg(titled, "a modern tools/list lost its titles to the 2024-11-05 session: %s", mh_json(o));
    json_object_put(o);

    o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"server/discover\",\"params\":{" MH_MODERN_META "}}");
    assert_modern_result(o);
    json_object_put(o);

    /* Per-request log level, not the session's setLevel. */
    json_object *notes = modern_logger(p, 4, "m", ",\"io.modelcontextprotocol/logLevel\":\"debug\"");
    assert_levels_from(notes, 0, "m");
    json_object_put(notes);
    notes = modern_logger(p, 5, "m0", "");
    assert_levels_from(notes, 8, "m0");
    json_object_put(notes);

    /* Legacy requests keep the legacy session's semantics. */
    o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/list\"}");
    MH_ASSERT_RESULT(o);
    MH_ASSERT_ABSENT(o, "result resultType");
    tools = mh_at(o, "result tools");
    ck_assert_uint_eq(json_object_array_length(tools), mh_tool_count);
    for (size_t i = 0; i < json_object_array_length(tools); i++) {
        MH_ASSERT_ABSENT(json_object_array_get_idx(tools, i), "title");
        MH_ASSERT_ABSENT(json_object_array_get_idx(tools, i), "annotations");
    }
    json_object_put(o);
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"logger\","
               "\"arguments\":{\"tag\":\"l\"}}}");
    notes = json_object_new_array();
    o = mh_await(p, "7", notes);
    MH_ASSERT_ABSENT(o, "result resultType");
    json_object_put(o);
    ck_assert_msg(json_object_array_length(notes) == 1, "setLevel emergency: %s", mh_json(notes));
    MH_ASSERT_STR(json_object_array_get_idx(notes, 0), "params level", "emergency");
    json_object_put(notes);
    mh_ping_is_next(p, 8);
    mh_finish(p);
}
END_TEST

static Suite *modern_suite(void)
{
    Suite *s = suite_create("mcp_modern");
    TCase *tc = tcase_create("discover");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_test(tc, discover_describes_the_server);
    tcase_add_test(tc, discover_reflects_the_options);
    suite_add_tcase(s, tc);

    tc = tcase_create("meta");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_loop_test(tc, unsupported_version_lists_the_supported_ones, 0, 3);
    tcase_add_test(tc, every_revision_is_advertised);
    tcase_add_test(tc, initialize_naming_a_legacy_version_in_meta_is_the_handshake);
    tcase_add_loop_test(tc, missing_client_capabilities_is_invalid_params, 0, 3);
    tcase_add_test(tc, bad_meta_values_are_invalid_params);
    tcase_add_test(tc, removed_methods_are_not_found);
    suite_add_tcase(s, tc);

    tc = tcase_create("results");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_test(tc, modern_requests_need_no_initialize);
    tcase_add_test(tc, errors_to_modern_requests_keep_their_codes);
    suite_add_tcase(s, tc);

    tc = tcase_create("logging");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_test(tc, no_log_notifications_without_a_log_level);
    tcase_add_test(tc, log_level_in_meta_filters_notifications);
    suite_add_tcase(s, tc);

    tc = tcase_create("dual_era");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_test(tc, modern_requests_after_a_legacy_initialize);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN_WITH(modern_suite, mh_global_setup, mh_global_teardown)
