/* SPDX-License-Identifier: MIT */
/*
** test_isolate.c: src/worker/isolate.c in a child of the test: the hello's
** "sandbox" member read (defaults, modes, wrong types), each mode's parts
** in force afterwards, and a kernel without seccomp (a filter the test
** loads first answers seccomp() ENOSYS): named as not enforced, fatal
** with "require".
*/
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#if HAVE_SECCOMP
#include <seccomp.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#endif

#include "worker/isolate.h"
#include "check_main.h"

static th_isolate_policy policy_of(const char *hello_text, bool *ok, th_err *err)
{
    json_object *hello = json_tokener_parse(hello_text);
    ck_assert_ptr_nonnull(hello);
    th_isolate_policy p;
    *ok = th_isolate_policy_read(hello, &p, err);
    json_object_put(hello);
    return p;
}

START_TEST(the_sandbox_member_is_read_with_its_defaults)
{
    bool ok;
    th_err err;
    th_isolate_policy p = policy_of("{\"role\":\"serve\"}", &ok, &err);
    ck_assert(ok && p.mode == TH_ISOLATE_DECLARED && !p.require && !p.report);
    p = policy_of("{\"sandbox\":{\"mode\":\"off\",\"require\":true,\"allow-read\":[]},\"isolation_report\":true}", &ok,
                  &err);
    ck_assert(ok && p.mode == TH_ISOLATE_OFF && p.require && p.report);
    p = policy_of("{\"sandbox\":{\"mode\":\"strict\"}}", &ok, &err);
    ck_assert(ok && p.mode == TH_ISOLATE_STRICT && !p.require);
    policy_of("{\"sandbox\":{\"mode\":\"lax\"}}", &ok, &err);
    ck_assert(!ok);
    ck_assert_msg(strstr(err.msg, "\"mode\""), "%s", err.msg);
    policy_of("{\"sandbox\":{\"require\":\"yes\"}}", &ok, &err);
    ck_assert(!ok);
    ck_assert_msg(strstr(err.msg, "\"require\""), "%s", err.msg);
}
END_TEST

#if HAVE_SECCOMP /* the Linux interfaces (not --disable-linux-extensions) */
/* Run FN in a child (a filter cannot be unloaded) and return its exit status. */
static int in_child(int (*fn)(void))
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0)
        _exit(fn());
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert_msg(WIFEXITED(st), "the child ended by signal %d", WTERMSIG(st));
    return WEXITSTATUS(st);
}

/* Each check in a child: its number on failure, 0 when all hold. */
static int apply_declared(void)
{
    char missing[512];
    th_err err;
    th_isolate_policy p = {.mode = TH_ISOLATE_DECLARED};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || th_isolate_apply(&p, missing, sizeof missing, &err) != TH_OK)
        return 1;
    if (missing[0] || prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != 0 || prctl(PR_GET_SECCOMP, 0, 0, 0, 0) != 2)
        return 2;
    if (ptrace(PTRACE_ATTACH, getppid(), 0, 0) == 0 || errno != EPERM)
        return 3;
    if (kill(getppid(), 0) == 0 || errno != EPERM || kill(0, 0) == 0 || kill(-1, 0) == 0)
        return 4;
    if (kill(getpid(), 0) != 0 || unshare(CLONE_NEWUSER) == 0 || errno != EPERM)
        return 5;
    if (personality(0xffffffff) < 0 || personality(0x0400000) >= 0)
        return 6;
    return 0;
}

static int apply_off(void)
{
    char missing[512];
    th_err err;
    th_isolate_policy p = {.mode = TH_ISOLATE_OFF};
    if (th_isolate_apply(&p, missing, sizeof missing, &err) != TH_OK || missing[0])
        return 1;
    if (prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != 0 || prctl(PR_GET_SECCOMP, 0, 0, 0, 0) != 0)
        return 2;
    return kill(getppid(), 0) == 0 ? 0 : 3;
}

START_TEST(each_mode_leaves_its_parts_in_force)
{
    ck_assert_int_eq(in_child(apply_declared), 0);
    ck_assert_int_eq(in_child(apply_off), 0);
}
END_TEST

/* This process as on a kernel without seccomp filters. */
static bool lose_seccomp(void)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    bool ok = ctx && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
              seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(seccomp), 0) == 0 &&
              seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EINVAL), SCMP_SYS(prctl), 1,
                               SCMP_A0(SCMP_CMP_EQ, PR_SET_SECCOMP)) == 0 &&
              seccomp_load(ctx) == 0;
    seccomp_release(ctx);
    return ok;
}

static int without_seccomp(void)
{
    char missing[512];
    th_err err;
    th_isolate_policy p = {.mode = TH_ISOLATE_DECLARED};
    if (!lose_seccomp())
        return 1;
    if (th_isolate_apply(&p, missing, sizeof missing, &err) != TH_OK || !strstr(missing, "seccomp (seccomp_load"))
        return 2;
    p.require = true;
    if (th_isolate_apply(&p, missing, sizeof missing, &err) == TH_OK ||
        !strstr(err.msg, "isolation is required but seccomp is not enforced"))
        return 3;
    return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0 ? 0 : 4;
}

START_TEST(a_kernel_without_seccomp_is_named_and_fatal_when_required)
{
    ck_assert_int_eq(in_child(without_seccomp), 0);
}
END_TEST

#endif

static Suite *isolate_suite(void)
{
    Suite *s = suite_create("isolate");
    TCase *tc = tcase_create("parts");
    tcase_add_test(tc, the_sandbox_member_is_read_with_its_defaults);
#if HAVE_SECCOMP
    tcase_add_test(tc, each_mode_leaves_its_parts_in_force);
    tcase_add_test(tc, a_kernel_without_seccomp_is_named_and_fatal_when_required);
#endif
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN(isolate_suite)
