/* SPDX-License-Identifier: MIT */
/*
** test_qualified.c: toolboxes and qualified names through the real
** src/toolhost, in both isolation modes: tools/list (_meta, description
** prefix), tools/call by qualified name (the handler, in a worker or not,
** sees the name it registered), the rules' errors as -32602, the
** 64-character refusal, duplicates across toolboxes, the default toolbox,
** `toolhost call`, `toolhost inspect`, and HTTP with Mcp-Name.
*/
#include "config.h"

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"
#include "mcp_harness.h"

static const char *const isolation[] = {"--isolation=process", "--isolation=none"};

#define QP(name) TEST_BUILDDIR "/qualplugins/.libs/" name ".so"
#define TOOLHOST TOP_BUILDDIR "/src/toolhost"

#define FORMAT_ERR(name)                                                                                               \
    "Invalid tool name format '" name "'. Expected format: {toolbox}__{server}__{tool} "                              \
    "(note: double underscores between all components)"

/* The dev and prod toolboxes of the examples in doc/registry-rules.md, 7. */
typedef struct boxes {
    char *dev, *prod;
    char dev_arg[600], prod_arg[600];
} boxes;

static void boxes_make(boxes *b)
{
    b->dev = mh_private_dir(QP("filesystem"), QP("server"), NULL);
    b->prod = mh_private_dir(QP("memory"), QP("filesystem"), NULL);
    snprintf(b->dev_arg, sizeof b->dev_arg, "--plugin-dir=dev=%s", b->dev);
    snprintf(b->prod_arg, sizeof b->prod_arg, "--plugin-dir=prod=%s", b->prod);
}

static void boxes_free(boxes *b)
{
    mh_rm_dir(b->dev);
    mh_rm_dir(b->prod);
}

/* The entry of tools/list result LIST named NAME, or NULL. */
static json_object *listed(json_object *list, const char *name)
{
    json_object *tools = mh_at(list, "result tools");
    for (size_t i = 0; i < json_object_array_length(tools); i++) {
        json_object *t = json_object_array_get_idx(tools, i);
        const char *n = mh_str(t, "name");
        if (n && strcmp(n, name) == 0)
            return t;
    }
    return NULL;
}

static json_object *call(mh_proc *p, int id, const char *name)
{
    return mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\"}}", id,
                  name);
}

static void expect_text(mh_proc *p, int id, const char *name, const char *want)
{
    json_object *r = call(p, id, name);
    MH_ASSERT_RESULT(r);
    MH_ASSERT_STR(r, "result content 0 text", want);
    ck_assert(!mh_has(r, "result isError"));
    json_object_put(r);
}

static void expect_error(mh_proc *p, int id, const char *name, const char *want)
{
    json_object *r = call(p, id, name);
    MH_ASSERT_ERROR(r, -32602);
    MH_ASSERT_STR(r, "error message", want);
    json_object_put(r);
}

