/* SPDX-License-Identifier: MIT */
/*
** test_transport_stdio.c: integration tests of how toolhost guards its stdio
** and its process: backpressure from a client that stops reading, end of
** input seen while stdout is full, stdin closed or protected from plugins,
** descriptor flags left alone, signal handling that plugins cannot break,
** and a crash report naming the tool. Hostile plugins come from hostile/.
*/
/* pipe2 */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mcp_harness.h"
#include "check_main.h"

#define PING(id) "{\"jsonrpc\":\"2.0\",\"id\":" #id ",\"method\":\"ping\"}"
#define MODERN_CALL(id, tool, args)                                                                                    \
    "{\"jsonrpc\":\"2.0\",\"id\":" #id ",\"method\":\"tools/call\",\"params\":{\"name\":\"" tool                      \
    "\",\"arguments\":" args "," MH_MODERN_META "}}"

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* ---- a toolhost spawned by hand, for what mh_spawn cannot set up ---------- */

enum { IN_PIPE, IN_CLOSED, IN_DEVNULL };
/* Or'ed into the mode: stdout is a socket (as Node's child_process makes
 * it), not a pipe. */
#define OUT_SOCKET 8

typedef struct raw {
    pid_t pid;
    int to;    /* its stdin, or -1 */
    int from;  /* its stdout */
    int out_w; /* our own descriptor of its stdout's write end */
    char errpath[64];
    char *got; /* stdout read so far */
    size_t len, cap;
} raw;

/* EXTRA: one more option for the host, or NULL. */
static void raw_spawn_with(raw *r, int mode, const char *dir, const char *extra)
{
    memset(r, 0, sizeof *r);
    int in_mode = mode & ~OUT_SOCKET;
    int in[2] = {-1, -1}, out[2];
    if (in_mode == IN_PIPE)
        ck_assert(pipe2(in, O_CLOEXEC) == 0);
    if (mode & OUT_SOCKET)
        ck_assert(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, out) == 0);
    else
        ck_assert(pipe2(out, O_CLOEXEC) == 0);
    snprintf(r->errpath, sizeof r->errpath, "/tmp/tr-stderr-XXXXXX");
    int errfd = mkostemp(r->errpath, O_CLOEXEC);
    ck_assert(errfd >= 0);
    r->pid = fork();
    ck_assert(r->pid >= 0);
    if (r->pid == 0) {
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGPIPE, SIG_DFL);
        if (in_mode == IN_PIPE) {
            dup2(in[0], 0);
        } else if (in_mode == IN_CLOSED) {
            close(0);
        } else {
            int nul = open("/dev/null", O_RDONLY);
            dup2(nul, 0);
            close(nul);
        }
        dup2(out[1], 1);
        dup2(errfd, 2);
        /* A path as argv[0]: where there is no /proc/self/exe the host finds
         * its executable (for workers) from argv[0]. */
        execl(TOP_BUILDDIR "/src/toolhost", TOP_BUILDDIR "/src/toolhost", "-d", dir, extra, (char *)NULL);
        _exit(127);
    }
    close(errfd);
    if (in_mode == IN_PIPE) {
        close(in[0]);
        r->to = in[1];
    } else {
        r->to = -1;
    }
    r->from = out[0];
    r->out_w = out[1];
}

static void raw_spawn(raw *r, int mode, const char *dir)
{
    raw_spawn_with(r, mode, dir, NULL);
}

static void raw_send(raw *r, const char *line)
{
    size_t len = strlen(line);
    while (len > 0) {
        ssize_t n = write(r->to, line, len);
        if (n < 0 && errno == EINTR)
            continue;
        ck_assert_msg(n > 0, "writing to toolhost: %s", strerror(errno));
        line += n;
        len -= (size_t)n;
    }
}

/* Read stdout until it contains NEEDLE; false on timeout or EOF. */
static bool raw_read_until(raw *r, const char *needle, int timeout_ms)
{
    long long deadline = mh_now_ms() + timeout_ms;
    for (;;) {
        if (r->got && memmem(r->got, r->len, needle, strlen(needle)))
            return true;
        long long left = deadline - mh_now_ms();
        if (left <= 0)
            return false;
        struct pollfd pf = {.fd = r->from, .events = POLLIN};
        if (poll(&pf, 1, (int)left) <= 0)
            continue;
        if (r->cap - r->len < 65536) {
            r->cap = r->cap ? r->cap * 2 : 1 << 20;
            r->got = realloc(r->got, r->cap);
            ck_assert(r->got != NULL);
        }
        ssize_t n = read(r->from, r->got + r->len, r->cap - r->len);
        if (n == 0)
            return false;
        if (n > 0)
            r->len += (size_t)n;
    }
}

/* Like mh_wait: exit status, 1000 + signal, -1 on timeout. */
static int raw_wait(raw *r, int timeout_ms)
{
    long long deadline = mh_now_ms() + timeout_ms;
    int st;
    for (;;) {
        pid_t w = waitpid(r->pid, &st, WNOHANG);
        if (w == r->pid)
            break;
        if (mh_now_ms() >= deadline)
            return -1;
        sleep_ms(10);
    }
    r->pid = 0;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 1000 + WTERMSIG(st);
}

