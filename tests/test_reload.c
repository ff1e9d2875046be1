/* SPDX-License-Identifier: MIT */
/*
** test_reload.c: hot reload through the real binary, in both isolation
** modes: plugins added, replaced (also while a call runs on the old code),
** broken and removed under --watch, SIGHUP rescans, partial writes not
** loaded, and what each era is told (legacy notifications/tools/list_changed,
** 2026-07-28 subscriptions/listen streams).
*/
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <arpa/inet.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mcp_harness.h"
#include "check_main.h"

#define FLIP_V1 TEST_BUILDDIR "/reloadplugins/v1/.libs/flip.so"
#define FLIP_V2 TEST_BUILDDIR "/reloadplugins/v2/.libs/flip.so"
#define FLIP_BAD TEST_BUILDDIR "/reloadplugins/bad/.libs/flip.so"
#define SLOW_SO TEST_BUILDDIR "/mcpplugins/.libs/slow.so"

static const char *const modes[] = {"--isolation=process", "--isolation=none"};

/* The whole of file FROM, malloc'd; *LEN gets its size. */
static char *slurp(const char *from, size_t *len)
{
    FILE *f = fopen(from, "rb");
    ck_assert_msg(f, "cannot open %s", from);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n);
    ck_assert(buf && fread(buf, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static void write_file(const char *to, const char *data, size_t len)
{
    int fd = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
    ck_assert_msg(fd >= 0, "cannot create %s", to);
    ck_assert(write(fd, data, len) == (ssize_t)len);
    ck_assert(close(fd) == 0);
}

/* Install FROM as DIR/flip.so the way the README says: write a temporary
 * name, then rename it into place (one IN_MOVED_TO). */
static void install(const char *from, const char *dir)
{
    char tmp[512], to[512];
    size_t len;
    char *data = slurp(from, &len);
    snprintf(tmp, sizeof tmp, "%s/.flip.so.tmp", dir);
    snprintf(to, sizeof to, "%s/flip.so", dir);
    write_file(tmp, data, len);
    ck_assert(rename(tmp, to) == 0);
    free(data);
}

/* How many child processes PID has now (each thread lists those it started). */
static int children(long pid)
{
    char path[512], buf[4096];
    snprintf(path, sizeof path, "/proc/%ld/task", pid);
    DIR *d = opendir(path);
    ck_assert_msg(d, "cannot read %s", path);
    int count = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "/proc/%ld/task/%s/children", pid, de->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue; /* the thread ended meanwhile */
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = '\0';
        for (char *t = strtok(buf, " \n"); t; t = strtok(NULL, " \n"))
            count++;
    }
    closedir(d);
    return count;
}

static mh_proc *start(const char *dir, int mode, bool watch)
{
    char cache[600];
    snprintf(cache, sizeof cache, "--registry-cache=%s.cache.json", dir);
    return mh_spawn("--plugin-dir", dir, modes[mode], watch ? "--watch" : "--log-level=info", cache, NULL);
}

static void done(mh_proc *p, char *dir)
{
    char cache[600];
    snprintf(cache, sizeof cache, "%s.cache.json", dir);
    mh_finish(p);
    unlink(cache);
    mh_rm_dir(dir);
}

/*
** One stdio connection as both eras at once: a legacy session (told
** listChanged: true) and a 2026-07-28 subscription "sub" to
** toolsListChanged, whose acknowledgment carries the agreed filter.
*/
static void open_both(mh_proc *p)
{
    json_object *o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":\"init\",\"method\":\"initialize\",\"params\":{"
                               "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
                               "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
    ck_assert_msg(json_object_get_boolean(mh_at(o, "result capabilities tools listChanged")), "%s", mh_json(o));
    json_object_put(o);
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":\"sub\",\"method\":\"subscriptions/listen\",\"params\":{" MH_MODERN_META
                  ",\"notifications\":{\"toolsListChanged\":true,\"promptsListChanged\":true}}}");
    MH_ASSERT_STR(o, "method", "notifications/subscriptions/acknowledged");
    MH_ASSERT_STR(o, "params _meta io.modelcontextprotocol/subscriptionId", "sub");
    ck_assert(json_object_get_boolean(mh_at(o, "params notifications toolsListChanged")));
    ck_assert_msg(json_object_get_boolean(mh_at(o, "params notifications promptsListChanged")), "%s", mh_json(o));
    json_object_put(o);
}

/* Read until both eras were told the list changed; other messages (call
 * results) go to OTHERS (may be NULL: then there must be none). */
static void await_changed(mh_proc *p, json_object *others)
{
    bool legacy = false, modern = false;
    while (!legacy || !modern) {
        json_object *o = mh_next(p);
        const char *m = mh_str(o, "method");
        if (m && strcmp(m, "notifications/tools/list_changed") == 0) {
            const char *sub = mh_str(o, "params _meta io.modelcontextprotocol/subscriptionId");
            if (sub) {
                ck_assert_str_eq(sub, "sub");
                ck_assert_msg(!modern, "told twice on the subscription");
                modern = true;
            } else {
                ck_assert_msg(!mh_has(o, "params _meta"), "%s", mh_json(o));
                ck_assert_msg(!legacy, "told the legacy session twice");
                legacy = true;
            }
            json_object_put(o);
        } else {
            ck_assert_msg(others, "unexpected message %s", mh_json(o));
            json_object_array_add(others, o);
        }
    }
}

