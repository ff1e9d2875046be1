/* SPDX-License-Identifier: MIT */
/*
** test_lock.c: pinned definitions through the real binary: toolhost lock
** writes a lock and --check lists each drift (exit 0, 1, 2); toolhost
** --lock refuses each kind of drift by name and hash while the rest keeps
** serving, in both isolation modes and across a reload; and the comparison
** itself (canonical hashes, needs) as units.
*/
#include "config.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mcp_harness.h"
#include "check_main.h"
#include "plugin/lockfile.h"
#include "plugin/prompts.h"

#define PIN(v) TEST_BUILDDIR "/lockplugins/" v "/.libs/pin.so"
#define STEADY TEST_BUILDDIR "/lockplugins/.libs/steady.so"

/* Each way a registry is built: proxies to workers, plugins loaded in the
 * host, and tools listed from the scan for a first-call load. */
static const char *const modes[][2] = {{"--isolation=process", "--log-level=info"},
                                       {"--isolation=none", "--log-level=info"},
                                       {"--isolation=none", "--lazy-load"}};
#define NMODES 3

/* Install FROM as DIR/NAME the way the README says: a temporary name, then
 * a rename into place. */
static void install(const char *from, const char *dir, const char *name)
{
    char tmp[512], to[512], buf[65536];
    snprintf(tmp, sizeof tmp, "%s/.%s.tmp", dir, name);
    snprintf(to, sizeof to, "%s/%s", dir, name);
    int in = open(from, O_RDONLY), out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0755);
    ck_assert_msg(in >= 0 && out >= 0, "cannot copy %s to %s", from, tmp);
    ssize_t n;
    while ((n = read(in, buf, sizeof buf)) > 0)
        ck_assert(write(out, buf, (size_t)n) == n);
    close(in);
    ck_assert(close(out) == 0);
    ck_assert(rename(tmp, to) == 0);
}

static void lock_path(const char *dir, char *out, size_t size)
{
    snprintf(out, size, "%s/lock.json", dir);
}

/* Run `toolhost lock` with ARGS (up to 6, NULL-ended); its stdout into OUT
 * (SIZE bytes), its exit status returned. */
static int run_lock(char *out, size_t size, const char *a, const char *b, const char *c, const char *d,
                    const char *e, const char *f)
{
    mh_proc *p = mh_spawn("lock", a, b, c, d, e, f, NULL);
    mh_close_stdin(p);
    size_t used = 0;
    out[0] = '\0';
    char *line;
    while ((line = mh_read_line(p, MH_TIMEOUT_MS)) != NULL) {
        int w = snprintf(out + used, size - used, "%s\n", line);
        if (w > 0 && (size_t)w < size - used)
            used += (size_t)w;
        free(line);
    }
    ck_assert_msg(mh_eof(p), "toolhost lock did not finish its output");
    int status = mh_wait(p, MH_TIMEOUT_MS);
    mh_free(p);
    return status;
}

/* Pin what DIR serves now into DIR/lock.json. */
static void write_lock(const char *dir)
{
    char lock[512], out[4096], dirarg[600];
    lock_path(dir, lock, sizeof lock);
    snprintf(dirarg, sizeof dirarg, "--plugin-dir=%s", dir);
    int status = run_lock(out, sizeof out, "--lock", lock, dirarg, NULL, NULL, NULL);
    ck_assert_msg(status == 0, "toolhost lock exited %d: %s", status, out);
}

static int check_lock(const char *dir, char *out, size_t size)
{
    char lock[512], dirarg[600];
    lock_path(dir, lock, sizeof lock);
    snprintf(dirarg, sizeof dirarg, "--plugin-dir=%s", dir);
    return run_lock(out, size, "--check", "--lock", lock, dirarg, NULL, NULL);
}

static mh_proc *serve(const char *dir, int mode)
{
    char lock[512], cache[600];
    lock_path(dir, lock, sizeof lock);
    snprintf(cache, sizeof cache, "--registry-cache=%s/cache.json", dir);
    mh_proc *p = mh_spawn("--plugin-dir", dir, "--lock", lock, modes[mode][0], modes[mode][1], cache, NULL);
    mh_initialize(p, "2025-11-25");
    return p;
}

