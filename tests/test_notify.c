/* SPDX-License-Identifier: MIT */
/*
** tests/test_notify.c: the sd_notify messages toolhost sends a service
** manager: READY=1 once it serves, RELOADING=1 with MONOTONIC_USEC then
** READY=1 around a SIGHUP rescan, STOPPING=1 on SIGTERM, in that order, to
** an abstract and to a path $NOTIFY_SOCKET.
*/
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check_main.h"

#define TOOLHOST TOP_BUILDDIR "/src/toolhost"
#define PLUGINS TOP_BUILDDIR "/plugins/.libs"

/* A datagram socket bound to NAME ('@': abstract), as a service manager's. */
static int bind_notify(const char *name)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    size_t n = strlen(name);
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(fd, 0);
    memcpy(sa.sun_path, name, n);
    if (name[0] == '@')
        sa.sun_path[0] = '\0';
    socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (name[0] == '@' ? 0 : 1));
    ck_assert_msg(bind(fd, (struct sockaddr *)&sa, len) == 0, "bind %s: %s", name, strerror(errno));
    return fd;
}

/* The next datagram, waited for up to 20 s (a guard, not a measurement). */
static void next_message(int fd, char *buf, size_t size)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    ck_assert_msg(poll(&p, 1, 20000) == 1, "no notification came");
    ssize_t n = recv(fd, buf, size - 1, 0);
    ck_assert_int_gt(n, 0);
    buf[n] = '\0';
}

/* toolhost serving HTTP on a free port with the example plugins, told of
 * the notify socket NAME. */
static pid_t start(const char *name)
{
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stderr))
            _exit(99);
        setenv("NOTIFY_SOCKET", name, 1);
        execl(TOOLHOST, TOOLHOST, "--http=127.0.0.1:0", "--plugin-dir", PLUGINS, "--no-registry-cache",
              (char *)NULL);
        _exit(98);
    }
    return pid;
}

/* The whole sequence on socket NAME. */
static void sequence(const char *name)
{
    char msg[512];
    int fd = bind_notify(name);
    pid_t pid = start(name);

    next_message(fd, msg, sizeof msg);
    ck_assert_msg(strncmp(msg, "READY=1\n", 8) == 0, "first message: %s", msg);

    ck_assert_int_eq(kill(pid, SIGHUP), 0);
    next_message(fd, msg, sizeof msg);
    ck_assert_msg(strncmp(msg, "RELOADING=1\n", 12) == 0, "after SIGHUP: %s", msg);
    /* systemd 253 and later match the reload by this clock's value. */
    const char *usec = strstr(msg, "\nMONOTONIC_USEC=");
    ck_assert_msg(usec != NULL, "no MONOTONIC_USEC: %s", msg);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    unsigned long long sent = strtoull(usec + 16, NULL, 10);
    unsigned long long now = (unsigned long long)ts.tv_sec * 1000000ULL + (unsigned long long)ts.tv_nsec / 1000;
    ck_assert_msg(sent > 0 && sent <= now, "MONOTONIC_USEC=%llu, now %llu", sent, now);
    next_message(fd, msg, sizeof msg);
    ck_assert_msg(strncmp(msg, "READY=1\n", 8) == 0, "after the rescan: %s", msg);

    ck_assert_int_eq(kill(pid, SIGTERM), 0);
    next_message(fd, msg, sizeof msg);
    ck_assert_msg(strncmp(msg, "STOPPING=1\n", 11) == 0, "after SIGTERM: %s", msg);
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
    /* Nothing after STOPPING=1. */
    struct pollfd p = {.fd = fd, .events = POLLIN};
    ck_assert_int_eq(poll(&p, 1, 0), 0);
    close(fd);
}

START_TEST(test_abstract_socket)
{
    char name[64];
    snprintf(name, sizeof name, "@toolhost-test-notify-%ld", (long)getpid());
    sequence(name);
}
END_TEST

START_TEST(test_path_socket)
{
    char dir[] = "/tmp/toolhost-notify-XXXXXX", path[128];
    ck_assert(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/notify", dir);
    sequence(path);
    unlink(path);
    rmdir(dir);
}
END_TEST

static Suite *notify_suite(void)
{
    Suite *s = suite_create("notify");
    TCase *tc = tcase_create("sd_notify");
    tcase_set_timeout(tc, 90);
    tcase_add_test(tc, test_abstract_socket);
    tcase_add_test(tc, test_path_socket);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN_WITH(notify_suite, th_check_nothing, th_check_nothing)
