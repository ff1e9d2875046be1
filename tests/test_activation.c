/* SPDX-License-Identifier: MIT */
/*
** tests/test_activation.c: --http=systemd takes the listening socket a
** service manager passes (LISTEN_PID, LISTEN_FDS, descriptor 3), serves MCP
** on it, and refuses a socket meant for another process or too many.
*/
#define _GNU_SOURCE /* strcasestr */
#include "config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"

#define TOOLHOST TOP_BUILDDIR "/src/toolhost"

/* A listening socket on a free loopback port; *PORT gets the port. */
static int listener(int *port)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    ck_assert(s >= 0 && bind(s, (struct sockaddr *)&a, sizeof a) == 0 && listen(s, 8) == 0);
    ck_assert(getsockname(s, (struct sockaddr *)&a, &len) == 0);
    *port = ntohs(a.sin_port);
    return s;
}

/* Starts toolhost --http=systemd with SOCK as descriptor 3 and
 * LISTEN_FDS=NFDS; LISTEN_PID is its own pid unless WRONG_PID (then its
 * parent's). Its stderr goes to ERRFILE. */
static pid_t start(int sock, const char *nfds, int wrong_pid, const char *errfile, const char *plugdir)
{
    pid_t parent = getpid(), pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        char pidbuf[32];
        FILE *e = freopen(errfile, "w", stderr);
        if (!e || (sock != 3 && dup2(sock, 3) != 3))
            _exit(99);
        if (sock != 3)
            close(sock);
        snprintf(pidbuf, sizeof pidbuf, "%ld", (long)(wrong_pid ? parent : getpid()));
        setenv("LISTEN_PID", pidbuf, 1);
        setenv("LISTEN_FDS", nfds, 1);
        setenv("LISTEN_FDNAMES", "toolhost.socket", 1);
        execl(TOOLHOST, TOOLHOST, "--http=systemd", "--plugin-dir", plugdir, "--no-registry-cache", (char *)NULL);
        _exit(98);
    }
    return pid;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    static char buf[8192];
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[n] = '\0';
    if (f)
        fclose(f);
    return buf;
}

/* Waits up to 10 s for PATH to contain NEEDLE. */
static int wait_for(const char *path, const char *needle)
{
    for (int i = 0; i < 200; i++) {
        if (strstr(slurp(path), needle))
            return 1;
        usleep(50000);
    }
    return 0;
}

static int exit_status(pid_t pid)
{
    int st;
    for (int i = 0; i < 200; i++) {
        if (waitpid(pid, &st, WNOHANG) == pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        usleep(50000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    return -1;
}

static char errfile[] = "/tmp/th-activation-XXXXXX", plugdir[] = "/tmp/th-activation-plugins-XXXXXX";

static void setup(void)
{
    int fd = mkstemp(errfile);
    ck_assert(fd >= 0 && mkdtemp(plugdir));
    close(fd);
}

static void teardown(void)
{
    unlink(errfile);
    rmdir(plugdir);
}

START_TEST(serves_on_the_passed_socket)
{
    int port, sock = listener(&port);
    pid_t pid = start(sock, "1", 0, errfile, plugdir);
    close(sock); /* the child holds it now */
    ck_assert_msg(wait_for(errfile, "listening on the socket passed by the service manager"), "stderr: %s",
                  slurp(errfile));
    int c = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    ck_assert(connect(c, (struct sockaddr *)&a, sizeof a) == 0);
    const char *body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                       "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}";
    char req[1024], resp[4096];
    int n = snprintf(req, sizeof req,
                     "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
                     "Accept: application/json, text/event-stream\r\nConnection: close\r\nContent-Length: %zu\r\n\r\n%s",
                     port, strlen(body), body);
    ck_assert(write(c, req, (size_t)n) == n);
    size_t got = 0;
    ssize_t r;
    while (got < sizeof resp - 1 && (r = read(c, resp + got, sizeof resp - 1 - got)) > 0)
        got += (size_t)r;
    resp[got] = '\0';
    close(c);
    ck_assert_msg(strncmp(resp, "HTTP/1.1 200", 12) == 0 && strstr(resp, "\"serverInfo\"") &&
                      strcasestr(resp, "Mcp-Session-Id:"),
                  "response: %s", resp);
    kill(pid, SIGTERM);
    ck_assert_int_eq(exit_status(pid), 0);
}
END_TEST

/* Refusals: exit 1 with a message naming the rule. */
START_TEST(refuses_sockets_not_for_it)
{
    static const struct {
        const char *nfds;
        int wrong_pid;
        const char *want;
    } cases[] = {
        {"1", 1, "is not this process"},
        {"2", 0, "serves one endpoint"},
        {"", 0, "no socket was passed"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int port, sock = listener(&port);
        pid_t pid = start(sock, cases[i].nfds, cases[i].wrong_pid, errfile, plugdir);
        close(sock);
        ck_assert_int_eq(exit_status(pid), 1);
        ck_assert_msg(strstr(slurp(errfile), cases[i].want), "case %zu: stderr: %s", i, slurp(errfile));
    }
}
END_TEST

static Suite *activation_suite(void)
{
    Suite *s = suite_create("activation");
    TCase *tc = tcase_create("activation");
    tcase_set_timeout(tc, 60);
    tcase_add_unchecked_fixture(tc, setup, teardown);
    tcase_add_test(tc, serves_on_the_passed_socket);
    tcase_add_test(tc, refuses_sockets_not_for_it);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN(activation_suite)
