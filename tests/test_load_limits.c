/* SPDX-License-Identifier: MIT */
/*
** test_load_limits.c: the worker resource limits against the
** hostile plugin limits.so: --worker-memory-limit fails only the call that
** overruns it, --worker-max-files caps what a handler can open, and an idle
** worker stays up and serves the next call.
*/
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcp_harness.h"
#include "check_main.h"

#define CALL(id, tool, args)                                                                                           \
    "{\"jsonrpc\":\"2.0\",\"id\":" #id ",\"method\":\"tools/call\",\"params\":{\"name\":\"" tool                      \
    "\",\"arguments\":" args "," MH_MODERN_META "}}"

static mh_proc *start(char **dir, const char *opt)
{
    *dir = mh_private_dir(mh_hostile("limits"), NULL);
    mh_proc *p = mh_spawn("-d", *dir, "--isolation=process", opt, NULL);
    mh_ping_is_next(p, 1);
    return p;
}

/* The text of the answer to ID, which must be a success (or, with
 * WANT_ERROR, an isError result). Malloc'd. */
static char *answer(mh_proc *p, const char *id, bool want_error)
{
    json_object *o = mh_await(p, id, NULL);
    MH_ASSERT_RESULT(o);
    json_object *e = mh_at(o, "result isError");
    ck_assert_msg((e && json_object_get_boolean(e)) == want_error, "want %s in %s",
                  want_error ? "an isError result" : "a success", mh_json(o));
    const char *text = mh_str(o, "result content 0 text");
    ck_assert_msg(text != NULL, "no text in %s", mh_json(o));
    char *copy = strdup(text);
    json_object_put(o);
    return copy;
}

/* Call the "pid" tool as ID: the serving worker's process id, never the host's. */
static long worker_pid(mh_proc *p, int id)
{
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"pid\","
               "\"arguments\":{}," MH_MODERN_META "}}",
            id);
    char id_json[16];
    snprintf(id_json, sizeof id_json, "%d", id);
    char *text = answer(p, id_json, false);
    long pid = strtol(text, NULL, 10);
    free(text);
    ck_assert_msg(pid > 0 && pid != mh_pid(p), "pid %ld: want a worker's, not the host's %ld", pid, mh_pid(p));
    return pid;
}

/* AddressSanitizer reserves terabytes of address space: under it no
 * worker can start under RLIMIT_AS (README, Process isolation). */
#if defined(__SANITIZE_ADDRESS__)
#define ASAN_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ASAN_BUILD 1
#endif
#endif

START_TEST(a_handler_over_the_memory_limit_fails_its_call_and_the_next_works)
{
    char *dir;
    mh_proc *p = start(&dir, "--worker-memory-limit=67108864");
#ifdef ASAN_BUILD
    /* The sanitizer build's worker cannot start: the call fails, the host serves on. */
    mh_send(p, CALL(2, "pid", "{}"));
    char *failed = answer(p, "2", true);
    ck_assert_msg(strncmp(failed, "tool 'pid' is unavailable: ", 27) == 0, "%s", failed);
    free(failed);
    mh_ping_is_next(p, 3);
    mh_finish(p);
    mh_rm_dir(dir);
    return;
#endif
    /* The worker starts and works under 64 MiB, and a small block is fine. */
    long first = worker_pid(p, 2);
    mh_send(p, CALL(3, "hog", "{\"mib\":8}"));
    char *text = answer(p, "3", false);
    ck_assert_str_eq(text, "touched 8 MiB");
    free(text);
    /* 512 MiB cannot be had: malloc fails and the careless handler faults.
     * The client is told which tool, what happened, and which limit. */
    mh_send(p, CALL(4, "hog", "{}"));
    text = answer(p, "4", true);
    ck_assert_msg(strncmp(text, "tool 'hog' crashed: signal 11 (SIGSEGV)", 39) == 0 &&
                      strstr(text, "--worker-memory-limit") && strstr(text, "64 MiB"),
                  "want the tool, the signal and the limit named: %s", text);
    free(text);
    /* A new worker (after the backoff) serves the next call. */
    long second = worker_pid(p, 5);
    ck_assert_msg(second != first, "the crashed worker %ld still serves", first);
    mh_ping_is_next(p, 6);
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

#define MAX_FILES 32

START_TEST(a_handler_cannot_open_more_files_than_the_limit)
{
    char *dir;
    char opt[64];
    snprintf(opt, sizeof opt, "--worker-max-files=%d", MAX_FILES);
    mh_proc *p = start(&dir, opt);
    mh_send(p, CALL(2, "fds", "{}"));
    char *text = answer(p, "2", false);
    int opened = -1;
    char why[64] = "";
    ck_assert_msg(sscanf(text, "opened %d (%63[^)])", &opened, why) == 2, "unexpected answer: %s", text);
    /* Its socket and the standard descriptors are already open, so fewer
     * than the limit remain; but some do, and the limit is what stopped it. */
    ck_assert_msg(opened > 0 && opened <= MAX_FILES, "opened %d files under a limit of %d", opened, MAX_FILES);
    ck_assert_msg(strcmp(why, "Too many open files") == 0, "stopped by \"%s\", not the limit", why);
    free(text);
    /* The worker survives running out of descriptors. */
    mh_send(p, CALL(3, "fds", "{}"));
    text = answer(p, "3", false);
    int again = -1;
    ck_assert_msg(sscanf(text, "opened %d", &again) == 1 && again == opened, "then opened %s", text);
    free(text);
    mh_ping_is_next(p, 4);
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

START_TEST(an_idle_worker_stays_and_serves_the_next_call)
{
    char *dir;
    mh_proc *p = start(&dir, NULL);
    long first = worker_pid(p, 2);
    sleep(3);
    long second = worker_pid(p, 3);
    ck_assert_msg(second == first, "worker %ld served the first call, %ld the one 3 s later", first, second);
    mh_ping_is_next(p, 4);
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

static Suite *limits_suite(void)
{
    Suite *s = suite_create("limits");
    TCase *tc = tcase_create("worker");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_test(tc, a_handler_over_the_memory_limit_fails_its_call_and_the_next_works);
    tcase_add_test(tc, a_handler_cannot_open_more_files_than_the_limit);
    tcase_add_test(tc, an_idle_worker_stays_and_serves_the_next_call);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN_WITH(limits_suite, mh_global_setup, mh_global_teardown)
