/* SPDX-License-Identifier: MIT */
/*
** test_qualname.c: doc/registry-rules.md, 7, against src/plugin/qualname.c:
** every example of building and parsing a qualified name, its error texts
** word for word; then toolboxes in a registry: exposed names,
** _meta fields, description prefixes, the 64-character rule, duplicates
** across toolboxes with and without qualified names, and th_tool_resolve.
*/
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "plugin/cache.h"
#include "plugin/qualname.h"
#include "plugin/registry.h"
#include "check_main.h"

#define EMPTY_SCHEMA "{\"type\":\"object\",\"properties\":{}}"

/* ---- generateToolName -------------------------------------------------- */

static void expect_make(const char *toolbox, const char *server, const char *tool, const char *want)
{
    char *got = th_qualname_make(toolbox, server, tool);
    ck_assert_ptr_nonnull(got);
    ck_assert_str_eq(got, want);
    free(got);
}

START_TEST(test_generate_examples)
{
    expect_make("dev", "filesystem", "read_file", "dev__filesystem__read_file");
    expect_make("prod", "memory", "store_value_async", "prod__memory__store_value_async");
    expect_make("test", "server", "my__special__tool", "test__server__my__special__tool");
}
END_TEST

/* Building qualified names. */
START_TEST(test_generate_single_underscore_in_tool_name)
{
    expect_make("dev", "filesystem", "read_file", "dev__filesystem__read_file");
}
END_TEST

START_TEST(test_generate_multiple_underscores_in_tool_name)
{
    expect_make("dev", "filesystem", "read_file_async_v2", "dev__filesystem__read_file_async_v2");
}
END_TEST

START_TEST(test_generate_double_underscores_in_tool_name)
{
    expect_make("dev", "server", "my__special__tool", "dev__server__my__special__tool");
}
END_TEST

START_TEST(test_generate_refuses_empty_parts)
{
    ck_assert_ptr_null(th_qualname_make("", "s", "t"));
    ck_assert_ptr_null(th_qualname_make("b", "", "t"));
    ck_assert_ptr_null(th_qualname_make("b", "s", ""));
    ck_assert_ptr_null(th_qualname_make(NULL, "s", "t"));
}
END_TEST

/* ---- parseToolName ----------------------------------------------------- */

static void expect_parse(const char *name, const char *toolbox, const char *server, const char *tool)
{
    th_qualname q;
    ck_assert_msg(th_qualname_parse(name, &q), "%s should parse", name);
    ck_assert_int_eq((int)q.toolbox_len, (int)strlen(toolbox));
    ck_assert(strncmp(q.toolbox, toolbox, q.toolbox_len) == 0);
    ck_assert_int_eq((int)q.server_len, (int)strlen(server));
    ck_assert(strncmp(q.server, server, q.server_len) == 0);
    ck_assert_str_eq(q.tool, tool);
}

static void expect_null(const char *name)
{
    th_qualname q;
    ck_assert_msg(!th_qualname_parse(name, &q), "%s should not parse", name ? name : "NULL");
}

START_TEST(test_parse_examples)
{
    expect_parse("dev__filesystem__read_file", "dev", "filesystem", "read_file");
    expect_parse("prod__memory__store_value_async", "prod", "memory", "store_value_async");
    expect_null("dev__filesystem_read_file"); /* old format */
    expect_null("invalid");                   /* missing components */
}
END_TEST

/* Parsing qualified names. */
START_TEST(test_parse_valid_tool_name_correctly)
{
    expect_parse("dev__filesystem__read_file", "dev", "filesystem", "read_file");
}
END_TEST

START_TEST(test_parse_returns_null_for_old_format)
{
    expect_null("dev__filesystem_read_file");
}
END_TEST

START_TEST(test_parse_returns_null_for_invalid_format)
{
    expect_null("invalid");
    expect_null("dev__only_two_parts");
}
END_TEST

START_TEST(test_parse_handles_double_underscores_in_tool)
{
    expect_parse("dev__server__tool__with__extras", "dev", "server", "tool__with__extras");
}
END_TEST

/* Validation rule 2: three non-empty parts. */
START_TEST(test_parse_every_part_non_empty)
{
    expect_null("");
    expect_null(NULL);
    expect_null("__server__tool");
    expect_null("dev____tool");
    expect_null("dev__server__");
    expect_null("______");
}
END_TEST