/* The names a list returns (METHOD, its array KEY and the member NAME),
 * space-separated, in a static buffer. */
static const char *names(mh_proc *p, int id, const char *method, const char *key, const char *name)
{
    static char out[1024];
    char idj[16], path[128];
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"%s\"}", id, method);
    snprintf(idj, sizeof idj, "%d", id);
    json_object *o = mh_await(p, idj, NULL);
    snprintf(path, sizeof path, "result %s", key);
    size_t count = mh_len(o, path);
    out[0] = '\0';
    for (size_t i = 0; i < count; i++) {
        snprintf(path, sizeof path, "result %s %zu %s", key, i, name);
        const char *n = mh_str(o, path);
        strcat(out, i ? " " : "");
        strcat(out, n ? n : "?");
    }
    json_object_put(o);
    return out;
}

static const char *tools(mh_proc *p, int id)
{
    return names(p, id, "tools/list", "tools", "name");
}

/* What calling tool NAME answers, in a static buffer. */
static const char *call(mh_proc *p, int id, const char *name)
{
    static char text[256];
    char idj[16];
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\","
               "\"arguments\":{}}}", id, name);
    snprintf(idj, sizeof idj, "%d", id);
    json_object *o = mh_await(p, idj, NULL);
    const char *t = mh_str(o, "result content 0 text");
    snprintf(text, sizeof text, "%s", t ? t : mh_json(o));
    json_object_put(o);
    return text;
}

static void assert_has(const char *text, const char *want)
{
    ck_assert_msg(strstr(text, want), "want \"%s\" in:\n%s", want, text);
}

/* Two "sha256:" hashes after AT: the old one and the new one. */
static void assert_two_hashes(const char *at)
{
    const char *h1 = strstr(at, "sha256:"), *h2 = h1 ? strstr(h1 + 7, "sha256:") : NULL;
    ck_assert_msg(h1 && h2 && strncmp(h1, h2, 71) != 0, "want the old and the new hash in: %s", at);
}

/* ---- each kind of drift, against a lock of the base pin.so and steady.so */

typedef struct drift_case {
    const char *variant; /* the pin.so built with the drift */
    const char *said;    /* what the host logs (and --check prints) */
    bool hashes;         /* SAID is followed by the old and the new hash */
    const char *tools;   /* tools/list afterwards */
    const char *prompts; /* prompts/list afterwards */
} drift_case;

static const drift_case drifts_[] = {
    {PIN("desc"), "tool 'pin' refused by the lock", true, "pin_more steady", "pin_prompt"},
    {PIN("schema"), "tool 'pin' refused by the lock", true, "pin_more steady", "pin_prompt"},
    {PIN("annot"), "tool 'pin' refused by the lock", true, "pin_more steady", "pin_prompt"},
    {PIN("newtool"), "tool 'pin_new' refused by the lock", false, "pin pin_more steady", "pin_prompt"},
    {PIN("nomore"), "tool 'pin_more' pinned by the lock", false, "pin steady", "pin_prompt"},
    {PIN("prompt"), "prompt 'pin_prompt' refused by the lock", true, "pin pin_more steady", ""},
    {PIN("rebuild"), "its file is not the one pinned by the lock", true, "pin pin_more steady", "pin_prompt"},
};
/* The field each refusal names, where one changed. */
static const char *const fields_[] = {"description changed", "inputSchema changed", "annotations changed", NULL,
                                      NULL, "description changed", NULL};
#define NDRIFTS (sizeof drifts_ / sizeof drifts_[0])

