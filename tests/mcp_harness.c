/* SPDX-License-Identifier: MIT */
/*
** mcp_harness.c: runs src/toolhost as a child with its stdin and stdout on
** pipes and its stderr in a temporary file, for the MCP integration tests.
** Every line read from stdout is checked to be one JSON-RPC message.
*/
/* pipe2, mkostemp, vasprintf */
#define _GNU_SOURCE
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mcp_harness.h"

extern char **environ;

#define MAX_ARGS 64

const char *const mh_tool_order[] = {"failer_bare", "failer", "logger", "printer", "progress",
                                     "rich_structured", "rich", "slow", "echo"};
const size_t mh_tool_count = sizeof mh_tool_order / sizeof mh_tool_order[0];

struct mh_proc {
    pid_t pid;
    int to_child;   /* its stdin; -1 once closed */
    int from_child; /* its stdout */
    char errpath[64];
    char *buf; /* stdout bytes read but not yet returned */
    size_t len, cap;
    bool eof;
    bool reaped;
    int status;
};

static char echo_dir[64];
static char cache_home[64]; /* XDG_CACHE_HOME of the toolhosts started */

int mh_time_scale(void)
{
    const char *env = getenv("CK_TIMEOUT_MULTIPLIER");
    long k = env ? strtol(env, NULL, 10) : 1;
    return k >= 1 && k <= 100 ? (int)k : 1;
}

int mh_timeout_ms(void)
{
    return 20000 * mh_time_scale();
}

long long mh_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

const char *mh_plugin_dir(void)
{
    return TEST_BUILDDIR "/mcpplugins/.libs";
}

const char *mh_echo_dir(void)
{
    return echo_dir;
}

/* Outside any test (no ck_assert there): say what failed and stop. */
static void setup_failed(const char *what, const char *path)
{
    fprintf(stderr, "mcp_harness: %s %s: %s\n", what, path, strerror(errno));
    abort();
}

static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb");
    if (!in)
        setup_failed("cannot open (build the plugins first)", from);
    FILE *out = fopen(to, "wb");
    if (!out)
        setup_failed("cannot create", to);
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, in)) > 0)
        if (fwrite(chunk, 1, n, out) != n)
            setup_failed("cannot write", to);
    fclose(in);
    if (fclose(out) != 0)
        setup_failed("cannot write", to);
}

void mh_global_setup(void)
{
    /* A write to a dead child must fail with EPIPE, not kill the test. */
    signal(SIGPIPE, SIG_IGN);
    snprintf(echo_dir, sizeof echo_dir, "/tmp/mh-echo-XXXXXX");
    if (!mkdtemp(echo_dir))
        setup_failed("cannot create", echo_dir);
    char to[128];
    snprintf(to, sizeof to, "%s/echo.so", echo_dir);
    copy_file(TOP_BUILDDIR "/plugins/.libs/echo.so", to);
    /* Every toolhost this program starts keeps its registry cache here (a
     * spawn inherits the variable), not in the user's ~/.cache. */
    snprintf(cache_home, sizeof cache_home, "/tmp/mh-cache-XXXXXX");
    if (!mkdtemp(cache_home))
        setup_failed("cannot create", cache_home);
    setenv("XDG_CACHE_HOME", cache_home, 1);
}

static char marks_dir[64];

const char *mh_marks_dir(void)
{
    if (!marks_dir[0]) {
        snprintf(marks_dir, sizeof marks_dir, "/tmp/mh-marks-%ld", (long)getpid());
        if (mkdir(marks_dir, 0700) != 0 && errno != EEXIST)
            setup_failed("cannot create", marks_dir);
    }
    return marks_dir;
}

void mh_global_teardown(void)
{
    char path[128];
    if (marks_dir[0])
        mh_rm_dir(strdup(marks_dir));
    snprintf(path, sizeof path, "%s/echo.so", echo_dir);
    unlink(path);
    rmdir(echo_dir);
    snprintf(path, sizeof path, "%s/toolhost", cache_home);
    mh_rm_dir(strdup(path));
    rmdir(cache_home);
}