START_TEST(test_parse_inverts_generate)
{
    const char *tools[] = {"t", "read_file", "my__special__tool", "a_", "_a", "x__"};
    for (size_t i = 0; i < sizeof tools / sizeof *tools; i++) {
        char *name = th_qualname_make("box-1", "plug_in", tools[i]);
        expect_parse(name, "box-1", "plug_in", tools[i]);
        free(name);
    }
}
END_TEST

START_TEST(test_part_rule)
{
    ck_assert_ptr_null(th_qualname_part_rule("dev"));
    ck_assert_ptr_null(th_qualname_part_rule("Prod-2"));
    ck_assert_ptr_null(th_qualname_part_rule("my_box"));
    ck_assert_ptr_nonnull(th_qualname_part_rule(""));
    ck_assert_ptr_nonnull(th_qualname_part_rule("a.b"));
    ck_assert_ptr_nonnull(th_qualname_part_rule("a b"));
    ck_assert_str_eq(th_qualname_part_rule("a__b"), "must not contain '__' (the separator of qualified names)");
    ck_assert_str_eq(th_qualname_part_rule("ab_"), "must not end with '_' (it would merge with the '__' after it)");
}
END_TEST

/* ---- error texts ------------------------------------------------------- */

START_TEST(test_error_texts_word_for_word)
{
    char buf[512];
    th_qualname_err_format(buf, sizeof buf, "dev__filesystem_read_file");
    ck_assert_str_eq(buf, "Invalid tool name format 'dev__filesystem_read_file'. Expected format: "
                          "{toolbox}__{server}__{tool} (note: double underscores between all components)");
    th_qualname_err_toolbox(buf, sizeof buf, "stage__x", 5);
    ck_assert_str_eq(buf, "Toolbox 'stage' not found");
    th_qualname_err_server(buf, sizeof buf, "dev", 3, "nope", 4);
    ck_assert_str_eq(buf, "Server 'nope' not found in toolbox 'dev'");
}
END_TEST

/* ---- --plugin-dir values ----------------------------------------------- */

START_TEST(test_split_spec)
{
    char *name;
    const char *dir;
    th_err err;
    ck_assert_int_eq(th_naming_split_spec("dev=/srv/tools", &name, &dir, &err), TH_OK);
    ck_assert_str_eq(name, "dev");
    ck_assert_str_eq(dir, "/srv/tools");
    free(name);
    ck_assert_int_eq(th_naming_split_spec("/srv/tools", &name, &dir, &err), TH_OK);
    ck_assert_str_eq(name, TH_DEFAULT_TOOLBOX);
    ck_assert_str_eq(dir, "/srv/tools");
    free(name);
    /* A '/' before the '=': a path with '=' in it. */
    ck_assert_int_eq(th_naming_split_spec("./a=b", &name, &dir, &err), TH_OK);
    ck_assert_str_eq(name, TH_DEFAULT_TOOLBOX);
    ck_assert_str_eq(dir, "./a=b");
    free(name);
    ck_assert_int_eq(th_naming_split_spec("bad__box=/x", &name, &dir, &err), TH_ERR_VALUE);
    ck_assert_ptr_null(name);
    ck_assert_str_eq(err.msg, "--plugin-dir bad__box=/x: toolbox name 'bad__box' must not contain '__' "
                              "(the separator of qualified names)");
    ck_assert_int_eq(th_naming_split_spec("=/x", &name, &dir, &err), TH_ERR_VALUE);
    ck_assert_str_eq(err.msg, "--plugin-dir =/x: toolbox name '' must not be empty");
    ck_assert_int_eq(th_naming_split_spec("dev=", &name, &dir, &err), TH_ERR_VALUE);
    ck_assert_str_eq(err.msg, "--plugin-dir dev=: the directory after '=' is empty");
}
END_TEST

/* ---- toolboxes in a registry ------------------------------------------- */

static th_rc handler(th_call *call, json_object *args, void *user_data)
{
    (void)call;
    (void)args;
    (void)user_data;
    return TH_OK;
}

static th_tool tool_named(const char *name)
{
    th_tool t = {
        TH_TOOL_INIT,
        .name = name,
        .description = "A tool for the toolbox tests.",
        .input_schema = EMPTY_SCHEMA,
        .handler = handler,
    };
    return t;
}

