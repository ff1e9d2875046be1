/* SPDX-License-Identifier: MIT */
/*
** toolhost/testing.h: the test kit for plugin authors (libtoolhost-testing,
** pkg-config module toolhost-testing). A test program loads plugins and
** calls their tools through the host's own code, in process or through real
** workers, and checks the results. No test framework is assumed: functions
** return codes and fill in messages; the th_test_assert_* macros print and
** abort() for tests written with plain assert. Described in full in
** toolhost-testing(3).
**
**     th_test_host *h = th_test_host_new((const char *[]){"--isolation=none", NULL});
**     th_test_host_load(h, "./.libs/add.so");
**     th_test_result r;
**     th_test_call(h, "add", "{\"a\":1,\"b\":2}", NULL, &r);
**     th_test_assert_json(&r, "structuredContent.sum", "3");
**     th_test_result_clear(&r);
**     th_test_host_free(h);
**
** Threads: one th_test_host is used by one thread at a time. The kit sets
** the host's log sink while it loads: do not mix it with another host in
** one process at the same time.
*/
#ifndef TOOLHOST_TESTING_H
#define TOOLHOST_TESTING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <json-c/json.h>

#include <toolhost/plugin.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
** A host inside the test program: the plugins given to it, the toolhost
** options it was made with, and (once started) the registry they built.
*/
typedef struct th_test_host th_test_host;

/*
** A new host with ARGS, a NULL-terminated list of toolhost command-line
** options (NULL: none), read by the host's own option table, so every
** option means what it means to `toolhost`: "--isolation=none" or
** "--isolation=process" (the default, as for toolhost), "--set=NAME.KEY=V",
** "--set-secret=...", "--call-timeout=S", "--sandbox=off"... Options about
** transports are read but unused. The strings are copied.
**
** Workers and the out-of-process scan run the toolhost executable: the
** environment variable TOOLHOST_TEST_EXE names it, else the one installed
** with this library (pkg-config --variable=toolhost toolhost-testing).
**
** NULL when out of memory or ARGS are refused; the reason is then printed on
** stderr, as toolhost would print it.
*/
th_test_host *th_test_host_new(const char *const *args);

/* Stop the workers, unload the plugins, free H. NULL is a no-op. */
void th_test_host_free(th_test_host *h);

/*
** Add the plugin file PATH (NAME.so, built as for toolhost) to H. It is
** copied into a private directory, where the host's own rules apply to it
** alone. Plugins are loaded together at the first th_test_host_start or
** call: add them all first. 0, or -1 when PATH cannot be read or H has
** started already (th_test_host_error says why).
*/
int th_test_host_load(th_test_host *h, const char *path);

/*
** Add the plugin NAME whose register function ENTRY (TH_REGISTER(NAME),
** register_NAME_tool) is linked into the test program, no NAME.so needed.
** It is registered after the plugin files, by the host's own loader under
** the registry rules: a plugin the host would refuse is refused the same
** way, with the same message, naming it "(linked)/NAME.so". 0, or -1 (see
** th_test_host_error) when H has started already, NAME cannot be part of a
** C identifier, or H runs plugins in workers (--isolation=process, the
** default): a worker is a fresh toolhost process that opens plugin files,
** and the test program's code is not in it. Test such a plugin in workers
** from its NAME.so (th_test_host_load), or give --isolation=none.
*/
int th_test_host_register(th_test_host *h, const char *name, th_register_fn entry);

/*
** Build the registry from the plugins added, exactly as a host starts:
** scanned out of process, then registered in the host or behind worker
** proxies, under the registry rules. 0 when every plugin was accepted; -1
** when one was refused, or the scan failed: th_test_host_error holds what
** the host logged, the same lines with the same messages.
** Idempotent: a second call returns the first one's answer.
*/
int th_test_host_start(th_test_host *h);

/*
** The warnings and errors the host logged for H so far, one per line
** ("plugin /tmp/.../bad.so refused: ..."), or "" when none. Owned by H,
** valid until its next call.
*/
const char *th_test_host_error(const th_test_host *h);

/* The number of tools H serves (starting it if needed); 0 on failure. */
size_t th_test_host_tool_count(th_test_host *h);

/*
** A scripted answer to a request a handler sends its client through
** th_call_ask, th_call_elicit, th_call_sample or roots/list: for METHOD
** ("elicitation/create", "sampling/createMessage", "roots/list"), the
** JSON-RPC result RESULT_JSON, or when ERROR_MESSAGE is not NULL an error
** with that message instead. Each answer is used once, in order of the
** list; a request nobody scripted is answered with an error.
*/
typedef struct th_test_answer {
    const char *method;
    const char *result_json;
    const char *error_message;
} th_test_answer;