char *mh_private_dir(const char *so_path, ...)
{
    char *dir = strdup("/tmp/mh-plugins-XXXXXX");
    if (!dir || !mkdtemp(dir))
        setup_failed("cannot create", "/tmp/mh-plugins-XXXXXX");
    va_list ap;
    va_start(ap, so_path);
    for (const char *from = so_path; from; from = va_arg(ap, const char *)) {
        const char *base = strrchr(from, '/');
        char to[512];
        snprintf(to, sizeof to, "%s/%s", dir, base ? base + 1 : from);
        copy_file(from, to);
    }
    va_end(ap);
    return dir;
}

void mh_rm_dir(char *dir)
{
    if (!dir)
        return;
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        unlink(path);
    }
    if (d)
        closedir(d);
    rmdir(dir);
    free(dir);
}

const char *mh_hostile(const char *name)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/hostile/.libs/%s.so", TEST_BUILDDIR, name);
    return path;
}

static mh_proc *spawn_argv(char **argv)
{
    mh_proc *p = calloc(1, sizeof *p);
    ck_assert(p != NULL);
    int in[2], out[2];
    ck_assert(pipe2(in, O_CLOEXEC) == 0);
    ck_assert(pipe2(out, O_CLOEXEC) == 0);
    snprintf(p->errpath, sizeof p->errpath, "/tmp/mh-stderr-XXXXXX");
    int errfd = mkostemp(p->errpath, O_CLOEXEC);
    ck_assert(errfd >= 0);

    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&fa, errfd, STDERR_FILENO);
    posix_spawnattr_init(&attr);
    /* Default dispositions and no blocked signals, whatever the test runner
     * set up (we ignore SIGPIPE; Check may block signals). */
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    /* spawnp: a wrapper (TH_TEST_WRAPPER) is named without its path. */
    int rc = posix_spawnp(&p->pid, argv[0], &fa, &attr, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    ck_assert_msg(rc == 0, "cannot spawn %s: %s", argv[0], strerror(rc));
    close(in[0]);
    close(out[1]);
    close(errfd);
    p->to_child = in[1];
    p->from_child = out[0];
    return p;
}

/*
** TH_TEST_WRAPPER's words (split at spaces, no quoting) go before the host's
** command line: `make check-valgrind` runs every host under valgrind so.
** Split once; the words stay allocated for the program's life.
*/
static char *wrap_argv[MAX_ARGS / 2];
static int wrap_argc = -1;

static int wrapper_words(char **argv)
{
    if (wrap_argc < 0) {
        wrap_argc = 0;
        const char *env = getenv("TH_TEST_WRAPPER");
        char *words = env ? strdup(env) : NULL;
        char *save = NULL;
        for (char *w = words ? strtok_r(words, " ", &save) : NULL; w && wrap_argc < MAX_ARGS / 2;
             w = strtok_r(NULL, " ", &save))
            wrap_argv[wrap_argc++] = w;
    }
    memcpy(argv, wrap_argv, (size_t)wrap_argc * sizeof *argv);
    return wrap_argc;
}

static mh_proc *spawn_va(bool std_dirs, const char *arg, va_list ap)
{
    char *argv[MAX_ARGS];
    int n = wrapper_words(argv);
    argv[n++] = (char *)TOP_BUILDDIR "/src/toolhost";
#ifdef MH_ISOLATION
    /* A second build of a test program runs the same tests in this
     * isolation mode (tests/worker.mk). */
    argv[n++] = (char *)"--isolation=" MH_ISOLATION;
#endif
    if (std_dirs) {
        argv[n++] = (char *)"-d";
        argv[n++] = (char *)mh_plugin_dir();
        argv[n++] = (char *)"-d";
        argv[n++] = (char *)mh_echo_dir();
        static char grant[128];
        snprintf(grant, sizeof grant, "--grant=slow.allow-write=%s", mh_marks_dir());
        argv[n++] = grant;
    }
    for (; arg && n < MAX_ARGS - 1; arg = va_arg(ap, const char *))
        argv[n++] = (char *)arg;
    argv[n] = NULL;
    return spawn_argv(argv);
}