static void raw_free(raw *r)
{
    if (r->pid > 0) {
        kill(r->pid, SIGKILL);
        waitpid(r->pid, NULL, 0);
    }
    if (r->to >= 0)
        close(r->to);
    if (r->from >= 0)
        close(r->from);
    if (r->out_w >= 0)
        close(r->out_w);
    unlink(r->errpath);
    free(r->got);
}

static char *raw_stderr(const raw *r);

/* ---- backpressure ------------------------------------------------------- */

/*
** A client that pipelines 1 MiB echo calls without reading: the host must
** stop reading input once a bounded amount of output waits (the client's
** writes block), and when the client then reads, every response arrives
** and a later ping is answered. It used to read everything, queue up to
** 256 MiB, then drop all output for good. With stdout a pipe, then a
** socket (the writer waits for room differently).
*/
START_TEST(a_client_that_stops_reading_gets_backpressure_not_silence)
{
    raw r;
    raw_spawn(&r, IN_PIPE | (_i ? OUT_SOCKET : 0), mh_echo_dir());
    fcntl(r.to, F_SETFL, fcntl(r.to, F_GETFL) | O_NONBLOCK);
    const size_t text_len = 1 << 20;
    const int max_calls = 64; /* 64 MiB: far beyond any sane bound */
    char *req = malloc(text_len + 512);
    ck_assert(req != NULL);

    int sent = 0;
    size_t off = 0, req_len = 0;
    bool stalled = false;
    while (sent < max_calls) {
        if (off == 0) {
            int n = snprintf(req, 512,
                             "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                             "" MH_MODERN_META ",\"arguments\":{\"text\":\"",
                             sent + 1);
            memset(req + n, 'a' + sent % 26, text_len);
            memcpy(req + n + text_len, "\"}}}\n", 5);
            req_len = (size_t)n + text_len + 5;
        }
        ssize_t w = write(r.to, req + off, req_len - off);
        if (w > 0) {
            off += (size_t)w;
            if (off == req_len) {
                off = 0;
                sent++;
            }
            continue;
        }
        ck_assert_msg(w < 0 && errno == EAGAIN, "write: %s", strerror(errno));
        struct pollfd pf = {.fd = r.to, .events = POLLOUT};
        if (poll(&pf, 1, 3000) == 0) {
            stalled = true; /* no room for 3 s: the host stopped reading */
            break;
        }
    }
    ck_assert_msg(stalled, "the host read all %d calls (%d MiB) while stdout was not read", sent, sent);

    /* Now read everything, finishing the partial request and pinging. */
    int partial = off > 0 ? 1 : 0;
    int want = sent + partial;
    char *tail = NULL;
    size_t tail_len = 0, tail_off = 0;
    if (partial) {
        tail = req + off;
        tail_len = req_len - off;
    }
    static const char ping[] = PING(999999) "\n";
    bool ping_sent = false;
    int got = 0;
    bool ponged = false;
    size_t cap = 4 << 20, len = 0;
    char *buf = malloc(cap);
    ck_assert(buf != NULL);
    long long deadline = mh_now_ms() + 60000;
    while (!(ponged && got == want) && mh_now_ms() < deadline) {
        struct pollfd pf[2] = {{.fd = r.from, .events = POLLIN}, {.fd = r.to, .events = 0}};
        if (tail_off < tail_len || !ping_sent)
            pf[1].events = POLLOUT;
        poll(pf, 2, 1000);
        if (pf[1].revents & POLLOUT) {
            if (tail_off < tail_len) {
                ssize_t w = write(r.to, tail + tail_off, tail_len - tail_off);
                if (w > 0)
                    tail_off += (size_t)w;
            } else if (!ping_sent) {
                ck_assert(write(r.to, ping, sizeof ping - 1) == (ssize_t)(sizeof ping - 1));
                ping_sent = true;
            }
        }
        if (!(pf[0].revents & (POLLIN | POLLHUP)))
            continue;
        if (cap - len < (1 << 20)) {
            cap *= 2;
            buf = realloc(buf, cap);
            ck_assert(buf != NULL);
        }
        ssize_t n = read(r.from, buf + len, cap - len);
        ck_assert_msg(n > 0, "stdout ended after %d of %d responses", got, want);
        len += (size_t)n;
        char *nl;
        while ((nl = memchr(buf, '\n', len)) != NULL) {
            *nl = '\0';
            json_object *o = mh_parse(buf);
            ck_assert_msg(o != NULL, "not JSON: %.200s", buf);
            json_object *id = mh_at(o, "id");
            ck_assert(id != NULL);
            if (json_object_get_int(id) == 999999) {
                ponged = true; /* it may overtake the last call, which runs on the pool */
            } else {
                const char *text = mh_str(o, "result content 0 text");
                ck_assert_msg(text && strlen(text) == text_len, "bad echo response %d", json_object_get_int(id));
                got++;
            }
            json_object_put(o);
            size_t used = (size_t)(nl - buf) + 1;
            memmove(buf, nl + 1, len - used);
            len -= used;
        }
    }
    ck_assert_msg(got == want, "%d of %d responses arrived", got, want);
    ck_assert_msg(ponged, "the later ping was not answered");
    free(buf);
    free(req);
    close(r.to);
    r.to = -1;
    ck_assert_int_eq(raw_wait(&r, MH_TIMEOUT_MS), 0);
    raw_free(&r);
}
END_TEST

/* ---- end of input while stdout is full ----------------------------------------------- */

#define TOOLS_LIST(id) "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/list\",\"params\":{" MH_MODERN_META "}}", (id)

