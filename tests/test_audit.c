/* SPDX-License-Identifier: MIT */
/*
** test_audit.c: --audit-log against a real src/toolhost over stdio: one
** line per call (a task's runs included) with the right tool, outcome,
** principal and arguments' hash and never their text; rotation (mv, SIGHUP) losing no line; a full
** disk (a 16 KiB tmpfs in a private mount namespace, and /dev/full) that
** the host serves through, warning once, with lines resuming after it.
*/
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/sha256.h"
#include "check_main.h"
#include "mcp_harness.h"

/* A fresh path for the log in a private directory (malloc'd). */
static char *log_path(const char *dir)
{
    char *p = malloc(256);
    ck_assert(p != NULL);
    snprintf(p, 256, "%s/audit.log", dir);
    return p;
}

static char *temp_dir(void)
{
    char *d = strdup("/tmp/th-audit-XXXXXX");
    ck_assert(d && mkdtemp(d));
    return d;
}

/* FILE's lines, parsed: each must be one JSON object. */
static json_object *read_lines(const char *file)
{
    json_object *arr = json_object_new_array();
    FILE *f = fopen(file, "r");
    ck_assert_msg(f != NULL, "%s: %s", file, strerror(errno));
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        size_t n = strlen(line);
        ck_assert_msg(n > 0 && line[n - 1] == '\n', "a line of %s does not end in a newline: %s", file, line);
        line[n - 1] = '\0';
        json_object *o = mh_parse(line);
        ck_assert_msg(json_object_is_type(o, json_type_object), "not a JSON object in %s: %s", file, line);
        json_object_array_add(arr, o);
    }
    fclose(f);
    return arr;
}

static char *file_text(const char *file)
{
    FILE *f = fopen(file, "r");
    ck_assert(f != NULL);
    static char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static json_object *call(mh_proc *p, int id, const char *tool, const char *args)
{
    char idj[16];
    snprintf(idj, sizeof idj, "%d", id);
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\",\"arguments\":%s}}",
            id, tool, args);
    return mh_await(p, idj, NULL);
}

static void assert_line(json_object *line, const char *tool, const char *outcome, const char *canonical_args)
{
    MH_ASSERT_STR(line, "tool", tool);
    MH_ASSERT_STR(line, "outcome", outcome);
    MH_ASSERT_STR(line, "principal", "stdio");
    const char *t = mh_str(line, "time");
    ck_assert_msg(t && strlen(t) == 24 && t[10] == 'T' && t[19] == '.' && t[23] == 'Z', "time not RFC 3339 UTC ms: %s",
                  t ? t : "(none)");
    ck_assert_msg(json_object_is_type(mh_at(line, "duration_ms"), json_type_int), "no duration_ms in %s",
                  mh_json(line));
    char want[TH_SHA256_DIGEST_LEN + 1];
    th_sha256_digest(canonical_args, strlen(canonical_args), want);
    MH_ASSERT_STR(line, "args_sha256", want);
}

static const char *const isolation[] = {"--isolation=process", "--isolation=none"};

/* In both isolation modes: a worker's result reaches the host as its text. */
START_TEST(lines_match_the_calls)
{
    char *dir = temp_dir(), *file = log_path(dir);
    mh_proc *p = mh_start("--audit-log", file, isolation[_i], NULL);
    mh_initialize(p, "2025-11-25");
    /* Members out of order: the hash is of the canonical text. */
    json_object *o = call(p, 2, "echo", "{\"text\":\"sekrit-value-1\"}");
    MH_ASSERT_RESULT(o);
    json_object_put(o);
    o = call(p, 3, "failer", "{\"reason\":\"sekrit-value-2\",\"also\":[1,{\"b\":2,\"a\":1}]}");
    MH_ASSERT_TRUE(o, "result isError");
    json_object_put(o);
    o = call(p, 4, "echo", "{}"); /* no "text": refused by its schema */
    MH_ASSERT_TRUE(o, "result isError");
    json_object_put(o);
    o = call(p, 5, "no_such_tool", "{\"text\":\"sekrit-value-3\"}"); /* a probe */
    MH_ASSERT_ERROR(o, -32602);
    json_object_put(o);
    o = call(p, 6, "echo", "[\"sekrit-value-4\"]");
    MH_ASSERT_ERROR(o, -32602);
    json_object_put(o);
    mh_finish(p);

    json_object *lines = read_lines(file);
    ck_assert_int_eq(json_object_array_length(lines), 5);
    assert_line(json_object_array_get_idx(lines, 0), "echo", "ok", "{\"text\":\"sekrit-value-1\"}");
    assert_line(json_object_array_get_idx(lines, 1), "failer", "tool_error",
                "{\"also\":[1,{\"a\":1,\"b\":2}],\"reason\":\"sekrit-value-2\"}");
    assert_line(json_object_array_get_idx(lines, 2), "echo", "tool_error", "{}");
    for (int i = 3; i < 5; i++) {
        json_object *l = json_object_array_get_idx(lines, i);
        MH_ASSERT_STR(l, "tool", i == 3 ? "no_such_tool" : "echo");
        MH_ASSERT_STR(l, "outcome", "error");
        MH_ASSERT_INT(l, "code", -32602);
        MH_ASSERT_ABSENT(l, "args_sha256"); /* never run, never hashed */
    }
    json_object_put(lines);
    ck_assert_msg(!strstr(file_text(file), "sekrit"), "argument text in the audit log: %s", file_text(file));
    struct stat st;
    ck_assert(stat(file, &st) == 0);
    ck_assert_msg((st.st_mode & 077) == 0, "audit log mode %o is open to others", (unsigned)(st.st_mode & 0777));
    unlink(file);
    rmdir(dir);
    free(file);
    free(dir);
}
END_TEST