/* A registry with toolboxes dev (/tb/dev and /tb/dev2/) and prod (/tb/prod). */
static th_registry *boxed(bool qualified, const char *long_box)
{
    th_naming *n = th_naming_new(qualified);
    th_err err;
    ck_assert_ptr_nonnull(n);
    ck_assert_int_eq(th_naming_add(n, "dev", "/tb/dev", &err), TH_OK);
    ck_assert_int_eq(th_naming_add(n, "dev", "/tb/dev2/", &err), TH_OK);
    ck_assert_int_eq(th_naming_add(n, "prod", "/tb/prod", &err), TH_OK);
    if (long_box)
        ck_assert_int_eq(th_naming_add(n, long_box, "/tb/long", &err), TH_OK);
    th_registry *reg = th_registry_new();
    ck_assert_ptr_nonnull(reg);
    ck_assert_int_eq(th_registry_set_naming(reg, n), TH_OK);
    th_naming_unref(n); /* the registry holds its own reference */
    return reg;
}

static void add_ok(th_registry *reg, const char *name, const char *origin)
{
    th_tool t = tool_named(name);
    th_err err;
    th_rc rc = th_registry_add(reg, &t, origin, &err);
    ck_assert_msg(rc == TH_OK, "%s from %s: %s", name, origin, err.msg);
}

START_TEST(test_registry_exposes_qualified_names)
{
    th_registry *reg = boxed(true, NULL);
    add_ok(reg, "read_file", "/tb/dev/filesystem.so");
    add_ok(reg, "my__special__tool", "/tb/dev2//server.so"); /* as the loader spells "dev2/" */
    add_ok(reg, "read_file", "/tb/prod/filesystem.so");     /* same tool, other toolbox */
    add_ok(reg, "hostonly", NULL);                           /* no plugin: no toolbox */
    ck_assert_int_eq((int)th_registry_count(reg), 4);

    const th_entry *e = th_registry_get(reg, "dev__filesystem__read_file");
    ck_assert_ptr_nonnull(e);
    ck_assert(e->qualified);
    ck_assert_str_eq(e->original_name, "read_file");
    ck_assert_str_eq(e->toolbox, "dev");
    ck_assert_str_eq(e->plugin, "filesystem");
    ck_assert_str_eq(e->description, "[dev/filesystem] A tool for the toolbox tests.");
    e = th_registry_get(reg, "dev__server__my__special__tool");
    ck_assert_ptr_nonnull(e);
    ck_assert_str_eq(e->original_name, "my__special__tool");
    ck_assert_ptr_nonnull(th_registry_get(reg, "prod__filesystem__read_file"));
    ck_assert_ptr_null(th_registry_get(reg, "read_file"));
    e = th_registry_get(reg, "hostonly");
    ck_assert_ptr_nonnull(e);
    ck_assert(!e->qualified);
    ck_assert_str_eq(e->description, "A tool for the toolbox tests.");
    th_registry_unref(reg);
}
END_TEST

START_TEST(test_registry_unqualified_keeps_names)
{
    th_registry *reg = boxed(false, NULL);
    add_ok(reg, "read_file", "/tb/dev/filesystem.so");
    const th_entry *e = th_registry_get(reg, "read_file");
    ck_assert_ptr_nonnull(e);
    ck_assert(!e->qualified);
    ck_assert_str_eq(e->toolbox, "dev");
    ck_assert_str_eq(e->plugin, "filesystem");
    ck_assert_str_eq(e->description, "A tool for the toolbox tests.");
    th_registry_unref(reg);
}
END_TEST

/* Rule 4.6: a name registered twice is a duplicate; across toolboxes the
 * message names both origins and their toolboxes. */
START_TEST(test_duplicate_across_toolboxes_unqualified)
{
    th_registry *reg = boxed(false, NULL);
    add_ok(reg, "read_file", "/tb/dev/filesystem.so");
    th_tool t = tool_named("read_file");
    th_err err;
    ck_assert_int_eq(th_registry_add(reg, &t, "/tb/prod/filesystem.so", &err), TH_ERR_VALUE);
    ck_assert_str_eq(err.msg, "Tool 'read_file' already registered (first by /tb/dev/filesystem.so in toolbox "
                              "'dev'; again by /tb/prod/filesystem.so in toolbox 'prod')");
    /* Within one toolbox, the message it always had. */
    ck_assert_int_eq(th_registry_add(reg, &t, "/tb/dev2/other.so", &err), TH_ERR_VALUE);
    ck_assert_str_eq(err.msg, "Tool 'read_file' already registered (first by /tb/dev/filesystem.so)");
    ck_assert_int_eq((int)th_registry_count(reg), 1);
    th_registry_unref(reg);
}
END_TEST

