/* SPDX-License-Identifier: MIT */
/*
** test_sandbox.c: each worker's sandbox against sandboxplugins/attacks.so,
** whose tools try an attack inside the worker and report what the kernel
** answered. Under the default policy each is denied (the errno asserted)
** and the worker serves on; with the matching --grant each is let through;
** with --sandbox=off the same attack succeeds, so the denial is the
** sandbox's. Also the grants' and options' own errors.
*/
#define _GNU_SOURCE /* accept4, unshare */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#if HAVE_SECCOMP
#include <seccomp.h>
#endif

#include "mcp_harness.h"
#include "check_main.h"

static char *plugins, *scratch; /* the attacks.so directory; a tree for targets */
static char key_path[512], outside[512];

static void setup(void)
{
    char so[512];
    snprintf(so, sizeof so, "%s/sandboxplugins/.libs/attacks.so", TEST_BUILDDIR);
    plugins = mh_private_dir(so, NULL);
    scratch = strdup("/tmp/th-sandbox-XXXXXX");
    ck_assert(scratch && mkdtemp(scratch));
    /* A fake home with a private key, as an attacker would look for it. */
    snprintf(key_path, sizeof key_path, "%s/.ssh", scratch);
    ck_assert_int_eq(mkdir(key_path, 0700), 0);
    snprintf(key_path, sizeof key_path, "%s/.ssh/id_rsa", scratch);
    FILE *f = fopen(key_path, "w");
    ck_assert(f && fputs("-----BEGIN OPENSSH PRIVATE KEY-----\n", f) >= 0 && fclose(f) == 0);
    snprintf(outside, sizeof outside, "%s/written", scratch);
}

static void teardown(void)
{
    char path[600];
    unlink(key_path);
    unlink(outside);
    snprintf(path, sizeof path, "%s/.ssh", scratch);
    rmdir(path);
    rmdir(scratch);
    free(scratch);
    mh_rm_dir(plugins);
}

static mh_proc *start(const char *a, const char *b)
{
    mh_proc *p = mh_spawn("-d", plugins, "--isolation=process", a ? a : "--log-level=info", b ? b : "--strict", NULL);
    mh_ping_is_next(p, 1);
    return p;
}

/* The text of TOOL's answer to ARGS (a JSON object), which is an isError
 * result exactly when WANT_ERROR; malloc'd. */
static char *call_any(mh_proc *p, const char *tool, const char *args, bool want_error)
{
    static int id = 100;
    char id_json[16];
    snprintf(id_json, sizeof id_json, "%d", ++id);
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\",\"arguments\":%s,"
               MH_MODERN_META "}}",
            id, tool, args);
    json_object *o = mh_await(p, id_json, NULL);
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

static char *call(mh_proc *p, const char *tool, const char *args)
{
    return call_any(p, tool, args, false);
}

/* TOOL with ARGS answers WANT. */
static void expect_tool(mh_proc *p, const char *tool, const char *args, const char *want)
{
    char *got = call(p, tool, args);
    ck_assert_msg(strcmp(got, want) == 0, "%s %s: want '%s', the worker said '%s'", tool, args, want, got);
    free(got);
}

/* TOOL with ARGS answers WANT, then a normal call still works. */
static void expect(mh_proc *p, const char *tool, const char *args, const char *want)
{
    char *got = call(p, tool, args);
    ck_assert_msg(strcmp(got, want) == 0, "%s %s: want '%s', the worker said '%s'", tool, args, want, got);
    free(got);
    char *pong = call(p, "ping", "{}");
    ck_assert_str_eq(pong, "pong");
    free(pong);
}

static char *path_args(const char *path)
{
    static char buf[700];
    snprintf(buf, sizeof buf, "{\"path\":\"%s\"}", path);
    return buf;
}

static char *grant(const char *key, const char *value)
{
    static char buf[2][700];
    static int k;
    k = !k;
    snprintf(buf[k], sizeof buf[k], "--grant=attacks.%s=%s", key, value);
    return buf[k];
}

