/* SPDX-License-Identifier: MIT */
/*
** test_hot_swap.c: hot reload below the binary: swapping the served
** registry (a request sees the registry it began with; the old one dies
** with its last reference), what sessions of each era are sent for a swap
** (nothing when the tools are the same as a client sees them), cursors
** that would mix two registries, borrowed
** tools (a refused replacement's predecessor) and the subscription table.
*/
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "plugin/registry.h"
#include "plugin/reload.h"
#include "protocol/jsonrpc.h"
#include "protocol/mcp.h"
#include "protocol/subscriptions.h"
#include "check_main.h"

#define SCHEMA "{\"type\":\"object\",\"properties\":{}}"

static json_object *sent; /* every message sent, in order */

static void keep_send(void *ctx, json_object *msg)
{
    (void)ctx;
    size_t len;
    json_object_array_add(sent, json_object_new_string(th_rpc_serialize(msg, &len)));
    json_object_put(msg);
}

static const char *sent_at(size_t i)
{
    return json_object_get_string(json_object_array_get_idx(sent, i));
}

static void quiet(th_log_level level, const char *line, void *ctx)
{
    (void)level;
    (void)line;
    (void)ctx;
}

static th_rc nop(th_call *call, json_object *args, void *user_data)
{
    (void)call;
    (void)args;
    (void)user_data;
    return TH_OK;
}

static int destroyed; /* destroy callbacks run */

static void count_destroy(void *user_data)
{
    (void)user_data;
    destroyed++;
}

static void add(th_registry *reg, const char *name, const char *description, const char *origin)
{
    th_tool t = {TH_TOOL_INIT, .name = name, .description = description, .input_schema = SCHEMA, .handler = nop,
                 .destroy = count_destroy};
    th_err err;
    ck_assert_int_eq(th_registry_add(reg, &t, origin, &err), TH_OK);
}

static th_registry *registry_of(const char *const *names, const char *description)
{
    th_registry *reg = th_registry_new();
    for (size_t i = 0; names[i]; i++)
        add(reg, names[i], description, "/p/x.so");
    th_registry_start(reg);
    return reg;
}

static void handle(th_mcp_session *s, const char *line)
{
    th_mcp_session_handle(s, line, strlen(line));
}

#define MODERN_META                                                                                                    \
    "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","                                          \
    "\"io.modelcontextprotocol/clientCapabilities\":{}}"

