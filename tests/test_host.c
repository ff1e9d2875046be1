/* SPDX-License-Identifier: MIT */
/*
** tests/test_host.c: what src/host/ shows a person at the door: a notice
** when stdin is a terminal, an unauthenticated public --http refused before
** any plugin code runs, and a quiet end of input unless a call really
** holds the host up, in which case the log says what it waits for.
*/
#define _GNU_SOURCE 1
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"
#include "mcp_harness.h"

#define CALL(id, tool, args)                                                                                           \
    "{\"jsonrpc\":\"2.0\",\"id\":" #id ",\"method\":\"tools/call\",\"params\":{\"name\":\"" tool                      \
    "\",\"arguments\":" args "," MH_MODERN_META "}}"

#define NOTICE "stdin is a terminal"

/* Read FD into BUF (NUL-ended) until NEEDLE shows or the timeout passes. */
static bool read_until(int fd, char *buf, size_t size, const char *needle)
{
    size_t len = strlen(buf);
    long long end = mh_now_ms() + MH_TIMEOUT_MS;
    while (!strstr(buf, needle) && len + 1 < size && mh_now_ms() < end) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 100) <= 0)
            continue;
        ssize_t n = read(fd, buf + len, size - len - 1);
        if (n <= 0)
            break;
        buf[len += (size_t)n] = '\0';
    }
    return strstr(buf, needle) != NULL;
}

/* Started at a terminal (a pseudo-terminal's slave as stdin), the host says
 * on stderr what it speaks and where help is; stdout stays the protocol's
 * alone. Ctrl-D ends it as end of input does. */
START_TEST(a_terminal_on_stdin_gets_one_notice_on_stderr)
{
    int master = posix_openpt(O_RDWR | O_NOCTTY);
    ck_assert_int_ge(master, 0);
    ck_assert(grantpt(master) == 0 && unlockpt(master) == 0);
    const char *slave = ptsname(master);
    int out[2], err[2];
    ck_assert(pipe(out) == 0 && pipe(err) == 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int s = open(slave, O_RDWR | O_NOCTTY);
        if (s < 0 || dup2(s, 0) < 0 || dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0)
            _exit(126);
        /* A path as argv[0]: without /proc, the host finds itself by it. */
        execl(TOP_BUILDDIR "/src/toolhost", TOP_BUILDDIR "/src/toolhost", "--plugin-dir", mh_echo_dir(), (char *)NULL);
        _exit(127);
    }
    close(out[1]);
    close(err[1]);
    char text[8192] = "";
    ck_assert_msg(read_until(err[0], text, sizeof text, NOTICE), "no notice on stderr:\n%s", text);
    ck_assert_msg(strstr(text, "MCP") && strstr(text, "--help"), "the notice: %s", text);
    ck_assert_int_eq(write(master, "\x04", 1), 1); /* Ctrl-D: end of input */
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
    char rest[4096] = "";
    read_until(err[0], rest, sizeof rest, "\x01"); /* to EOF */
    ck_assert_msg(!strstr(rest, NOTICE), "the notice came twice:\n%s%s", text, rest);
    char o[64];
    ck_assert_msg(read(out[0], o, sizeof o) == 0, "stdout got something besides the protocol");
    close(out[0]);
    close(err[0]);
    close(master);
}
END_TEST

/* A pipe on stdin is a client: no notice. */
START_TEST(a_pipe_on_stdin_gets_no_notice)
{
    mh_proc *p = mh_spawn("--plugin-dir", mh_echo_dir(), NULL);
    mh_ping_is_next(p, 1);
    mh_close_stdin(p);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    char *err = mh_stderr(p);
    ck_assert_msg(!strstr(err, NOTICE), "stderr: %s", err);
    free(err);
    mh_free(p);
}
END_TEST

/* The attack: serve a tool host on every address without authorization.
 * The refusal comes before any plugin is opened: the plugin would have left
 * a mark from its constructor (scanner, worker or host alike); with a
 * loopback address the same command loads it. */