START_TEST(test_duplicate_qualified_same_plugin_name_in_one_toolbox)
{
    th_registry *reg = boxed(true, NULL);
    add_ok(reg, "read_file", "/tb/dev/filesystem.so");
    th_tool t = tool_named("read_file");
    th_err err;
    /* dev spans two directories: both filesystem.so give one name. */
    ck_assert_int_eq(th_registry_add(reg, &t, "/tb/dev2//filesystem.so", &err), TH_ERR_VALUE);
    ck_assert_str_eq(err.msg,
                     "Tool 'dev__filesystem__read_file' already registered (first by /tb/dev/filesystem.so)");
    th_registry_unref(reg);
}
END_TEST

START_TEST(test_qualified_name_longer_than_64_refused)
{
    /* 42 + 2 + 10 + 2 + 8 = 64: accepted; one more character: refused. */
    const char *box42 = "abcdefghijabcdefghijabcdefghijabcdefghijab";
    th_registry *reg = boxed(true, box42);
    add_ok(reg, "read_abc", "/tb/long/filesystem.so");
    const th_entry *e = th_registry_at(reg, 0);
    ck_assert_int_eq((int)strlen(e->name), 64);
    th_tool t = tool_named("read_abcd");
    th_err err;
    ck_assert_int_eq(th_registry_add(reg, &t, "/tb/long/filesystem.so", &err), TH_ERR_VALUE);
    ck_assert_str_eq(err.msg, "Tool qualified name "
                              "'abcdefghijabcdefghijabcdefghijabcdefghijab__filesystem__read_abcd' is 65 chars, "
                              "longer than the 64 MCP allows (toolbox 'abcdefghijabcdefghijabcdefghijabcdefghijab' "
                              "+ plugin 'filesystem' + tool 'read_abcd'; shorten the toolbox name)");
    ck_assert_int_eq((int)th_registry_count(reg), 1);
    /* The registry's own rules still come first, on the plugin's name. */
    t = tool_named("Bad");
    ck_assert_int_eq(th_registry_add(reg, &t, "/tb/long/filesystem.so", &err), TH_ERR_VALUE);
    ck_assert_str_eq(err.msg, "Tool name 'Bad' invalid (must be lowercase, alphanumeric, underscores)");
    th_registry_unref(reg);
}
END_TEST

START_TEST(test_plugin_name_that_cannot_be_a_part_refused)
{
    th_registry *reg = boxed(true, NULL);
    th_tool t = tool_named("a");
    th_err err;
    ck_assert_int_eq(th_registry_add(reg, &t, "/tb/dev/a__b.so", &err), TH_ERR_VALUE);
    ck_assert_str_eq(err.msg, "plugin name 'a__b' cannot be part of a qualified tool name: it must not contain "
                              "'__' (the separator of qualified names)");
    ck_assert_int_eq(th_registry_add(reg, &t, "/tb/dev/ab_.so", &err), TH_ERR_VALUE);
    ck_assert_int_eq((int)th_registry_count(reg), 0);
    th_registry_unref(reg);
}
END_TEST

START_TEST(test_one_directory_one_toolbox)
{
    th_naming *n = th_naming_new(true);
    th_err err;
    ck_assert_int_eq(th_naming_add(n, "dev", "/tb/dev", &err), TH_OK);
    ck_assert_int_eq(th_naming_add(n, "dev", "/tb/dev/", &err), TH_OK); /* the same toolbox again: fine */
    ck_assert_int_eq(th_naming_add(n, "prod", "/tb/dev//", &err), TH_ERR_VALUE);
    ck_assert_str_eq(err.msg, "directory /tb/dev is already the toolbox 'dev'; one directory cannot be two toolboxes");
    ck_assert_int_eq(th_naming_add(n, "bad__name", "/tb/x", &err), TH_ERR_VALUE);
    ck_assert_int_eq((int)th_naming_count(n), 2);
    ck_assert_str_eq(th_naming_toolbox_at(n, 1), "dev");
    ck_assert(th_naming_has_toolbox(n, "dev", 3));
    ck_assert(!th_naming_has_toolbox(n, "prod", 4));
    th_naming_unref(n);
}
END_TEST