/*
** 100 tools/list answers (more than the pipe holds) unread, then EOF: the
** reader must see it (it used to sit in write() for ever), and output the
** client never reads is dropped when the grace period ends.
*/
START_TEST(eof_is_seen_while_stdout_is_full)
{
    mh_proc *p = mh_start("--shutdown-grace-ms", "300", NULL);
    mh_ping_is_next(p, 1);
    for (int i = 0; i < 100; i++)
        mh_send(p, TOOLS_LIST(100 + i));
    mh_close_stdin(p);
    int status = mh_wait(p, MH_TIMEOUT_MS); /* without reading stdout */
    ck_assert_msg(status == 0, "exit status %d after EOF with stdout unread", status);
    ck_assert(mh_stderr_wait(p, "bytes of output dropped", 1000));
    mh_free(p);
}
END_TEST

/* User and system CPU time process PID has used so far, in ms; -1 if unknown. */
static long cpu_ms(long pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = '\0';
    /* Fields 14 and 15 (utime, stime), counted after the ")" that ends
     * field 2, the command name, which may hold spaces. */
    char *p = strrchr(buf, ')');
    unsigned long ut = 0, st = 0;
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
        return -1;
    return (long)((ut + st) * 1000 / (unsigned long)sysconf(_SC_CLK_TCK));
}

/*
** Busy polling adapts to the client: one that sends a message only now and
** then costs no spin per message. With a 100 ms window, eight pings 300 ms
** apart would cost 800 ms of CPU time if every wait spun first (the VM
** accounts 40-75% of it: 300-600 ms); the host spins once, after the first
** ping, before the measurement begins. CPU time, not elapsed time: a
** loaded machine does not change it.
*/
START_TEST(busy_polling_spares_a_quiet_client)
{
    mh_proc *p = mh_start("--busy-poll", "100000", NULL);
    mh_ping_is_next(p, 1);
    sleep_ms(300);
    long before = cpu_ms(mh_pid(p));
    ck_assert_int_ge(before, 0);
    for (int i = 0; i < 8; i++) {
        sleep_ms(300);
        mh_ping_is_next(p, 2 + i);
    }
    long used = cpu_ms(mh_pid(p)) - before;
    ck_assert_msg(used < 150, "the host used %ld ms of CPU time answering eight pings 300 ms apart", used);
    mh_finish(p);
}
END_TEST

/*
** The same with stdout a socket, and 1 MiB answers: the writer, waiting
** for room, is told to quit when the grace period ends, and the host
** exits at once.
*/
START_TEST(eof_is_seen_while_a_socket_stdout_is_full)
{
    raw r;
    raw_spawn_with(&r, IN_PIPE | OUT_SOCKET, mh_echo_dir(), "--shutdown-grace-ms=300");
    const size_t text_len = 1 << 20;
    char *req = malloc(text_len + 512);
    ck_assert(req != NULL);
    int n = snprintf(req, 512,
                     "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                     "" MH_MODERN_META ",\"arguments\":{\"text\":\"");
    memset(req + n, 'x', text_len);
    memcpy(req + n + text_len, "\"}}}\n", 6);
    for (int i = 0; i < 4; i++)
        raw_send(&r, req); /* 4 MiB of answers: more than the socket holds */
    free(req);
    close(r.to);
    r.to = -1;
    int status = raw_wait(&r, MH_TIMEOUT_MS);
    ck_assert_msg(status == 0, "exit status %d after EOF with stdout unread", status);
    char *err = raw_stderr(&r);
    ck_assert_msg(strstr(err, "bytes of output dropped"), "%s", err);
    ck_assert_msg(!strstr(err, "stuck"), "%s", err);
    free(err);
    raw_free(&r);
}
END_TEST

/* The same, but the client reads after closing stdin: nothing is lost. */
START_TEST(output_queued_at_eof_is_delivered_to_a_reading_client)
{
    mh_proc *p = mh_start(NULL);
    mh_ping_is_next(p, 1);
    for (int i = 0; i < 100; i++)
        mh_send(p, TOOLS_LIST(100 + i));
    mh_close_stdin(p);
    sleep_ms(300);
    for (int i = 0; i < 100; i++) {
        json_object *o = mh_next(p);
        MH_ASSERT_INT(o, "id", 100 + i);
        MH_ASSERT_RESULT(o);
        json_object_put(o);
    }
    ck_assert(mh_wait_eof(p, MH_TIMEOUT_MS));
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
}
END_TEST

/* ---- stdin closed or empty at start ------------------------------------------------- */

static void starts_with_stdin(int mode)
{
    raw r;
    raw_spawn(&r, mode, mh_echo_dir());
    int status = raw_wait(&r, MH_TIMEOUT_MS);
    ck_assert_msg(status == 0, "exit status %d with stdin %s", status, mode == IN_CLOSED ? "closed" : "/dev/null");
    ck_assert(!raw_read_until(&r, "\n", 100)); /* nothing on stdout */
    raw_free(&r);
}

START_TEST(stdin_closed_at_start_exits_zero)
{
    starts_with_stdin(IN_CLOSED);
}
END_TEST

START_TEST(stdin_dev_null_exits_zero)
{
    starts_with_stdin(IN_DEVNULL);
}
END_TEST

/* ---- plugins and their children cannot read protocol input ---------------------------- */