START_TEST(test_list_and_call_qualified)
{
    boxes b;
    boxes_make(&b);
    mh_proc *p = mh_spawn(isolation[_i], "--no-registry-cache", "--qualified-names", b.dev_arg, b.prod_arg,
                          NULL);
    mh_initialize(p, "2025-11-25");
    json_object *list = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
    ck_assert_int_eq((int)mh_len(list, "result tools"), 8);
    static const char *const names[] = {
        "dev__filesystem__read_file",  "dev__filesystem__filesystem",     "dev__server__my__special__tool",
        "dev__server__server",         "prod__memory__store_value_async", "prod__memory__memory",
        "prod__filesystem__read_file", "prod__filesystem__filesystem",
    };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        ck_assert_msg(listed(list, names[i]), "%s not listed in %s", names[i], mh_json(list));
    json_object *t = listed(list, "dev__server__my__special__tool");
    MH_ASSERT_JSON_EQ(mh_at(t, "_meta"),
                      "{\"source_server\":\"server\",\"toolbox_name\":\"dev\",\"original_name\":\"my__special__tool\"}");
    MH_ASSERT_STR(t, "description", "[dev/server] A second tool of the plugin, named as in the rules' examples.");
    t = listed(list, "prod__memory__store_value_async");
    MH_ASSERT_JSON_EQ(mh_at(t, "_meta"), "{\"source_server\":\"memory\",\"toolbox_name\":\"prod\","
                                         "\"original_name\":\"store_value_async\"}");
    MH_ASSERT_STR(t, "description", "[prod/memory] A second tool of the plugin, named as in the rules' examples.");
    json_object_put(list);

    /* The handler is given the name it registered, in a worker or not. */
    expect_text(p, 3, "dev__server__my__special__tool", "my__special__tool answered by server.so");
    expect_text(p, 4, "prod__memory__store_value_async", "store_value_async answered by memory.so");
    expect_text(p, 5, "dev__filesystem__read_file", "read_file answered by filesystem.so");
    expect_text(p, 6, "prod__filesystem__filesystem", "filesystem answered by filesystem.so");

    expect_error(p, 7, "dev__filesystem_read_file", FORMAT_ERR("dev__filesystem_read_file"));
    expect_error(p, 8, "invalid", FORMAT_ERR("invalid"));
    expect_error(p, 9, "dev__only_two_parts", FORMAT_ERR("dev__only_two_parts"));
    expect_error(p, 10, "read_file", FORMAT_ERR("read_file")); /* the plain name is not served */
    expect_error(p, 11, "stage__filesystem__read_file", "Toolbox 'stage' not found");
    expect_error(p, 12, "dev__memory__store_value_async", "Server 'memory' not found in toolbox 'dev'");
    expect_error(p, 13, "dev__filesystem__write_file", "Unknown tool: dev__filesystem__write_file");
    /* The host keeps serving after every refusal. */
    expect_text(p, 14, "dev__server__server", "server answered by server.so");
    mh_finish(p);
    boxes_free(&b);
}
END_TEST

/* The same through the 2026-07-28 era (per-request _meta, no handshake). */
START_TEST(test_modern_era_qualified)
{
    boxes b;
    boxes_make(&b);
    mh_proc *p = mh_spawn(isolation[_i], "--no-registry-cache", "--qualified-names", b.dev_arg, NULL);
    json_object *r = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
                               "\"dev__server__my__special__tool\"," MH_MODERN_META "}}");
    MH_ASSERT_STR(r, "result content 0 text", "my__special__tool answered by server.so");
    json_object_put(r);
    r = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":"
                  "\"prod__server__server\"," MH_MODERN_META "}}");
    MH_ASSERT_ERROR(r, -32602);
    MH_ASSERT_STR(r, "error message", "Toolbox 'prod' not found");
    json_object_put(r);
    mh_finish(p);
    boxes_free(&b);
}
END_TEST