START_TEST(test_set_naming_only_when_empty)
{
    th_registry *reg = th_registry_new();
    add_ok(reg, "one", NULL);
    th_naming *n = th_naming_new(true);
    ck_assert_int_eq(th_registry_set_naming(reg, n), TH_ERR_MISUSE);
    th_naming_unref(n);
    th_registry_unref(reg);
}
END_TEST

/* ---- th_tool_resolve: what tools/call answers -------------------------- */

static void expect_refusal(const th_registry *reg, const char *name, const char *want)
{
    char why[512] = "";
    ck_assert_ptr_null(th_tool_resolve(reg, name, why, sizeof why));
    ck_assert_str_eq(why, want);
}

START_TEST(test_resolve_qualified)
{
    th_registry *reg = boxed(true, NULL);
    add_ok(reg, "read_file", "/tb/dev/filesystem.so");
    add_ok(reg, "my__special__tool", "/tb/dev/server.so");
    char why[512];
    const th_entry *e = th_tool_resolve(reg, "dev__server__my__special__tool", why, sizeof why);
    ck_assert_ptr_nonnull(e);
    ck_assert_str_eq(e->original_name, "my__special__tool");
    ck_assert_ptr_eq(th_tool_resolve(reg, "dev__filesystem__read_file", why, sizeof why),
                     th_registry_get(reg, "dev__filesystem__read_file"));

    expect_refusal(reg, "dev__filesystem_read_file",
                   "Invalid tool name format 'dev__filesystem_read_file'. Expected format: "
                   "{toolbox}__{server}__{tool} (note: double underscores between all components)");
    expect_refusal(reg, "invalid",
                   "Invalid tool name format 'invalid'. Expected format: {toolbox}__{server}__{tool} "
                   "(note: double underscores between all components)");
    expect_refusal(reg, "read_file",
                   "Invalid tool name format 'read_file'. Expected format: {toolbox}__{server}__{tool} "
                   "(note: double underscores between all components)");
    expect_refusal(reg, "stage__filesystem__read_file", "Toolbox 'stage' not found");
    /* prod is configured but holds no tools: the server is what is missing. */
    expect_refusal(reg, "prod__filesystem__read_file", "Server 'filesystem' not found in toolbox 'prod'");
    expect_refusal(reg, "dev__memory__store_value_async", "Server 'memory' not found in toolbox 'dev'");
    expect_refusal(reg, "dev__filesystem__write_file", "Unknown tool: dev__filesystem__write_file");
    th_registry_unref(reg);
}
END_TEST

START_TEST(test_resolve_unqualified)
{
    th_registry *reg = boxed(false, NULL);
    add_ok(reg, "read_file", "/tb/dev/filesystem.so");
    char why[512];
    ck_assert_ptr_nonnull(th_tool_resolve(reg, "read_file", why, sizeof why));
    /* Without --qualified-names a qualified-looking name is just unknown. */
    expect_refusal(reg, "dev__filesystem__read_file", "Unknown tool: dev__filesystem__read_file");
    expect_refusal(reg, "nope", "Unknown tool: nope");
    th_registry_unref(reg);
    /* No naming at all: the registry as it always was. */
    reg = th_registry_new();
    add_ok(reg, "read_file", "/tb/dev/filesystem.so");
    ck_assert_ptr_nonnull(th_tool_resolve(reg, "read_file", why, sizeof why));
    ck_assert_ptr_null(th_registry_get(reg, "read_file")->toolbox);
    expect_refusal(reg, "nope", "Unknown tool: nope");
    th_registry_unref(reg);
}
END_TEST

/* ---- the registry cache's default file ---------------------------------- */