/* The names tools/list returns, space-separated, in a static buffer. */
static const char *tool_names(mh_proc *p, int id)
{
    static char names[512];
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/list\"}", id);
    char idj[16];
    snprintf(idj, sizeof idj, "%d", id);
    json_object *o = mh_await(p, idj, NULL);
    names[0] = '\0';
    for (size_t i = 0; i < mh_len(o, "result tools"); i++) {
        char path[64];
        snprintf(path, sizeof path, "result tools %zu name", i);
        strcat(names, i ? " " : "");
        strcat(names, mh_str(o, path));
    }
    json_object_put(o);
    return names;
}

/* Call flip (sleeping MS) and return its text, in a static buffer. */
static const char *call_flip(mh_proc *p, int id, int ms)
{
    static char text[128];
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"flip\","
               "\"arguments\":{\"ms\":%d}}}", id, ms);
    char idj[16];
    snprintf(idj, sizeof idj, "%d", id);
    json_object *o = mh_await(p, idj, NULL);
    const char *t = mh_str(o, "result content 0 text");
    snprintf(text, sizeof text, "%s", t ? t : mh_json(o));
    json_object_put(o);
    return text;
}

START_TEST(an_added_plugin_is_served_and_both_eras_are_told)
{
    char *dir = mh_private_dir(SLOW_SO, NULL);
    mh_proc *p = start(dir, _i, true);
    open_both(p);
    ck_assert_str_eq(tool_names(p, 1), "slow");
    install(FLIP_V1, dir);
    await_changed(p, NULL);
    /* Tools that served before list first (a reload registers them first). */
    ck_assert_str_eq(tool_names(p, 2), "slow flip");
    ck_assert_str_eq(call_flip(p, 3, 0), "flip v1");
    done(p, dir);
}
END_TEST

/*
** The call running when flip.so is replaced finishes on the old code and
** is answered (no call is lost); the next call runs the new code, and
** tools/list shows the new descriptor. The old code goes only when that
** call is over: in the host its library is dlclose()d then (not before),
** in process mode its worker exits then.
*/
START_TEST(a_replacement_is_swapped_in_while_a_call_finishes_on_the_old_code)
{
    char *dir = mh_private_dir(SLOW_SO, FLIP_V1, NULL);
    char gate[600], unloaded[64];
    snprintf(gate, sizeof gate, "%s.gate", dir);
    unlink(gate);
    mh_proc *p = start(dir, _i, true);
    snprintf(unloaded, sizeof unloaded, "flip v1 unloaded in %ld", mh_pid(p));
    open_both(p);
    ck_assert_str_eq(call_flip(p, 1, 0), "flip v1");
    /* Call 10 runs until the test creates the gate file. */
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/call\",\"params\":{\"name\":\"flip\","
               "\"arguments\":{\"gate\":\"%s\"}}}", gate);
    /* Answered in order by the reader: call 10 has been dispatched. */
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"ping\"}");
    json_object *others = json_object_new_array();
    json_object_put(mh_await(p, "11", others));
    install(FLIP_V2, dir);
    await_changed(p, others);
    ck_assert_str_eq(call_flip(p, 12, 0), "flip v2");
    json_object *o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":13,\"method\":\"tools/list\"}");
    ck_assert_msg(strstr(mh_json(o), "version 2.") && strstr(mh_json(o), "v2_only"), "%s", mh_json(o));
    json_object_put(o);
    ck_assert_uint_eq(json_object_array_length(others), 0); /* call 10 is still running */
    json_object_put(others);
    char *err = mh_stderr(p);
    ck_assert_msg(!strstr(err, unloaded), "the old library was unloaded under a running call:\n%s", err);
    free(err);

    FILE *g = fopen(gate, "w");
    ck_assert(g && fclose(g) == 0);
    o = mh_await(p, "10", NULL);
    MH_ASSERT_STR(o, "result content 0 text", "flip v1");
    json_object_put(o);
    if (_i == 1) {
        ck_assert_msg(mh_stderr_wait(p, unloaded, MH_TIMEOUT_MS), "the old library was not unloaded");
    } else {
        /* The old flip worker exits now that its last call is done. */
        int n = -1;
        for (long long until = mh_now_ms() + MH_TIMEOUT_MS; mh_now_ms() < until && n != 1;) {
            n = children(mh_pid(p));
            struct timespec ts = {0, 20 * 1000000L};
            nanosleep(&ts, NULL);
        }
        ck_assert_msg(n == 1, "%d worker processes after the replacement, want 1", n);
    }
    unlink(gate);
    done(p, dir);
}
END_TEST

/* A replacement the registry refuses is logged with file, tool and rule,
 * and the previous version goes on serving (nobody is told of a change);
 * a good one later is swapped in. */
