/* SPDX-License-Identifier: MIT */
/*
** test_isolation.c: a plugin in its own worker attacks the host and another
** plugin's worker (tests/isolationplugins/probe.c: ptrace, SIGSTOP, their
** environ and descriptors, a forged response on the host's output, their
** memory), as the test's user and, when that is root, again as nobody.
** Each attack must be tried and refused by the kernel, and the host, the
** other worker and echo must keep serving, the forged response unseen.
** A worker's environment holds the host's only where it must or where
** --pass-env names it.
*/
#define _GNU_SOURCE
#include "config.h"

#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mcp_harness.h"
#include "check_main.h"

#define ECHO_SO TOP_BUILDDIR "/plugins/.libs/echo.so"
#define PROBE(name) TEST_BUILDDIR "/isolationplugins/.libs/" name ".so"
#define NOBODY 65534

/* Each attack, and whether it is aimed at the host, the other worker or both. */
enum { AT_HOST = 1, AT_OTHER = 2 };
static const struct {
    const char *what;
    int at;
} attacks[] = {
    {"ptrace_attach", AT_HOST | AT_OTHER}, {"ptrace_seize", AT_HOST | AT_OTHER}, {"sigstop", AT_HOST | AT_OTHER},
    {"environ", AT_HOST | AT_OTHER},       {"fd3_read", AT_OTHER},               {"forge_output", AT_HOST},
    {"process_vm_readv", AT_HOST},
};

/* What the kernel may answer an attack it refused. */
static const char *const refusals[] = {"EPERM", "EACCES", "ESRCH"};

static int next_id = 10;

/* Call TOOL with ARGS (JSON) and return its text (static), failing on an error. */
static const char *call(mh_proc *p, const char *tool, const char *args)
{
    static char text[256];
    int id = next_id++;
    char want[16];
    snprintf(want, sizeof want, "%d", id);
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\",\"arguments\":%s,"
               MH_MODERN_META "}}", id, tool, args);
    /* mh_await fails on a response with another id: the forged 999 too. */
    json_object *o = mh_await(p, want, NULL);
    MH_ASSERT_RESULT(o);
    MH_ASSERT_ABSENT(o, "result isError");
    const char *t = mh_str(o, "result content 0 text");
    ck_assert_msg(t != NULL, "no text in %s", mh_json(o));
    snprintf(text, sizeof text, "%s", t);
    json_object_put(o);
    return text;
}

static long victim_pid(mh_proc *p)
{
    return strtol(call(p, "victim", "{}"), NULL, 10);
}

/* ATTACK by the attacker's worker on PID: tried, and refused. */
static void assert_refused(mh_proc *p, const char *what, long pid, const char *target)
{
    struct stat st;
    ck_assert(fstat(mh_stdout_fd(p), &st) == 0);
    char args[160];
    snprintf(args, sizeof args, "{\"what\":\"%s\",\"pid\":%ld,\"ino\":%llu}", what, pid, (unsigned long long)st.st_ino);
    const char *text = call(p, "attacker_attack", args);
    fprintf(stderr, "uid %ld: %s on the %s (pid %ld): %s\n", (long)geteuid(), what, target, pid, text);
    size_t n = strlen(what);
    ck_assert_msg(strncmp(text, what, n) == 0 && strncmp(text + n, ": ", 2) == 0, "%s was not tried: %s", what, text);
    bool refused = false;
    for (size_t i = 0; i < sizeof refusals / sizeof refusals[0]; i++)
        refused |= strcmp(text + n + 2, refusals[i]) == 0;
    ck_assert_msg(refused, "%s on the %s was not refused: %s", what, target, text);
}

/* The filter's refusals reach the host's log, each naming the system call
 * and tagged with the attacker's plugin (ptrace is the kernel's own check
 * in a sanitizer build, and signals may be refused before the filter). */
static void assert_refusals_reported(mh_proc *p)
{
    const char *want = "plugin=attacker syscall=process_vm_readv";
    char *err = mh_stderr(p);
    fprintf(stderr, "%s", err);
    ck_assert_msg(mh_stderr_wait(p, want, MH_TIMEOUT_MS), "no \"%s\" in the host's log:\n%s", want, err);
    free(err);
}

/* Every attack on the host and on the victim's worker; after each, the
 * victim's worker is the same process and echo answers. AS_NOBODY: the
 * test (and so the host) drops to nobody first, owning the directory. */