START_TEST(public_http_without_auth_is_refused_before_plugins_load)
{
    char tmp[] = "/tmp/th-host-XXXXXX", mark[64];
    ck_assert_ptr_nonnull(mkdtemp(tmp));
    snprintf(mark, sizeof mark, "%s/mark", tmp);
    setenv("TH_TEST_CTOR_MARK", mark, 1); /* inherited by toolhost, passed to its children */
    char *dir = mh_private_dir(mh_hostile("ctor_mark"), NULL);

    /* Off: the scanner's sandbox would deny the mark too. */
    mh_proc *p = mh_spawn("--plugin-dir", dir, "--sandbox=off", "--http=0.0.0.0:0", "--pass-env=TH_TEST_CTOR_MARK", NULL);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 1);
    char *err = mh_stderr(p);
    ck_assert_msg(strstr(err, "0.0.0.0 is not a loopback address"), "stderr: %s", err);
    ck_assert_msg(access(mark, F_OK) != 0, "plugin code ran before the refusal:\n%s", err);
    free(err);
    mh_free(p);

    p = mh_spawn("--plugin-dir", dir, "--sandbox=off", "--http=127.0.0.1:0", "--pass-env=TH_TEST_CTOR_MARK", NULL);
    ck_assert(mh_stderr_wait(p, "listening on http://127.0.0.1:", MH_TIMEOUT_MS));
    ck_assert_msg(access(mark, F_OK) == 0, "the loopback control did not load the plugin");
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);

    unsetenv("TH_TEST_CTOR_MARK");
    unlink(mark);
    rmdir(tmp);
    mh_rm_dir(dir);
}
END_TEST

/* A client that pipes its last request in and closes stdin: the call is
 * still running at end of input, briefly. That is a normal end, and the
 * log at its default level says nothing about waiting. */
START_TEST(a_normal_end_of_input_is_quiet)
{
    char *dir = mh_private_dir(mh_hostile("thread_name"), NULL);
    mh_proc *p = mh_spawn("-d", dir, NULL);
    json_object *o = mh_rpc(p, CALL(1, "thread_name", "{}")); /* its worker is up */
    json_object_put(o);
    mh_send(p, CALL(2, "thread_name", "{\"ms\":50}"));
    mh_close_stdin(p);
    o = mh_next(p);
    MH_ASSERT_ID(o, "2");
    json_object_put(o);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    char *err = mh_stderr(p);
    ck_assert_msg(!strstr(err, "shutting down"), "a normal end of input logged:\n%s", err);
    free(err);
    mh_free(p);
    mh_rm_dir(dir);
}
END_TEST

/* A call that really holds the host up past the quiet moment: the log
 * says what the host waits for, how long at most, and what follows. */
START_TEST(a_call_holding_up_the_end_is_named)
{
    char *dir = mh_private_dir(mh_hostile("thread_name"), NULL);
    char gate[600];
    snprintf(gate, sizeof gate, "%s.gate", dir);
    unlink(gate);
    mh_proc *p = mh_spawn("-d", dir, NULL);
    mh_send(p, CALL(1, "thread_name", "{\"gate\":\"%s\"}"), gate);
    mh_close_stdin(p);
    ck_assert_msg(mh_stderr_wait(p, "for 1 tool call still running, then cancelling it", MH_TIMEOUT_MS),
                  "stderr: %s", mh_stderr(p));
    char *err = mh_stderr(p);
    ck_assert_msg(strstr(err, "(--shutdown-grace-ms)"), "stderr: %s", err);
    free(err);
    FILE *f = fopen(gate, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    json_object *o = mh_next(p);
    MH_ASSERT_ID(o, "1");
    json_object_put(o);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
    unlink(gate);
    mh_rm_dir(dir);
}
END_TEST

static Suite *host_suite(void)
{
    Suite *s = suite_create("host");
    TCase *tc = tcase_create("door");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, a_terminal_on_stdin_gets_one_notice_on_stderr);
    tcase_add_test(tc, a_pipe_on_stdin_gets_no_notice);
    tcase_add_test(tc, public_http_without_auth_is_refused_before_plugins_load);
    tcase_add_test(tc, a_normal_end_of_input_is_quiet);
    tcase_add_test(tc, a_call_holding_up_the_end_is_named);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN_WITH(host_suite, mh_global_setup, mh_global_teardown)