START_TEST(a_refused_replacement_keeps_the_previous_version_serving)
{
    char *dir = mh_private_dir(SLOW_SO, FLIP_V1, NULL);
    mh_proc *p = start(dir, _i, true);
    open_both(p);
    ck_assert_str_eq(call_flip(p, 1, 0), "flip v1");
    install(FLIP_BAD, dir);
    ck_assert(mh_stderr_wait(p, "still serving the previous version of tool 'flip'", MH_TIMEOUT_MS));
    char *err = mh_stderr(p);
    ck_assert_msg(strstr(err, "/flip.so refused: tool 'flip'") && strstr(err, "escription"), "%s", err);
    free(err);
    mh_ping_is_next(p, 2); /* the tools did not change: no notification */
    /* Kept tools list after those loaded afresh. */
    ck_assert_str_eq(tool_names(p, 3), "slow flip");
    ck_assert_str_eq(call_flip(p, 4, 0), "flip v1");
    install(FLIP_V2, dir);
    await_changed(p, NULL);
    ck_assert_str_eq(call_flip(p, 5, 0), "flip v2");
    done(p, dir);
}
END_TEST

START_TEST(a_removed_plugin_is_withdrawn)
{
    char *dir = mh_private_dir(SLOW_SO, FLIP_V1, NULL);
    mh_proc *p = start(dir, _i, true);
    open_both(p);
    ck_assert_str_eq(call_flip(p, 1, 0), "flip v1");
    char path[512];
    snprintf(path, sizeof path, "%s/flip.so", dir);
    ck_assert(unlink(path) == 0);
    await_changed(p, NULL);
    ck_assert_str_eq(tool_names(p, 2), "slow");
    json_object *o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"flip\"}}");
    ck_assert_int_eq(json_object_get_int(mh_at(o, "error code")), -32602);
    json_object_put(o);
    done(p, dir);
}
END_TEST

/* The pid of the child process of PID that has a file ending in NAME mapped
 * (its plugin), other than NOT; 0 when there is none. */
static long worker_of(long pid, const char *name, long not)
{
    char path[512], buf[4096];
    snprintf(path, sizeof path, "/proc/%ld/task", pid);
    DIR *d = opendir(path);
    ck_assert_msg(d, "cannot read %s", path);
    long found = 0;
    struct dirent *de;
    while (!found && (de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "/proc/%ld/task/%s/children", pid, de->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = '\0';
        for (char *save = NULL, *t = strtok_r(buf, " \n", &save); !found && t; t = strtok_r(NULL, " \n", &save)) {
            long child = strtol(t, NULL, 10);
            char maps[64], line[1024];
            snprintf(maps, sizeof maps, "/proc/%ld/maps", child);
            FILE *m = child != not ? fopen(maps, "r") : NULL;
            while (m && !found && fgets(line, sizeof line, m)) {
                size_t len = strcspn(line, "\n");
                line[len] = '\0';
                found = len >= strlen(name) && strcmp(line + len - strlen(name), name) == 0 ? child : 0;
            }
            if (m)
                fclose(m);
        }
    }
    closedir(d);
    return found;
}

static const char *call_slow(mh_proc *p, int id)
{
    static char text[128];
    json_object *o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"slow\","
                               "\"arguments\":{\"ms\":0}}}", id);
    const char *t = mh_str(o, "result content 0 text");
    snprintf(text, sizeof text, "%s", t ? t : mh_json(o));
    json_object_put(o);
    return text;
}

/*
** Process mode: a reload that replaces flip.so leaves slow.so's file as it
** was, so slow's worker carries over to the new registry (same pid, warm)
** while flip gets a fresh worker and the old one exits.
*/
START_TEST(an_unchanged_plugins_worker_carries_over_a_reload)
{
    char *dir = mh_private_dir(SLOW_SO, FLIP_V1, NULL);
    mh_proc *p = start(dir, 0, true);
    open_both(p);
    ck_assert_msg(strstr(call_slow(p, 1), "slept"), "%s", call_slow(p, 1));
    ck_assert_str_eq(call_flip(p, 2, 0), "flip v1");
    long slow_pid = worker_of(mh_pid(p), "/slow.so", 0), flip_pid = worker_of(mh_pid(p), "/flip.so", 0);
    ck_assert(slow_pid > 0 && flip_pid > 0 && slow_pid != flip_pid);

    install(FLIP_V2, dir);
    await_changed(p, NULL);
    ck_assert_str_eq(call_flip(p, 3, 0), "flip v2");
    ck_assert_msg(strstr(call_slow(p, 4), "slept"), "slow failed after the reload");
    ck_assert_int_eq(worker_of(mh_pid(p), "/slow.so", 0), slow_pid);
    ck_assert_int_eq(worker_of(mh_pid(p), "/slow.so", slow_pid), 0); /* and no second one */
    long new_flip = worker_of(mh_pid(p), "/flip.so", flip_pid);
    ck_assert_msg(new_flip > 0 && new_flip != flip_pid, "flip v2 runs in %ld, v1 ran in %ld", new_flip, flip_pid);
    char *err = mh_stderr(p);
    ck_assert_msg(strstr(err, "/slow.so: unchanged; its worker"), "%s", err);
    free(err);

    /* A second reload (flip removed) carries it over again. */
    char path[512];
    snprintf(path, sizeof path, "%s/flip.so", dir);
    ck_assert(unlink(path) == 0);
    await_changed(p, NULL);
    ck_assert_msg(strstr(call_slow(p, 5), "slept"), "slow failed after the second reload");
    ck_assert_int_eq(worker_of(mh_pid(p), "/slow.so", 0), slow_pid);
    done(p, dir);
}
END_TEST