START_TEST(reading_a_private_key_is_denied_unless_granted)
{
    mh_proc *p = start(NULL, NULL);
    expect(p, "read_file", path_args(key_path), "tried: EACCES");
    expect(p, "read_file", path_args("/etc/shadow"), "tried: EACCES");
    mh_finish(p);
    p = start(grant("allow-read", scratch), NULL);
    expect(p, "read_file", path_args(key_path), "tried: OK");
    mh_finish(p);
    /* Without the sandbox the same call reads it: the denial was the sandbox's. */
    p = start("--sandbox=off", NULL);
    expect(p, "read_file", path_args(key_path), "tried: OK");
    mh_finish(p);
}
END_TEST

START_TEST(reading_etc_shadow_is_allowed_by_its_grant)
{
    int fd = open("/etc/shadow", O_RDONLY);
    if (fd < 0)
        return; /* not root: the kernel's own permissions deny it anyway */
    close(fd);
    mh_proc *p = start(grant("allow-read", "/etc/shadow"), NULL);
    expect(p, "read_file", path_args("/etc/shadow"), "tried: OK");
    mh_finish(p);
}
END_TEST

START_TEST(writing_outside_granted_paths_is_denied)
{
    mh_proc *p = start(NULL, NULL);
    expect(p, "write_file", path_args(outside), "tried: EACCES");
    ck_assert_msg(access(outside, F_OK) != 0, "%s was created", outside);
    mh_finish(p);
    /* A write grant on one place leaves the rest closed. */
    p = start(grant("allow-write", scratch), NULL);
    expect(p, "write_file", path_args(outside), "tried: OK");
    expect(p, "write_file", path_args("/tmp/th-sandbox-not-granted"), "tried: EACCES");
    mh_finish(p);
    FILE *f = fopen(outside, "r");
    char line[16] = "";
    ck_assert(f && fgets(line, sizeof line, f));
    fclose(f);
    ck_assert_str_eq(line, "pwned\n");
}
END_TEST

/* A loopback listener on a free port; its number into PORT. */
static int listener(char *port, size_t size)
{
    struct sockaddr_in sin = {.sin_family = AF_INET};
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof sin;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    ck_assert(fd >= 0 && bind(fd, (struct sockaddr *)&sin, sizeof sin) == 0 && listen(fd, 4) == 0);
    ck_assert(getsockname(fd, (struct sockaddr *)&sin, &len) == 0);
    snprintf(port, size, "%u", ntohs(sin.sin_port));
    return fd;
}

START_TEST(connecting_to_a_loopback_port_is_denied_unless_granted)
{
    char port[16], args[64], hostport[64];
    int fd = listener(port, sizeof port);
    snprintf(args, sizeof args, "{\"port\":\"%s\"}", port);
    mh_proc *p = start(NULL, NULL);
    expect(p, "connect_port", args, "tried: EACCES");
    /* The answer came after the attempt: had a connection been made, it
     * would be waiting now. */
    ck_assert_int_lt(accept(fd, NULL, NULL), 0);
    ck_assert_int_eq(errno, EAGAIN);
    mh_finish(p);
    snprintf(hostport, sizeof hostport, "127.0.0.1:%s", port);
    p = start(grant("allow-connect", hostport), NULL);
    expect(p, "connect_port", args, "tried: OK");
    int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
    ck_assert_msg(c >= 0, "the granted connection did not arrive: %s", strerror(errno));
    char line[16] = "";
    ck_assert_int_eq(read(c, line, 6), 6);
    ck_assert_str_eq(line, "pwned\n");
    close(c);
    mh_finish(p);
    close(fd);
}
END_TEST

/* A loopback UDP socket on a free port, its number into PORT. */
static int udp_listener(char *port, size_t size)
{
    struct sockaddr_in sin = {.sin_family = AF_INET};
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof sin;
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    ck_assert(fd >= 0 && bind(fd, (struct sockaddr *)&sin, sizeof sin) == 0);
    ck_assert(getsockname(fd, (struct sockaddr *)&sin, &len) == 0);
    snprintf(port, size, "%u", ntohs(sin.sin_port));
    return fd;
}

