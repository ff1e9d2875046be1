/* SPDX-License-Identifier: MIT */
/*
** test_mcp_resources.c: integration tests of resources against the real
** toolhost, each in both isolation modes (loop index: none, process) and
** where it matters both eras: listing, reading (several parts, logging, each
** revision's not-found), subscriptions with updates announced by a plugin,
** a crashing and an oversized read function, and the registry cache. The
** bundled files plugin's own reads are test_bundled_plugins.c's.
*/
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mcp_harness.h"
#include "check_main.h"

#define RESFIX_SO TEST_BUILDDIR "/resplugins/.libs/resfix.so"
#define FILES_SO TOP_BUILDDIR "/plugins/.libs/files.so"

static const char *const modes[] = {"--isolation=none", "--isolation=process"};

static char *dir;
static char froot[64], outside[64];

/* A private plugin directory with resfix.so and files.so, and a files root
 * holding a text file, a binary one, a big one, a link inside and one out,
 * and two whose names a URI must percent-encode. */
static void setup(void)
{
    mh_global_setup();
    dir = mh_private_dir(RESFIX_SO, FILES_SO, NULL);
    snprintf(froot, sizeof froot, "/tmp/th-files-%ld", (long)getpid());
    snprintf(outside, sizeof outside, "/tmp/th-outside-%ld.txt", (long)getpid());
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "rm -rf %s && mkdir -p %s/sub && printf 'hello\\n' > %s/a.txt && printf '\\000\\001\\002' > %s/sub/b.bin "
             "&& head -c 5000 /dev/zero > %s/big && printf secret > %s && ln -s %s %s/out && ln -s a.txt %s/in && "
             "ln -s ../.. %s/sub/up && printf 'spaced\\n' > '%s/a b%%.txt' && printf 'accent\\n' > '%s/\xc3\xa9.txt' && "
             "printf 'a\\355\\240\\200b' > %s/sub/surrogate && printf 'a\\340\\200\\200b' > %s/sub/overlong && "
             "printf 'a\\364\\220\\200\\200b' > %s/sub/above && printf 'a\\364\\217\\277\\277b' > %s/sub/last",
             froot, froot, froot, froot, froot, outside, outside, froot, froot, froot, froot, froot, froot, froot, froot,
             froot);
    if (system(cmd) != 0) { /* before the runner: no ck_assert here */
        fprintf(stderr, "cannot create the files root %s\n", froot);
        exit(1);
    }
    setenv("TOOLHOST_FILES_ROOT", froot, 1);
    setenv("TOOLHOST_FILES_MAX_BYTES", "4096", 1);
}

static void teardown(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s %s", froot, outside);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", froot);
    mh_rm_dir(dir);
    mh_global_teardown();
}

static mh_proc *start(int mode, bool legacy)
{
    mh_proc *p = mh_spawn("-d", dir, modes[mode], "--no-registry-cache", NULL);
    if (legacy)
        mh_initialize(p, "2025-11-25");
    return p;
}

static int next_id = 100;

/* METHOD with PARAMS (JSON members, may be "") in the era; NOTES gets the
 * notifications before the response (may be NULL). */
static json_object *req(mh_proc *p, bool legacy, const char *method, const char *params, json_object *notes)
{
    char id[16];
    snprintf(id, sizeof id, "%d", ++next_id);
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"%s\",\"params\":{%s%s%s}}", id, method, params,
            legacy ? "" : (*params ? "," : ""), legacy ? "" : MH_MODERN_META);
    return mh_await(p, id, notes);
}

static json_object *read_uri(mh_proc *p, bool legacy, const char *uri)
{
    char params[512];
    snprintf(params, sizeof params, "\"uri\":\"%s\"", uri);
    return req(p, legacy, "resources/read", params, NULL);
}

