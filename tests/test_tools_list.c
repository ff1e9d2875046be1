/* SPDX-License-Identifier: MIT */
/*
** test_tools_list.c: tools/list is serialised once per registry version
** and revision: a second identical tools/list does not serialise
** the tools again (an input schema that counts its serialisations shows
** it), each page is serialised once, and a change to the registry gives it
** a new version and drops what was derived from the old one.
*/
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <json-c/printbuf.h>

#include "base/log.h"
#include "plugin/registry.h"
#include "protocol/jsonrpc.h"
#include "protocol/mcp.h"
#include "check_main.h"

static int serialised; /* calls of count_schema */
static char *last;     /* the last message sent, as text */

#define SCHEMA "{\"type\":\"object\",\"properties\":{}}"

/* json-c serializer of the tools' input schemas: SCHEMA, counted. */
static int count_schema(json_object *o, struct printbuf *pb, int level, int flags)
{
    (void)o;
    (void)level;
    (void)flags;
    serialised++;
    printbuf_memappend(pb, SCHEMA, (int)strlen(SCHEMA));
    return 0;
}

static void keep_send(void *ctx, json_object *msg)
{
    (void)ctx;
    size_t len;
    free(last);
    last = strdup(th_rpc_serialize(msg, &len));
    json_object_put(msg);
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

static void add(th_registry *reg, const char *name)
{
    th_tool t = {TH_TOOL_INIT, .name = name, .description = "a tool that does nothing", .input_schema = SCHEMA,
                 .handler = nop};
    th_err err;
    ck_assert_int_eq(th_registry_add(reg, &t, NULL, &err), TH_OK);
    json_object_set_serializer(th_registry_at(reg, th_registry_count(reg) - 1)->input_schema, count_schema, NULL,
                               NULL);
}

static void handle(th_mcp_session *s, const char *line)
{
    th_mcp_session_handle(s, line, strlen(line));
}

#define LIST(id, cursor)                                                                                               \
    "{\"jsonrpc\":\"2.0\",\"id\":" #id ",\"method\":\"tools/list\"" cursor "}"

START_TEST(tools_list_is_serialised_once_per_page)
{
    th_log_set_sink(quiet, NULL);
    th_registry *reg = th_registry_new();
    add(reg, "one");
    add(reg, "two");
    add(reg, "three");
    th_registry_start(reg);
    th_mcp_config cfg;
    th_mcp_config_default(&cfg);
    cfg.page_size = 2;
    th_mcp *mcp = th_mcp_new(reg, &cfg);
    th_mcp_session *s = th_mcp_session_new(mcp, keep_send, NULL);
    handle(s, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\","
              "\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
    handle(s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");

    serialised = 0;
    handle(s, LIST(1, ""));
    ck_assert_int_eq(serialised, 2); /* the first page: two tools */
    char *first = strdup(last);
    handle(s, LIST(2, ""));
    ck_assert_msg(serialised == 2, "the same page was serialised again (%d schemas)", serialised);
    /* The same text, with its own id. */
    ck_assert_str_eq(strstr(last, "\"result\""), strstr(first, "\"result\""));
    ck_assert_ptr_nonnull(strstr(last, "\"id\":2"));
    ck_assert_ptr_nonnull(strstr(last, "\"nextCursor\":\"th1:2@"));

    handle(s, LIST(3, ",\"params\":{\"cursor\":\"th1:2\"}"));
    ck_assert_int_eq(serialised, 3); /* the second page: one more tool */
    ck_assert_ptr_nonnull(strstr(last, "\"name\":\"three\""));
    handle(s, LIST(4, ",\"params\":{\"cursor\":\"th1:2\"}"));
    ck_assert_int_eq(serialised, 3);

    free(first);
    th_mcp_session_free(s);
    ck_assert(th_mcp_free(mcp, th_now_ms() + 5000));
    th_registry_unref(reg);
    free(last);
    last = NULL;
}
END_TEST

START_TEST(a_change_gives_a_new_version_and_drops_the_memos)
{
    th_log_set_sink(quiet, NULL);
    th_registry *reg = th_registry_new(), *other = th_registry_new();
    unsigned long long v0 = th_registry_version(reg);
    ck_assert_uint_ne(v0, th_registry_version(other));
    ck_assert_str_eq(th_registry_memo_put(reg, "k", "text"), "text");
    ck_assert_str_eq(th_registry_memo_put(reg, "k", "later"), "text"); /* the first stays */
    ck_assert_str_eq(th_registry_memo_get(reg, "k"), "text");
    ck_assert_ptr_null(th_registry_memo_get(other, "k"));
    add(reg, "one");
    ck_assert_uint_ne(th_registry_version(reg), v0);
    ck_assert_ptr_null(th_registry_memo_get(reg, "k"));
    unsigned long long v1 = th_registry_version(reg);
    th_registry_memo_put(reg, "k", "again");
    th_registry_truncate(reg, 0);
    ck_assert_uint_ne(th_registry_version(reg), v1);
    ck_assert_ptr_null(th_registry_memo_get(reg, "k"));
    th_registry_unref(reg);
    th_registry_unref(other);
}
END_TEST

static Suite *tools_list_suite(void)
{
    Suite *s = suite_create("tools_list");
    TCase *tc = tcase_create("serialised once");
    tcase_add_test(tc, tools_list_is_serialised_once_per_page);
    tcase_add_test(tc, a_change_gives_a_new_version_and_drops_the_memos);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN_WITH(tools_list_suite, th_check_nothing, th_check_nothing)