/* A task's run is a call too: its line comes when the run ends, with the
 * tool's outcome and the hash of the arguments the task was made with. */
START_TEST(task_runs_are_audited)
{
    char *dir = temp_dir(), *file = log_path(dir);
    char *plugins = mh_private_dir(TEST_BUILDDIR "/conformance/.libs/task_tools.so", NULL);
    mh_proc *p = mh_spawn("-d", plugins, "--audit-log", file, isolation[_i], NULL);
    mh_initialize(p, "2025-11-25");
    const char *calls[][2] = {{"slow_compute", "{\"seconds\":0,\"label\":\"sekrit-value-5\"}"},
                              {"failing_job", "{}"}};
    for (int i = 0; i < 2; i++) {
        mh_send(p,
                "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\","
                "\"arguments\":%s,\"task\":{}}}",
                10 + i, calls[i][0], calls[i][1]);
        char idj[16];
        snprintf(idj, sizeof idj, "%d", 10 + i);
        json_object *o = mh_await(p, idj, NULL);
        const char *task = mh_str(o, "result task taskId");
        ck_assert_msg(task != NULL, "no task made: %s", mh_json(o));
        mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tasks/result\",\"params\":{\"taskId\":\"%s\"}}",
                20 + i, task);
        json_object_put(o);
        snprintf(idj, sizeof idj, "%d", 20 + i);
        o = mh_await(p, idj, NULL);
        MH_ASSERT_RESULT(o);
        json_object_put(o);
    }
    mh_finish(p); /* the last run's line is written before the host ends */

    json_object *lines = read_lines(file);
    ck_assert_int_eq(json_object_array_length(lines), 2);
    assert_line(json_object_array_get_idx(lines, 0), "slow_compute", "ok",
                "{\"label\":\"sekrit-value-5\",\"seconds\":0}");
    assert_line(json_object_array_get_idx(lines, 1), "failing_job", "tool_error", "{}");
    json_object_put(lines);
    ck_assert_msg(!strstr(file_text(file), "sekrit"), "argument text in the audit log: %s", file_text(file));
    mh_rm_dir(plugins);
    unlink(file);
    rmdir(dir);
    free(file);
    free(dir);
}
END_TEST

static size_t count_lines(const char *file)
{
    json_object *l = read_lines(file);
    size_t n = json_object_array_length(l);
    json_object_put(l);
    return n;
}

START_TEST(rotation_on_sighup_loses_nothing)
{
    char *dir = temp_dir(), *file = log_path(dir), rotated[300];
    snprintf(rotated, sizeof rotated, "%s.1", file);
    mh_proc *p = mh_start("--audit-log", file, NULL);
    mh_initialize(p, "2025-11-25");
    for (int i = 0; i < 3; i++)
        json_object_put(call(p, 10 + i, "echo", "{\"text\":\"a\"}"));
    ck_assert(rename(file, rotated) == 0);
    /* Calls between the move and the reopen still land in the moved file. */
    json_object_put(call(p, 20, "echo", "{\"text\":\"b\"}"));
    mh_kill(p, SIGHUP);
    long long until = mh_now_ms() + MH_TIMEOUT_MS;
    while (access(file, F_OK) != 0 && mh_now_ms() < until)
        usleep(10000);
    ck_assert_msg(access(file, F_OK) == 0, "no new audit log after SIGHUP");
    for (int i = 0; i < 2; i++)
        json_object_put(call(p, 30 + i, "echo", "{\"text\":\"c\"}"));
    mh_finish(p);
    ck_assert_uint_eq(count_lines(rotated), 4);
    ck_assert_uint_eq(count_lines(file), 2);
    unlink(file);
    unlink(rotated);
    rmdir(dir);
    free(file);
    free(dir);
}
END_TEST