START_TEST(test_list_and_capabilities)
{
    mh_proc *p = start(_i, true);
    json_object *o = req(p, true, "resources/list", "", NULL);
    /* Plugins in file name order: files' top-level listing in byte order
     * (links and directories left out; names percent-encoded where a URI
     * needs it), then resfix's five (its relative URI refused). */
    ck_assert_uint_eq(mh_len(o, "result resources"), 4 + 5);
    MH_ASSERT_STR(o, "result resources 0 uri", "file:///a%20b%25.txt");
    MH_ASSERT_STR(o, "result resources 0 name", "a b%.txt");
    MH_ASSERT_STR(o, "result resources 1 uri", "file:///a.txt");
    ck_assert_int_eq(json_object_get_int(mh_at(o, "result resources 1 size")), 6);
    MH_ASSERT_STR(o, "result resources 2 uri", "file:///big");
    MH_ASSERT_STR(o, "result resources 3 uri", "file:///%C3%A9.txt");
    MH_ASSERT_STR(o, "result resources 4 uri", "mem://hello");
    MH_ASSERT_STR(o, "result resources 4 title", "Hello");
    ck_assert_int_eq(json_object_get_int(mh_at(o, "result resources 4 size")), 17);
    ck_assert_str_eq(mh_json(mh_at(o, "result resources 4 annotations")), "{\"audience\":[\"user\"],\"priority\":0.5}");
    json_object_put(o);
    o = req(p, true, "resources/templates/list", "", NULL);
    ck_assert_uint_eq(mh_len(o, "result resourceTemplates"), 2);
    MH_ASSERT_STR(o, "result resourceTemplates 0 uriTemplate", "file:///{path}");
    MH_ASSERT_STR(o, "result resourceTemplates 1 uriTemplate", "mem://items/{id}");
    json_object_put(o);
    o = req(p, false, "server/discover", "", NULL);
    ck_assert(mh_has(o, "result capabilities resources"));
    /* 2026-07-28: subscribe is subscriptions/listen's resourceSubscriptions;
     * listChanged, as a reload may change the list. */
    ck_assert(json_object_get_boolean(mh_at(o, "result capabilities resources subscribe")));
    ck_assert(json_object_get_boolean(mh_at(o, "result capabilities resources listChanged")));
    json_object_put(o);
    char *err = mh_stderr(p);
    ck_assert_ptr_nonnull(strstr(err, "resource 'relative/path' refused: Resource uri 'relative/path' must be an "
                                      "absolute URI"));
    free(err);
    mh_finish(p);
}
END_TEST

/* --lazy-load opens a plugin at its first tool call; one that serves
 * resources is opened at start instead, so its resources are listed and
 * read (lazily they would have been registered as tools, or lost). */
START_TEST(test_lazy_load_keeps_resources)
{
    mh_proc *p = mh_spawn("-d", dir, "--isolation=none", "--lazy-load", "--no-registry-cache", NULL);
    json_object *o = req(p, false, "resources/read", "\"uri\":\"mem://hello\"", NULL);
    ck_assert_str_eq(mh_json(mh_at(o, "result contents")),
                     "[{\"uri\":\"mem://hello\",\"mimeType\":\"text/plain\",\"text\":\"hello from resfix\"}]");
    json_object_put(o);
    o = req(p, false, "tools/list", "", NULL);
    for (size_t i = 0; i < mh_len(o, "result tools"); i++) {
        const char *name = json_object_get_string(json_object_object_get(json_object_array_get_idx(mh_at(o, "result tools"), i), "name"));
        ck_assert_msg(strcmp(name, "hello") != 0 && strcmp(name, "files") != 0, "a resource listed as tool %s", name);
    }
    json_object_put(o);
    mh_finish(p);
}
END_TEST