mh_proc *mh_spawn(const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    mh_proc *p = spawn_va(false, arg, ap);
    va_end(ap);
    return p;
}

mh_proc *mh_start(const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    mh_proc *p = spawn_va(true, arg, ap);
    va_end(ap);
    return p;
}

void mh_send_raw(mh_proc *p, const void *data, size_t len)
{
    const char *d = data;
    ck_assert_msg(p->to_child >= 0, "stdin already closed");
    while (len > 0) {
        ssize_t n = write(p->to_child, d, len);
        if (n < 0 && errno == EINTR)
            continue;
        ck_assert_msg(n > 0, "writing to toolhost: %s", strerror(errno));
        d += n;
        len -= (size_t)n;
    }
}

/* Format one line, add the newline, send it whole. */
static void vsend(mh_proc *p, const char *fmt, va_list ap)
{
    char *line = NULL;
    int n = vasprintf(&line, fmt, ap);
    ck_assert_msg(n >= 0 && line, "out of memory formatting a line");
    char *nl = realloc(line, (size_t)n + 1);
    ck_assert(nl != NULL);
    nl[n] = '\n';
    mh_send_raw(p, nl, (size_t)n + 1);
    free(nl);
}

void mh_send(mh_proc *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsend(p, fmt, ap);
    va_end(ap);
}

void mh_close_stdin(mh_proc *p)
{
    if (p->to_child >= 0)
        close(p->to_child);
    p->to_child = -1;
}

bool mh_eof(const mh_proc *p)
{
    return p->eof;
}

char *mh_read_line(mh_proc *p, int timeout_ms)
{
    long long deadline = mh_now_ms() + timeout_ms;
    for (;;) {
        char *nl = p->len ? memchr(p->buf, '\n', p->len) : NULL;
        if (nl) {
            size_t n = (size_t)(nl - p->buf);
            char *line = malloc(n + 1);
            ck_assert(line != NULL);
            memcpy(line, p->buf, n);
            line[n] = '\0';
            memmove(p->buf, nl + 1, p->len - n - 1);
            p->len -= n + 1;
            return line;
        }
        if (p->eof)
            return NULL;
        long long left = deadline - mh_now_ms();
        if (left <= 0)
            return NULL;
        struct pollfd pfd = {.fd = p->from_child, .events = POLLIN};
        int r = poll(&pfd, 1, (int)left);
        if (r < 0 && errno == EINTR)
            continue;
        ck_assert(r >= 0);
        if (r == 0)
            return NULL;
        if (p->cap - p->len < 65536) {
            p->cap = p->cap ? p->cap * 2 : 131072;
            p->buf = realloc(p->buf, p->cap);
            ck_assert(p->buf != NULL);
        }
        ssize_t n = read(p->from_child, p->buf + p->len, p->cap - p->len);
        if (n < 0 && errno == EINTR)
            continue;
        ck_assert(n >= 0);
        if (n == 0) {
            /* A last line without its newline is still a protocol error. */
            ck_assert_msg(p->len == 0, "stdout ended inside a line: %.*s", (int)p->len, p->buf);
            p->eof = true;
        }
        p->len += (size_t)n;
    }
}

json_object *mh_parse(const char *text)
{
    json_tokener *tok = json_tokener_new();
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    size_t len = strlen(text);
    /* Include the NUL so a bare number at the end is known to be complete. */
    json_object *o = json_tokener_parse_ex(tok, text, (int)len + 1);
    bool ok = json_tokener_get_error(tok) == json_tokener_success && json_tokener_get_parse_end(tok) >= len;
    json_tokener_free(tok);
    if (!ok) {
        json_object_put(o);
        return NULL;
    }
    return o;
}