/* The conditions of one call. Zero-initialise; every field is optional. */
typedef struct th_test_call_opts {
    long long deadline_ms;       /* the call's deadline (--call-timeout for
                                  * this call); 0: H's --call-timeout */
    long long cancel_after_ms;   /* the client cancels the call this long
                                  * after sending it; 0: never */
    bool cancel_on_progress;     /* ... or when the handler first reports
                                  * progress */
    const th_test_answer *answers; /* scripted answers, NANSWERS of them */
    size_t nanswers;
    long long wait_ms;           /* the longest the kit waits for the answer
                                  * (a hung handler); 0: 60000 */
    const char *protocol_version; /* the MCP revision the client speaks:
                                  * NULL: "2025-11-25", a session opened
                                  * with initialize; "2026-07-28": no
                                  * handshake, the version, capabilities
                                  * and log level in each request's _meta
                                  * (skills/list needs it). There a
                                  * handler's question to the client is an
                                  * InputRequiredResult, returned as it
                                  * came: ANSWERS are not used */
} th_test_call_opts;

/* How a request ended. */
typedef enum th_test_status {
    TH_TEST_RESULT = 0,   /* a result came (a tool's may have isError) */
    TH_TEST_REFUSED = 1,  /* a JSON-RPC error: unknown tool, arguments
                           * refused by the schema, ...: see error */
    TH_TEST_CANCELLED = 2, /* the kit cancelled it and no result came */
    TH_TEST_NO_ANSWER = 3, /* nothing came within wait_ms */
    TH_TEST_FAILED = 4     /* the kit could not run it (see error_text) */
} th_test_status;

/*
** What one request gave. Every json_object is owned by the result
** (json_object_get to keep one); th_test_result_clear releases them all.
*/
typedef struct th_test_result {
    th_test_status status;
    json_object *result;    /* the JSON-RPC result (content,
                             * structuredContent, isError ...), or NULL */
    char *result_json;      /* the same as compact text, or NULL */
    bool is_error;          /* result.isError is true */
    json_object *error;     /* the JSON-RPC error object, or NULL */
    char *error_text;       /* error.message, or the kit's own failure */
    json_object *logs;      /* array: the params of every
                             * notifications/message the handler sent
                             * ({"level","logger","data"}), in order */
    json_object *progress;  /* array: the params of every
                             * notifications/progress ({"progress",
                             * "total","message"}), in order */
    json_object *asked;     /* array: every request sent to the client
                             * ({"method","params"}), in order */
    long long duration_ms;  /* from sending the request to its answer */
} th_test_result;

/*
** Call the tool TOOL with the arguments ARGS_JSON (a JSON object as text;
** NULL: {}) through a client session of H, as a client's tools/call
** reaches the host: the same lookup, the same schema validation, the same
** dispatch to a thread or a worker, the same result rules. OPTS may be
** NULL. OUT is always set (clear it with th_test_result_clear). Returns 0
** when a result came (even one with isError), -1 otherwise (OUT->status
** says why).
*/
int th_test_call(th_test_host *h, const char *tool, const char *args_json, const th_test_call_opts *opts,
                 th_test_result *out);

/*
** Any other request through the same session: METHOD ("resources/read",
** "prompts/get", "completion/complete", "tools/list", ...) with PARAMS_JSON
** (an object as text; NULL: {}). Same returns as th_test_call.
*/
int th_test_request(th_test_host *h, const char *method, const char *params_json, const th_test_call_opts *opts,
                    th_test_result *out);

/* Release what R holds and zero it. */
void th_test_result_clear(th_test_result *r);

/*
** The text of R's content block I when it is a text block, else NULL.
** Owned by R.
*/
const char *th_test_text(const th_test_result *r, size_t i);

/*
** The value at PATH in R's result: dot-separated members and array
** indexes, "structuredContent.items.0.name", "content.0.text". NULL when
** absent. Owned by R.
*/
json_object *th_test_at(const th_test_result *r, const char *path);

/*
** Compare WANT with GOT: true when equal (object members in any order,
** 1 and 1.0 equal). Otherwise MSG (SIZE bytes, may be NULL) gets the first
** difference by path under PREFIX (may be NULL or ""), e.g.
** "structuredContent.total: expected 3, got 2" or
** "content.1: expected {...}, got nothing".
*/
bool th_test_json_diff(const char *prefix, json_object *want, json_object *got, char *msg, size_t size);

/*
** The value at PATH of R's result (th_test_at; "" for the whole result)
** equals WANT_JSON: th_test_json_diff, with MSG as there. An unparsable
** WANT_JSON is a difference too, saying so.
*/
bool th_test_expect(const th_test_result *r, const char *path, const char *want_json, char *msg, size_t size);

/* ---- Plain-assert style: print the difference and abort() ---------- */

#define th_test_assert_json(r, path, want_json)                                                                    \
    do {                                                                                                           \
        char th_test_msg_[1024];                                                                                   \
        if (!th_test_expect((r), (path), (want_json), th_test_msg_, sizeof th_test_msg_)) {                        \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, th_test_msg_);                                     \
            abort();                                                                                               \
        }                                                                                                          \
    } while (0)

#define th_test_assert_ok(r)                                                                                       \
    do {                                                                                                           \
        if ((r)->status != TH_TEST_RESULT || (r)->is_error) {                                                      \
            fprintf(stderr, "%s:%d: expected a result without isError, got %s\n", __FILE__, __LINE__,             \
                    (r)->result_json ? (r)->result_json : (r)->error_text ? (r)->error_text : "nothing");         \
            abort();                                                                                               \
        }                                                                                                          \
    } while (0)

#ifdef __cplusplus
}
#endif

#endif