START_TEST(test_read_in_both_eras)
{
    for (int era = 0; era < 2; era++) {
        bool legacy = era == 0;
        mh_proc *p = start(_i, legacy);
        json_object *notes = json_object_new_array();
        json_object *o = req(p, legacy, "resources/read", "\"uri\":\"mem://hello\"", notes);
        ck_assert_str_eq(mh_json(mh_at(o, "result contents")),
                         "[{\"uri\":\"mem://hello\",\"mimeType\":\"text/plain\",\"text\":\"hello from resfix\"}]");
        /* The read function's th_call_log reaches a legacy client. */
        ck_assert_uint_eq(json_object_array_length(notes), legacy ? 1 : 0);
        if (legacy)
            MH_ASSERT_STR(json_object_array_get_idx(notes, 0), "params data", "reading mem://hello");
        if (!legacy) {
            ck_assert_int_eq(json_object_get_int(mh_at(o, "result ttlMs")), 0);
            MH_ASSERT_STR(o, "result resultType", "complete");
        }
        json_object_put(o);
        json_object_put(notes);
        o = read_uri(p, legacy, "mem://items/42");
        ck_assert_uint_eq(mh_len(o, "result contents"), 2);
        MH_ASSERT_STR(o, "result contents 0 text", "item 42");
        MH_ASSERT_STR(o, "result contents 1 uri", "mem://items/meta");
        json_object_put(o);
        o = read_uri(p, legacy, "mem://blob");
        MH_ASSERT_STR(o, "result contents 0 blob", "AAEC");
        json_object_put(o);
        const char *missing[] = {"mem://nothing", "mem://items/missing"};
        for (int k = 0; k < 2; k++) {
            o = read_uri(p, legacy, missing[k]);
            ck_assert_int_eq(json_object_get_int(mh_at(o, "error code")), legacy ? -32002 : -32602);
            MH_ASSERT_STR(o, "error message", "Resource not found");
            MH_ASSERT_STR(o, "error data uri", missing[k]);
            json_object_put(o);
        }
        o = read_uri(p, legacy, "mem://items/refused");
        ck_assert_int_eq(json_object_get_int(mh_at(o, "error code")), -32602);
        MH_ASSERT_STR(o, "error message", "Invalid params: item 'refused' is off limits");
        json_object_put(o);
        o = read_uri(p, legacy, "mem://items/broken");
        ck_assert_int_eq(json_object_get_int(mh_at(o, "error code")), -32603);
        MH_ASSERT_STR(o, "error message", "Internal error: reading resource 'items' failed: the item store is down");
        json_object_put(o);
        if (!legacy) {
            o = req(p, false, "resources/subscribe", "\"uri\":\"mem://hello\"", NULL);
            ck_assert_int_eq(json_object_get_int(mh_at(o, "error code")), -32601);
            json_object_put(o);
        }
        mh_finish(p);
    }
}
END_TEST

START_TEST(test_subscribe_and_updates)
{
    mh_proc *p = start(_i, true);
    json_object *o = req(p, true, "resources/subscribe", "\"uri\":\"mem://items/7\"", NULL);
    ck_assert_str_eq(mh_json(mh_at(o, "result")), "{}");
    json_object_put(o);
    /* The plugin's own code announces updates (here from a tool, in the
     * worker in process isolation). */
    const char *uris[] = {"mem://items/7", "mem://hello"};
    for (int k = 0; k < 2; k++) {
        json_object *notes = json_object_new_array();
        char params[256];
        snprintf(params, sizeof params, "\"name\":\"resfix\",\"arguments\":{\"uri\":\"%s\"}", uris[k]);
        o = req(p, true, "tools/call", params, notes);
        MH_ASSERT_STR(o, "result content 0 text", "touched");
        json_object_put(o);
        /* The update may trail the result across the process boundary:
         * a ping after it is answered after it was routed. */
        mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":\"sync%d\",\"method\":\"ping\"}", k);
        char sync[32];
        snprintf(sync, sizeof sync, "\"sync%d\"", k);
        long long until = mh_now_ms() + MH_TIMEOUT_MS;
        while (k == 0 && json_object_array_length(notes) == 0 && mh_now_ms() < until) {
            json_object *n = mh_read(p, 100);
            if (n)
                json_object_array_add(notes, n);
        }
        json_object_put(mh_await(p, sync, notes));
        size_t updates = 0;
        for (size_t i = 0; i < json_object_array_length(notes); i++) {
            json_object *n = json_object_array_get_idx(notes, i);
            if (strcmp(mh_str(n, "method"), "notifications/resources/updated") == 0) {
                MH_ASSERT_STR(n, "params uri", "mem://items/7");
                updates++;
            }
        }
        ck_assert_uint_eq(updates, k == 0 ? 1 : 0); /* mem://hello has no subscriber */
        json_object_put(notes);
    }
    o = req(p, true, "resources/unsubscribe", "\"uri\":\"mem://items/7\"", NULL);
    ck_assert_str_eq(mh_json(mh_at(o, "result")), "{}");
    json_object_put(o);
    o = req(p, true, "resources/subscribe", "\"uri\":\"mem://nothing\"", NULL);
    ck_assert_int_eq(json_object_get_int(mh_at(o, "error code")), -32002);
    json_object_put(o);
    mh_finish(p);
}
END_TEST

