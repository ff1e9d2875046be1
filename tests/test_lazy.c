/* SPDX-License-Identifier: MIT */
/*
** test_lazy.c: --lazy-load's registration (src/plugin/lazy.c) against a real
** plugin file: a tool listed as its plugin registers it opens the plugin at
** the first call and runs; a listing the opened plugin no longer matches
** (other schemas, or the tool gone) fails its calls naming the file, and
** the plugin is opened once for all its tools.
*/
#define _XOPEN_SOURCE 700 /* mkdtemp */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "call/callctx.h"
#include "plugin/lazy.h"
#include "check_main.h"

#define GOOD_SO TEST_BUILDDIR "/plugins/.libs/good.so"
#define GOOD_SCHEMA "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}},\"required\":[\"text\"]}"

static char dir[PATH_MAX / 2], plugin[PATH_MAX];

/* good.so copied into a private directory (the trust rule's), listed. */
static void setup(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/th-lazy-XXXXXX", base && *base ? base : "/tmp");
    ck_assert_msg(mkdtemp(dir) != NULL, "mkdtemp: %s", strerror(errno));
    snprintf(plugin, sizeof plugin, "%s/good.so", dir);
    char cmd[PATH_MAX * 3 + 64];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s' && chmod 0644 '%s'", GOOD_SO, plugin, plugin);
    ck_assert_int_eq(system(cmd), 0);
}

static void teardown(void)
{
    unlink(plugin);
    rmdir(dir);
}

/* A descriptor array as a scan reports it: NAME with input schema SCHEMA. */
static json_object *listing(const char *name, const char *schema)
{
    json_object *tools = json_object_new_array(), *d = json_object_new_object();
    json_object_object_add(d, "name", json_object_new_string(name));
    json_object_object_add(d, "description", json_object_new_string("A tool as the scan listed it."));
    json_object_object_add(d, "input_schema", json_object_new_string(schema));
    json_object_array_add(tools, d);
    return tools;
}

/* Call REG's tool NAME with {"text":"hi"}; the result's first text and
 * whether it is an error. */
static char *call(th_registry *reg, const char *name, bool *is_error)
{
    const th_entry *e = th_registry_get(reg, name);
    ck_assert_ptr_nonnull(e);
    th_call_hooks hooks = {0};
    th_call *c = th_call_new(name, &hooks);
    json_object *args = json_tokener_parse("{\"text\":\"hi\"}");
    th_rc rc = e->handler(th_call_handle(c), args, e->user_data);
    json_object *r = th_call_finish(c, rc), *v;
    json_object_put(args);
    *is_error = json_object_object_get_ex(r, "isError", &v) && json_object_get_boolean(v);
    json_object *content = json_object_object_get(r, "content");
    char *text = strdup(json_object_get_string(json_object_object_get(json_object_array_get_idx(content, 0), "text")));
    json_object_put(r);
    th_call_free(c);
    return text;
}

static th_registry *register_listing(json_object *tools, th_load_stats *stats)
{
    char *paths[] = {plugin};
    th_load_opts opts = {0};
    th_lazy_set *set = th_lazy_set_new(paths, 1, &opts);
    ck_assert_ptr_nonnull(set);
    th_registry *reg = th_registry_new();
    th_lazy_register(set, reg, 0, tools, stats);
    th_lazy_set_unref(set); /* the tools keep it */
    json_object_put(tools);
    th_registry_start(reg);
    return reg;
}

START_TEST(a_matching_listing_runs_the_plugin)
{
    th_load_stats stats = {0};
    th_registry *reg = register_listing(listing("good", GOOD_SCHEMA), &stats);
    ck_assert_uint_eq(stats.tools_loaded, 1);
    ck_assert_uint_eq(stats.plugins_loaded, 1);
    for (int i = 0; i < 2; i++) {
        bool err;
        char *text = call(reg, "good", &err);
        ck_assert_msg(!err, "%s", text);
        ck_assert_str_eq(text, "good says: hi");
        free(text);
    }
    th_registry_unref(reg);
}
END_TEST

/* _i: 0 other schemas, 1 a tool the plugin does not register. */
START_TEST(a_stale_listing_fails_its_calls_naming_the_file)
{
    static const char *const names[] = {"good", "good_gone"};
    th_load_stats stats = {0};
    th_registry *reg =
        register_listing(listing(names[_i], "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\"}}}"),
                         &stats);
    bool err;
    char *text = call(reg, names[_i], &err);
    ck_assert(err);
    ck_assert_msg(strstr(text, "changed since its tools were listed") && strstr(text, plugin), "%s", text);
    ck_assert_msg(strstr(text, _i == 0 ? "has other schemas now" : "is no longer registered"), "%s", text);
    free(text);
    th_registry_unref(reg);
}
END_TEST

static Suite *lazy_suite(void)
{
    Suite *s = suite_create("lazy");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, a_matching_listing_runs_the_plugin);
    tcase_add_loop_test(tc, a_stale_listing_fails_its_calls_naming_the_file, 0, 2);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN(lazy_suite)