#define RESFIX_SO TEST_BUILDDIR "/resplugins/.libs/resfix.so"

/* Install FROM as DIR/NAME, written elsewhere and renamed in. */
static void install_as(const char *from, const char *dir, const char *name)
{
    char tmp[512], to[512];
    size_t len;
    char *data = slurp(from, &len);
    snprintf(tmp, sizeof tmp, "%s/.%s.tmp", dir, name);
    snprintf(to, sizeof to, "%s/%s", dir, name);
    write_file(tmp, data, len);
    ck_assert(rename(tmp, to) == 0);
    free(data);
}

/* Read until every one of the N notifications WANT ("method" or
 * "method@subscription") has come, each once; any other message fails. */
static void await_notes(mh_proc *p, const char *const *want, size_t n)
{
    bool seen[8] = {false};
    for (size_t got = 0; got < n;) {
        json_object *o = mh_next(p);
        const char *m = mh_str(o, "method"), *sub = mh_str(o, "params _meta io.modelcontextprotocol/subscriptionId");
        char key[160];
        snprintf(key, sizeof key, "%s%s%s", m ? m : "?", sub ? "@" : "", sub ? sub : "");
        size_t i = 0;
        while (i < n && strcmp(want[i], key) != 0)
            i++;
        ck_assert_msg(i < n, "unexpected message %s", mh_json(o));
        ck_assert_msg(!seen[i], "told twice: %s", key);
        seen[i] = true;
        got++;
        json_object_put(o);
    }
}

/* resources/read mem://hello: its text (log notes on the way are dropped). */
static void read_hello(mh_proc *p, int id)
{
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"resources/read\",\"params\":{\"uri\":\"mem://hello\"}}", id);
    char idj[16];
    snprintf(idj, sizeof idj, "%d", id);
    json_object *notes = json_object_new_array();
    json_object *o = mh_await(p, idj, notes);
    MH_ASSERT_STR(o, "result contents 0 text", "hello from resfix");
    for (size_t i = 0; i < json_object_array_length(notes); i++)
        MH_ASSERT_STR(json_object_array_get_idx(notes, i), "method", "notifications/message");
    json_object_put(notes);
    json_object_put(o);
}

/*
** Resources under reload, both eras on one connection: adding, and
** removing, a plugin with resources tells legacy sessions (which were told
** resources.listChanged) and subscriptions that asked; a plugin's
** th_resource_updated reaches a subscription's resourceSubscriptions and a
** legacy resources/subscribe through the one notify path; a refused
** replacement keeps its previous resources serving, and nobody is told.
*/
START_TEST(resources_follow_a_reload)
{
    char *dir = mh_private_dir(SLOW_SO, NULL);
    mh_proc *p = start(dir, _i, true);
    json_object *o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":\"init\",\"method\":\"initialize\",\"params\":{"
                               "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
                               "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
    ck_assert(json_object_get_boolean(mh_at(o, "result capabilities resources listChanged")));
    json_object_put(o);
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":\"rs\",\"method\":\"subscriptions/listen\",\"params\":{" MH_MODERN_META
                  ",\"notifications\":{\"resourcesListChanged\":true,\"resourceSubscriptions\":[\"mem://hello\"]}}}");
    MH_ASSERT_STR(o, "method", "notifications/subscriptions/acknowledged");
    ck_assert(json_object_get_boolean(mh_at(o, "params notifications resourcesListChanged")));
    MH_ASSERT_STR(o, "params notifications resourceSubscriptions 0", "mem://hello");
    json_object_put(o);

    install_as(RESFIX_SO, dir, "resfix.so");
    static const char *const added[] = {"notifications/tools/list_changed", "notifications/resources/list_changed",
                                        "notifications/resources/list_changed@rs"};
    await_notes(p, added, 3);
    read_hello(p, 1);

    /* An update of mem://hello: the subscription asked for it, the legacy
     * session did not subscribe. Then the legacy session subscribes. */
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"resfix\","
               "\"arguments\":{\"uri\":\"mem://hello\"}}}");
    static const char *const upd[] = {"notifications/resources/updated@rs"};
    json_object *others = json_object_new_array();
    json_object_put(mh_await(p, "2", others));
    if (json_object_array_length(others) == 0)
        await_notes(p, upd, 1); /* it may trail the result across the process boundary */
    else
        ck_assert_str_eq(mh_str(json_object_array_get_idx(others, 0), "params uri"), "mem://hello");
    json_object_put(others);
    o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/subscribe\",\"params\":{\"uri\":\"mem://hello\"}}");
    json_object_put(o);
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"resfix\","
               "\"arguments\":{\"uri\":\"mem://hello\"}}}");
    static const char *const both[] = {"notifications/resources/updated", "notifications/resources/updated@rs", "4"};
    for (size_t got = 0; got < 3; got++) {
        json_object *n = mh_next(p);
        const char *m = mh_str(n, "method"), *sub = mh_str(n, "params _meta io.modelcontextprotocol/subscriptionId");
        char key[160];
        snprintf(key, sizeof key, "%s%s%s", m ? m : mh_json(mh_at(n, "id")), sub ? "@" : "", sub ? sub : "");
        bool known = false;
        for (size_t i = 0; i < 3; i++)
            known |= strcmp(both[i], key) == 0;
        ck_assert_msg(known, "unexpected %s", mh_json(n));
        if (m)
            MH_ASSERT_STR(n, "params uri", "mem://hello");
        json_object_put(n);
    }

    /* A broken replacement: the previous resources go on serving. */
    install_as(FLIP_BAD, dir, "resfix.so");
    ck_assert(mh_stderr_wait(p, "still serving the previous version of resource 'mem://hello'", MH_TIMEOUT_MS));
    mh_ping_is_next(p, 5); /* nothing changed for clients */
    read_hello(p, 6);
    o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"resources/templates/list\"}");
    MH_ASSERT_STR(o, "result resourceTemplates 0 uriTemplate", "mem://items/{id}");
    json_object_put(o);

    /* Removed: withdrawn, and both told. */
    char path[512];
    snprintf(path, sizeof path, "%s/resfix.so", dir);
    ck_assert(unlink(path) == 0);
    await_notes(p, added, 3);
    o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"resources/list\"}");
    ck_assert_uint_eq(mh_len(o, "result resources"), 0);
    json_object_put(o);
    done(p, dir);
}
END_TEST