START_TEST(a_swap_tells_each_era_only_when_the_tools_differ)
{
    th_log_set_sink(quiet, NULL);
    sent = json_object_new_array();
    th_registry *a = registry_of((const char *[]){"one", NULL}, "the first version of it");
    th_mcp_config cfg;
    th_mcp_config_default(&cfg);
    th_mcp *mcp = th_mcp_new(a, &cfg);
    th_mcp_session *legacy = th_mcp_session_new(mcp, keep_send, NULL);
    th_mcp_session *modern = th_mcp_session_new(mcp, keep_send, NULL);
    th_mcp_session *fresh = th_mcp_session_new(mcp, keep_send, NULL); /* never initialized */
    handle(legacy, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                   "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
    ck_assert_ptr_nonnull(strstr(sent_at(0), "\"tools\":{\"listChanged\":true}"));
    handle(legacy, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    handle(modern, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"subscriptions/listen\",\"params\":{" MODERN_META
                   ",\"notifications\":{\"toolsListChanged\":true}}}");
    ck_assert_ptr_nonnull(strstr(sent_at(1), "notifications/subscriptions/acknowledged"));
    size_t before = json_object_array_length(sent);

    /* The same tools, another registry: swapped in silently. */
    th_registry *same = registry_of((const char *[]){"one", NULL}, "the first version of it");
    th_mcp_swap_registry(mcp, same);
    ck_assert_int_eq(json_object_array_length(sent), before);
    th_registry *now = th_mcp_registry(mcp);
    ck_assert_ptr_eq(now, same);
    th_registry_unref(now);
    /* Nobody but the caller holds A now that it was replaced. */
    destroyed = 0;
    th_registry_unref(a);
    ck_assert_int_eq(destroyed, 1);

    /* A changed description: the legacy session and the subscription are
     * told, once each; the un-initialized session hears nothing. */
    th_registry *b = registry_of((const char *[]){"one", NULL}, "the second version of it");
    th_mcp_swap_registry(mcp, b);
    ck_assert_int_eq(json_object_array_length(sent), before + 2);
    int legacy_told = 0, modern_told = 0;
    for (size_t i = before; i < before + 2; i++) {
        ck_assert_ptr_nonnull(strstr(sent_at(i), "\"method\":\"notifications/tools/list_changed\""));
        if (strstr(sent_at(i), "\"io.modelcontextprotocol/subscriptionId\":7"))
            modern_told++;
        else
            legacy_told++;
    }
    ck_assert_int_eq(legacy_told, 1);
    ck_assert_int_eq(modern_told, 1);

    /* A request sees the registry served when it began. */
    handle(modern, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/list\",\"params\":{" MODERN_META "}}");
    ck_assert_ptr_nonnull(strstr(sent_at(json_object_array_length(sent) - 1), "the second version of it"));

    /* The server ends the subscription: its response, with its id. */
    before = json_object_array_length(sent);
    th_mcp_end_subscriptions(mcp);
    ck_assert_int_eq(json_object_array_length(sent), before + 1);
    ck_assert_ptr_nonnull(strstr(sent_at(before), "\"id\":7,\"result\""));
    ck_assert_ptr_nonnull(strstr(sent_at(before), "\"io.modelcontextprotocol/subscriptionId\":7"));

    th_mcp_session_free(legacy);
    th_mcp_session_free(modern);
    th_mcp_session_free(fresh);
    ck_assert(th_mcp_free(mcp, th_now_ms() + 5000));
    th_registry_unref(same);
    th_registry_unref(b);
    json_object_put(sent);
}
END_TEST

/* A listing never mixes two registries: a cursor names the registry it
 * was issued for, and one from before a swap is refused, saying why. */
START_TEST(a_cursor_from_before_a_swap_is_refused)
{
    th_log_set_sink(quiet, NULL);
    sent = json_object_new_array();
    th_registry *a = registry_of((const char *[]){"one", "two", NULL}, "the first version of it");
    th_mcp_config cfg;
    th_mcp_config_default(&cfg);
    cfg.page_size = 1;
    th_mcp *mcp = th_mcp_new(a, &cfg);
    th_mcp_session *s = th_mcp_session_new(mcp, keep_send, NULL);
    handle(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{" MODERN_META "}}");
    json_object *res = json_tokener_parse(sent_at(0));
    json_object *cur = NULL;
    json_object_object_get_ex(json_object_object_get(res, "result"), "nextCursor", &cur);
    ck_assert_ptr_nonnull(cur);
    char page2[512];
    snprintf(page2, sizeof page2,
             "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{\"cursor\":\"%s\"," MODERN_META "}}",
             json_object_get_string(cur));
    json_object_put(res);
    handle(s, page2);
    ck_assert_ptr_nonnull(strstr(sent_at(1), "\"name\":\"two\""));
    th_registry *b = registry_of((const char *[]){"one", "two", NULL}, "the second version of it");
    th_mcp_swap_registry(mcp, b);
    handle(s, page2);
    const char *last = sent_at(json_object_array_length(sent) - 1);
    ck_assert_msg(strstr(last, "-32602") && strstr(last, "the tool list changed since this cursor was issued"), "%s",
                  last);
    th_mcp_session_free(s);
    ck_assert(th_mcp_free(mcp, th_now_ms() + 5000));
    th_registry_unref(a);
    th_registry_unref(b);
    json_object_put(sent);
}
END_TEST

/* A borrowed tool is the lender's: the borrower keeps the lender alive,
 * its destroy runs once, when the last of them goes. */
START_TEST(a_borrowed_tool_lives_as_long_as_its_last_registry)
{
    th_log_set_sink(quiet, NULL);
    th_registry *old = th_registry_new();
    add(old, "kept", "the one the replacement failed", "/p/kept.so");
    add(old, "gone", "a tool whose plugin was removed", "/p/gone.so");
    th_registry_start(old);
    th_registry *next = th_registry_new();
    add(next, "fresh", "a tool loaded afresh", "/p/fresh.so");
    ck_assert(th_reload_had_plugin(old, "/p/kept.so"));
    ck_assert(!th_reload_had_plugin(next, "/p/kept.so"));
    ck_assert_uint_eq(th_reload_keep_plugin(next, old, "/p/kept.so"), 1);
    /* A name already taken is refused, as for any tool. */
    th_err err;
    ck_assert_int_eq(th_registry_borrow(next, old, 0, &err), TH_ERR_VALUE);
    ck_assert_ptr_nonnull(strstr(err.msg, "already registered"));
    th_registry_start(next);
    ck_assert_uint_eq(th_registry_count(next), 2);
    ck_assert_ptr_eq(th_registry_get(next, "kept"), th_registry_get(old, "kept"));
    ck_assert(!th_registry_same_tools(old, next));
    destroyed = 0;
    th_registry_unref(old);
    ck_assert_int_eq(destroyed, 0); /* NEXT still holds it */
    th_registry_unref(next);
    ck_assert_int_eq(destroyed, 3); /* fresh, then old's kept and gone */
}
END_TEST

START_TEST(the_subscription_table_acknowledges_what_it_honours)
{
    th_subs *subs = th_subs_new();
    char msg[256];
    json_object *id = json_object_new_string("s1");
    json_object *filter = json_tokener_parse("{\"toolsListChanged\":true,\"promptsListChanged\":true,"
                                             "\"resourceSubscriptions\":[\"file:///a\"],\"unknownThing\":1}");
    json_object *ack = th_subs_listen(subs, id, filter, msg, sizeof msg);
    ck_assert_ptr_nonnull(ack);
    /* Only what this server honours today is acknowledged. */
    ck_assert_str_eq(json_object_to_json_string_ext(ack, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
                     "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/subscriptions/acknowledged\",\"params\":{"
                     "\"_meta\":{\"io.modelcontextprotocol/subscriptionId\":\"s1\"},"
                     "\"notifications\":{\"toolsListChanged\":true,\"resourceSubscriptions\":[\"file:///a\"],\"promptsListChanged\":true}}}");
    json_object_put(ack);
    ck_assert_ptr_null(th_subs_listen(subs, id, filter, msg, sizeof msg));
    ck_assert_ptr_nonnull(strstr(msg, "Invalid Request"));
    json_object_put(filter);
    filter = json_tokener_parse("{\"toolsListChanged\":1}");
    json_object *id2 = json_object_new_int(2);
    ck_assert_ptr_null(th_subs_listen(subs, id2, filter, msg, sizeof msg));
    ck_assert_str_eq(msg, "Invalid params: notifications.toolsListChanged must be a boolean");
    json_object_put(filter);
    ck_assert_uint_eq(th_subs_count(subs), 1);

    json_object *out = json_object_new_array();
    th_subs_event(subs, TH_SUB_TOOLS_LIST_CHANGED, NULL, out);
    ck_assert_uint_eq(json_object_array_length(out), 1);
    ck_assert_str_eq(th_subs_method(TH_SUB_TOOLS_LIST_CHANGED), "notifications/tools/list_changed");
    /* Not asked for: no resource list change; only the URI asked for is told. */
    th_subs_event(subs, TH_SUB_RESOURCES_LIST_CHANGED, NULL, out);
    th_subs_event(subs, TH_SUB_RESOURCE_UPDATED, "file:///b", out);
    ck_assert_uint_eq(json_object_array_length(out), 1);
    th_subs_event(subs, TH_SUB_RESOURCE_UPDATED, "file:///a", out);
    ck_assert_uint_eq(json_object_array_length(out), 2);
    ck_assert_str_eq(json_object_to_json_string_ext(json_object_array_get_idx(out, 1),
                                                    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
                     "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/resources/updated\",\"params\":{"
                     "\"_meta\":{\"io.modelcontextprotocol/subscriptionId\":\"s1\"},\"uri\":\"file:///a\"}}");
    json_object_put(out);
    out = json_object_new_array();
    th_subs_event(subs, TH_SUB_TOOLS_LIST_CHANGED, NULL, out);
    char *key = th_rpc_id_key(id);
    ck_assert(th_subs_cancel(subs, key));
    ck_assert(!th_subs_cancel(subs, key));
    free(key);
    th_subs_event(subs, TH_SUB_TOOLS_LIST_CHANGED, NULL, out);
    ck_assert_uint_eq(json_object_array_length(out), 1); /* nothing more once cancelled */
    json_object_put(out);
    json_object_put(id);
    json_object_put(id2);
    th_subs_free(subs);
}
END_TEST

static Suite *hot_swap_suite(void)
{
    Suite *s = suite_create("hot swap");
    TCase *tc = tcase_create("swap");
    tcase_add_test(tc, a_swap_tells_each_era_only_when_the_tools_differ);
    tcase_add_test(tc, a_cursor_from_before_a_swap_is_refused);
    tcase_add_test(tc, a_borrowed_tool_lives_as_long_as_its_last_registry);
    tcase_add_test(tc, the_subscription_table_acknowledges_what_it_honours);
    suite_add_tcase(s, tc);
    return s;
}

static void nothing(void)
{
}

TH_CHECK_MAIN_WITH(hot_swap_suite, nothing, nothing)