START_TEST(each_drift_is_named_withheld_and_the_rest_serve)
{
    const drift_case *dc = &drifts_[_i / NMODES];
    const char *field = fields_[_i / NMODES];
    int mode = _i % NMODES;
    char *dir = mh_private_dir(PIN("base"), STEADY, NULL);
    write_lock(dir);
    install(dc->variant, dir, "pin.so");

    char out[8192];
    ck_assert_int_eq(check_lock(dir, out, sizeof out), 1);
    assert_has(out, dc->said);
    if (field)
        assert_has(out, field);
    if (dc->hashes)
        assert_two_hashes(strstr(out, dc->said));

    mh_proc *p = serve(dir, mode);
    ck_assert_str_eq(tools(p, 1), dc->tools);
    ck_assert_str_eq(names(p, 2, "prompts/list", "prompts", "name"), dc->prompts);
    ck_assert_str_eq(names(p, 3, "resources/templates/list", "resourceTemplates", "uriTemplate"), "pin:///{word}");
    ck_assert_str_eq(call(p, 4, "steady"), "steady served");
    char *err = mh_stderr(p);
    assert_has(err, dc->said);
    if (field)
        assert_has(strstr(err, dc->said), field);
    /* The plugin is named by its file. */
    char named[600];
    snprintf(named, sizeof named, "plugin %s/pin.so", dir);
    assert_has(err, named);
    free(err);
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

/* Nothing changed: --check says so and exits 0, and all is served. */
START_TEST(an_unchanged_directory_matches_its_lock)
{
    char *dir = mh_private_dir(PIN("base"), STEADY, NULL);
    write_lock(dir);
    char out[4096];
    ck_assert_int_eq(check_lock(dir, out, sizeof out), 0);
    assert_has(out, "the plugins match the lock");
    mh_proc *p = serve(dir, _i);
    ck_assert_str_eq(tools(p, 1), "pin pin_more steady");
    ck_assert_str_eq(call(p, 2, "pin"), "pin served");
    char *err = mh_stderr(p);
    ck_assert_msg(!strstr(err, "by the lock"), "%s", err);
    free(err);
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

START_TEST(a_new_plugin_is_refused_whole)
{
    char *dir = mh_private_dir(PIN("base"), NULL);
    write_lock(dir);
    install(STEADY, dir, "steady.so");
    char out[4096], want[700];
    ck_assert_int_eq(check_lock(dir, out, sizeof out), 1);
    snprintf(want, sizeof want, "plugin %s/steady.so (default/steady) refused by the lock", dir);
    assert_has(out, want);
    mh_proc *p = serve(dir, _i);
    ck_assert_str_eq(tools(p, 1), "pin pin_more");
    ck_assert_str_eq(call(p, 2, "pin"), "pin served");
    char *err = mh_stderr(p);
    assert_has(err, want);
    free(err);
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

/* The lock pins what a plugin registered, not the names a toolbox gives
 * it: one written without --qualified-names holds with them. */
START_TEST(a_lock_holds_with_qualified_names)
{
    char *dir = mh_private_dir(PIN("base"), STEADY, NULL);
    write_lock(dir);
    char lock[512], out[4096], box[600];
    lock_path(dir, lock, sizeof lock);
    snprintf(box, sizeof box, "--plugin-dir=%s", dir);
    ck_assert_int_eq(run_lock(out, sizeof out, "--check", "--qualified-names", "--lock", lock, box, NULL), 0);
    mh_proc *p = mh_spawn("--plugin-dir", dir, "--lock", lock, "--qualified-names", "--no-registry-cache", NULL);
    mh_initialize(p, "2025-11-25");
    ck_assert_str_eq(tools(p, 1), "default__pin__pin default__pin__pin_more default__steady__steady");
    char *err = mh_stderr(p);
    ck_assert_msg(!strstr(err, "by the lock"), "%s", err);
    free(err);
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

/* A pinned plugin that went is a difference, not a refusal. */
START_TEST(a_removed_plugin_is_reported)
{
    char *dir = mh_private_dir(PIN("base"), STEADY, NULL);
    write_lock(dir);
    char gone[600], out[4096];
    snprintf(gone, sizeof gone, "%s/steady.so", dir);
    ck_assert(unlink(gone) == 0);
    ck_assert_int_eq(check_lock(dir, out, sizeof out), 1);
    assert_has(out, "plugin default/steady pinned by the lock");
    mh_proc *p = serve(dir, 0);
    ck_assert_str_eq(tools(p, 1), "pin pin_more");
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

START_TEST(usage_errors_exit_2)
{
    char out[4096];
    ck_assert_int_eq(run_lock(out, sizeof out, "--check", NULL, NULL, NULL, NULL, NULL), 2);
    ck_assert_int_eq(run_lock(out, sizeof out, "--lock=/tmp/x.json", "--no-such-option", NULL, NULL, NULL, NULL), 2);
    ck_assert_int_eq(run_lock(out, sizeof out, "--lock=/tmp/x.json", "extra", NULL, NULL, NULL, NULL), 2);
    /* A lock that cannot be read cannot be checked against. */
    char *dir = mh_private_dir(PIN("base"), NULL);
    ck_assert_int_eq(check_lock(dir, out, sizeof out), 2);
    mh_rm_dir(dir);
}
END_TEST

/* The host refuses to start on a lock it cannot read, rather than serve
 * unchecked. */
START_TEST(an_unreadable_lock_stops_the_start)
{
    char *dir = mh_private_dir(PIN("base"), NULL);
    char lock[512];
    lock_path(dir, lock, sizeof lock);
    FILE *f = fopen(lock, "w");
    ck_assert(f && fputs("{\"lockVersion\": 1, \"plugins\": []}\n", f) >= 0 && fclose(f) == 0);
    mh_proc *p = mh_spawn("--plugin-dir", dir, "--lock", lock, NULL);
    mh_close_stdin(p);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 1);
    char *err = mh_stderr(p);
    assert_has(err, "\"plugins\" must be an object");
    free(err);
    mh_free(p);
    mh_rm_dir(dir);
}
END_TEST

/* Read until the tool list is said to have changed; other notifications
 * (prompts, resources) may come too. */
static void await_tools_changed(mh_proc *p)
{
    for (;;) {
        json_object *o = mh_next(p);
        const char *m = mh_str(o, "method");
        bool done = m && strcmp(m, "notifications/tools/list_changed") == 0;
        ck_assert_msg(m, "unexpected response %s", mh_json(o));
        json_object_put(o);
        if (done)
            return;
    }
}

/* A reload builds the registry as the start did, under the lock read
 * again: a replaced plugin that drifted is withheld; once the operator
 * pins the new version, the next reload serves it. */
START_TEST(a_reload_honours_the_lock_read_again)
{
    char *dir = mh_private_dir(PIN("base"), STEADY, NULL);
    write_lock(dir);
    mh_proc *p = serve(dir, _i);
    ck_assert_str_eq(tools(p, 1), "pin pin_more steady");
    install(PIN("desc"), dir, "pin.so");
    mh_kill(p, SIGHUP);
    await_tools_changed(p);
    ck_assert(mh_stderr_wait(p, "tool 'pin' refused by the lock", MH_TIMEOUT_MS));
    ck_assert_str_eq(tools(p, 2), "pin_more steady");
    ck_assert_str_eq(call(p, 3, "steady"), "steady served");

    write_lock(dir);
    mh_kill(p, SIGHUP);
    await_tools_changed(p);
    ck_assert_str_eq(tools(p, 4), "pin pin_more steady");
    ck_assert_str_eq(call(p, 5, "pin"), "pin served");
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\"}");
    json_object *notes = json_object_new_array();
    json_object_put(mh_await(p, "6", notes));
    json_object_put(notes);
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

/* ---- the comparison as units -------------------------------------------- */

static th_rc no_call(th_call *call, json_object *args, void *user_data)
{
    (void)call;
    (void)args;
    (void)user_data;
    return TH_OK;
}

/* The lock of a registry holding one tool with SCHEMA, as /p/x.so. */
static json_object *lock_of_schema(const char *schema)
{
    th_registry *reg = th_registry_new();
    th_tool t = {TH_TOOL_INIT, .name = "x", .description = "A tool for the unit test.", .input_schema = schema,
                 .handler = no_call};
    th_err err;
    ck_assert_int_eq(th_registry_add(reg, &t, "/p/x.so", &err), TH_OK);
    th_lock_file f = {"/p/x.so", "sha256:0000000000000000000000000000000000000000000000000000000000000000", NULL};
    json_object *lock = th_lock_build(reg, &f, 1, &err);
    ck_assert_msg(lock, "%s", err.msg);
    th_registry_unref(reg);
    return lock;
}

static const char *tool_hash(json_object *lock)
{
    json_object *v = mh_at(lock, "plugins /p/x.so tools x sha256");
    ck_assert(v);
    return json_object_get_string(v);
}

/* Canonical: keys sorted, no white space; the order and spacing a plugin
 * writes its schema in does not matter, a value does. */
START_TEST(the_hash_is_of_the_canonical_definition)
{
    json_object *a = lock_of_schema("{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"}}}");
    json_object *b = lock_of_schema("{ \"properties\" : { \"a\" : { \"type\" : \"string\" } },\n \"type\" : \"object\" }");
    json_object *c = lock_of_schema("{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"}}}");
    ck_assert_str_eq(tool_hash(a), tool_hash(b));
    ck_assert_str_ne(tool_hash(a), tool_hash(c));
    json_object_put(a);
    json_object_put(b);
    json_object_put(c);
}
END_TEST

