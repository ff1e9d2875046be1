/* SPDX-License-Identifier: MIT */
/*
** mcp_harness.h: drives a real src/toolhost over pipes for the MCP
** integration tests: spawn it, send lines, read lines with a timeout (every
** stdout line must be a JSON-RPC message), capture stderr to a file, wait
** for exit with a timeout; plus JSON path helpers for assertions.
*/
#ifndef MCP_HARNESS_H
#define MCP_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <check.h>
#include <json-c/json.h>

/* Generous: a loaded 2-core machine must never make a test flake. Times
** CK_TIMEOUT_MULTIPLIER when set, as Check scales its test time limits
** (`make check-valgrind` sets it: everything runs 20-50x slower). */
#define MH_TIMEOUT_MS mh_timeout_ms()
int mh_timeout_ms(void);
/* CK_TIMEOUT_MULTIPLIER (1 to 100), for a test's own deadlines. */
int mh_time_scale(void);
/* For Check's tcase_set_timeout. */
#define MH_TCASE_TIMEOUT 120

/* The _meta every modern (2026-07-28) request carries, as JSON members. */
#define MH_MODERN_META_FIELDS                                                                                          \
    "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","                                                      \
    "\"io.modelcontextprotocol/clientCapabilities\":{}"
#define MH_MODERN_META "\"_meta\":{" MH_MODERN_META_FIELDS "}"
#define MH_K_SERVERINFO "io.modelcontextprotocol/serverInfo"

/* The tools the test plugin directories hold, in the order they are served. */
extern const char *const mh_tool_order[];
extern const size_t mh_tool_count;

typedef struct mh_proc mh_proc;

/* Once per test program, before the runner: a private plugin directory
** holding a copy of plugins/.libs/echo.so. mh_global_teardown removes it. */
void mh_global_setup(void);
void mh_global_teardown(void);

/* The test plugins (tests/mcpplugins/.libs) and the private echo directory. */
const char *mh_plugin_dir(void);
const char *mh_echo_dir(void);

/*
** A new private plugin directory (under /tmp) holding copies of the given
** shared objects (NULL-terminated list of paths), so a test loads exactly
** the plugins it names: the hostile ones in tests/hostile/ must never meet
** each other. Returns a malloc'd path; mh_rm_dir removes it and frees it.
*/
char *mh_private_dir(const char *so_path, ...);
void mh_rm_dir(char *dir);
/*
** A private directory (under /tmp) for the files the test plugins' tools
** write as marks: each worker runs in a sandbox that lets it write nowhere
** unless granted, and mh_start grants the slow tool's worker this one.
** Created at the first use; mh_global_teardown removes it.
*/
const char *mh_marks_dir(void);

/* TEST_BUILDDIR "/hostile/.libs/NAME.so" in a static buffer (one at a time). */
const char *mh_hostile(const char *name);

/* Start toolhost with exactly the given arguments (NULL-terminated). */
mh_proc *mh_spawn(const char *arg, ...);
/* Start toolhost serving the test plugins and echo, plus ARG... options. */
mh_proc *mh_start(const char *arg, ...);