/* Whether a datagram "pwned\n" waits on FD (the sender answered first). */
static bool datagram_arrived(int fd)
{
    char buf[16] = "";
    ssize_t n = recv(fd, buf, sizeof buf - 1, 0);
    ck_assert_msg(n >= 0 || errno == EAGAIN, "recv: %s", strerror(errno));
    return n == 6 && strcmp(buf, "pwned\n") == 0;
}

START_TEST(sending_a_udp_datagram_is_denied_unless_a_connection_is_granted)
{
    char port[16], args[64], hostport[64];
    int fd = udp_listener(port, sizeof port);
    snprintf(args, sizeof args, "{\"port\":\"%s\"}", port);
    /* Its own network namespace, whose loopback is down. */
    mh_proc *p = start(NULL, NULL);
    expect(p, "send_datagram", args, "tried: ENETUNREACH");
    ck_assert(!datagram_arrived(fd));
    mh_finish(p);
    snprintf(hostport, sizeof hostport, "127.0.0.1:%s", port);
    p = start(grant("allow-connect", hostport), NULL);
    expect(p, "send_datagram", args, "tried: OK");
    ck_assert(datagram_arrived(fd));
    mh_finish(p);
    p = start("--sandbox=off", NULL);
    expect(p, "send_datagram", args, "tried: OK");
    ck_assert(datagram_arrived(fd));
    mh_finish(p);
    close(fd);
}
END_TEST

START_TEST(executing_a_shell_is_denied_unless_granted)
{
    mh_proc *p = start(NULL, NULL);
    expect(p, "exec_program", path_args("/bin/sh"), "tried: EACCES");
    mh_finish(p);
    p = start(grant("allow-exec", "/bin/sh"), NULL);
    expect(p, "exec_program", path_args("/bin/sh"), "tried: OK");
    mh_finish(p);
}
END_TEST

START_TEST(strict_grants_only_what_the_operator_granted)
{
    mh_proc *p = start("--sandbox=strict", grant("allow-read", scratch));
    expect(p, "read_file", path_args(key_path), "tried: OK");
    expect(p, "write_file", path_args(outside), "tried: EACCES");
    mh_finish(p);
}
END_TEST

START_TEST(a_grant_in_the_plugin_section_of_the_config_file_applies)
{
    char conf[600];
    snprintf(conf, sizeof conf, "%s/toolhost.conf", plugins);
    FILE *f = fopen(conf, "w");
    ck_assert(f);
    fprintf(f, "[toolhost]\nsandbox = strict\n[attacks]\nallow-read = %s\n", scratch);
    ck_assert_int_eq(fclose(f), 0);
    char opt[700];
    snprintf(opt, sizeof opt, "--config=%s", conf);
    mh_proc *p = start(opt, NULL);
    expect(p, "read_file", path_args(key_path), "tried: OK");
    expect(p, "read_file", path_args("/etc/shadow"), "tried: EACCES");
    mh_finish(p);
    unlink(conf);
}
END_TEST

/* The host exits with STATUS and a message holding each of the words. */
static void refused(int status, const char *a, const char *b, const char *w1, const char *w2)
{
    mh_proc *p = mh_spawn("-d", plugins, a, b, NULL);
    mh_close_stdin(p);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), status);
    char *err = mh_stderr(p);
    ck_assert_msg(strstr(err, w1) && strstr(err, w2), "want '%s' and '%s' in: %s", w1, w2, err);
    free(err);
    mh_free(p);
}

START_TEST(bad_grants_and_options_are_refused_naming_them)
{
    refused(2, "--grant=attacks.allow-read=relative", "--log-level=info", "--grant: plugin attacks: allow-read",
            "absolute path");
    refused(2, "--grant=attacks.allow-connect=localhost", "--log-level=info", "allow-connect", "HOST:PORT");
    refused(2, "--grant=attacks.allow-everything=/", "--log-level=info", "'allow-everything' is not a grant",
            "attacks");
    refused(1, "--grant=nosuch.allow-read=/srv", "--log-level=info", "--grant nosuch.allow-read", "no plugin nosuch.so");
    refused(2, "--require-sandbox", "--isolation=none", "--require-sandbox", "--isolation=process");
    refused(2, "--sandbox=loose", "--log-level=info", "--sandbox: 'loose' is not", "strict");
}
END_TEST