/* Declared needs enter the lock through one function; a plugin asking
 * for more than the lock pins is refused whole, one asking for fewer only
 * differs. */
START_TEST(more_needs_refuse_the_plugin_fewer_do_not)
{
    json_object *pinned = lock_of_schema("{\"type\":\"object\",\"properties\":{}}");
    json_object *now = lock_of_schema("{\"type\":\"object\",\"properties\":{}}");
    json_object *plugin = mh_at(now, "plugins /p/x.so");
    json_object_object_add(plugin, "path", json_object_new_string("/p/x.so"));
    json_object *needs = json_object_new_array();
    json_object_array_add(needs, json_object_new_string("read:/srv/data"));
    json_object_object_add(plugin, "needs", needs);
    th_drift *d;
    size_t n;
    ck_assert_int_eq(th_lock_diff(pinned, now, "L", &d, &n), TH_OK);
    ck_assert_uint_eq(n, 1);
    ck_assert_int_eq(d[0].kind, TH_DRIFT_NEEDS);
    ck_assert(d[0].refused && !d[0].section);
    assert_has(d[0].text, "asks for needs the lock does not pin: read:/srv/data");
    assert_two_hashes(d[0].text);
    th_drift_free(d, n);
    /* The other way round. */
    ck_assert_int_eq(th_lock_diff(now, pinned, "L", &d, &n), TH_OK);
    ck_assert_uint_eq(n, 1);
    ck_assert(!d[0].refused);
    th_drift_free(d, n);
    json_object_put(pinned);
    json_object_put(now);
}
END_TEST

