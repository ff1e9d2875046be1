/* SPDX-License-Identifier: MIT */
/*
** test_mcp_skills.c: the skills extension against the real toolhost, each
** test in both isolation modes (loop index: none, process): the capability
** (2026-07-28 only), a reload's resources/list_changed, a refused skill
** failing --strict, one skill name from two plugins, and skills kept through
** the registry cache. What the bundled skills plugin serves, leaves out and
** logs is test_bundled_plugins.c's.
*/
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcp_harness.h"
#include "check_main.h"

#define FIXTURE_SO TEST_BUILDDIR "/conformance/.libs/conformance_skills.so"
#define SKILLS_SO TOP_BUILDDIR "/plugins/.libs/skills.so"

static const char *const modes[] = {"--isolation=none", "--isolation=process"};

static char *dir;
static char root[64], outside[64];

/* A private plugin directory with the bundled skills plugin, and a root of
 * skill folders: notes (a text file in a subfolder, a binary file, a link
 * out of the root, a link to a folder, a name with a space), a folder whose
 * SKILL.md is refused, and a link to the notes folder. */
static void setup(void)
{
    mh_global_setup();
    dir = mh_private_dir(SKILLS_SO, NULL);
    snprintf(root, sizeof root, "/tmp/th-skills-%ld", (long)getpid());
    snprintf(outside, sizeof outside, "/tmp/th-skills-out-%ld.txt", (long)getpid());
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "rm -rf %s && mkdir -p %s/notes/docs %s/broken && printf -- '%s' > %s/notes/SKILL.md && "
             "printf 'hello\\n' > %s/notes/docs/a.txt && printf '\\000\\001\\002' > %s/notes/b.bin && "
             "printf secret > %s && ln -s %s %s/notes/leak.txt && ln -s /tmp %s/notes/up && "
             "touch '%s/notes/sp ace.txt' && printf -- '---\\nname: broken\\ndescription: [x]\\n---\\n' > "
             "%s/broken/SKILL.md && ln -s %s/notes %s/linked",
             root, root, root, "---\\nname: notes\\ndescription: Keep notes\\n---\\nWrite them down.\\n", root, root,
             root, outside, outside, root, root, root, root, root, root);
    if (system(cmd) != 0) { /* before the runner: no ck_assert here */
        fprintf(stderr, "cannot create the skills root %s\n", root);
        exit(1);
    }
    setenv("TOOLHOST_SKILLS_ROOT", root, 1);
}

static void teardown(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s %s", root, outside);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", root);
    mh_rm_dir(dir);
    mh_global_teardown();
}

static int next_id = 100;

/* METHOD with PARAMS (JSON members, may be "") in the era. */
static json_object *req(mh_proc *p, bool legacy, const char *method, const char *params)
{
    char id[16];
    snprintf(id, sizeof id, "%d", ++next_id);
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"%s\",\"params\":{%s%s%s}}", id, method, params,
            legacy ? "" : (*params ? "," : ""), legacy ? "" : MH_MODERN_META);
    return mh_await(p, id, NULL);
}

static json_object *with_uri(mh_proc *p, const char *method, const char *uri)
{
    char params[512];
    snprintf(params, sizeof params, "\"uri\":\"%s\"", uri);
    return req(p, false, method, params);
}

START_TEST(test_capability_only_from_2026)
{
    mh_proc *p = mh_spawn("-d", dir, modes[_i], "--no-registry-cache", NULL);
    json_object *o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":\"init\",\"method\":\"initialize\",\"params\":{"
                               "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
                               "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
    MH_ASSERT_ABSENT(o, "result capabilities extensions"); /* no extensions before 2026-07-28 */
    json_object_put(o);
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    o = req(p, false, "server/discover", "");
    MH_ASSERT_TRUE(o, "result capabilities extensions io.modelcontextprotocol/skills directoryRead");
    ck_assert(mh_has(o, "result capabilities resources")); /* skill files are read as resources */
    json_object_put(o);
    o = req(p, true, "skills/list", ""); /* a 2026-07-28 method: refused without its _meta */
    MH_ASSERT_ERROR(o, -32602);
    json_object_put(o);
    mh_finish(p);
}
END_TEST

/* Two plugins serving one skill name: the first keeps it whole, the
 * second's skill is refused naming the first, and none of its files joins
 * the first's entry (in process isolation they meet only in the host). */