/* Call tool NAME (flip sleeping 0 ms) and return its text, or the error
 * message, in a static buffer. */
static const char *call_named(mh_proc *p, int id, const char *name)
{
    static char text[256];
    json_object *o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\","
                               "\"arguments\":{\"ms\":0}}}", id, name);
    const char *t = mh_str(o, "result content 0 text");
    if (!t)
        t = mh_str(o, "error message");
    snprintf(text, sizeof text, "%s", t ? t : mh_json(o));
    json_object_put(o);
    return text;
}

/* Two toolboxes, dev (DIRS[0]) and prod (DIRS[1]), each a private copy of
 * the plugins given (NULL-ended lists). */
static mh_proc *start_boxes(char **dirs, int mode, bool qualified)
{
    char dev[600], prod[600];
    snprintf(dev, sizeof dev, "--plugin-dir=dev=%s", dirs[0]);
    snprintf(prod, sizeof prod, "--plugin-dir=prod=%s", dirs[1]);
    return mh_spawn(dev, prod, modes[mode], "--watch", "--no-registry-cache",
                    qualified ? "--qualified-names" : "--log-level=info", NULL);
}

/*
** --watch with toolboxes and --qualified-names: a plugin added, replaced
** and removed in prod is served, swapped and withdrawn under its qualified
** name (description prefix and _meta included), and both eras
** are told each time.
*/
START_TEST(qualified_names_follow_a_reload)
{
    char *dirs[2] = {mh_private_dir(SLOW_SO, NULL), mh_private_dir(NULL)};
    mh_proc *p = start_boxes(dirs, _i, true);
    open_both(p);
    ck_assert_str_eq(tool_names(p, 1), "dev__slow__slow");
    install(FLIP_V1, dirs[1]);
    await_changed(p, NULL);
    ck_assert_str_eq(tool_names(p, 2), "dev__slow__slow prod__flip__flip");
    ck_assert_str_eq(call_named(p, 3, "prod__flip__flip"), "flip v1");
    json_object *o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/list\"}");
    MH_ASSERT_STR(o, "result tools 1 _meta toolbox_name", "prod");
    MH_ASSERT_STR(o, "result tools 1 _meta source_server", "flip");
    MH_ASSERT_STR(o, "result tools 1 _meta original_name", "flip");
    ck_assert_msg(strncmp(mh_str(o, "result tools 1 description"), "[prod/flip] ", 12) == 0, "%s", mh_json(o));
    json_object_put(o);

    install(FLIP_V2, dirs[1]);
    await_changed(p, NULL);
    ck_assert_str_eq(call_named(p, 5, "prod__flip__flip"), "flip v2");
    /* The same plugin in dev is another tool, not a duplicate. */
    install(FLIP_V1, dirs[0]);
    await_changed(p, NULL);
    ck_assert_str_eq(call_named(p, 6, "dev__flip__flip"), "flip v1");
    ck_assert_str_eq(call_named(p, 7, "prod__flip__flip"), "flip v2");

    char path[512];
    snprintf(path, sizeof path, "%s/flip.so", dirs[1]);
    ck_assert(unlink(path) == 0);
    await_changed(p, NULL);
    ck_assert_str_eq(tool_names(p, 8), "dev__flip__flip dev__slow__slow");
    ck_assert_str_eq(call_named(p, 9, "prod__flip__flip"), "Server 'flip' not found in toolbox 'prod'");
    mh_finish(p);
    mh_rm_dir(dirs[0]);
    mh_rm_dir(dirs[1]);
}
END_TEST