/* What a scan reported, sorted and canonical, whatever order it came in. */
START_TEST(the_declared_needs_enter_the_lock_sorted)
{
    json_object *scanned = json_object_new_array();
    json_object_array_add(scanned, json_object_new_string("read:/srv/data"));
    json_object_array_add(scanned, json_object_new_string("connect:api.example.com:443"));
    json_object_array_add(scanned, json_object_new_string("sudo:everything"));
    th_lock_file f = {"/p/x.so", "sha256:00", scanned};
    json_object *needs = th_lock_declared_needs(&f);
    ck_assert_str_eq(json_object_to_json_string_ext(needs, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
                     "[\"connect:api.example.com:443\",\"read:/srv/data\"]");
    json_object_put(needs);
    f.needs = NULL;
    needs = th_lock_declared_needs(&f);
    ck_assert_uint_eq(json_object_array_length(needs), 0);
    json_object_put(needs);
    json_object_put(scanned);
}
END_TEST

static Suite *lock_suite(void)
{
    Suite *s = suite_create("lock");
    TCase *tc = tcase_create("pinned definitions");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_loop_test(tc, each_drift_is_named_withheld_and_the_rest_serve, 0, NMODES * (int)NDRIFTS);
    tcase_add_loop_test(tc, an_unchanged_directory_matches_its_lock, 0, NMODES);
    tcase_add_loop_test(tc, a_new_plugin_is_refused_whole, 0, NMODES);
    tcase_add_test(tc, a_lock_holds_with_qualified_names);
    tcase_add_test(tc, a_removed_plugin_is_reported);
    tcase_add_test(tc, usage_errors_exit_2);
    tcase_add_test(tc, an_unreadable_lock_stops_the_start);
    tcase_add_loop_test(tc, a_reload_honours_the_lock_read_again, 0, 2);
    tcase_add_test(tc, the_hash_is_of_the_canonical_definition);
    tcase_add_test(tc, more_needs_refuse_the_plugin_fewer_do_not);
    tcase_add_test(tc, the_declared_needs_enter_the_lock_sorted);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN_WITH(lock_suite, mh_global_setup, mh_global_teardown)
