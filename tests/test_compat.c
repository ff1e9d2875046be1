/* SPDX-License-Identifier: MIT */
/*
** test_compat.c: each portable call of src/base/compat.c does what its
** Linux original does, whichever this build chose, and the portable
** --watch (src/plugin/dirpoll.c) sees plugins appear, change and go.
*/
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>

#include "base/compat.h"
#include "check_main.h"
#include "plugin/dirpoll.h"

static bool cloexec(int fd)
{
    int fl = fcntl(fd, F_GETFD);
    return fl >= 0 && (fl & FD_CLOEXEC);
}

static bool nonblocking(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    return fl >= 0 && (fl & O_NONBLOCK);
}

START_TEST(pipes_are_close_on_exec_and_nonblocking_when_asked)
{
    int a[2], b[2];
    ck_assert_int_eq(th_pipe_cloexec(a, false), 0);
    ck_assert_int_eq(th_pipe_cloexec(b, true), 0);
    for (int i = 0; i < 2; i++) {
        ck_assert(cloexec(a[i]) && cloexec(b[i]));
        ck_assert(!nonblocking(a[i]));
        ck_assert(nonblocking(b[i]));
    }
    char c;
    ck_assert_int_eq(read(b[0], &c, 1), -1);
    ck_assert_int_eq(errno, EAGAIN);
    ck_assert_int_eq(write(a[1], "x", 1), 1);
    ck_assert_int_eq(read(a[0], &c, 1), 1);
    ck_assert_int_eq(c, 'x');
    for (int i = 0; i < 2; i++) {
        close(a[i]);
        close(b[i]);
    }
}
END_TEST

static volatile sig_atomic_t pipes_seen;
static void on_pipe(int sig)
{
    (void)sig;
    pipes_seen++;
}

/* A send to a closed peer is EPIPE. With MSG_NOSIGNAL (or SO_NOSIGPIPE)
 * no SIGPIPE is raised at all; without, the host's handler takes it. */
START_TEST(a_socket_to_a_closed_peer_is_epipe)
{
    struct sigaction sa = {.sa_handler = on_pipe};
    sigemptyset(&sa.sa_mask);
    ck_assert_int_eq(sigaction(SIGPIPE, &sa, NULL), 0);
    int sv[2];
    ck_assert_int_eq(th_socketpair_cloexec(sv), 0);
    ck_assert(cloexec(sv[0]) && cloexec(sv[1]));
    close(sv[1]);
    ck_assert_int_eq(send(sv[0], "x", 1, TH_MSG_NOSIGNAL), -1);
    ck_assert_int_eq(errno, EPIPE);
#if HAVE_DECL_MSG_NOSIGNAL || defined(SO_NOSIGPIPE)
    ck_assert_int_eq(pipes_seen, 0);
#else
    ck_assert_int_eq(pipes_seen, 1);
#endif
    close(sv[0]);
}
END_TEST

/* In a child (it closes what Check itself may use): descriptors from the
 * bound up are closed, those below stay open. */
START_TEST(close_from_closes_everything_from_the_bound_up)
{
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        int fd = open("/dev/null", O_RDONLY);
        if (fd < 0 || dup2(fd, 40) != 40 || dup2(fd, 700) != 700 || dup2(fd, 1000) != 1000)
            _exit(2);
        th_close_from(41);
        bool low_open = fcntl(40, F_GETFD) >= 0;
        bool high_closed = fcntl(700, F_GETFD) < 0 && errno == EBADF && fcntl(1000, F_GETFD) < 0;
        _exit(low_open && high_closed ? 0 : 1);
    }
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
}
END_TEST

/* More than getentropy gives at once; two draws differ. */
START_TEST(random_bytes_fill_the_whole_buffer)
{
    unsigned char a[1000], b[1000];
    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    ck_assert_int_eq(th_random_bytes(a, sizeof a), 0);
    ck_assert_int_eq(th_random_bytes(b, sizeof b), 0);
    ck_assert(memcmp(a, b, sizeof a) != 0);
    /* The last 256 bytes were written too (a chunking error leaves zeros). */
    size_t zeros = 0;
    for (size_t i = sizeof a - 256; i < sizeof a; i++)
        zeros += a[i] == 0;
    ck_assert_uint_lt(zeros, 32);
}
END_TEST