/*
** Without qualified names, a reload that brings a second flip.so in
** another toolbox (dev, listed first) is refused as a duplicate naming both
** origins; prod's flip, which served before, goes on serving and nobody is
** told of a change. Then prod's is removed: dev's comes in.
*/
START_TEST(a_duplicate_brought_by_a_reload_is_refused)
{
    char *dirs[2] = {mh_private_dir(SLOW_SO, NULL), mh_private_dir(FLIP_V1, NULL)};
    mh_proc *p = start_boxes(dirs, _i, false);
    open_both(p);
    ck_assert_str_eq(call_named(p, 1, "flip"), "flip v1");
    install(FLIP_V2, dirs[0]);
    char want[1400];
    snprintf(want, sizeof want,
             "Tool 'flip' already registered (first by %s/flip.so in toolbox 'prod'; again by %s/flip.so in "
             "toolbox 'dev')", dirs[1], dirs[0]);
    ck_assert_msg(mh_stderr_wait(p, want, MH_TIMEOUT_MS), "no refusal '%s' in:\n%s", want, mh_stderr(p));
    ck_assert(mh_stderr_wait(p, "kept from before)", MH_TIMEOUT_MS)); /* the rebuild is over */
    mh_ping_is_next(p, 2); /* the tools did not change */
    ck_assert_str_eq(call_named(p, 3, "flip"), "flip v1");
    char path[512];
    snprintf(path, sizeof path, "%s/flip.so", dirs[1]);
    ck_assert(unlink(path) == 0);
    await_changed(p, NULL);
    ck_assert_str_eq(call_named(p, 4, "flip"), "flip v2");
    mh_finish(p);
    mh_rm_dir(dirs[0]);
    mh_rm_dir(dirs[1]);
}
END_TEST

/* Without --watch, a file copied in place is loaded on SIGHUP. */
START_TEST(sighup_rescans_without_watch)
{
    char *dir = mh_private_dir(SLOW_SO, NULL);
    mh_proc *p = start(dir, _i, false);
    open_both(p);
    char to[512];
    size_t len;
    char *data = slurp(FLIP_V1, &len);
    snprintf(to, sizeof to, "%s/flip.so", dir);
    write_file(to, data, len);
    free(data);
    mh_ping_is_next(p, 1); /* nothing happens by itself */
    mh_kill(p, SIGHUP);
    await_changed(p, NULL);
    ck_assert_str_eq(call_flip(p, 2, 0), "flip v1");
    done(p, dir);
}
END_TEST

/* A plugin still being written is not loaded half-way: the rescan waits
 * for the writer to close it. */
START_TEST(a_file_still_being_written_is_not_loaded)
{
    char *dir = mh_private_dir(SLOW_SO, NULL);
    mh_proc *p = start(dir, _i, true);
    open_both(p);
    char to[512];
    size_t len;
    char *data = slurp(FLIP_V1, &len);
    snprintf(to, sizeof to, "%s/flip.so", dir);
    int fd = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
    ck_assert(fd >= 0);
    ck_assert(write(fd, data, len / 2) == (ssize_t)(len / 2));
    /* Well past the settle time (200 ms): still nothing loaded. */
    struct timespec ts = {0, 800 * 1000000L};
    nanosleep(&ts, NULL);
    mh_ping_is_next(p, 1);
#if HAVE_INOTIFY_INIT1
    char *err = mh_stderr(p);
    ck_assert_msg(!strstr(err, "flip.so refused") && !strstr(err, "rescanning"), "%s", err);
    free(err);
#endif
    /* Without inotify (the portable stat poll) the quiet half-file may have
     * been scanned and refused: the tools do not change, and the end of
     * the write is a change that loads it. */
    ck_assert(write(fd, data + len / 2, len - len / 2) == (ssize_t)(len - len / 2));
    ck_assert(close(fd) == 0);
    free(data);
    await_changed(p, NULL);
    ck_assert_str_eq(call_flip(p, 2, 0), "flip v1");
    done(p, dir);
}
END_TEST

/* Process mode: a worker loads the file on disk, so a plugin replaced
 * behind the host's back (no reload yet) is not started under its old
 * descriptors: its calls are refused, naming why, until a rescan. */
START_TEST(a_worker_never_runs_a_file_replaced_since_its_registration)
{
    char *dir = mh_private_dir(SLOW_SO, FLIP_V1, NULL);
    mh_proc *p = start(dir, 0, false);
    open_both(p);
    install(FLIP_V2, dir);
    json_object *o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
                               "\"name\":\"flip\",\"arguments\":{}}}");
    ck_assert_msg(json_object_get_boolean(mh_at(o, "result isError")) &&
                      strstr(mh_str(o, "result content 0 text"), "changed since its tools were registered"),
                  "%s", mh_json(o));
    json_object_put(o);
    mh_kill(p, SIGHUP);
    await_changed(p, NULL);
    ck_assert_str_eq(call_flip(p, 2, 0), "flip v2");
    done(p, dir);
}
END_TEST