/* What a server may put on stdout: a response or a notification. */
static bool is_jsonrpc(json_object *o)
{
    json_object *v;
    if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, "jsonrpc", &v) ||
        !json_object_is_type(v, json_type_string) || strcmp(json_object_get_string(v), "2.0") != 0)
        return false;
    bool has_id = json_object_object_get_ex(o, "id", NULL);
    bool has_result = json_object_object_get_ex(o, "result", NULL);
    bool has_error = json_object_object_get_ex(o, "error", NULL);
    bool has_method = json_object_object_get_ex(o, "method", &v);
    if (has_method)
        return json_object_is_type(v, json_type_string) && !has_id && !has_result && !has_error;
    return has_id && has_result != has_error;
}

json_object *mh_read(mh_proc *p, int timeout_ms)
{
    char *line = mh_read_line(p, timeout_ms);
    if (!line)
        return NULL;
    json_object *o = mh_parse(line);
    ck_assert_msg(o && is_jsonrpc(o), "stdout line is not a JSON-RPC message: %s", line);
    free(line);
    return o;
}

json_object *mh_next(mh_proc *p)
{
    json_object *o = mh_read(p, MH_TIMEOUT_MS);
    ck_assert_msg(o != NULL, "no message from toolhost within %d ms (%s)", MH_TIMEOUT_MS,
                  p->eof ? "stdout closed" : "timeout");
    return o;
}

json_object *mh_rpc(mh_proc *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsend(p, fmt, ap);
    va_end(ap);
    return mh_next(p);
}

json_object *mh_await(mh_proc *p, const char *id_json, json_object *notes)
{
    for (;;) {
        json_object *o = mh_next(p);
        if (mh_has(o, "method")) {
            if (notes)
                json_object_array_add(notes, o);
            else
                json_object_put(o);
            continue;
        }
        ck_assert_msg(strcmp(mh_json(mh_at(o, "id")), id_json) == 0, "waiting for the response to id %s, got %s",
                      id_json, mh_json(o));
        return o;
    }
}

void mh_ping_is_next(mh_proc *p, int id)
{
    char want[32];
    snprintf(want, sizeof want, "%d", id);
    json_object *o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"ping\"}", id);
    MH_ASSERT_ID(o, want);
    MH_ASSERT_RESULT(o);
    json_object_put(o);
}

void mh_initialize(mh_proc *p, const char *version)
{
    json_object *o = mh_rpc(p,
                            "{\"jsonrpc\":\"2.0\",\"id\":\"init\",\"method\":\"initialize\",\"params\":{"
                            "\"protocolVersion\":\"%s\",\"capabilities\":{},"
                            "\"clientInfo\":{\"name\":\"mh\",\"version\":\"1\"}}}",
                            version);
    MH_ASSERT_ID(o, "\"init\"");
    MH_ASSERT_RESULT(o);
    json_object_put(o);
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
}

bool mh_wait_eof(mh_proc *p, int timeout_ms)
{
    char *line = mh_read_line(p, timeout_ms);
    if (line) {
        free(line);
        return false;
    }
    return p->eof;
}

int mh_wait(mh_proc *p, int timeout_ms)
{
    long long deadline = mh_now_ms() + timeout_ms;
    while (!p->reaped) {
        pid_t r = waitpid(p->pid, &p->status, WNOHANG);
        if (r == p->pid) {
            p->reaped = true;
            break;
        }
        ck_assert_msg(r == 0 || errno == EINTR, "waitpid: %s", strerror(errno));
        if (mh_now_ms() >= deadline)
            return -1;
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
    if (WIFEXITED(p->status))
        return WEXITSTATUS(p->status);
    return 1000 + WTERMSIG(p->status);
}

long mh_pid(const mh_proc *p)
{
    return (long)p->pid;
}

long mh_status_kib(long pid, const char *field)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%ld/status", pid);
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    long kib = -1;
    size_t flen = strlen(field);
    while (fgets(line, sizeof line, f))
        if (strncmp(line, field, flen) == 0 && line[flen] == ':') {
            kib = strtol(line + flen + 1, NULL, 10);
            break;
        }
    fclose(f);
    ck_assert_msg(kib > 0, "no %s in %s", field, path);
    return kib;
}

int mh_stdin_fd(const mh_proc *p)
{
    return p->to_child;
}