/* Send one line (formatted; the newline is added), or raw bytes. */
void mh_send(mh_proc *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void mh_send_raw(mh_proc *p, const void *data, size_t len);
/* Close the server's stdin (EOF). */
void mh_close_stdin(mh_proc *p);

/*
** Read the next stdout line (malloc'd, without the newline) within
** TIMEOUT_MS; NULL on timeout or EOF (mh_eof tells which).
*/
char *mh_read_line(mh_proc *p, int timeout_ms);
bool mh_eof(const mh_proc *p);

/*
** The next message, parsed; the test fails if the line is not a complete
** JSON-RPC 2.0 response or notification. NULL on timeout or EOF.
*/
json_object *mh_read(mh_proc *p, int timeout_ms);
/* Like mh_read with MH_TIMEOUT_MS, failing the test on timeout or EOF. */
json_object *mh_next(mh_proc *p);
/* Send a line and return the next message (which the test then checks). */
json_object *mh_rpc(mh_proc *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*
** Read until the response whose id serialises to ID_JSON (e.g. "7" or
** "\"a\""); notifications on the way are appended to NOTES (may be NULL).
** A response with another id fails the test.
*/
json_object *mh_await(mh_proc *p, const char *id_json, json_object *notes);
/* Send a ping with ID and check the very next message answers it. */
void mh_ping_is_next(mh_proc *p, int id);
/* Legacy handshake: initialize with VERSION, check the echo, send initialized. */
void mh_initialize(mh_proc *p, const char *version);

/* True when stdout reaches EOF within TIMEOUT_MS without another line. */
bool mh_wait_eof(mh_proc *p, int timeout_ms);

/*
** Wait up to TIMEOUT_MS for the process to end: its exit status, 1000 +
** signal number if a signal ended it, -1 on timeout.
*/
int mh_wait(mh_proc *p, int timeout_ms);
void mh_kill(mh_proc *p, int sig);
/* The toolhost process id (to read /proc/PID/status). */
long mh_pid(const mh_proc *p);
/* FIELD of /proc/PID/status (VmRSS, VmHWM, Threads) as a number (kB for
 * sizes); fails the test when the file or the field is missing. */
long mh_status_kib(long pid, const char *field);
/* The pipe to its stdin, for a test that writes without blocking (poll it;
 * it stays the harness's: do not close it, use mh_close_stdin). */
int mh_stdin_fd(const mh_proc *p);
/* The test's end of the pipe the host writes its protocol output to. */
int mh_stdout_fd(const mh_proc *p);

/* The captured stderr so far (malloc'd, NUL-terminated). */
char *mh_stderr(const mh_proc *p);
/* Wait until stderr contains NEEDLE; false after TIMEOUT_MS. */
bool mh_stderr_wait(const mh_proc *p, const char *needle, int timeout_ms);

/* Kill if still running, reap, release everything. */
void mh_free(mh_proc *p);

/* End a session as a client does: close stdin, expect stdout to close and
 * the process to exit 0, then free it. */
void mh_finish(mh_proc *p);

long long mh_now_ms(void);

/* ---- JSON helpers --------------------------------------------------------
** PATH is a space-separated list of object keys and array indices:
** "result content 0 text". A key may contain '/' and '.'.
*/
bool mh_has(json_object *o, const char *path);  /* present, even if null */
json_object *mh_at(json_object *o, const char *path);
const char *mh_str(json_object *o, const char *path); /* NULL unless a string */
const char *mh_json(json_object *o);                  /* compact text, owned by O */
json_object *mh_parse(const char *text);              /* strict; NULL if invalid */
size_t mh_len(json_object *o, const char *path);      /* array length, 0 if none */

#define MH_ASSERT_STR(o, path, want)                                                                                   \
    do {                                                                                                               \
        const char *got_ = mh_str((o), (path));                                                                        \
        ck_assert_msg(got_ && strcmp(got_, (want)) == 0, "%s: want \"%s\", got %s%s%s in %s", (path), (want),          \
                      got_ ? "\"" : "", got_ ? got_ : "(absent or not a string)", got_ ? "\"" : "", mh_json(o));       \
    } while (0)

#define MH_ASSERT_INT(o, path, want)                                                                                   \
    do {                                                                                                               \
        json_object *v_ = mh_at((o), (path));                                                                          \
        ck_assert_msg(json_object_is_type(v_, json_type_int) && json_object_get_int64(v_) == (int64_t)(want),          \
                      "%s: want %lld in %s", (path), (long long)(want), mh_json(o));                                   \
    } while (0)

#define MH_ASSERT_TRUE(o, path)                                                                                        \
    ck_assert_msg(json_object_is_type(mh_at((o), (path)), json_type_boolean) &&                                       \
                      json_object_get_boolean(mh_at((o), (path))),                                                     \
                  "%s: want true in %s", (path), mh_json(o))

#define MH_ASSERT_HAS(o, path) ck_assert_msg(mh_has((o), (path)), "%s: missing in %s", (path), mh_json(o))
#define MH_ASSERT_ABSENT(o, path) ck_assert_msg(!mh_has((o), (path)), "%s: must be absent in %s", (path), mh_json(o))

/* The message's id, as JSON text ("null" for null). */
#define MH_ASSERT_ID(o, want_json)                                                                                     \
    ck_assert_msg(mh_has((o), "id") && strcmp(mh_json(mh_at((o), "id")), (want_json)) == 0, "id: want %s in %s",     \
                  (want_json), mh_json(o))

/* A JSON-RPC error response with CODE (and no result). */
#define MH_ASSERT_ERROR(o, code)                                                                                       \
    do {                                                                                                               \
        MH_ASSERT_INT((o), "error code", (code));                                                                      \
        MH_ASSERT_ABSENT((o), "result");                                                                               \
        ck_assert_msg(mh_str((o), "error message") != NULL, "error message missing in %s", mh_json(o));                \
    } while (0)

/* A successful JSON-RPC response (result object, no error). */
#define MH_ASSERT_RESULT(o)                                                                                            \
    ck_assert_msg(json_object_is_type(mh_at((o), "result"), json_type_object) && !mh_has((o), "error"),               \
                  "want a result in %s", mh_json(o))

/* Two JSON values equal (order of object members ignored). */
#define MH_ASSERT_JSON_EQ(got, want_text)                                                                              \
    do {                                                                                                               \
        json_object *w_ = mh_parse(want_text);                                                                         \
        ck_assert_msg(w_ != NULL, "bad expected JSON: %s", (want_text));                                               \
        ck_assert_msg(json_object_equal((got), w_), "want %s, got %s", mh_json(w_),                                    \
                      (got) ? mh_json(got) : "(absent)");                                                              \
        json_object_put(w_);                                                                                           \
    } while (0)

#endif