/*
** subscriptions/listen's own rules: a malformed filter is -32602, an id
** already open -32600, a legacy request for it is refused; a subscription
** that did not ask for toolsListChanged, or was cancelled with
** notifications/cancelled, hears nothing; an un-initialized connection gets
** no legacy notification.
*/
START_TEST(subscriptions_hear_only_what_they_asked_for)
{
    char *dir = mh_private_dir(SLOW_SO, NULL);
    mh_proc *p = start(dir, 1, false);
    json_object *o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"subscriptions/listen\",\"params\":{"
                               MH_MODERN_META ",\"notifications\":{\"toolsListChanged\":\"yes\"}}}");
    ck_assert_int_eq(json_object_get_int(mh_at(o, "error code")), -32602);
    ck_assert_msg(strstr(mh_str(o, "error message"), "toolsListChanged"), "%s", mh_json(o));
    json_object_put(o);
    o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"subscriptions/listen\",\"params\":{" MH_MODERN_META
                  "}}");
    ck_assert_int_eq(json_object_get_int(mh_at(o, "error code")), -32602);
    json_object_put(o);
    o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"subscriptions/listen\","
                  "\"params\":{\"notifications\":{\"toolsListChanged\":true}}}");
    ck_assert_msg(mh_has(o, "error"), "a legacy request opened a subscription: %s", mh_json(o));
    json_object_put(o);
    const char *listen4 = "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"subscriptions/listen\",\"params\":{" MH_MODERN_META
                          ",\"notifications\":{\"toolsListChanged\":true}}}";
    o = mh_rpc(p, "%s", listen4);
    MH_ASSERT_STR(o, "method", "notifications/subscriptions/acknowledged");
    ck_assert_int_eq(json_object_get_int(mh_at(o, "params _meta io.modelcontextprotocol/subscriptionId")), 4);
    json_object_put(o);
    o = mh_rpc(p, "%s", listen4);
    ck_assert_int_eq(json_object_get_int(mh_at(o, "error code")), -32600);
    json_object_put(o);
    o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"subscriptions/listen\",\"params\":{" MH_MODERN_META
                  ",\"notifications\":{\"toolsListChanged\":false}}}");
    ck_assert_msg(!mh_has(o, "params notifications toolsListChanged"), "%s", mh_json(o));
    json_object_put(o);
    o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"subscriptions/listen\",\"params\":{" MH_MODERN_META
                  ",\"notifications\":{\"toolsListChanged\":true}}}");
    json_object_put(o);
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":4}}");
    /* Messages are handled in order: once the ping is answered, so is the
     * cancel, and the reload below cannot overtake it. */
    mh_ping_is_next(p, 8);
    install(FLIP_V1, dir);
    mh_kill(p, SIGHUP);
    /* Only subscription 6 is told: not 4 (cancelled), not 5 (did not ask),
     * and no legacy notification (never initialized). */
    o = mh_next(p);
    MH_ASSERT_STR(o, "method", "notifications/tools/list_changed");
    ck_assert_int_eq(json_object_get_int(mh_at(o, "params _meta io.modelcontextprotocol/subscriptionId")), 6);
    json_object_put(o);
    o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\",\"params\":{" MH_MODERN_META "}}");
    ck_assert_int_eq(json_object_get_int(mh_at(o, "id")), 7);
    ck_assert_int_eq((int)mh_len(o, "result tools"), 2);
    json_object_put(o);
    /* SIGTERM: the server ends the open subscriptions gracefully, each
     * with its response carrying its id (5 and 6). */
    mh_kill(p, SIGTERM);
    int closed = 0;
    while ((o = mh_read(p, MH_TIMEOUT_MS)) != NULL) {
        int id = json_object_get_int(mh_at(o, "id"));
        ck_assert_msg((id == 5 || id == 6) && mh_has(o, "result"), "%s", mh_json(o));
        ck_assert_int_eq(json_object_get_int(mh_at(o, "result _meta io.modelcontextprotocol/subscriptionId")), id);
        MH_ASSERT_STR(o, "result resultType", "complete");
        closed++;
        json_object_put(o);
    }
    ck_assert_int_eq(closed, 2);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
    char cache[600];
    snprintf(cache, sizeof cache, "%s.cache.json", dir);
    unlink(cache);
    mh_rm_dir(dir);
}
END_TEST

/* Read from FD into BUF (of SIZE, kept NUL-terminated; *LEN bytes so far)
 * until it holds NEEDLE; false on timeout or EOF. */
static bool read_until(int fd, char *buf, size_t size, size_t *len, const char *needle)
{
    long long until = mh_now_ms() + MH_TIMEOUT_MS;
    while (!strstr(buf, needle)) {
        struct pollfd pfd = {fd, POLLIN, 0};
        long long left = until - mh_now_ms();
        if (left <= 0 || poll(&pfd, 1, (int)left) <= 0 || *len + 1 >= size)
            return false;
        ssize_t n = read(fd, buf + *len, size - *len - 1);
        if (n <= 0)
            return false;
        *len += (size_t)n;
        buf[*len] = '\0';
    }
    return true;
}