START_TEST(test_crashing_read_in_a_worker)
{
    mh_proc *p = start(1, true);
    json_object *o = read_uri(p, true, "mem://items/crash");
    ck_assert_int_eq(json_object_get_int(mh_at(o, "error code")), -32603);
    ck_assert_ptr_nonnull(strstr(mh_str(o, "error message"), "resource 'mem://items/{id}' crashed: signal 6 (SIGABRT)"));
    json_object_put(o);
    /* The host keeps serving, and the worker comes back. */
    long long until = mh_now_ms() + MH_TIMEOUT_MS;
    for (;;) {
        o = read_uri(p, true, "mem://hello");
        bool ok = mh_has(o, "result");
        if (ok || mh_now_ms() > until) {
            MH_ASSERT_STR(o, "result contents 0 text", "hello from resfix");
            json_object_put(o);
            break;
        }
        json_object_put(o);
        usleep(50000);
    }
    mh_finish(p);
}
END_TEST

START_TEST(test_oversized_read_is_refused)
{
    mh_proc *p = mh_spawn("-d", dir, modes[_i], "--no-registry-cache", "--max-result-bytes=100000", NULL);
    mh_initialize(p, "2025-11-25");
    json_object *o = read_uri(p, true, "mem://items/huge");
    ck_assert_int_eq(json_object_get_int(mh_at(o, "error code")), -32603);
    ck_assert_ptr_nonnull(strstr(mh_str(o, "error message"), "max-result-bytes"));
    json_object_put(o);
    o = read_uri(p, true, "mem://blob");
    MH_ASSERT_STR(o, "result contents 0 blob", "AAEC");
    json_object_put(o);
    mh_finish(p);
}
END_TEST

START_TEST(test_registry_cache_keeps_resources)
{
    char cache[300];
    snprintf(cache, sizeof cache, "--registry-cache=/tmp/th-rescache-%ld.json", (long)getpid());
    for (int round = 0; round < 2; round++) {
        mh_proc *p = mh_spawn("-d", dir, "--isolation=process", cache, NULL);
        mh_initialize(p, "2025-11-25");
        json_object *o = req(p, true, "resources/templates/list", "", NULL);
        ck_assert_uint_eq(mh_len(o, "result resourceTemplates"), 2);
        json_object_put(o);
        o = read_uri(p, true, "mem://items/5");
        MH_ASSERT_STR(o, "result contents 0 text", "item 5");
        json_object_put(o);
        mh_finish(p);
    }
    unlink(cache + strlen("--registry-cache="));
}
END_TEST

/* A refused resource is a refusal: --strict exits on it, in both modes. */
START_TEST(test_strict_counts_a_refused_resource)
{
    mh_proc *p = mh_spawn("-d", dir, modes[_i], "--no-registry-cache", "--strict", NULL);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 1);
    char *err = mh_stderr(p);
    ck_assert_msg(strstr(err, "--strict: 1 refusal; exiting"), "%s", err);
    free(err);
    mh_free(p);
}
END_TEST

static Suite *mcp_resources_suite(void)
{
    Suite *s = suite_create("mcp_resources");
    TCase *tc = tcase_create("both_modes");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_loop_test(tc, test_list_and_capabilities, 0, 2);
    tcase_add_loop_test(tc, test_read_in_both_eras, 0, 2);
    tcase_add_loop_test(tc, test_subscribe_and_updates, 0, 2);
    tcase_add_loop_test(tc, test_oversized_read_is_refused, 0, 2);
    tcase_add_loop_test(tc, test_strict_counts_a_refused_resource, 0, 2);
    tcase_add_test(tc, test_crashing_read_in_a_worker);
    tcase_add_test(tc, test_registry_cache_keeps_resources);
    tcase_add_test(tc, test_lazy_load_keeps_resources);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN_WITH(mcp_resources_suite, setup, teardown)