static void attack_all(bool as_nobody)
{
#if !HAVE_SECCOMP
    /* Built without the Linux interfaces (--disable-linux-extensions): the
     * workers are not isolated, and the host says so. */
    (void)as_nobody;
    return;
#endif
    char *dir = mh_private_dir(PROBE("attacker"), PROBE("victim"), ECHO_SO, NULL);
    if (as_nobody) {
        /* The files stay root's, which the host trusts; Check runs each
         * test in a process of its own, so the others keep root. */
        ck_assert(chown(dir, NOBODY, NOBODY) == 0);
        ck_assert(setgroups(0, NULL) == 0);
        ck_assert(setresgid(NOBODY, NOBODY, NOBODY) == 0);
        ck_assert(setresuid(NOBODY, NOBODY, NOBODY) == 0);
    }
    mh_proc *p = mh_spawn("-d", dir, "--isolation=process", "--no-registry-cache", NULL);
    mh_ping_is_next(p, 1);
    long host = mh_pid(p), other = victim_pid(p);
    ck_assert_int_gt(other, 0);
    ck_assert_int_ne(other, host);
    for (size_t i = 0; i < sizeof attacks / sizeof attacks[0]; i++) {
        if (attacks[i].at & AT_HOST)
            assert_refused(p, attacks[i].what, host, "host");
        if (attacks[i].at & AT_OTHER)
            assert_refused(p, attacks[i].what, other, "other worker");
        ck_assert_int_eq(victim_pid(p), other);
        ck_assert_str_eq(call(p, "echo", "{\"text\":\"still here\"}"), "still here");
    }
    mh_ping_is_next(p, 2); /* nothing forged came before it */
    assert_refusals_reported(p);
    mh_finish(p);
    mh_rm_dir(dir);
}

START_TEST(attacks_on_the_host_and_another_worker_are_refused)
{
    attack_all(false);
}
END_TEST

/* Where the test runs as root, again as nobody, the user a service runs
 * as: the same uid as the workers, without root's capabilities. */
START_TEST(attacks_are_refused_when_the_host_runs_as_nobody)
{
    const char *fork_mode = getenv("CK_FORK");
    if (geteuid() != 0 || (fork_mode && strcmp(fork_mode, "no") == 0)) {
        fprintf(stderr, "not root (or CK_FORK=no): the run as nobody is left out\n");
        return;
    }
    attack_all(true);
}
END_TEST

/* The value of NAME in the victim's worker. */
static const char *worker_env(mh_proc *p, const char *name)
{
    char args[128];
    snprintf(args, sizeof args, "{\"name\":\"%s\"}", name);
    return call(p, "victim_env", args);
}

START_TEST(a_worker_gets_only_the_environment_it_needs)
{
    char *dir = mh_private_dir(PROBE("victim"), NULL);
    setenv("TH_TEST_HOST_SECRET", "hostSecret-4e1d", 1);
    setenv("TH_TEST_PASSED", "passed-9a2b", 1);
    setenv("TZ", "UTC0", 1);
    /* A checked build's options reach its workers: kept as they are. */
    const char *ubsan = getenv("UBSAN_OPTIONS");
    char *ubsan_kept = strdup(ubsan ? ubsan : "print_stacktrace=1");
    setenv("UBSAN_OPTIONS", ubsan_kept, 1);
    mh_proc *p = mh_spawn("-d", dir, "--no-registry-cache", "--pass-env=TH_TEST_PASSED,TH_TEST_UNSET", NULL);
    ck_assert_str_eq(worker_env(p, "TH_TEST_HOST_SECRET"), "(unset)");
    ck_assert_str_eq(worker_env(p, "TH_TEST_PASSED"), "passed-9a2b");
    ck_assert_str_eq(worker_env(p, "TH_TEST_UNSET"), "(unset)");
    ck_assert_str_eq(worker_env(p, "TZ"), "UTC0");
    ck_assert_str_eq(worker_env(p, "UBSAN_OPTIONS"), ubsan_kept);
    ck_assert_str_eq(worker_env(p, "PATH"), getenv("PATH"));
    mh_finish(p);
    mh_rm_dir(dir);
    free(ubsan_kept);
}
END_TEST

/* A name that is not a variable's is a usage error naming the option. */
START_TEST(pass_env_takes_only_variable_names)
{
    static const char *const bad[] = {"--pass-env=", "--pass-env=A,,B", "--pass-env=1A", "--pass-env=A=B"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        mh_proc *p = mh_spawn(bad[i], NULL);
        ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 2);
        ck_assert_msg(mh_stderr_wait(p, "--pass-env: '", MH_TIMEOUT_MS), "%s: %s", bad[i], mh_stderr(p));
        mh_free(p);
    }
}
END_TEST

static Suite *isolation_suite(void)
{
    Suite *s = suite_create("isolation");
    TCase *tc = tcase_create("attacks");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_test(tc, attacks_on_the_host_and_another_worker_are_refused);
    tcase_add_test(tc, attacks_are_refused_when_the_host_runs_as_nobody);
    tcase_add_test(tc, a_worker_gets_only_the_environment_it_needs);
    tcase_add_test(tc, pass_env_takes_only_variable_names);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN_WITH(isolation_suite, mh_global_setup, mh_global_teardown)