int mh_stdout_fd(const mh_proc *p)
{
    return p->from_child;
}

void mh_kill(mh_proc *p, int sig)
{
    if (!p->reaped)
        kill(p->pid, sig);
}

char *mh_stderr(const mh_proc *p)
{
    FILE *f = fopen(p->errpath, "rb");
    ck_assert(f != NULL);
    size_t cap = 4096, len = 0, n;
    char *s = malloc(cap);
    ck_assert(s != NULL);
    while ((n = fread(s + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (cap - len < 2) {
            cap *= 2;
            s = realloc(s, cap);
            ck_assert(s != NULL);
        }
    }
    fclose(f);
    s[len] = '\0';
    return s;
}

bool mh_stderr_wait(const mh_proc *p, const char *needle, int timeout_ms)
{
    long long deadline = mh_now_ms() + timeout_ms;
    for (;;) {
        char *s = mh_stderr(p);
        bool found = strstr(s, needle) != NULL;
        free(s);
        if (found)
            return true;
        if (mh_now_ms() >= deadline)
            return false;
        struct timespec ts = {0, 20 * 1000000L};
        nanosleep(&ts, NULL);
    }
}

void mh_free(mh_proc *p)
{
    if (!p)
        return;
    mh_close_stdin(p);
    if (!p->reaped) {
        /* A well-behaved host exits on EOF; give it a moment, then kill. */
        if (mh_wait(p, 5000) < 0) {
            kill(p->pid, SIGKILL);
            waitpid(p->pid, &p->status, 0);
            p->reaped = true;
        }
    }
    close(p->from_child);
    unlink(p->errpath);
    free(p->buf);
    free(p);
}

/* ---- JSON helpers ------------------------------------------------------ */

/* Step from O along PATH; *FOUND says whether the last member exists. */
static json_object *walk(json_object *o, const char *path, bool *found)
{
    char seg[256];
    *found = true;
    while (*path) {
        while (*path == ' ')
            path++;
        size_t n = strcspn(path, " ");
        if (n == 0)
            break;
        if (n >= sizeof seg)
            n = sizeof seg - 1;
        memcpy(seg, path, n);
        seg[n] = '\0';
        path += n;
        if (json_object_is_type(o, json_type_object)) {
            if (!json_object_object_get_ex(o, seg, &o)) {
                *found = false;
                return NULL;
            }
        } else if (json_object_is_type(o, json_type_array) && seg[0] >= '0' && seg[0] <= '9') {
            size_t i = strtoul(seg, NULL, 10);
            if (i >= json_object_array_length(o)) {
                *found = false;
                return NULL;
            }
            o = json_object_array_get_idx(o, i);
        } else {
            *found = false;
            return NULL;
        }
    }
    return o;
}

bool mh_has(json_object *o, const char *path)
{
    bool found;
    walk(o, path, &found);
    return found;
}

json_object *mh_at(json_object *o, const char *path)
{
    bool found;
    return walk(o, path, &found);
}

const char *mh_str(json_object *o, const char *path)
{
    json_object *v = mh_at(o, path);
    return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

const char *mh_json(json_object *o)
{
    if (!o)
        return "null";
    return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
}

size_t mh_len(json_object *o, const char *path)
{
    json_object *v = mh_at(o, path);
    return json_object_is_type(v, json_type_array) ? json_object_array_length(v) : 0;
}

void mh_finish(mh_proc *p)
{
    mh_close_stdin(p);
    ck_assert_msg(mh_wait_eof(p, MH_TIMEOUT_MS), "stdout did not close after EOF on stdin");
    int status = mh_wait(p, MH_TIMEOUT_MS);
    if (status != 0) {
        /* Its stderr says why (a sanitizer's report, say): CI keeps only this message. */
        char *err = mh_stderr(p);
        size_t len = strlen(err), tail = 3000;
        ck_assert_msg(status == 0, "toolhost exited with %d after EOF; the end of its stderr:\n%s", status,
                      err + (len > tail ? len - tail : 0));
        free(err);
    }
    mh_free(p);
}