START_TEST(in_process_plugins_are_said_to_be_unsandboxed)
{
    mh_proc *p = mh_spawn("-d", plugins, "--isolation=none", NULL);
    mh_ping_is_next(p, 1);
    ck_assert(mh_stderr_wait(p, "plugins run inside the host, unsandboxed", MH_TIMEOUT_MS));
    mh_finish(p);
}
END_TEST

/* A system whose own policy refuses new namespaces (a container's seccomp
 * profile, a service's RestrictNamespaces=): the host names what is not
 * enforced and serves on, or refuses to start under --require-sandbox. */
START_TEST(a_system_refusing_network_namespaces_is_named)
{
#if HAVE_SECCOMP
    const char *fork_mode = getenv("CK_FORK");
    ck_assert_msg(!fork_mode || strcmp(fork_mode, "no") != 0, "needs a process of its own (CK_FORK)");
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    ck_assert(ctx && seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 0) == 0);
    ck_assert_int_eq(seccomp_load(ctx), 0);
    seccomp_release(ctx);
    ck_assert_msg(unshare(CLONE_NEWNET) != 0 && errno == EPERM, "the test's filter did not hold");
    mh_proc *p = start(NULL, NULL);
    ck_assert_msg(mh_stderr_wait(p, "cannot enforce network namespaces (Operation not permitted", MH_TIMEOUT_MS),
                  "no warning: %s", mh_stderr(p));
    /* Landlock still refuses a TCP connect; the worker serves on. */
    expect(p, "ping", "{}", "pong");
    mh_finish(p);
    p = mh_spawn("-d", plugins, "--isolation=process", "--require-sandbox", NULL);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 1);
    ck_assert_msg(mh_stderr_wait(p, "--require-sandbox: this system", MH_TIMEOUT_MS), "%s", mh_stderr(p));
    mh_free(p);
#endif
}
END_TEST

/*
** A host run by a user other than root (and other than 65534, the overflow
** uid): without root, a worker's network namespace comes with a user
** namespace mapping that user alone, where root's files belong to the
** overflow uid. The plugin, root's as an installed one is, is judged as
** the host sees it, before that namespace, and serves in its sandbox.
*/
START_TEST(a_user_other_than_root_runs_root_s_plugins_sandboxed)
{
    const char *fork_mode = getenv("CK_FORK");
    if (geteuid() != 0 || (fork_mode && strcmp(fork_mode, "no") == 0)) {
        fprintf(stderr, "not root (or CK_FORK=no): the run as uid 4321 is left out\n");
        return;
    }
    char port[16], args[64];
    int fd = udp_listener(port, sizeof port);
    snprintf(args, sizeof args, "{\"port\":\"%s\"}", port);
    ck_assert(chmod(plugins, 0755) == 0); /* root's, readable by all */
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        if (setgroups(0, NULL) != 0 || setresgid(4321, 4321, 4321) != 0 || setresuid(4321, 4321, 4321) != 0)
            _exit(3);
        mh_proc *p = start("--no-registry-cache", NULL);
        expect(p, "send_datagram", args, "tried: ENETUNREACH"); /* its own network namespace */
        char *err = mh_stderr(p);
        ck_assert_msg(!strstr(err, " refused: "), "as uid 4321: %s", err);
        free(err);
        mh_finish(p);
        _exit(0);
    }
    int st;
    ck_assert(waitpid(pid, &st, 0) == pid);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the host run as uid 4321 failed (status %#x)", st);
    ck_assert(!datagram_arrived(fd));
    close(fd);
}
END_TEST

/* ---- declared needs (sandboxplugins/needy.c) ---------------------------- */

static mh_proc *start_needy(char **dir, const char *a, const char *b)
{
    char so[512], root[600];
    snprintf(so, sizeof so, "%s/sandboxplugins/.libs/needy.so", TEST_BUILDDIR);
    *dir = mh_private_dir(so, NULL);
    snprintf(root, sizeof root, "--set=needy.root=%s", scratch);
    mh_proc *p = mh_spawn("-d", *dir, "--isolation=process", root, a, b, NULL);
    mh_ping_is_next(p, 1);
    return p;
}