static bool same_file(const char *x, const char *y)
{
    struct stat a, b;
    return stat(x, &a) == 0 && stat(y, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* Found from a relative argv[0], and from a bare name looked up in PATH
 * (the fallback's two cases; /proc/self/exe answers both the same). */
START_TEST(self_exe_names_this_program)
{
    const char *me = TEST_BUILDDIR "/test_compat";
    char buf[PATH_MAX], path[8192];
    ck_assert_int_eq(chdir(TEST_BUILDDIR), 0);
    th_compat_set_argv0("./test_compat");
    ck_assert(th_self_exe(buf, sizeof buf));
    ck_assert_msg(buf[0] == '/' && same_file(buf, me), "%s", buf);
    snprintf(path, sizeof path, "/nonexistent:%s:%s", TEST_BUILDDIR, getenv("PATH") ? getenv("PATH") : "");
    setenv("PATH", path, 1);
    ck_assert_int_eq(chdir("/"), 0);
    th_compat_set_argv0("test_compat");
    ck_assert(th_self_exe(buf, sizeof buf));
    ck_assert_msg(same_file(buf, me), "%s", buf);
#if !HAVE_PROC_SELF_EXE
    th_compat_set_argv0("no-such-program-anywhere");
    ck_assert(!th_self_exe(buf, sizeof buf));
#endif
}
END_TEST

START_TEST(thread_stack_contains_a_local_or_is_unknown)
{
    const char *low = NULL;
    size_t size = 0;
    int here = 0;
    bool known = th_thread_stack(&low, &size);
#if HAVE_PTHREAD_GETATTR_NP
    ck_assert(known);
    ck_assert((const char *)&here >= low && (const char *)&here < low + size);
#else
    ck_assert(!known);
    (void)here;
#endif
    th_thread_name("th-test"); /* must not fail either way */
}
END_TEST

#if HAVE_PTHREAD_GETATTR_NP
static void *stack_of_thread(void *arg)
{
    int here = 0;
    const char *low = NULL;
    size_t size = 0;
    bool in = th_thread_stack(&low, &size) && (const char *)&here >= low && (const char *)&here < low + size;
    *(bool *)arg = in;
    return NULL;
}
#endif

/* The main thread's answer (worked out without /proc/self/maps where
 * getauxval exists) covers glibc's and little more;
 * another thread's contains its locals too. */
START_TEST(main_thread_stack_matches_glibc)
{
#if HAVE_PTHREAD_GETATTR_NP
    const char *low = NULL;
    size_t size = 0;
    ck_assert(th_thread_stack(&low, &size));
    pthread_attr_t attr;
    void *glow;
    size_t gsize;
    ck_assert_int_eq(pthread_getattr_np(pthread_self(), &attr), 0);
    ck_assert_int_eq(pthread_attr_getstack(&attr, &glow, &gsize), 0);
    pthread_attr_destroy(&attr);
    /* glibc's ends at the page after __libc_stack_end, below the program's
     * arguments and environment, which the kernel caps at a quarter of
     * RLIMIT_STACK; ours ends above them. Both start RLIMIT_STACK below
     * the stack mapping's end. */
    ck_assert((const char *)glow >= low);
    ck_assert((const char *)glow + gsize <= low + size);
    ck_assert_uint_le((uintptr_t)(low + size) - ((uintptr_t)glow + gsize), size / 4);
    bool in = false;
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, stack_of_thread, &in), 0);
    pthread_join(t, NULL);
    ck_assert(in);
#endif
}
END_TEST

/* prctl where configure found it, "not available" (0) otherwise. */
START_TEST(privilege_and_parent_death_settings)
{
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        int d = th_die_with_parent(), n = th_no_new_privs();
#if HAVE_PRCTL
        _exit(d == 1 && n == 1 ? 0 : 1);
#else
        _exit(d == 0 && n == 0 ? 0 : 1);
#endif
    }
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}
END_TEST

START_TEST(pidfd_is_readable_once_the_child_ends)
{
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0)
        _exit(0);
    int fd = th_pidfd_open(pid);
#if HAVE_DECL_SYS_PIDFD_OPEN
    ck_assert_int_ge(fd, 0);
    struct pollfd p = {.fd = fd, .events = POLLIN};
    ck_assert_int_eq(poll(&p, 1, -1), 1);
    close(fd);