/* How many times stderr TEXT holds NEEDLE. */
static int occurrences(const char *text, const char *needle)
{
    int n = 0;
    for (const char *s = text; (s = strstr(s, needle)) != NULL; s += strlen(needle))
        n++;
    return n;
}

/* Serve N calls with the log failing: every one answered, one warning,
 * naming the kernel's answer. */
static void calls_survive(mh_proc *p, int n, const char *why)
{
    for (int i = 0; i < n; i++) {
        json_object *o = call(p, 100 + i, "echo", "{\"text\":\"x\"}");
        MH_ASSERT_RESULT(o);
        json_object_put(o);
    }
    ck_assert_msg(mh_stderr_wait(p, why, MH_TIMEOUT_MS), "no warning naming '%s' in: %s", why, mh_stderr(p));
    char *err = mh_stderr(p);
    ck_assert_msg(occurrences(err, "audit log") == 1, "want one audit warning for %d failed lines, got: %s", n, err);
    free(err);
}

/*
** A 16 KiB tmpfs of our own (this test's process only: Check forks each
** test) filled up, the log on it: ENOSPC from the kernel for every line,
** then room again and the lines resume, the first saying how many were lost.
*/
START_TEST(full_tmpfs_warns_once_and_resumes)
{
    char *dir = temp_dir();
    if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
        mount("tmpfs", dir, "tmpfs", 0, "size=16k") != 0) {
        /* Said, with the kernel's answer, not passed over: /dev/full below
         * still proves the host serves on. */
        fprintf(stderr, "full_tmpfs_warns_once_and_resumes: no private tmpfs here: %s\n", strerror(errno));
        ck_assert_msg(errno == EPERM || errno == ENOSYS || errno == EINVAL, "unshare/mount: %s", strerror(errno));
        rmdir(dir);
        free(dir);
        return;
    }
    char filler[300];
    snprintf(filler, sizeof filler, "%s/filler", dir);
    int fd = open(filler, O_WRONLY | O_CREAT, 0600);
    ck_assert(fd >= 0);
    static char block[4096];
    ssize_t w;
    while ((w = write(fd, block, sizeof block)) > 0)
        ;
    ck_assert_msg(w < 0 && errno == ENOSPC, "filling the tmpfs ended with %s", strerror(errno));
    close(fd);
    char *file = log_path(dir);
    mh_proc *p = mh_start("--audit-log", file, NULL);
    mh_initialize(p, "2025-11-25");
    calls_survive(p, 5, "No space left on device");
    struct stat st;
    ck_assert(stat(file, &st) == 0);
    ck_assert_int_eq(st.st_size, 0);

    ck_assert(unlink(filler) == 0);
    json_object *o = call(p, 200, "echo", "{\"text\":\"y\"}");
    MH_ASSERT_RESULT(o);
    json_object_put(o);
    mh_finish(p);
    json_object *lines = read_lines(file);
    ck_assert_int_eq(json_object_array_length(lines), 1);
    MH_ASSERT_INT(json_object_array_get_idx(lines, 0), "lost_before", 5);
    json_object_put(lines);
    ck_assert(umount(dir) == 0);
    rmdir(dir);
    free(file);
    free(dir);
}
END_TEST

/* /dev/full: ENOSPC for every write, wherever mounts are not ours to make. */
START_TEST(dev_full_warns_once)
{
    mh_proc *p = mh_start("--audit-log", "/dev/full", NULL);
    mh_initialize(p, "2025-11-25");
    calls_survive(p, 5, "No space left on device");
    mh_finish(p);
}
END_TEST

START_TEST(unopenable_log_is_fatal)
{
    mh_proc *p = mh_spawn("--audit-log", "/nonexistent-dir/audit.log", "-d", mh_echo_dir(), NULL);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 1);
    ck_assert(mh_stderr_wait(p, "--audit-log /nonexistent-dir/audit.log: No such file or directory", MH_TIMEOUT_MS));
    mh_free(p);
}
END_TEST

static Suite *audit_suite(void)
{
    Suite *s = suite_create("audit");
    TCase *tc = tcase_create("audit");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_loop_test(tc, lines_match_the_calls, 0, 2);
    tcase_add_loop_test(tc, task_runs_are_audited, 0, 2);
    tcase_add_test(tc, rotation_on_sighup_loses_nothing);
    tcase_add_test(tc, full_tmpfs_warns_once_and_resumes);
    tcase_add_test(tc, dev_full_warns_once);
    tcase_add_test(tc, unopenable_log_is_fatal);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN_WITH(audit_suite, mh_global_setup, mh_global_teardown)