START_TEST(declared_needs_are_granted_in_declared_mode_only)
{
    char *dir;
    mh_proc *p = start_needy(&dir, "--log-level=info", "--strict");
    expect_tool(p, "needy_read", path_args(key_path), "tried: OK");
    expect_tool(p, "needy_read", path_args("/etc/shadow"), "tried: EACCES");
    mh_finish(p);
    mh_rm_dir(dir);
    p = start_needy(&dir, "--sandbox=strict", "--strict");
    expect_tool(p, "needy_read", path_args(key_path), "tried: EACCES");
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

/* Scanned twice (alone under its sandbox too), the plugin is heard once:
 * the second scan's lines replace the first's. Not sandboxed, once too. */
START_TEST(a_plugin_declaring_needs_is_logged_once)
{
    static const char *const modes[] = {"--sandbox=declared", "--sandbox=off"};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        char *dir;
        mh_proc *p = start_needy(&dir, modes[i], "--log-level=info");
        ck_assert(mh_stderr_wait(p, "loaded 1 tool", MH_TIMEOUT_MS));
        char *err = mh_stderr(p);
        int n = 0;
        for (const char *at = err; (at = strstr(at, "is not HOST:PORT")) != NULL; at++)
            n++;
        ck_assert_msg(n == 1, "%s: the plugin's line %d times:\n%s", modes[i], n, err);
        free(err);
        mh_finish(p);
        mh_rm_dir(dir);
    }
}
END_TEST

START_TEST(a_worker_that_declares_more_than_its_scan_is_refused)
{
    char *dir, more[600], opt[700];
    snprintf(more, sizeof more, "%s/more", scratch);
    snprintf(opt, sizeof opt, "--set=needy.more_if=%s", more);
    mh_proc *p = start_needy(&dir, opt, "--log-level=info");
    /* Scanned without the marker; its worker starts with it. */
    FILE *f = fopen(more, "w");
    ck_assert(f && fclose(f) == 0);
    char *got = call_any(p, "needy_read", path_args("/etc/hostname"), true);
    free(got);
    ck_assert(mh_stderr_wait(p, "it declares the need 'read:/etc', which its scan did not", MH_TIMEOUT_MS));
    mh_finish(p);
    unlink(more);
    mh_rm_dir(dir);
}
END_TEST

/* skills reads the root it declares while it registers: under the
 * scanner's strictest sandbox it cannot, so its second scan, under its own
 * sandbox, decides; under strict without a grant it is refused, named. */
START_TEST(a_plugin_reading_its_declared_root_at_registration_is_scanned_under_its_own_sandbox)
{
    char so[512], root[600], skill[700];
    snprintf(so, sizeof so, "%s/plugins/.libs/skills.so", TOP_BUILDDIR);
    char *dir = mh_private_dir(so, NULL);
    snprintf(skill, sizeof skill, "%s/demo", scratch);
    ck_assert_int_eq(mkdir(skill, 0700), 0);
    snprintf(skill, sizeof skill, "%s/demo/SKILL.md", scratch);
    FILE *f = fopen(skill, "w");
    ck_assert(f && fputs("---\nname: demo\ndescription: A demo\n---\nHello\n", f) >= 0 && fclose(f) == 0);
    snprintf(root, sizeof root, "--set=skills.root=%s", scratch);
    mh_proc *p = mh_spawn("-d", dir, "--no-registry-cache", "--log-level=info", root, NULL);
    ck_assert(mh_stderr_wait(p, "serving 1 skills from", MH_TIMEOUT_MS));
    ck_assert(mh_stderr_wait(p, "0 plugins refused", MH_TIMEOUT_MS));
    mh_finish(p);
    p = mh_spawn("-d", dir, "--no-registry-cache", "--sandbox=strict", root, NULL);
    ck_assert(mh_stderr_wait(p, "failed to register in a sandbox without what it declared", MH_TIMEOUT_MS));
    mh_finish(p);
    unlink(skill);
    snprintf(skill, sizeof skill, "%s/demo", scratch);
    rmdir(skill);
    mh_rm_dir(dir);
}
END_TEST