START_TEST(test_same_name_from_two_plugins)
{
    char r2[80], cmd[1024];
    snprintf(r2, sizeof r2, "/tmp/th-skills2-%ld-%d", (long)getpid(), _i);
    snprintf(cmd, sizeof cmd,
             "rm -rf %s && mkdir -p %s/code-review && printf -- '---\\nname: code-review\\ndescription: "
             "mine\\n---\\n' > %s/code-review/SKILL.md && printf x > %s/code-review/extra.txt",
             r2, r2, r2, r2);
    ck_assert_int_eq(system(cmd), 0);
    setenv("TOOLHOST_SKILLS_ROOT", r2, 1); /* this test's process only (Check forks) */
    char *d = mh_private_dir(FIXTURE_SO, SKILLS_SO, NULL);
    mh_proc *p = mh_spawn("-d", d, modes[_i], "--no-registry-cache", NULL);
    json_object *o = with_uri(p, "skills/get", "skill://code-review/SKILL.md");
    MH_ASSERT_STR(o, "result skill frontmatter description", "Review a change: correctness first, then style");
    ck_assert_uint_eq(mh_len(o, "result skill resources"), 1);
    json_object_put(o);
    o = with_uri(p, "resources/read", "skill://code-review/extra.txt");
    MH_ASSERT_INT(o, "error code", -32602);
    json_object_put(o);
    char *err = mh_stderr(p);
    ck_assert_msg(strstr(err, "Skill name 'code-review' is already served by plugin"), "%s", err);
    free(err);
    mh_finish(p);
    mh_rm_dir(d);
    snprintf(cmd, sizeof cmd, "rm -rf %s", r2);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* A refused skill counts as a refusal for --strict (the root's "broken"). */
START_TEST(test_strict_counts_a_refused_skill)
{
    mh_proc *p = mh_spawn("-d", dir, modes[_i], "--no-registry-cache", "--strict", NULL);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 1);
    char *err = mh_stderr(p);
    ck_assert_msg(strstr(err, "--strict: 1 refusal; exiting"), "%s", err);
    free(err);
    mh_free(p);
}
END_TEST

/* A rescan that adds skills tells a legacy session and a modern
 * subscription (notifications/resources/list_changed), and lists them. */
START_TEST(test_reload_announces_new_skills)
{
    char *d = mh_private_dir(SKILLS_SO, NULL);
    mh_proc *p = mh_spawn("-d", d, modes[_i], "--no-registry-cache", NULL);
    mh_initialize(p, "2025-11-25");
    json_object *o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":\"sub\",\"method\":\"subscriptions/listen\",\"params\":{"
                               MH_MODERN_META ",\"notifications\":{\"resourcesListChanged\":true}}}");
    ck_assert(json_object_get_boolean(mh_at(o, "params notifications resourcesListChanged")));
    json_object_put(o);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cp %s %s/", FIXTURE_SO, d);
    ck_assert_int_eq(system(cmd), 0);
    mh_kill(p, SIGHUP);
    bool legacy = false, modern = false;
    while (!legacy || !modern) {
        o = mh_next(p);
        const char *m = mh_str(o, "method");
        ck_assert_msg(m, "unexpected %s", mh_json(o));
        if (strcmp(m, "notifications/resources/list_changed") == 0) {
            if (mh_has(o, "params _meta io.modelcontextprotocol/subscriptionId"))
                modern = true;
            else
                legacy = true;
        }
        json_object_put(o);
    }
    o = req(p, false, "skills/list", "");
    ck_assert_uint_eq(mh_len(o, "result skills"), 3); /* notes, then the new fixture's two */
    MH_ASSERT_STR(o, "result skills 0 uri", "skill://notes/SKILL.md");
    MH_ASSERT_STR(o, "result skills 1 uri", "skill://pdf-processing/SKILL.md");
    json_object_put(o);
    o = with_uri(p, "skills/get", "skill://code-review/SKILL.md");
    MH_ASSERT_STR(o, "result skill frontmatter metadata version", "1.0");
    json_object_put(o);
    mh_finish(p);
    mh_rm_dir(d);
}
END_TEST

/* Process isolation from the registry cache: the scanned bytes come back
 * from the cache file and are served (and digested) the same. */
START_TEST(test_registry_cache_keeps_skills)
{
    char cache[300];
    snprintf(cache, sizeof cache, "--registry-cache=/tmp/th-skillcache-%ld.json", (long)getpid());
    char *first = NULL;
    for (int round = 0; round < 2; round++) {
        mh_proc *p = mh_spawn("-d", dir, "--isolation=process", cache, NULL);
        json_object *o = req(p, false, "skills/list", "");
        ck_assert_uint_eq(mh_len(o, "result skills"), 1);
        if (!first)
            first = strdup(mh_json(mh_at(o, "result skills")));
        else
            ck_assert_str_eq(mh_json(mh_at(o, "result skills")), first);
        json_object_put(o);
        o = with_uri(p, "resources/read", "skill://notes/docs/a.txt");
        MH_ASSERT_STR(o, "result contents 0 text", "hello\n");
        json_object_put(o);
        mh_finish(p);
    }
    free(first);
    unlink(cache + strlen("--registry-cache="));
}
END_TEST

static Suite *mcp_skills_suite(void)
{
    Suite *s = suite_create("mcp_skills");
    TCase *tc = tcase_create("both_modes");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_loop_test(tc, test_capability_only_from_2026, 0, 2);
    tcase_add_loop_test(tc, test_reload_announces_new_skills, 0, 2);
    tcase_add_loop_test(tc, test_strict_counts_a_refused_skill, 0, 2);
    tcase_add_loop_test(tc, test_same_name_from_two_plugins, 0, 2);
    tcase_add_test(tc, test_registry_cache_keeps_skills);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN_WITH(mcp_skills_suite, setup, teardown)