START_TEST(test_cache_file_depends_on_toolbox_names)
{
    setenv("XDG_CACHE_HOME", "/tmp/th-qualname-cache", 1);
    const char *dirs[] = {"/srv/a", "/srv/b"};
    const char *plain[] = {TH_DEFAULT_TOOLBOX, TH_DEFAULT_TOOLBOX};
    const char *named[] = {"dev", "prod"};
    const char *swapped[] = {"prod", "dev"};
    char *p0 = th_cache_default_path(dirs, 2);
    char *p1 = th_cache_default_path_named(dirs, plain, 2, false);
    char *p2 = th_cache_default_path_named(dirs, named, 2, false);
    char *p3 = th_cache_default_path_named(dirs, swapped, 2, false);
    char *p4 = th_cache_default_path_named(dirs, named, 2, true);
    ck_assert(p0 && p1 && p2 && p3 && p4);
    ck_assert_str_eq(p0, p1); /* plain directories keep their file */
    ck_assert_str_ne(p1, p2);
    ck_assert_str_ne(p2, p3);
    ck_assert_str_ne(p2, p4);
    ck_assert(strncmp(p2, "/tmp/th-qualname-cache/toolhost/registry-", 41) == 0);
    free(p0);
    free(p1);
    free(p2);
    free(p3);
    free(p4);
}
END_TEST

/* A long name cut to the buffer is cut at a whole UTF-8 character. */
START_TEST(test_resolve_refusal_is_valid_utf8)
{
    th_registry *reg = boxed(true, NULL);
    char name[700] = "dev__";
    for (size_t i = 5; i + 2 < sizeof name; i += 2)
        memcpy(name + i, "\xc3\xa9", 2); /* e-acute */
    name[sizeof name - 1] = '\0';
    char why[101];
    for (size_t size = 90; size <= sizeof why; size++) {
        ck_assert_ptr_null(th_tool_resolve(reg, name, why, size));
        ck_assert_msg(th_utf8_valid(why, strlen(why)), "size %zu: cut mid-character", size);
        ck_assert(strncmp(why, "Invalid tool name format 'dev__\xc3\xa9", 33) == 0);
    }
    th_registry_unref(reg);
}
END_TEST

static Suite *qualname_suite(void)
{
    Suite *s = suite_create("qualname");
    TCase *gen = tcase_create("generateToolName");
    tcase_add_test(gen, test_generate_examples);
    tcase_add_test(gen, test_generate_single_underscore_in_tool_name);
    tcase_add_test(gen, test_generate_multiple_underscores_in_tool_name);
    tcase_add_test(gen, test_generate_double_underscores_in_tool_name);
    tcase_add_test(gen, test_generate_refuses_empty_parts);
    suite_add_tcase(s, gen);

    TCase *parse = tcase_create("parseToolName");
    tcase_add_test(parse, test_parse_examples);
    tcase_add_test(parse, test_parse_valid_tool_name_correctly);
    tcase_add_test(parse, test_parse_returns_null_for_old_format);
    tcase_add_test(parse, test_parse_returns_null_for_invalid_format);
    tcase_add_test(parse, test_parse_handles_double_underscores_in_tool);
    tcase_add_test(parse, test_parse_every_part_non_empty);
    tcase_add_test(parse, test_parse_inverts_generate);
    tcase_add_test(parse, test_part_rule);
    tcase_add_test(parse, test_error_texts_word_for_word);
    tcase_add_test(parse, test_split_spec);
    suite_add_tcase(s, parse);

    TCase *reg = tcase_create("toolboxes");
    tcase_add_test(reg, test_registry_exposes_qualified_names);
    tcase_add_test(reg, test_registry_unqualified_keeps_names);
    tcase_add_test(reg, test_duplicate_across_toolboxes_unqualified);
    tcase_add_test(reg, test_duplicate_qualified_same_plugin_name_in_one_toolbox);
    tcase_add_test(reg, test_qualified_name_longer_than_64_refused);
    tcase_add_test(reg, test_plugin_name_that_cannot_be_a_part_refused);
    tcase_add_test(reg, test_one_directory_one_toolbox);
    tcase_add_test(reg, test_set_naming_only_when_empty);
    tcase_add_test(reg, test_resolve_qualified);
    tcase_add_test(reg, test_resolve_unqualified);
    tcase_add_test(reg, test_resolve_refusal_is_valid_utf8);
    tcase_add_test(reg, test_cache_file_depends_on_toolbox_names);
    suite_add_tcase(s, reg);
    return s;
}

static void quiet(void)
{
    th_log_set_threshold(TH_LOG_CRITICAL);
}

TH_CHECK_MAIN_WITH(qualname_suite, quiet, th_check_nothing)