START_TEST(test_longer_than_64_refused_at_load)
{
    /* 40 + 2 + 6 + 2 + 17 = 67 for my__special__tool, 56 for server. */
    char *dir = mh_private_dir(QP("server"), NULL);
    char arg[700];
    const char *box = "b123456789b123456789b123456789b123456789";
    snprintf(arg, sizeof arg, "--plugin-dir=%s=%s", box, dir);
    mh_proc *p = mh_spawn(isolation[_i], "--no-registry-cache", "--qualified-names", arg, NULL);
    mh_initialize(p, "2025-11-25");
    json_object *list = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
    ck_assert_int_eq((int)mh_len(list, "result tools"), 1);
    MH_ASSERT_STR(list, "result tools 0 name", "b123456789b123456789b123456789b123456789__server__server");
    json_object_put(list);
    char want[1024];
    snprintf(want, sizeof want,
             "plugin %s/server.so: tool 'my__special__tool' refused: Tool qualified name "
             "'%s__server__my__special__tool' is 67 chars, longer than the 64 MCP allows (toolbox '%s' + plugin "
             "'server' + tool 'my__special__tool'; shorten the toolbox name) [TH_ERR_VALUE]",
             dir, box, box);
    ck_assert_msg(mh_stderr_wait(p, want, MH_TIMEOUT_MS), "no refusal '%s' in: %s", want, mh_stderr(p));
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

START_TEST(test_duplicate_across_toolboxes_without_qualified_names)
{
    boxes b;
    boxes_make(&b);
    mh_proc *p = mh_spawn(isolation[_i], "--no-registry-cache", b.dev_arg, b.prod_arg, NULL);
    mh_initialize(p, "2025-11-25");
    json_object *list = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
    /* prod's filesystem.so is refused whole: its tools clash with dev's. */
    ck_assert_int_eq((int)mh_len(list, "result tools"), 6);
    ck_assert(listed(list, "read_file") && listed(list, "store_value_async") && listed(list, "my__special__tool"));
    MH_ASSERT_ABSENT(listed(list, "read_file"), "_meta");
    MH_ASSERT_STR(listed(list, "read_file"), "description",
                  "A second tool of the plugin, named as in the rules' examples.");
    json_object_put(list);
    char want[1024];
    snprintf(want, sizeof want,
             "Tool 'read_file' already registered (first by %s/filesystem.so in toolbox 'dev'; again by "
             "%s/filesystem.so in toolbox 'prod')",
             b.dev, b.prod);
    ck_assert_msg(mh_stderr_wait(p, want, MH_TIMEOUT_MS), "no refusal '%s' in: %s", want, mh_stderr(p));
    expect_text(p, 3, "read_file", "read_file answered by filesystem.so");
    mh_finish(p);
    boxes_free(&b);
}
END_TEST

START_TEST(test_plain_dir_is_the_default_toolbox)
{
    char *dir = mh_private_dir(QP("memory"), NULL);
    char arg[600];
    snprintf(arg, sizeof arg, "--plugin-dir=%s", dir);
    mh_proc *p = mh_spawn(isolation[_i], "--no-registry-cache", "--qualified-names", arg, NULL);
    mh_initialize(p, "2025-11-25");
    expect_text(p, 2, "default__memory__memory", "memory answered by memory.so");
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

/* A warm start from the registry cache names tools as a cold one does:
 * the cache keeps scans, and the naming is the host's. */
START_TEST(test_registry_cache_warm_start)
{
    boxes b;
    boxes_make(&b);
    char cache[700], arg[760];
    snprintf(cache, sizeof cache, "%s/cache.json", b.dev); /* removed with the directory */
    snprintf(arg, sizeof arg, "--registry-cache=%s", cache);
    for (int run = 0; run < 2; run++) {
        mh_proc *p = mh_spawn(isolation[_i], arg, "--qualified-names", b.dev_arg, b.prod_arg, NULL);
        mh_initialize(p, "2025-11-25");
        json_object *list = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
        ck_assert_int_eq((int)mh_len(list, "result tools"), 8);
        ck_assert(listed(list, "prod__filesystem__read_file") && listed(list, "dev__filesystem__read_file"));
        json_object_put(list);
        expect_text(p, 3, "dev__server__my__special__tool", "my__special__tool answered by server.so");
        mh_finish(p);
        ck_assert_msg(access(cache, F_OK) == 0, "run %d wrote no cache", run);
    }
    boxes_free(&b);
}
END_TEST

START_TEST(test_bad_toolbox_name_is_a_usage_error)
{
    mh_proc *p = mh_spawn("--plugin-dir=dev__x=/nonexistent", NULL);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 2);
    ck_assert(mh_stderr_wait(p,
                             "toolhost: --plugin-dir dev__x=/nonexistent: toolbox name 'dev__x' must not contain '__' "
                             "(the separator of qualified names)",
                             MH_TIMEOUT_MS));
    mh_free(p);
}
END_TEST

/* Run CMD with sh; its stdout and stderr (merged) into OUT; exit status. */
static int run(const char *cmd, char *out, size_t size)
{
    FILE *f = popen(cmd, "r");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(out, 1, size - 1, f);
    out[n] = '\0';
    int st = pclose(f);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

START_TEST(test_cli_call_and_inspect)
{
    boxes b;
    boxes_make(&b);
    char cmd[2048], out[16384];
    snprintf(cmd, sizeof cmd, TOOLHOST " call %s --qualified-names '%s' '%s' dev__server__my__special__tool 2>&1",
             isolation[_i], b.dev_arg, b.prod_arg);
    ck_assert_int_eq(run(cmd, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "my__special__tool answered by server.so"), "%s", out);
    snprintf(cmd, sizeof cmd, TOOLHOST " call %s --qualified-names '%s' stage__server__server 2>&1", isolation[_i],
             b.dev_arg);
    ck_assert_int_eq(run(cmd, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "toolhost call: Toolbox 'stage' not found"), "%s", out);

    snprintf(cmd, sizeof cmd, TOOLHOST " inspect --json --qualified-names 'dev=%s' 'prod=%s' 2>/dev/null", b.dev,
             b.prod);
    ck_assert_int_eq(run(cmd, out, sizeof out), 0);
    json_object *o = mh_parse(out);
    ck_assert_msg(o != NULL, "not JSON: %s", out);
    ck_assert_msg(strstr(out, "\"dev__server__my__special__tool\""), "%s", out);
    ck_assert_msg(strstr(out, "\"prod__memory__store_value_async\""), "%s", out);
    ck_assert_msg(strstr(out, "[prod\\/memory] ") || strstr(out, "[prod/memory] "), "%s", out);
    /* Prompts by their exposed names too, and the completion of one. */
    ck_assert_msg(strstr(out, "\"dev__filesystem__ask_filesystem\""), "%s", out);
    ck_assert_msg(strstr(out, "\"prod__memory__ask_memory\""), "%s", out);
    ck_assert_msg(strstr(out, "\"prompt\": \"dev__server__ask_server\"") ||
                      strstr(out, "\"prompt\":\"dev__server__ask_server\""),
                  "%s", out);
    json_object_put(o);
    boxes_free(&b);
}
END_TEST

/* ---- HTTP ---------------------------------------------------------------- */

#define LISTENING "listening on http://127.0.0.1:"

/* POST BODY with Mcp-Name NAME_HEADER (2026-07-28 headers); the whole
 * response into OUT. */
static void post(int port, const char *name_header, const char *body, char *out, size_t size)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(fd, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_msg(connect(fd, (struct sockaddr *)&a, sizeof a) == 0, "connect: %s", strerror(errno));
    struct timeval tv = {.tv_sec = MH_TIMEOUT_MS / 1000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char head[2048];
    int n = snprintf(head, sizeof head,
                     "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n"
                     "Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n"
                     "Mcp-Method: tools/call\r\nMcp-Name: %s\r\nContent-Type: application/json\r\n"
                     "Content-Length: %zu\r\n\r\n%s",
                     port, name_header, strlen(body), body);
    ck_assert(write(fd, head, (size_t)n) == n);
    size_t len = 0;
    ssize_t got;
    while (len + 1 < size && ((got = read(fd, out + len, size - 1 - len)) > 0 || (got < 0 && errno == EINTR)))
        if (got > 0)
            len += (size_t)got;
    out[len] = '\0';
    close(fd);
}

#define HTTP_CALL(name)                                                                                                \
    "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"" name "\"," MH_MODERN_META "}}"

#define MP(name) TEST_BUILDDIR "/mcpplugins/.libs/" name ".so"

/* Call NAME with ARGS (JSON) and return its result's last text, which must
 * be an isError result, in a static buffer. */
static const char *error_text(mh_proc *p, int id, const char *name, const char *args)
{
    static char text[1024];
    json_object *r = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\","
                               "\"arguments\":%s}}", id, name, args);
    MH_ASSERT_RESULT(r);
    ck_assert_msg(json_object_get_boolean(mh_at(r, "result isError")), "%s", mh_json(r));
    char path[64];
    snprintf(path, sizeof path, "result content %zu text", mh_len(r, "result content") - 1);
    snprintf(text, sizeof text, "%s", mh_str(r, path) ? mh_str(r, path) : mh_json(r));
    json_object_put(r);
    return text;
}

static void starts_with(const char *text, const char *prefix)
{
    ck_assert_msg(strncmp(text, prefix, strlen(prefix)) == 0, "'%s' does not start with '%s'", text, prefix);
}

/*
** The delegation error (doc/registry-rules.md, 7): a call the host failed
** is answered "[toolbox/server/tool] Error: ..." (a handler's error code, arguments
** refused, a timeout; in process mode a crash and the quarantine after
** five); a plugin's own error text is its answer and passes as it is.
*/
START_TEST(test_host_failures_are_delegation_errors)
{
    char *dir = mh_private_dir(MP("failer"), MP("slow"), TEST_BUILDDIR "/hostile/.libs/crash.so", NULL);
    char arg[600];
    snprintf(arg, sizeof arg, "--plugin-dir=dev=%s", dir);
    /* Under valgrind everything is slower: the deadline scales with the
     * harness's times, so that only the sleeping call passes it. */
    char timeout[32], after[64];
    snprintf(timeout, sizeof timeout, "--call-timeout=%d", mh_time_scale());
    snprintf(after, sizeof after, "timed out after %d s", mh_time_scale());
    mh_proc *p = mh_spawn(isolation[_i], "--no-registry-cache", "--qualified-names", arg, timeout, NULL);
    mh_initialize(p, "2025-11-25");
    const char *t = error_text(p, 2, "dev__failer__failer_bare", "{}");
    starts_with(t, "[dev/failer/failer_bare] Error: Tool '");
    ck_assert_msg(strstr(t, "failed (TH_ERR_TOOL)"), "%s", t);
    ck_assert_str_eq(error_text(p, 3, "dev__failer__failer", "{\"reason\":\"r\"}"), "failer could not comply: r");
    starts_with(error_text(p, 4, "dev__slow__slow", "{}"), "[dev/slow/slow] Error: Invalid arguments for tool '");
    t = error_text(p, 5, "dev__slow__slow", "{\"ms\":60000}");
    starts_with(t, "[dev/slow/slow] Error: tool '");
    ck_assert_msg(strstr(t, after), "%s", t);
    if (_i == 0) {
        /* The crashes in a host of their own, with the default deadline:
         * under load a worker's death took longer to see than the 1 s one,
         * and the crash was answered as a timeout. */
        mh_finish(p);
        p = mh_spawn(isolation[_i], "--no-registry-cache", "--qualified-names", arg, NULL);
        mh_initialize(p, "2025-11-25");
        for (int k = 0; k < 5; k++) {
            t = error_text(p, 10 + k, "dev__crash__crash", "{}");
            starts_with(t, "[dev/crash/crash] Error: tool '");
            ck_assert_msg(strstr(t, "crashed: signal 11 (SIGSEGV)"), "%s", t);
        }
        t = error_text(p, 20, "dev__crash__crash", "{}");
        starts_with(t, "[dev/crash/crash] Error: tool '");
        ck_assert_msg(strstr(t, "quarantined until"), "%s", t);
    }
    /* Unqualified, the same failure keeps its plain text. */
    mh_finish(p);
    p = mh_spawn(isolation[_i], "--no-registry-cache", arg, NULL);
    mh_initialize(p, "2025-11-25");
    starts_with(error_text(p, 2, "failer_bare", "{}"), "Tool 'failer_bare' failed (TH_ERR_TOOL)");
    mh_finish(p);
    mh_rm_dir(dir);
}
END_TEST

/*
** The loader's rule that a tool name NAME belongs to the file NAME.so holds
** across every directory in qualified mode too (README "Toolboxes"): aa.so
** in dev cannot register "echo" while prod has echo.so, although
** dev__aa__echo would not clash, so that the set of tools loaded never
** depends on --qualified-names (the scan and the registry cache do not know
** the naming).
*/
START_TEST(test_name_ownership_spans_toolboxes)
{
    char *dev = mh_private_dir(mh_hostile("aa"), NULL);
    char *prod = mh_private_dir(TOP_BUILDDIR "/plugins/.libs/echo.so", NULL);
    char dev_arg[600], prod_arg[600];
    snprintf(dev_arg, sizeof dev_arg, "--plugin-dir=dev=%s", dev);
    snprintf(prod_arg, sizeof prod_arg, "--plugin-dir=prod=%s", prod);
    mh_proc *p = mh_spawn(isolation[_i], "--no-registry-cache", "--qualified-names", dev_arg, prod_arg, NULL);
    mh_initialize(p, "2025-11-25");
    json_object *list = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
    ck_assert_msg(listed(list, "dev__aa__aa") && listed(list, "prod__echo__echo"), "%s", mh_json(list));
    ck_assert_msg(!listed(list, "dev__aa__echo"), "%s", mh_json(list));
    json_object_put(list);
    char want[1400];
    snprintf(want, sizeof want, "tool 'echo' refused: tool name 'echo' belongs to plugin file %s/echo.so", prod);
    ck_assert_msg(mh_stderr_wait(p, want, MH_TIMEOUT_MS), "no '%s' in: %s", want, mh_stderr(p));
    mh_finish(p);
    mh_rm_dir(dev);
    mh_rm_dir(prod);
}
END_TEST

START_TEST(test_http_mcp_name_carries_the_exposed_name)
{
    boxes b;
    boxes_make(&b);
    mh_proc *p = mh_spawn(isolation[_i], "--no-registry-cache", "--qualified-names", b.dev_arg,
                          "--http", "127.0.0.1:0", NULL);
    ck_assert_msg(mh_stderr_wait(p, LISTENING, MH_TIMEOUT_MS), "did not listen");
    char *err = mh_stderr(p);
    int port = atoi(strstr(err, LISTENING) + strlen(LISTENING));
    free(err);
    char out[16384];
    post(port, "dev__server__my__special__tool", HTTP_CALL("dev__server__my__special__tool"), out, sizeof out);
    ck_assert_msg(strstr(out, "HTTP/1.1 200") && strstr(out, "my__special__tool answered by server.so"), "%s", out);
    /* The original name in the header does not match the body. */
    post(port, "my__special__tool", HTTP_CALL("dev__server__my__special__tool"), out, sizeof out);
    ck_assert_msg(strstr(out, "HTTP/1.1 400") && strstr(out, "Mcp-Name differs from the body"), "%s", out);
    post(port, "dev__nope__x", HTTP_CALL("dev__nope__x"), out, sizeof out);
    ck_assert_msg(strstr(out, "Server 'nope' not found in toolbox 'dev'") && strstr(out, "-32602"), "%s", out);
    mh_kill(p, SIGTERM);
    mh_wait(p, MH_TIMEOUT_MS);
    mh_free(p);
    boxes_free(&b);
}
END_TEST

/* ---- prompts: named, looked up and completed as tools are ------------- */

static json_object *prompt_rpc(mh_proc *p, int id, const char *method, const char *params)
{
    return mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"%s\",\"params\":{%s}}", id, method, params);
}

static void expect_prompt_error(mh_proc *p, int id, const char *name, const char *want)
{
    char params[300];
    snprintf(params, sizeof params, "\"name\":\"%s\"", name);
    json_object *r = prompt_rpc(p, id, "prompts/get", params);
    MH_ASSERT_ERROR(r, -32602);
    char full[600];
    snprintf(full, sizeof full, "Invalid params: %s", want);
    MH_ASSERT_STR(r, "error message", full);
    json_object_put(r);
}

static bool prompt_listed(json_object *list, const char *name)
{
    json_object *prompts = mh_at(list, "result prompts");
    for (size_t i = 0; i < json_object_array_length(prompts); i++)
        if (strcmp(mh_str(json_object_array_get_idx(prompts, i), "name"), name) == 0)
            return true;
    return false;
}

START_TEST(test_prompts_qualified)
{
    boxes b;
    boxes_make(&b);
    mh_proc *p = mh_spawn(isolation[_i], "--no-registry-cache", "--qualified-names", b.dev_arg, b.prod_arg,
                          NULL);
    mh_initialize(p, "2025-11-25");
    json_object *list = prompt_rpc(p, 2, "prompts/list", "");
    ck_assert_int_eq((int)mh_len(list, "result prompts"), 4);
    static const char *const names[] = {"dev__filesystem__ask_filesystem", "dev__server__ask_server",
                                        "prod__memory__ask_memory", "prod__filesystem__ask_filesystem"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        ck_assert_msg(prompt_listed(list, names[i]), "%s not listed in %s", names[i], mh_json(list));
    MH_ASSERT_STR(list, "result prompts 0 description", "[dev/filesystem] Asks (qualified-name tests).");
    json_object_put(list);

    /* The get is given the name it registered, in a worker or not. */
    json_object *r = prompt_rpc(p, 3, "prompts/get", "\"name\":\"prod__filesystem__ask_filesystem\"");
    MH_ASSERT_STR(r, "result messages 0 content text", "ask_filesystem got by filesystem.so");
    json_object_put(r);
    r = prompt_rpc(p, 4, "prompts/get", "\"name\":\"dev__server__ask_server\"");
    MH_ASSERT_STR(r, "result messages 0 content text", "ask_server got by server.so");
    json_object_put(r);

    expect_prompt_error(p, 5, "ask_server",
                        "Invalid prompt name format 'ask_server'. Expected format: {toolbox}__{server}__{prompt} "
                        "(note: double underscores between all components)");
    expect_prompt_error(p, 6, "stage__server__ask_server", "Toolbox 'stage' not found");
    expect_prompt_error(p, 7, "dev__memory__ask_memory", "Server 'memory' not found in toolbox 'dev'");
    expect_prompt_error(p, 8, "dev__server__ask_nobody", "unknown prompt 'dev__server__ask_nobody'");

    /* completion/complete's ref/prompt takes the exposed name too. */
    r = prompt_rpc(p, 9, "completion/complete",
                   "\"ref\":{\"type\":\"ref/prompt\",\"name\":\"prod__filesystem__ask_filesystem\"},"
                   "\"argument\":{\"name\":\"who\",\"value\":\"al\"}");
    MH_ASSERT_STR(r, "result completion values 0", "filesystem-al");
    json_object_put(r);
    /* memory.so completes server.so's prompt, named by its exposed name. */
    r = prompt_rpc(p, 12, "completion/complete",
                   "\"ref\":{\"type\":\"ref/prompt\",\"name\":\"dev__server__ask_server\"},"
                   "\"argument\":{\"name\":\"who\",\"value\":\"bo\"}");
    MH_ASSERT_STR(r, "result completion values 0", "memory-bo");
    json_object_put(r);
    r = prompt_rpc(p, 10, "completion/complete",
                   "\"ref\":{\"type\":\"ref/prompt\",\"name\":\"ask_memory\"},\"argument\":{\"name\":\"who\","
                   "\"value\":\"al\"}");
    MH_ASSERT_ERROR(r, -32602);
    ck_assert_msg(strstr(mh_str(r, "error message"), "Invalid prompt name format 'ask_memory'"), "%s", mh_json(r));
    json_object_put(r);
    /* The host keeps serving after every refusal. */
    expect_text(p, 11, "dev__server__server", "server answered by server.so");
    mh_finish(p);
    boxes_free(&b);
}
END_TEST

/* Without --qualified-names prompts keep their names, and a second
 * plugin's prompt of the same name is refused naming both toolboxes. */
START_TEST(test_prompts_unqualified)
{
    boxes b;
    boxes_make(&b);
    mh_proc *p = mh_spawn(isolation[_i], "--no-registry-cache", b.dev_arg, b.prod_arg, NULL);
    mh_initialize(p, "2025-11-25");
    json_object *list = prompt_rpc(p, 2, "prompts/list", "");
    ck_assert_int_eq((int)mh_len(list, "result prompts"), 3); /* prod's filesystem.so is refused */
    ck_assert(prompt_listed(list, "ask_filesystem") && prompt_listed(list, "ask_server") &&
              prompt_listed(list, "ask_memory"));
    MH_ASSERT_STR(list, "result prompts 0 description", "Asks (qualified-name tests).");
    json_object_put(list);
    json_object *r = prompt_rpc(p, 3, "prompts/get", "\"name\":\"ask_server\"");
    MH_ASSERT_STR(r, "result messages 0 content text", "ask_server got by server.so");
    json_object_put(r);
    expect_prompt_error(p, 4, "dev__server__ask_server", "unknown prompt 'dev__server__ask_server'");
    char want[1024];
    snprintf(want, sizeof want,
             "Prompt 'ask_filesystem' already registered (first by %s/filesystem.so in toolbox 'dev'; again by "
             "%s/filesystem.so in toolbox 'prod')",
             b.dev, b.prod);
    ck_assert_msg(mh_stderr_wait(p, want, MH_TIMEOUT_MS), "no refusal '%s' in: %s", want, mh_stderr(p));
    mh_finish(p);
    boxes_free(&b);
}
END_TEST

static Suite *qualified_suite(void)
{
    Suite *s = suite_create("qualified");
    TCase *tc = tcase_create("toolboxes");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_loop_test(tc, test_list_and_call_qualified, 0, 2);
    tcase_add_loop_test(tc, test_modern_era_qualified, 0, 2);
    tcase_add_loop_test(tc, test_longer_than_64_refused_at_load, 0, 2);
    tcase_add_loop_test(tc, test_duplicate_across_toolboxes_without_qualified_names, 0, 2);
    tcase_add_loop_test(tc, test_plain_dir_is_the_default_toolbox, 0, 2);
    tcase_add_loop_test(tc, test_registry_cache_warm_start, 0, 2);
    tcase_add_test(tc, test_bad_toolbox_name_is_a_usage_error);
    tcase_add_loop_test(tc, test_cli_call_and_inspect, 0, 2);
    tcase_add_loop_test(tc, test_http_mcp_name_carries_the_exposed_name, 0, 2);
    tcase_add_loop_test(tc, test_host_failures_are_delegation_errors, 0, 2);
    tcase_add_loop_test(tc, test_name_ownership_spans_toolboxes, 0, 2);
    tcase_add_loop_test(tc, test_prompts_qualified, 0, 2);
    tcase_add_loop_test(tc, test_prompts_unqualified, 0, 2);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN_WITH(qualified_suite, mh_global_setup, mh_global_teardown)