#else
    ck_assert_int_eq(fd, -1);
#endif
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
}
END_TEST

/* --disable-linux-extensions leaves none; a default Linux build lists what
 * configure found. */
START_TEST(the_feature_list_matches_the_configuration)
{
    const char *f = th_compat_linux_features();
#if TH_PORTABLE_ONLY
    ck_assert_str_eq(f, "none");
#else
#if HAVE_PIPE2
    ck_assert_ptr_nonnull(strstr(f, "pipe2"));
#endif
#if HAVE_INOTIFY_INIT1
    ck_assert_ptr_nonnull(strstr(f, "inotify"));
#endif
#endif
    ck_assert_str_eq(f, th_compat_linux_features());
}
END_TEST

static void put(const char *dir, const char *name, const char *data)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "a");
    ck_assert_ptr_nonnull(f);
    fputs(data, f);
    ck_assert_int_eq(fclose(f), 0);
}

START_TEST(dirpoll_sees_plugins_appear_change_and_go)
{
    char dir[] = "/tmp/th-dirpoll-XXXXXX", why[512], a[4096], b[4096];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    put(dir, "old.so", "1");
    const char *dirs[] = {dir};
    th_dirpoll *p = th_dirpoll_new(dirs, 1);
    ck_assert_ptr_nonnull(p);
    ck_assert(!th_dirpoll_changed(p, why, sizeof why));
    put(dir, "notes.txt", "not a plugin");
    put(dir, ".hidden.so", "x");
    ck_assert(!th_dirpoll_changed(p, why, sizeof why));
    put(dir, "new.so", "1");
    ck_assert(th_dirpoll_changed(p, why, sizeof why));
    ck_assert_msg(strstr(why, "poll: ") && strstr(why, "/new.so"), "%s", why);
    ck_assert(!th_dirpoll_changed(p, why, sizeof why));
    put(dir, "old.so", "more"); /* size changes */
    ck_assert(th_dirpoll_changed(p, why, sizeof why));
    ck_assert_msg(strstr(why, "/old.so"), "%s", why);
    /* Renamed over: another inode, whatever the size and time. */
    put(dir, "tmp", "1");
    snprintf(a, sizeof a, "%s/tmp", dir);
    snprintf(b, sizeof b, "%s/new.so", dir);
    ck_assert_int_eq(rename(a, b), 0);
    ck_assert(th_dirpoll_changed(p, why, sizeof why));
    ck_assert_msg(strstr(why, "/new.so"), "%s", why);
    ck_assert_int_eq(unlink(b), 0);
    ck_assert(th_dirpoll_changed(p, why, sizeof why));
    ck_assert_msg(strstr(why, "/new.so"), "%s", why);
    ck_assert(!th_dirpoll_changed(p, why, sizeof why));
    /* The directory goes: its plugins went with it (a warning is logged),
     * and the look after that sees nothing new. */
    const char *junk[] = {"old.so", "notes.txt", ".hidden.so"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(a, sizeof a, "%s/%s", dir, junk[i]);
        unlink(a);
    }
    ck_assert_int_eq(rmdir(dir), 0);
    ck_assert(th_dirpoll_changed(p, why, sizeof why));
    ck_assert_msg(strstr(why, "/old.so"), "%s", why);
    ck_assert(!th_dirpoll_changed(p, why, sizeof why));
    th_dirpoll_free(p);
}
END_TEST

static Suite *compat_suite(void)
{
    Suite *s = suite_create("compat");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, pipes_are_close_on_exec_and_nonblocking_when_asked);
    tcase_add_test(tc, a_socket_to_a_closed_peer_is_epipe);
    tcase_add_test(tc, close_from_closes_everything_from_the_bound_up);
    tcase_add_test(tc, random_bytes_fill_the_whole_buffer);
    tcase_add_test(tc, self_exe_names_this_program);
    tcase_add_test(tc, thread_stack_contains_a_local_or_is_unknown);
    tcase_add_test(tc, main_thread_stack_matches_glibc);
    tcase_add_test(tc, privilege_and_parent_death_settings);
    tcase_add_test(tc, pidfd_is_readable_once_the_child_ends);
    tcase_add_test(tc, the_feature_list_matches_the_configuration);
    tcase_add_test(tc, dirpoll_sees_plugins_appear_change_and_go);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN(compat_suite)