/*
** Over Streamable HTTP a subscriptions/listen POST is answered with an SSE
** stream that stays open: the acknowledgment first, then the change; a
** client that closes it ends the subscription, and the host serves on.
*/
START_TEST(a_subscription_over_http_streams_the_change)
{
    char *dir = mh_private_dir(SLOW_SO, NULL);
    char cache[600];
    snprintf(cache, sizeof cache, "--registry-cache=%s.cache.json", dir);
    mh_proc *p = mh_spawn("--plugin-dir", dir, modes[_i], "--watch", "--http", "127.0.0.1:0", "--stdio", cache, NULL);
    const char *listening = "listening on http://127.0.0.1:";
    ck_assert(mh_stderr_wait(p, listening, MH_TIMEOUT_MS));
    char *err = mh_stderr(p);
    int port = atoi(strstr(err, listening) + strlen(listening));
    free(err);
    ck_assert_int_gt(port, 0);

    const char *body = "{\"jsonrpc\":\"2.0\",\"id\":\"h1\",\"method\":\"subscriptions/listen\",\"params\":{"
                       MH_MODERN_META ",\"notifications\":{\"toolsListChanged\":true}}}";
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert(fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0);
    char head[1024];
    int n = snprintf(head, sizeof head,
                     "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAccept: application/json, text/event-stream\r\n"
                     "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: subscriptions/listen\r\n"
                     "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
                     port, strlen(body), body);
    ck_assert(write(fd, head, (size_t)n) == n);
    static char buf[65536];
    size_t len = 0;
    buf[0] = '\0';
    ck_assert_msg(read_until(fd, buf, sizeof buf, &len, "notifications/subscriptions/acknowledged"), "%s", buf);
    ck_assert_msg(strstr(buf, "200 OK") && strstr(buf, "text/event-stream"), "%s", buf);
    ck_assert_msg(strstr(buf, "\"io.modelcontextprotocol/subscriptionId\":\"h1\""), "%s", buf);
    install(FLIP_V1, dir);
    ck_assert_msg(read_until(fd, buf, sizeof buf, &len, "notifications/tools/list_changed"), "%s", buf);
    const char *change = strstr(buf, "notifications/tools/list_changed");
    ck_assert_msg(strstr(change, "\"io.modelcontextprotocol/subscriptionId\":\"h1\""), "%s", buf);
    close(fd);
    mh_ping_is_next(p, 1);
    /* A stream still open at shutdown is ended with its response. */
    body = "{\"jsonrpc\":\"2.0\",\"id\":\"h2\",\"method\":\"subscriptions/listen\",\"params\":{" MH_MODERN_META
           ",\"notifications\":{\"toolsListChanged\":true}}}";
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ck_assert(fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0);
    n = snprintf(head, sizeof head,
                 "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAccept: application/json, text/event-stream\r\n"
                 "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: subscriptions/listen\r\n"
                 "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
                 port, strlen(body), body);
    ck_assert(write(fd, head, (size_t)n) == n);
    len = 0;
    buf[0] = '\0';
    ck_assert_msg(read_until(fd, buf, sizeof buf, &len, "notifications/subscriptions/acknowledged"), "%s", buf);
    mh_kill(p, SIGTERM);
    ck_assert_msg(read_until(fd, buf, sizeof buf, &len, "\"id\":\"h2\",\"result\""), "%s", buf);
    ck_assert_msg(strstr(strstr(buf, "\"id\":\"h2\",\"result\""), "\"resultType\":\"complete\""), "%s", buf);
    close(fd);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
    snprintf(cache, sizeof cache, "%s.cache.json", dir);
    unlink(cache);
    mh_rm_dir(dir);
}
END_TEST

static Suite *reload_suite(void)
{
    Suite *s = suite_create("reload");
    TCase *tc = tcase_create("hot reload");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_loop_test(tc, an_added_plugin_is_served_and_both_eras_are_told, 0, 2);
    tcase_add_loop_test(tc, a_replacement_is_swapped_in_while_a_call_finishes_on_the_old_code, 0, 2);
    tcase_add_loop_test(tc, a_refused_replacement_keeps_the_previous_version_serving, 0, 2);
    tcase_add_loop_test(tc, a_removed_plugin_is_withdrawn, 0, 2);
    tcase_add_loop_test(tc, sighup_rescans_without_watch, 0, 2);
    tcase_add_test(tc, an_unchanged_plugins_worker_carries_over_a_reload);
    tcase_add_loop_test(tc, resources_follow_a_reload, 0, 2);
    tcase_add_loop_test(tc, qualified_names_follow_a_reload, 0, 2);
    tcase_add_loop_test(tc, a_duplicate_brought_by_a_reload_is_refused, 0, 2);
    tcase_add_loop_test(tc, a_file_still_being_written_is_not_loaded, 0, 2);
    tcase_add_test(tc, a_worker_never_runs_a_file_replaced_since_its_registration);
    tcase_add_test(tc, subscriptions_hear_only_what_they_asked_for);
    tcase_add_loop_test(tc, a_subscription_over_http_streams_the_change, 0, 2);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN_WITH(reload_suite, mh_global_setup, mh_global_teardown)