/* A lock pins the needs the scan reported: the same plugin asking for one
 * more is refused by it, naming the need, and serves nothing. */
START_TEST(a_plugin_asking_for_more_than_its_lock_pins_is_refused)
{
    char so[512], root[600], lock[600], lock_opt[700], more[600], more_opt[700];
    snprintf(so, sizeof so, "%s/sandboxplugins/.libs/needy.so", TEST_BUILDDIR);
    char *dir = mh_private_dir(so, NULL);
    snprintf(root, sizeof root, "--set=needy.root=%s", scratch);
    snprintf(lock, sizeof lock, "%s/toolhost.lock", scratch);
    snprintf(lock_opt, sizeof lock_opt, "--lock=%s", lock);
    snprintf(more, sizeof more, "%s/more", scratch);
    snprintf(more_opt, sizeof more_opt, "--set=needy.more_if=%s", more);
    mh_proc *p = mh_spawn("lock", lock_opt, "--plugin-dir", dir, root, more_opt, NULL);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
    FILE *f = fopen(lock, "r");
    char text[4096] = "";
    ck_assert(f && fread(text, 1, sizeof text - 1, f) > 0);
    fclose(f);
    char pinned[700];
    snprintf(pinned, sizeof pinned, "\"read:%s\"", scratch);
    ck_assert_msg(strstr(text, pinned), "the lock does not pin %s:\n%s", pinned, text);

    f = fopen(more, "w"); /* now it declares read:/etc as well */
    ck_assert(f && fclose(f) == 0);
    p = mh_spawn("-d", dir, "--isolation=process", lock_opt, root, more_opt, NULL);
    ck_assert(mh_stderr_wait(p, "asks for needs the lock does not pin: read:/etc", MH_TIMEOUT_MS));
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{" MH_MODERN_META "}}");
    json_object *o = mh_await(p, "2", NULL);
    ck_assert_msg(json_object_array_length(mh_at(o, "result tools")) == 0, "served: %s", mh_json(o));
    json_object_put(o);
    mh_finish(p);
    unlink(more);
    unlink(lock);
    mh_rm_dir(dir);
}
END_TEST

static Suite *sandbox_suite(void)
{
    Suite *s = suite_create("sandbox");
    TCase *tc = tcase_create("attacks");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_test(tc, reading_a_private_key_is_denied_unless_granted);
    tcase_add_test(tc, reading_etc_shadow_is_allowed_by_its_grant);
    tcase_add_test(tc, writing_outside_granted_paths_is_denied);
    tcase_add_test(tc, connecting_to_a_loopback_port_is_denied_unless_granted);
    tcase_add_test(tc, sending_a_udp_datagram_is_denied_unless_a_connection_is_granted);
    tcase_add_test(tc, executing_a_shell_is_denied_unless_granted);
    tcase_add_test(tc, strict_grants_only_what_the_operator_granted);
    tcase_add_test(tc, a_grant_in_the_plugin_section_of_the_config_file_applies);
    tcase_add_test(tc, bad_grants_and_options_are_refused_naming_them);
    tcase_add_test(tc, in_process_plugins_are_said_to_be_unsandboxed);
    tcase_add_test(tc, a_system_refusing_network_namespaces_is_named);
    tcase_add_test(tc, a_user_other_than_root_runs_root_s_plugins_sandboxed);
    suite_add_tcase(s, tc);
    tc = tcase_create("needs");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_test(tc, declared_needs_are_granted_in_declared_mode_only);
    tcase_add_test(tc, a_worker_that_declares_more_than_its_scan_is_refused);
    tcase_add_test(tc, a_plugin_declaring_needs_is_logged_once);
    tcase_add_test(tc, a_plugin_asking_for_more_than_its_lock_pins_is_refused);
    tcase_add_test(tc, a_plugin_reading_its_declared_root_at_registration_is_scanned_under_its_own_sandbox);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN_WITH(sandbox_suite, mh_global_setup, mh_global_teardown)