START_TEST(a_register_function_reading_stdin_gets_nothing)
{
    char *dir = mh_private_dir(mh_hostile("stdin_reader"), NULL);
    mh_proc *p = mh_spawn("-d", dir, NULL);
    mh_ping_is_next(p, 1); /* sent while register waits on fd 0 */
    ck_assert(mh_stderr_wait(p, "stdin_reader: read 0 bytes from fd 0", MH_TIMEOUT_MS));
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

START_TEST(a_child_reading_stdin_does_not_eat_messages)
{
    char *dir = mh_private_dir(mh_hostile("stdin_shell"), NULL);
    /* Its shell runs timeout and cat: programs its sandbox must let it run. */
    mh_proc *p = mh_spawn("-d", dir, "--grant=stdin_shell.allow-exec=/bin", "--grant=stdin_shell.allow-exec=/usr/bin",
                          NULL);
    mh_send(p, MODERN_CALL(1, "stdin_shell", "{}"));
    ck_assert(mh_stderr_wait(p, "stdin-shell-started", MH_TIMEOUT_MS));
    sleep_ms(300); /* cat is reading its stdin now */
    mh_send(p, PING(2));
    mh_send(p, PING(3));
    bool seen[4] = {false};
    for (int i = 0; i < 3; i++) {
        json_object *o = mh_next(p);
        int id = json_object_get_int(mh_at(o, "id"));
        ck_assert_msg(id >= 1 && id <= 3 && !seen[id], "unexpected %s", mh_json(o));
        seen[id] = true;
        json_object_put(o);
    }
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

/* ---- children start with a clean signal mask ---------------------------------------- */

START_TEST(a_child_of_a_handler_dies_by_sigterm)
{
    char *dir = mh_private_dir(mh_hostile("child_sleep"), NULL);
    mh_proc *p = mh_spawn("-d", dir, "--grant=child_sleep.allow-exec=/bin", "--grant=child_sleep.allow-exec=/usr/bin",
                          NULL);
    mh_send(p, MODERN_CALL(1, "child_sleep", "{\"op\":\"spawn\"}"));
    json_object *o = mh_next(p);
    const char *pid_text = mh_str(o, "result content 0 text");
    ck_assert_msg(pid_text != NULL, "%s", mh_json(o));
    int pid = atoi(pid_text);
    ck_assert(pid > 0);
    json_object_put(o);
    sleep_ms(100);
    ck_assert(kill(pid, SIGTERM) == 0);
    mh_send(p,
            "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"child_sleep\","
            "\"arguments\":{\"op\":\"wait\",\"pid\":%d}," MH_MODERN_META "}}",
            pid);
    o = mh_next(p); /* a child that ignored SIGTERM sleeps 30 s: timeout */
    MH_ASSERT_STR(o, "result content 0 text", "signal 15");
    json_object_put(o);
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

/* ---- the caller's stdout keeps its flags ------------------------------------------------ */

START_TEST(stdout_is_left_blocking)
{
    raw r;
    raw_spawn(&r, IN_PIPE, mh_echo_dir());
    raw_send(&r, PING(1) "\n");
    ck_assert(raw_read_until(&r, "\"id\":1", MH_TIMEOUT_MS));
    int during = fcntl(r.out_w, F_GETFL);
    close(r.to);
    r.to = -1;
    ck_assert_int_eq(raw_wait(&r, MH_TIMEOUT_MS), 0);
    int after = fcntl(r.out_w, F_GETFL);
    ck_assert(during >= 0 && after >= 0);
    ck_assert_msg(!(during & O_NONBLOCK), "O_NONBLOCK set on the caller's stdout while serving");
    ck_assert_msg(!(after & O_NONBLOCK), "O_NONBLOCK left on the caller's stdout after exit");
    raw_free(&r);
}
END_TEST

/* ---- descriptors closed by plugin code --------------------------------------------- */

START_TEST(a_plugin_closing_fd_0_does_not_cut_off_the_client)
{
    char *dir = mh_private_dir(mh_hostile("close_stdin"), NULL);
    mh_proc *p = mh_spawn("-d", dir, NULL);
    mh_ping_is_next(p, 1);
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

/* Plugins are first opened by a scanner process: the
 * constructor closes the scanner's descriptors, never the host's, and the
 * plugin is refused while the host serves on. */
START_TEST(a_plugin_closing_all_descriptors_ends_the_host)
{
    char *dir = mh_private_dir(mh_hostile("close_fds"), NULL);
    mh_proc *p = mh_spawn("-d", dir, NULL);
    mh_ping_is_next(p, 1);
    ck_assert(mh_stderr_wait(p, "close_fds.so refused: closed or replaced descriptor 3 or 4 (the scanner's pipes)", 1000));
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

/* The same while serving: poll reports POLLNVAL for the protocol's input,
 * which must end the session rather than be ignored (a busy loop) or
 * leave the host waiting for ever. */
START_TEST(a_handler_closing_all_descriptors_ends_the_host)
{
    char *dir = mh_private_dir(mh_hostile("close_fds_call"), NULL);
    mh_proc *p = mh_spawn("-d", dir, "--isolation=none", NULL);
    mh_ping_is_next(p, 1);
    mh_send(p, MODERN_CALL(2, "close_fds_call", "{}"));
    int status = mh_wait(p, MH_TIMEOUT_MS); /* stdin stays open */
    ck_assert_msg(status == 1, "exit status %d", status);
    ck_assert(mh_stderr_wait(p, "closed under the host", 1000));
    mh_free(p);
    mh_rm_dir(dir);
}
END_TEST

/* ---- signal handling that plugins cannot break ---------------------------------------- */

static char *raw_stderr(const raw *r)
{
    FILE *f = fopen(r->errpath, "rb");
    ck_assert(f != NULL);
    char *s = calloc(1, 1 << 20);
    ck_assert(s != NULL);
    size_t n = fread(s, 1, (1 << 20) - 1, f);
    s[n] = '\0';
    fclose(f);
    return s;
}

/* SIGPIPE reset to SIG_DFL by a plugin, then the client closes stdout: the
 * host must not die by SIGPIPE; it sees the client gone and shuts down.
 * In both isolation modes: in-process the handler resets it in the host
 * itself, on the reader thread that then writes the answer to the ping
 * (SIGPIPE stays blocked in the threads writing stdout, not per write). */
static const char *const isolation_modes[] = {"--isolation=process", "--isolation=none"};

START_TEST(sigpipe_dfl_in_a_plugin_does_not_kill_the_host)
{
    char *dir = mh_private_dir(mh_hostile("sigpipe_dfl"), NULL);
    raw r;
    raw_spawn_with(&r, IN_PIPE, dir, isolation_modes[_i]);
    raw_send(&r, MODERN_CALL(1, "sigpipe_dfl", "{}") "\n");
    ck_assert(raw_read_until(&r, "SIGPIPE is SIG_DFL", MH_TIMEOUT_MS));
    close(r.from);
    r.from = -1;
    close(r.out_w);
    r.out_w = -1;
    /* The call resets SIGPIPE again right before its answer is written. */
    raw_send(&r, MODERN_CALL(3, "sigpipe_dfl", "{}") "\n" PING(2) "\n");
    int status = raw_wait(&r, MH_TIMEOUT_MS); /* stdin stays open */
    ck_assert_msg(status == 0, "exit status %d after the client closed stdout", status);
    char *err = raw_stderr(&r);
    ck_assert_msg(strstr(err, "stdout closed; shutting down"), "%s", err);
    free(err);
    raw_free(&r);
    mh_rm_dir(dir);
}
END_TEST

/* The threads writing stdout keep SIGPIPE blocked; a child that plugin code
 * fork()s from one of them (in-process: the reader running the call) must
 * start with it unblocked, as it would without the host. */
START_TEST(a_forked_child_does_not_inherit_the_blocked_sigpipe)
{
    char *dir = mh_private_dir(mh_hostile("sigpipe_fork"), NULL);
    mh_proc *p = mh_spawn("-d", dir, isolation_modes[_i], NULL);
    json_object *res = mh_rpc(p, MODERN_CALL(1, "sigpipe_fork", "{}"));
    const char *text = json_object_to_json_string(res);
    ck_assert_msg(strstr(text, "child: SIGPIPE unblocked"), "%s", text);
    json_object_put(res);
    mh_close_stdin(p);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
    mh_rm_dir(dir);
}
END_TEST

/*
** SIGTERM while the host waits for input: the reader waits in read()
** alone, so the sentry thread sees the stop and shutdown goes on without
** that reader. It must not be waited for like a reader in a call (for the
** grace period, ten minutes here), and the session is still answered
** until then.
*/
START_TEST(sigterm_while_idle_does_not_wait_for_the_reader)
{
    mh_proc *p = mh_start("--shutdown-grace-ms", "600000", NULL);
    mh_ping_is_next(p, 1);
    mh_ping_is_next(p, 2);
    mh_kill(p, SIGTERM);
    int status = mh_wait(p, MH_TIMEOUT_MS);
    ck_assert_msg(status == 0, "exit status %d after SIGTERM while idle", status);
    ck_assert(mh_stderr_wait(p, "stop requested", 1000));
    mh_free(p);
}
END_TEST

START_TEST(a_plugin_thread_with_sigterm_unblocked_does_not_bypass_shutdown)
{
    char *dir = mh_private_dir(mh_hostile("unblock_term"), NULL);
    mh_proc *p = mh_spawn("-d", dir, "--isolation=none", NULL);
    ck_assert(mh_stderr_wait(p, "unblock_term: thread ready", MH_TIMEOUT_MS));
    mh_ping_is_next(p, 1);
    for (int i = 0; i < 20; i++)
        mh_kill(p, SIGTERM); /* one of them lands on the plugin's thread */
    int status = mh_wait(p, MH_TIMEOUT_MS);
    ck_assert_msg(status == 0, "exit status %d after SIGTERM", status);
    ck_assert(mh_stderr_wait(p, "stop requested", 1000));
    mh_free(p);
    mh_rm_dir(dir);
}
END_TEST

static void sigterm_during_loading(char *dir)
{
    mh_proc *p = mh_spawn("-d", dir, NULL);
    ck_assert(mh_stderr_wait(p, "loop_register: looping", MH_TIMEOUT_MS));
    mh_kill(p, SIGTERM);
    int status = mh_wait(p, MH_TIMEOUT_MS);
    ck_assert_msg(status == 1, "exit status %d after SIGTERM during loading", status);
    ck_assert(mh_stderr_wait(p, "stopped by SIGTERM while loading plugin", 1000));
    ck_assert(mh_stderr_wait(p, "loop_register.so", 1000));
    mh_free(p);
    mh_rm_dir(dir);
}

START_TEST(sigterm_during_plugin_loading_ends_the_host)
{
    sigterm_during_loading(mh_private_dir(mh_hostile("loop_register"), NULL));
}
END_TEST

/* A client that closes its input while a plugin's register function loops
 * is gone: the host exits then, not after --load-timeout (600 s here, far
 * past Check's timeout, which bounds the wait). In both isolation modes. */
START_TEST(end_of_input_during_plugin_loading_ends_the_host)
{
    static const char *const modes[] = {"--isolation=process", "--isolation=none"};
    char *dir = mh_private_dir(mh_hostile("loop_register"), NULL);
    mh_proc *p = mh_spawn("-d", dir, "--load-timeout=600", modes[_i], NULL);
    ck_assert(mh_stderr_wait(p, "loop_register: looping", MH_TIMEOUT_MS));
    mh_close_stdin(p);
    int status = mh_wait(p, INT_MAX);
    ck_assert_msg(status == 0, "exit status %d after end of input during loading", status);
    ck_assert(mh_stderr_wait(p, "end of input while loading plugin", 1000));
    ck_assert(mh_stderr_wait(p, "loop_register.so", 1000));
    mh_free(p);
    mh_rm_dir(dir);
}
END_TEST

/* Requests sent before the input closed are still answered once the
 * plugins are loaded: only a client with nothing left to ask is gone. */
START_TEST(requests_before_end_of_input_are_answered_after_loading)
{
    char *dir = mh_private_dir(mh_hostile("loop_register"), NULL);
    mh_proc *p = mh_spawn("-d", dir, "--load-timeout=1", NULL);
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
    ck_assert(mh_stderr_wait(p, "loop_register: looping", MH_TIMEOUT_MS));
    mh_close_stdin(p);
    json_object *o = mh_next(p);
    MH_ASSERT_INT(o, "id", 1);
    MH_ASSERT_RESULT(o);
    json_object_put(o);
    ck_assert_int_eq(mh_wait(p, INT_MAX), 0);
    ck_assert(mh_stderr_wait(p, "did not finish loading within 1 s", 1000));
    mh_free(p);
    mh_rm_dir(dir);
}
END_TEST

/* An earlier plugin's SIG_DFL for SIGTERM is undone before the next loads. */
START_TEST(sigterm_during_loading_after_a_plugin_reset_it)
{
    char *dir = mh_private_dir(mh_hostile("aa_term_dfl"), NULL);
    char *second = mh_private_dir(mh_hostile("loop_register"), NULL);
    char from[512], to[512];
    snprintf(from, sizeof from, "%s/loop_register.so", second);
    snprintf(to, sizeof to, "%s/loop_register.so", dir);
    ck_assert(rename(from, to) == 0);
    mh_rm_dir(second);
    sigterm_during_loading(dir);
}
END_TEST

/* ---- a plugin's stdout lines appear when written --------------------------------------- */

START_TEST(plugin_printf_reaches_stderr_at_once)
{
    mh_proc *p = mh_start(NULL);
    mh_initialize(p, "2025-11-25");
    json_object *o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
                               "{\"name\":\"printer\",\"arguments\":{}}}");
    MH_ASSERT_RESULT(o);
    json_object_put(o);
    /* The handler's last printf is never flushed by the plugin. */
    ck_assert_msg(mh_stderr_wait(p, "PRINTER-UNFLUSHED-MARK", 5000), "the line waits in a buffer until exit");
    mh_finish(p);
}
END_TEST

/* ---- a crash names the tool ---------------------------------------------------------- */

/* In-process behaviour (--isolation=none); in process isolation a crash
 * fails only its call (test_worker). */
static void crash_names_the_tool(const char *args)
{
    char *dir = mh_private_dir(mh_hostile("crash"), NULL);
    mh_proc *p = mh_spawn("-d", dir, "--isolation=none", NULL);
    mh_ping_is_next(p, 1);
    mh_send(p,
            "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"crash\","
            "\"arguments\":%s," MH_MODERN_META "}}",
            args);
    int status = mh_wait(p, MH_TIMEOUT_MS);
    ck_assert_msg(status == 1000 + SIGSEGV, "status %d", status);
    char *err = mh_stderr(p);
    ck_assert_msg(strstr(err, "SIGSEGV while running tool 'crash'"), "stderr: %s", err);
    free(err);
    mh_free(p);
    mh_rm_dir(dir);
}

START_TEST(a_segfault_in_a_handler_names_the_tool)
{
    crash_names_the_tool("{}");
}
END_TEST

START_TEST(a_stack_overflow_in_a_handler_names_the_tool)
{
    crash_names_the_tool("{\"overflow\":true}");
}
END_TEST

/* ---- the in-process dispatch path ---------------------------------------------------- */

/* A quick call runs on the thread that read it: no hand-off to the pool,
 * which cost a futex wake and a context switch per call. */
START_TEST(a_quick_call_runs_on_the_reader_thread)
{
    char *dir = mh_private_dir(mh_hostile("thread_name"), NULL);
    mh_proc *p = mh_spawn("-d", dir, "--isolation=none", NULL);
    for (int i = 1; i <= 3; i++) {
        json_object *o = mh_rpc(p, MODERN_CALL(%d, "thread_name", "{}"), i);
        MH_ASSERT_STR(o, "result content 0 text", "th-read");
        json_object_put(o);
    }
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

/* A call that turns out slow keeps its thread, and reading moves to
 * another: a ping and a quick call sent behind it are answered while it
 * runs, the quick one again on a reader thread. The slow call runs until
 * the test has those answers (a gate file), so they cannot come after it
 * however slow the machine: it used to sleep 3 s, and the answers had to
 * come within 2.5 s. */
START_TEST(a_slow_call_hands_reading_to_another_thread)
{
    char *dir = mh_private_dir(mh_hostile("thread_name"), NULL);
    char gate[600];
    snprintf(gate, sizeof gate, "%s.gate", dir);
    unlink(gate);
    mh_proc *p = mh_spawn("-d", dir, "--isolation=none", NULL);
    mh_send(p, MODERN_CALL(1, "thread_name", "{\"gate\":\"%s\"}"), gate);
    mh_ping_is_next(p, 2);
    json_object *o = mh_rpc(p, MODERN_CALL(3, "thread_name", "{}"));
    MH_ASSERT_ID(o, "3");
    MH_ASSERT_STR(o, "result content 0 text", "th-read");
    json_object_put(o);
    FILE *g = fopen(gate, "w");
    ck_assert(g && fclose(g) == 0);
    o = mh_next(p);
    MH_ASSERT_ID(o, "1");
    MH_ASSERT_STR(o, "result content 0 text", "th-read");
    json_object_put(o);
    mh_finish(p);
    unlink(gate);
    mh_rm_dir(dir);
}
END_TEST

/* Write system calls the process has made (all its threads). */
static long long syscw(long pid)
{
    char path[64], line[128];
    snprintf(path, sizeof path, "/proc/%ld/io", pid);
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
    long long n = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "syscw: %lld", &n) == 1)
            break;
    fclose(f);
    ck_assert(n >= 0);
    return n;
}

/* Under load output is batched: the responses to requests that arrive
 * in one read leave in a handful of writes, not one write each. Where the
 * writer thread writes (the portable build, or a client slow to read), it
 * used to take a corking reader's answers as they piled up: 126 writes
 * now and then (see want_write). */
START_TEST(responses_to_one_read_leave_in_few_writes)
{
    enum { N = 200 };
    mh_proc *p = mh_spawn("-q", "-d", mh_echo_dir(), "--isolation=none", NULL);
    mh_ping_is_next(p, 0);
    static char batch[N * 512];
    size_t len = 0;
    for (int i = 1; i <= N; i++)
        len += (size_t)snprintf(batch + len, sizeof batch - len, MODERN_CALL(%d, "echo", "{\"text\":\"x\"}") "\n", i);
    long long before = syscw(mh_pid(p));
    mh_send_raw(p, batch, len);
    for (int i = 1; i <= N; i++) {
        json_object *o = mh_next(p);
        MH_ASSERT_STR(o, "result content 0 text", "x");
        json_object_put(o);
    }
    long long writes = syscw(mh_pid(p)) - before;
    ck_assert_msg(writes <= N / 10, "%d responses took %lld writes", N, writes);
    mh_finish(p);
}
END_TEST

/* N modern echo calls with ids 1..N, one per line, written into BATCH. */
static const char *echo_batch(char *batch, size_t size, int n)
{
    size_t len = 0;
    for (int i = 1; i <= n; i++)
        len += (size_t)snprintf(batch + len, size - len, MODERN_CALL(%d, "echo", "{\"text\":\"t%d\"}") "\n", i, i);
    ck_assert_uint_lt(len, size);
    return batch;
}

/*
** A read of many calls is answered in several writes (early writes while
** the reader is past the middle of its read, see stdio.c): every answer
** arrives whole and exactly once, with stdout a pipe, then a socket (whose
** unread bytes the host asks differently). Not necessarily in order: a
** call that outlasts the hand-off budget (under a sanitizer, an echo can)
** is answered after the calls behind it.
*/
START_TEST(every_answer_to_a_long_read_arrives_once)
{
    enum { N = 300 };
    raw r;
    raw_spawn_with(&r, IN_PIPE | (_i ? OUT_SOCKET : 0), mh_echo_dir(), "-q");
    static char batch[N * 512];
    raw_send(&r, echo_batch(batch, sizeof batch, N));
    static bool seen[N + 1];
    memset(seen, 0, sizeof seen);
    int answered = 0;
    size_t off = 0;
    long long deadline = mh_now_ms() + 20000;
    while (answered < N) {
        const char *nl = r.len > off ? memchr(r.got + off, '\n', r.len - off) : NULL;
        if (!nl) {
            ck_assert_msg(mh_now_ms() < deadline, "%d of %d calls answered in 20 s", answered, N);
            struct pollfd pf = {.fd = r.from, .events = POLLIN};
            if (poll(&pf, 1, 1000) <= 0)
                continue;
            if (r.cap - r.len < 65536) {
                r.cap = r.cap ? r.cap * 2 : 1 << 20;
                r.got = realloc(r.got, r.cap);
                ck_assert(r.got != NULL);
            }
            ssize_t n = read(r.from, r.got + r.len, r.cap - r.len);
            ck_assert_msg(n > 0, "stdout ended with %d of %d calls answered", answered, N);
            r.len += (size_t)n;
            continue;
        }
        const char *p = r.got + off;
        json_tokener *tok = json_tokener_new();
        ck_assert(tok != NULL);
        json_object *o = json_tokener_parse_ex(tok, p, (int)(nl - p));
        ck_assert_msg(o != NULL && json_tokener_get_parse_end(tok) == (size_t)(nl - p), "not one JSON message: %.*s",
                      (int)(nl - p), p);
        json_tokener_free(tok);
        int id = json_object_get_int(mh_at(o, "id"));
        ck_assert_msg(id >= 1 && id <= N && !seen[id], "unexpected or repeated answer: %s", mh_json(o));
        seen[id] = true;
        char text[16];
        snprintf(text, sizeof text, "t%d", id);
        MH_ASSERT_STR(o, "result content 0 text", text);
        json_object_put(o);
        answered++;
        off = (size_t)(nl - r.got) + 1;
    }
    close(r.to);
    r.to = -1;
    ck_assert_int_eq(raw_wait(&r, 10000), 0);
    raw_free(&r);
}
END_TEST

/*
** A read whose next requests are already waiting keeps the rest of its
** answers for the next read's early write (stdio.c, take_lines). When the
** next read brings no whole line (here: the start of one, then nothing),
** they must leave anyway: every answer arrives while the last line is
** still unfinished. The partial line follows the calls at once, so it is
** usually waiting when the reader ends its read of the calls.
*/
START_TEST(kept_answers_leave_when_the_next_read_brings_no_line)
{
    enum { N = 100 };
    raw r;
    raw_spawn_with(&r, IN_PIPE, mh_echo_dir(), "-q");
    static char batch[N * 512];
    raw_send(&r, echo_batch(batch, sizeof batch, N));
    raw_send(&r, "{\"jsonrpc\":\"2.0\",\"id\":\"late\",");
    for (int i = 1; i <= N; i++) {
        char want[32];
        snprintf(want, sizeof want, "\"text\":\"t%d\"", i);
        ck_assert_msg(raw_read_until(&r, want, 10000), "the answer to call %d did not come", i);
    }
    raw_send(&r, "\"method\":\"ping\"}\n");
    ck_assert(raw_read_until(&r, "\"id\":\"late\"", 10000));
    close(r.to);
    r.to = -1;
    ck_assert_int_eq(raw_wait(&r, 10000), 0);
    raw_free(&r);
}
END_TEST

static Suite *transport_suite(void)
{
    Suite *s = suite_create("transport_stdio");
    TCase *tc = tcase_create("output");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_loop_test(tc, a_client_that_stops_reading_gets_backpressure_not_silence, 0, 2);
    tcase_add_test(tc, eof_is_seen_while_stdout_is_full);
    tcase_add_test(tc, eof_is_seen_while_a_socket_stdout_is_full);
    tcase_add_test(tc, output_queued_at_eof_is_delivered_to_a_reading_client);
    tcase_add_test(tc, stdout_is_left_blocking);
    suite_add_tcase(s, tc);

    tc = tcase_create("stdin");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_test(tc, stdin_closed_at_start_exits_zero);
    tcase_add_test(tc, stdin_dev_null_exits_zero);
    tcase_add_test(tc, a_register_function_reading_stdin_gets_nothing);
    tcase_add_test(tc, a_child_reading_stdin_does_not_eat_messages);
    tcase_add_test(tc, a_plugin_closing_fd_0_does_not_cut_off_the_client);
    tcase_add_test(tc, a_plugin_closing_all_descriptors_ends_the_host);
    tcase_add_test(tc, a_handler_closing_all_descriptors_ends_the_host);
    tcase_add_test(tc, plugin_printf_reaches_stderr_at_once);
    suite_add_tcase(s, tc);

    tc = tcase_create("dispatch");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_test(tc, a_quick_call_runs_on_the_reader_thread);
    tcase_add_test(tc, a_slow_call_hands_reading_to_another_thread);
    tcase_add_test(tc, responses_to_one_read_leave_in_few_writes);
    tcase_add_loop_test(tc, every_answer_to_a_long_read_arrives_once, 0, 2);
    tcase_add_test(tc, kept_answers_leave_when_the_next_read_brings_no_line);
    suite_add_tcase(s, tc);

    tc = tcase_create("signals");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_test(tc, a_child_of_a_handler_dies_by_sigterm);
    tcase_add_loop_test(tc, sigpipe_dfl_in_a_plugin_does_not_kill_the_host, 0, 2);
    tcase_add_loop_test(tc, a_forked_child_does_not_inherit_the_blocked_sigpipe, 0, 2);
    tcase_add_test(tc, sigterm_while_idle_does_not_wait_for_the_reader);
    tcase_add_test(tc, a_plugin_thread_with_sigterm_unblocked_does_not_bypass_shutdown);
    tcase_add_test(tc, sigterm_during_plugin_loading_ends_the_host);
    tcase_add_loop_test(tc, end_of_input_during_plugin_loading_ends_the_host, 0, 2);
    tcase_add_test(tc, requests_before_end_of_input_are_answered_after_loading);
    tcase_add_test(tc, sigterm_during_loading_after_a_plugin_reset_it);
    tcase_add_test(tc, a_segfault_in_a_handler_names_the_tool);
    tcase_add_test(tc, a_stack_overflow_in_a_handler_names_the_tool);
    tcase_add_test(tc, busy_polling_spares_a_quiet_client);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN_WITH(transport_suite, mh_global_setup, mh_global_teardown)
