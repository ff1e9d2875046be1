/* SPDX-License-Identifier: MIT */
/*
** test_http.c: integration tests of the Streamable HTTP transport with a
** plain socket client: legacy sessions (issued, required, ended, unknown),
** SSE when progress precedes the result, SSE polling resumed with GET and
** Last-Event-ID, the modern header checks (-32020), the
** connection limit, refusals (405, 406, 413, 415, 403 for Origin and Host, 400, 404), and
** SIGTERM letting a call in flight finish, a tool asking its client on the
** call's event stream. Both isolation modes where the
** tool calls run matters.
*/
#include "config.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "check_main.h"
#include "jwt_keys.h"
#include "http_client.h"
#include "mcp_harness.h"

/* R's body as one JSON-RPC message (must parse). */
static json_object *body_json(const hres *r)
{
    json_object *o = mh_parse(r->body);
    ck_assert_msg(o != NULL, "body is not JSON: '%s'", r->body);
    return o;
}

static void assert_error(const hres *r, int status, int code)
{
    ck_assert_msg(r->status == status, "want HTTP %d, got %d: %s", status, r->status, r->body);
    json_object *o = body_json(r);
    MH_ASSERT_INT(o, "error code", code);
    json_object_put(o);
}

#define INIT_BODY                                                                                                      \
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\","        \
    "\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}"

/* initialize over HTTP; returns the issued session id (malloc'd). */
static char *open_session(int port)
{
    hres r = request(port, "POST", ACCEPT_BOTH, INIT_BODY);
    ck_assert_msg(r.status == 200, "initialize: HTTP %d %s", r.status, r.body);
    char *sid = header_of(&r, "Mcp-Session-Id");
    ck_assert_msg(sid && strlen(sid) >= 16, "no Mcp-Session-Id in %s", r.headers);
    json_object *o = body_json(&r);
    MH_ASSERT_STR(o, "result protocolVersion", "2025-11-25");
    json_object_put(o);
    hres_free(&r);
    char hdrs[256];
    snprintf(hdrs, sizeof hdrs, ACCEPT_BOTH "Mcp-Session-Id: %s\r\n", sid);
    r = request(port, "POST", hdrs, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    ck_assert_int_eq(r.status, 202);
    hres_free(&r);
    return sid;
}

static const char *const isolation[] = {"--isolation=process", "--isolation=none"};

/* ---- legacy sessions ------------------------------------------------------ */

START_TEST(legacy_session_lifecycle)
{
    int port;
    mh_proc *p = start_http(&port, isolation[_i], NULL, NULL);
    char *sid = open_session(port);
    char hdrs[256];
    snprintf(hdrs, sizeof hdrs, ACCEPT_BOTH "Mcp-Session-Id: %s\r\n", sid);

    hres r = request(port, "POST", hdrs,
                     "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                     "\"arguments\":{\"text\":\"hi\"}}}");
    ck_assert_msg(r.status == 200, "HTTP %d %s", r.status, r.body);
    json_object *o = body_json(&r);
    MH_ASSERT_INT(o, "id", 2);
    ck_assert_msg(strstr(mh_json(o), "hi"), "echo result: %s", mh_json(o));
    json_object_put(o);
    hres_free(&r);

    /* Errors that cannot name their request ("id": null) still answer it:
     * a batch where the revision has none, a message without a method. */
    r = request(port, "POST", hdrs, "[{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}]");
    ck_assert_msg(r.status == 200, "HTTP %d %s", r.status, r.body);
    o = body_json(&r);
    MH_ASSERT_INT(o, "error code", -32600);
    json_object_put(o);
    hres_free(&r);
    r = request(port, "POST", hdrs, "{\"jsonrpc\":\"2.0\",\"id\":{}}");
    ck_assert_msg(r.status == 200, "HTTP %d %s", r.status, r.body);
    o = body_json(&r);
    MH_ASSERT_INT(o, "error code", -32600);
    json_object_put(o);
    hres_free(&r);

    /* Without a session, a legacy request is refused; an unknown one is 404. */
    r = request(port, "POST", ACCEPT_BOTH, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}");
    assert_error(&r, 400, -32600);
    hres_free(&r);
    r = request(port, "POST", ACCEPT_BOTH "Mcp-Session-Id: 0123456789abcdef0123456789abcdef\r\n",
                "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}");
    ck_assert_int_eq(r.status, 404);
    hres_free(&r);

    /* DELETE ends it; afterwards it is unknown. */
    char del[256];
    snprintf(del, sizeof del, "Mcp-Session-Id: %s\r\n", sid);
    r = request(port, "DELETE", del, NULL);
    ck_assert_int_eq(r.status, 200);
    hres_free(&r);
    r = request(port, "POST", hdrs, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/list\"}");
    ck_assert_int_eq(r.status, 404);
    hres_free(&r);
    r = request(port, "DELETE", del, NULL);
    ck_assert_int_eq(r.status, 404);
    hres_free(&r);
    free(sid);
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
}
END_TEST

START_TEST(progress_makes_an_event_stream)
{
    int port;
    mh_proc *p = start_http(&port, isolation[_i], NULL, NULL);
    char *sid = open_session(port);
    char hdrs[256];
    snprintf(hdrs, sizeof hdrs, ACCEPT_BOTH "Mcp-Session-Id: %s\r\n", sid);
    hres r = request(port, "POST", hdrs,
                     "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"progress\","
                     "\"arguments\":{\"steps\":3},\"_meta\":{\"progressToken\":\"tok\"}}}");
    ck_assert_int_eq(r.status, 200);
    char *type = header_of(&r, "Content-Type");
    ck_assert_msg(type && strcmp(type, "text/event-stream") == 0, "Content-Type %s", type ? type : "(none)");
    free(type);
    /* Three progress events with ids, then the result, in that order. */
    const char *at = r.body;
    for (int i = 0; i < 3; i++) {
        at = strstr(at, "notifications/progress");
        ck_assert_msg(at, "progress %d missing in %s", i + 1, r.body);
        at++;
    }
    ck_assert_msg(strstr(at, "\"id\":5") && strstr(at, "progress: 3 steps"), "result after progress: %s", r.body);
    unsigned long long stream;
    ck_assert_msg(sscanf(r.body, "id: %llu-1\ndata: ", &stream) == 1, "events carry ids: %s", r.body);
    hres_free(&r);

    /* Without progress the same session answers application/json. */
    r = request(port, "POST", hdrs,
                "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":\"progress\","
                "\"arguments\":{\"steps\":3}}}");
    type = header_of(&r, "Content-Type");
    ck_assert_msg(type && strcmp(type, "application/json") == 0, "Content-Type %s", type ? type : "(none)");
    free(type);
    hres_free(&r);
    free(sid);
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
}
END_TEST

/* A tool that asks the client (th_call_ask) in a legacy session: the
 * request goes on the call's own event stream, the client POSTs its
 * response, the call's result follows on the stream. A client whose POST
 * takes no event stream cannot be asked: the tool hears so at once. */
START_TEST(legacy_ask_on_the_call_stream)
{
    char *dir = mh_private_dir(TEST_BUILDDIR "/conformance/.libs/client_asking_tools.so", NULL);
    int port;
    mh_proc *p = start_http(&port, isolation[_i], "-d", dir);
    hres r = request(port, "POST", ACCEPT_BOTH,
                     "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
                     "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"elicitation\":{}},"
                     "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
    char *sid = header_of(&r, "Mcp-Session-Id");
    ck_assert_msg(sid != NULL, "%s", r.headers);
    hres_free(&r);
    char hdrs[256];
    snprintf(hdrs, sizeof hdrs, ACCEPT_BOTH "Mcp-Session-Id: %s\r\n", sid);
    int fd = send_request(port, "POST", "/mcp", hdrs,
                          "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{"
                          "\"name\":\"test_elicitation\",\"arguments\":{\"message\":\"name?\"}}}");
    /* Read the stream until the request appears in it. */
    char buf[8192];
    size_t len = 0;
    const char *req = NULL;
    while (!req && len < sizeof buf - 1) {
        ssize_t n = read(fd, buf + len, sizeof buf - 1 - len);
        ck_assert_msg(n > 0, "the stream ended before the request: %.*s", (int)len, buf);
        len += (size_t)n;
        buf[len] = '\0';
        req = strstr(buf, "elicitation/create");
    }
    const char *idat = strstr(buf, "\"id\":\"th-ask-");
    ck_assert_msg(idat, "no request id in %s", buf);
    char id[128];
    ck_assert(sscanf(idat, "\"id\":\"%127[^\"]\"", id) == 1);
    char answer[512];
    snprintf(answer, sizeof answer,
             "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"result\":{\"action\":\"accept\",\"content\":"
             "{\"username\":\"ada\",\"email\":\"a@b.c\"}}}",
             id);
    hres a = request(port, "POST", hdrs, answer);
    ck_assert_int_eq(a.status, 202);
    hres_free(&a);
    /* The rest of the stream: the call's result. */
    for (;;) {
        ssize_t n = len < sizeof buf - 1 ? read(fd, buf + len, sizeof buf - 1 - len) : 0;
        if (n <= 0)
            break;
        len += (size_t)n;
        buf[len] = '\0';
    }
    close(fd);
    ck_assert_msg(strstr(buf, "\"id\":9") && strstr(buf, "User response:") && strstr(buf, "ada"), "%s", buf);

    /* JSON only: nothing can carry the request; refused now, not at the deadline. */
    snprintf(hdrs, sizeof hdrs, "Accept: application/json\r\nMcp-Session-Id: %s\r\n", sid);
    r = request(port, "POST", hdrs,
                "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/call\",\"params\":{"
                "\"name\":\"test_elicitation\",\"arguments\":{\"message\":\"name?\"}}}");
    json_object *o = body_json(&r);
    MH_ASSERT_TRUE(o, "result isError");
    ck_assert_msg(strstr(mh_str(o, "result content 0 text"), "Elicitation not supported or error"), "%s", r.body);
    json_object_put(o);
    hres_free(&r);
    ck_assert(mh_stderr_wait(p, "does not accept text/event-stream", MH_TIMEOUT_MS));
    free(sid);
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
    mh_rm_dir(dir);
}
END_TEST

/* POST initialize; the response (the caller frees it). */
static hres try_initialize(int port)
{
    return request(port, "POST", ACCEPT_BOTH, INIT_BODY);
}

/* HTTP status of a tools/list in session SID. */
static int list_status(int port, const char *sid)
{
    char hdrs[256];
    snprintf(hdrs, sizeof hdrs, ACCEPT_BOTH "Mcp-Session-Id: %s\r\n", sid);
    hres r = request(port, "POST", hdrs, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}");
    int status = r.status;
    hres_free(&r);
    return status;
}

/* A flood of initialize calls used to end other clients' live sessions:
 * a full table now refuses the newcomer, 503 with Retry-After. */
START_TEST(a_full_session_table_refuses_newcomers)
{
    int port;
    mh_proc *p = start_http(&port, "--http-max-sessions=4", NULL, NULL);
    char *mine = open_session(port);
    char *flood[3];
    for (int i = 0; i < 3; i++)
        flood[i] = open_session(port);
    hres r = try_initialize(port);
    assert_error(&r, 503, -32603);
    char *after = header_of(&r, "Retry-After");
    ck_assert_msg(after && atoi(after) >= 1, "Retry-After: %s in %s", after ? after : "(none)", r.headers);
    free(after);
    hres_free(&r);
    ck_assert_int_eq(list_status(port, mine), 200);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(list_status(port, flood[i]), 200);
        free(flood[i]);
    }
    free(mine);
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
}
END_TEST

/* A session unused for --http-timeout expires: it makes room for a new
 * one, and its client gets 404. The test retries initialize until the
 * table has room (each refusal says when to retry). */
START_TEST(idle_sessions_expire)
{
    int port;
    mh_proc *p = start_http(&port, "--http-max-sessions=1", "--http-timeout=1", NULL);
    char *old = open_session(port);
    long long until = mh_now_ms() + MH_TIMEOUT_MS;
    for (;;) {
        hres r = try_initialize(port);
        int status = r.status;
        hres_free(&r);
        if (status == 200)
            break;
        ck_assert_msg(status == 503, "initialize: HTTP %d", status);
        ck_assert_msg(mh_now_ms() < until, "the idle session never expired");
    }
    ck_assert_int_eq(list_status(port, old), 404);
    ck_assert(mh_stderr_wait(p, "expired (idle for --http-timeout)", MH_TIMEOUT_MS));
    free(old);
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
}
END_TEST

/* ---- modern requests -------------------------------------------------------- */

#define MODERN_CALL(name)                                                                                              \
    "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"" name "\","                     \
    "\"arguments\":{\"text\":\"x\"}," MH_MODERN_META "}}"

START_TEST(modern_headers_checked)
{
    int port;
    mh_proc *p = start_http(&port, isolation[_i], NULL, NULL);
    hres r = request(port, "POST", ACCEPT_BOTH MODERN_HEADERS "Mcp-Method: tools/call\r\nMcp-Name:  echo \r\n",
                     MODERN_CALL("echo"));
    ck_assert_msg(r.status == 200, "HTTP %d %s", r.status, r.body);
    json_object *o = body_json(&r);
    MH_ASSERT_STR(o, "result resultType", "complete");
    json_object_put(o);
    hres_free(&r);

    r = request(port, "POST", ACCEPT_BOTH MODERN_HEADERS "Mcp-Method: tools/list\r\nMcp-Name: echo\r\n",
                MODERN_CALL("echo"));
    assert_error(&r, 400, -32020);
    hres_free(&r);
    r = request(port, "POST", ACCEPT_BOTH MODERN_HEADERS "Mcp-Method: tools/call\r\nMcp-Name: rich\r\n",
                MODERN_CALL("echo"));
    assert_error(&r, 400, -32020);
    hres_free(&r);
    r = request(port, "POST", ACCEPT_BOTH MODERN_HEADERS "Mcp-Method: tools/call\r\n", MODERN_CALL("echo"));
    assert_error(&r, 400, -32020);
    hres_free(&r);
    r = request(port, "POST", ACCEPT_BOTH "Mcp-Method: tools/call\r\nMcp-Name: echo\r\n", MODERN_CALL("echo"));
    assert_error(&r, 400, -32020); /* MCP-Protocol-Version missing */
    hres_free(&r);
    r = request(port, "POST", ACCEPT_BOTH "MCP-Protocol-Version: 2025-11-25\r\nMcp-Method: tools/call\r\n"
                "Mcp-Name: echo\r\n", MODERN_CALL("echo"));
    assert_error(&r, 400, -32020); /* header and _meta disagree */
    hres_free(&r);
    /* Method not found is 404, as the stateless transport maps it. */
    r = request(port, "POST", ACCEPT_BOTH MODERN_HEADERS "Mcp-Method: ping\r\n",
                "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\",\"params\":{" MH_MODERN_META "}}");
    assert_error(&r, 404, -32601);
    hres_free(&r);
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
}
END_TEST

/* ---- refusals ------------------------------------------------------------------ */

START_TEST(refusals_have_their_status)
{
    int port;
    mh_proc *p = start_http(&port, "--max-message-bytes=512", "--http-allow-origin=https://app.example", NULL);
    const char *list = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}";
    hres r = request(port, "GET", "Accept: text/event-stream\r\n", NULL);
    ck_assert_int_eq(r.status, 405);
    char *allow = header_of(&r, "Allow");
    ck_assert_msg(allow && strstr(allow, "POST"), "Allow: %s", allow ? allow : "(none)");
    free(allow);
    hres_free(&r);
    r = request(port, "PUT", NULL, list);
    ck_assert_int_eq(r.status, 405);
    hres_free(&r);
    r = read_response(send_request(port, "POST", "/other", ACCEPT_BOTH, list));
    ck_assert_int_eq(r.status, 404);
    hres_free(&r);
    r = request(port, "POST", "Accept: text/html\r\n", list);
    ck_assert_int_eq(r.status, 406);
    hres_free(&r);
    /* A body that is not application/json. */
    int fd = connect_to(port);
    char raw[512];
    snprintf(raw, sizeof raw,
             "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\nContent-Type: text/plain\r\n"
             "Content-Length: %zu\r\n\r\n%s", port, strlen(list), list);
    ck_assert(write(fd, raw, strlen(raw)) == (ssize_t)strlen(raw));
    r = read_response(fd);
    ck_assert_int_eq(r.status, 415);
    hres_free(&r);
    /* Larger than --max-message-bytes. */
    char big[1024];
    snprintf(big, sizeof big, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"x\":\"%0700d\"}}", 0);
    r = request(port, "POST", ACCEPT_BOTH, big);
    ck_assert_int_eq(r.status, 413);
    hres_free(&r);
    r = request(port, "POST", ACCEPT_BOTH, "{\"jsonrpc\":");
    assert_error(&r, 400, -32700);
    hres_free(&r);
    /* Origins: foreign refused, listed and loopback ones served. */
    r = request(port, "POST", ACCEPT_BOTH "Origin: http://evil.example\r\n", INIT_BODY);
    ck_assert_int_eq(r.status, 403);
    hres_free(&r);
    r = request(port, "POST", ACCEPT_BOTH "Origin: https://app.example\r\n", INIT_BODY);
    ck_assert_int_eq(r.status, 200);
    hres_free(&r);
    r = request(port, "POST", ACCEPT_BOTH "Origin: http://localhost:3000\r\n", INIT_BODY);
    ck_assert_int_eq(r.status, 200);
    hres_free(&r);
    /* DNS rebinding: a foreign Host on a loopback server. */
    fd = connect_to(port);
    snprintf(raw, sizeof raw,
             "POST /mcp HTTP/1.1\r\nHost: evil.example:%d\r\nConnection: close\r\nContent-Type: application/json\r\n"
             ACCEPT_BOTH "Content-Length: %zu\r\n\r\n%s", port, strlen(INIT_BODY), INIT_BODY);
    ck_assert(write(fd, raw, strlen(raw)) == (ssize_t)strlen(raw));
    r = read_response(fd);
    ck_assert_int_eq(r.status, 403);
    hres_free(&r);
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
}
END_TEST

/* ---- SSE polling and resumption ---------------------------------------------- */

START_TEST(sse_polling_resumes_with_last_event_id)
{
    int port;
    mh_proc *p = start_http(&port, isolation[_i], "--http-retry-ms=300", NULL);
    char *sid = open_session(port);
    char hdrs[256];
    snprintf(hdrs, sizeof hdrs, ACCEPT_BOTH "Mcp-Session-Id: %s\r\n", sid);
    /* Silent for longer than the retry time: a priming event, then the end. */
    hres r = request(port, "POST", hdrs,
                     "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tools/call\",\"params\":{\"name\":\"slow\","
                     "\"arguments\":{\"ms\":1500}}}");
    ck_assert_int_eq(r.status, 200);
    unsigned long long stream;
    ck_assert_msg(sscanf(r.body, "id: %llu-0\nretry: 300\ndata: \n\n", &stream) == 1, "priming event: '%s'", r.body);
    ck_assert_msg(!strstr(r.body, "\"id\":11"), "no result yet: %s", r.body);
    hres_free(&r);

    /* Poll with GET and Last-Event-ID until the result comes. */
    char get[512];
    bool got = false;
    for (int i = 0; i < 60 && !got; i++) {
        snprintf(get, sizeof get, "Accept: text/event-stream\r\nMcp-Session-Id: %s\r\nLast-Event-ID: %llu-0\r\n", sid,
                 stream);
        r = request(port, "GET", get, NULL);
        ck_assert_msg(r.status == 200, "GET: HTTP %d %s", r.status, r.body);
        got = strstr(r.body, "\"id\":11") != NULL;
        if (got) {
            char want[64];
            snprintf(want, sizeof want, "id: %llu-1\ndata: ", stream);
            ck_assert_msg(strstr(r.body, want), "the result is event 1 of its stream: %s", r.body);
        }
        hres_free(&r);
    }
    ck_assert_msg(got, "the result never came on a resumed stream");
    /* Delivered: the stream is gone. Without Last-Event-ID there is no stream. */
    r = request(port, "GET", get, NULL);
    ck_assert_int_eq(r.status, 404);
    hres_free(&r);
    free(sid);
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
}
END_TEST

/* Under AddressSanitizer freed memory waits in quarantine (256 MiB by
 * default) and every block has redzones: RSS says little there, so the
 * bounds get that much room. */
#if defined(__SANITIZE_ADDRESS__)
#define RSS_SLACK_KIB (1024L * 1024)
#else
#define RSS_SLACK_KIB 0L
#endif

/*
** 48 slow answers of 1 MiB that their client never resumes used to stay
** for the session's life. A session keeps 16 MiB of them: the oldest are
** forgotten (GET gets 404), the newest can still be resumed. One tool
** thread runs the calls in order, so the last call's answer is the last
** to come: the test resumes only that one, then looks at the first.
*/
START_TEST(unresumed_answers_are_bounded)
{
    enum { N = 48 };
    int port;
    mh_proc *p = start_http(&port, "--http-retry-ms=50", "--max-concurrent-calls=1", "--isolation=none");
    char *sid = open_session(port);
    long before = mh_status_kib(mh_pid(p), "VmRSS");
    char hdrs[256], gate[64], body[256];
    snprintf(hdrs, sizeof hdrs, ACCEPT_BOTH "Mcp-Session-Id: %s\r\n", sid);
    snprintf(gate, sizeof gate, "/tmp/mh-retain-gate-%ld", (long)getpid());
    unlink(gate);
    unsigned long long streams[N];
    for (int i = 0; i < N; i++) {
        snprintf(body, sizeof body,
                 "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"slow\","
                 "\"arguments\":{\"ms\":0,\"gate\":\"%s\",\"bytes\":1048576}}}",
                 100 + i, gate);
        hres r = request(port, "POST", hdrs, body);
        ck_assert_msg(r.status == 200 && sscanf(r.body, "id: %llu-0\nretry: 50\n", &streams[i]) == 1,
                      "priming event: HTTP %d '%.200s'", r.status, r.body);
        hres_free(&r);
    }
    FILE *g = fopen(gate, "w");
    ck_assert_ptr_nonnull(g);
    fclose(g);
    char get[512], want[32];
    snprintf(want, sizeof want, "\"id\":%d", 100 + N - 1);
    bool got = false;
    while (!got) { /* each GET ends after the retry time: poll until the last answer */
        snprintf(get, sizeof get, "Accept: text/event-stream\r\nMcp-Session-Id: %s\r\nLast-Event-ID: %llu-0\r\n",
                 sid, streams[N - 1]);
        hres r = request(port, "GET", get, NULL);
        ck_assert_msg(r.status == 200, "resuming the last stream: HTTP %d %s", r.status, r.body);
        got = strstr(r.body, want) != NULL;
        hres_free(&r);
    }
    long after = mh_status_kib(mh_pid(p), "VmRSS");
    snprintf(get, sizeof get, "Accept: text/event-stream\r\nMcp-Session-Id: %s\r\nLast-Event-ID: %llu-0\r\n", sid,
             streams[0]);
    hres r = request(port, "GET", get, NULL);
    fprintf(stderr, "test_http: %d unresumed 1 MiB answers: host VmRSS %ld kB before, %ld kB after; the first "
                    "stream: HTTP %d\n",
            N, before, after, r.status);
    ck_assert_msg(r.status == 404, "the oldest answer is still kept: HTTP %d", r.status);
    hres_free(&r);
    ck_assert_msg(after - before < 48 * 1024 + RSS_SLACK_KIB, "the host grew from %ld kB to %ld kB", before, after);
    ck_assert(mh_stderr_wait(p, "a stream nobody resumed was dropped", MH_TIMEOUT_MS));
    unlink(gate);
    free(sid);
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
}
END_TEST

/* POST a 150 ms slow call in session SID on PORT; the response as read. */
static hres post_150ms_call(int port, const char *sid)
{
    char hdrs[256];
    snprintf(hdrs, sizeof hdrs, ACCEPT_BOTH "Mcp-Session-Id: %s\r\n", sid);
    return request(port, "POST", hdrs,
                   "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"slow\","
                   "\"arguments\":{\"ms\":150}}}");
}

/*
** A retry under the host's 200 ms internal poll is honoured, not rounded
** up to it: with --http-retry-ms=10, a call lasting 150 ms outlives both
** the POST's wait (it gets only the priming event) and the first GET that
** resumes it (which ends empty, not when the answer comes). With a retry
** longer than the call, the same POST gets the answer itself.
*/
START_TEST(a_retry_under_the_internal_poll_is_honoured)
{
    int port;
    mh_proc *p = start_http(&port, "--http-retry-ms=2000", "--isolation=none", NULL);
    char *sid = open_session(port);
    hres r = post_150ms_call(port, sid);
    ck_assert_msg(r.status == 200 && strstr(r.body, "\"result\"") && strncmp(r.body, "id:", 3) != 0,
                  "a retry of 2 s does not answer a 150 ms call directly: HTTP %d '%.200s'", r.status, r.body);
    hres_free(&r);
    free(sid);
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);

    p = start_http(&port, "--http-retry-ms=10", "--isolation=none", NULL);
    sid = open_session(port);
    unsigned long long stream;
    r = post_150ms_call(port, sid);
    ck_assert_msg(r.status == 200 && sscanf(r.body, "id: %llu-0\nretry: 10\n", &stream) == 1 &&
                      !strstr(r.body, "\"result\""),
                  "a retry of 10 ms acted as a longer wait: the POST answered the 150 ms call: HTTP %d '%.200s'",
                  r.status, r.body);
    hres_free(&r);
    char get[512];
    snprintf(get, sizeof get, "Accept: text/event-stream\r\nMcp-Session-Id: %s\r\nLast-Event-ID: %llu-0\r\n", sid,
             stream);
    r = request(port, "GET", get, NULL);
    ck_assert_msg(r.status == 200 && !strstr(r.body, "\"result\""),
                  "a retry of 10 ms acted as a longer wait: the first GET carried the 150 ms call's answer: "
                  "HTTP %d '%.200s'",
                  r.status, r.body);
    hres_free(&r);
    int empty = 1;
    for (bool got = false; !got; empty++) { /* then the answer comes on a later GET */
        r = request(port, "GET", get, NULL);
        ck_assert_msg(r.status == 200, "resuming: HTTP %d %s", r.status, r.body);
        got = strstr(r.body, "\"result\"") != NULL;
        hres_free(&r);
    }
    fprintf(stderr, "test_http: retry 10 ms: %d GETs ended empty before the 150 ms call's answer\n", empty);
    free(sid);
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
}
END_TEST

/* ---- the standalone GET stream -------------------------------------------------- */

#define FLIP_V1 TEST_BUILDDIR "/reloadplugins/v1/.libs/flip.so"
#define SLOW_SO TEST_BUILDDIR "/mcpplugins/.libs/slow.so"

/* Read FD into BUF (length *LEN) until NEEDLE appears after OFFSET; false
 * on timeout or end of stream. */
static bool read_until(int fd, char *buf, size_t size, size_t *len, size_t offset, const char *needle)
{
    long long until = mh_now_ms() + MH_TIMEOUT_MS;
    while (*len < offset || !strstr(buf + offset, needle)) {
        struct pollfd pfd = {fd, POLLIN, 0};
        long long left = until - mh_now_ms();
        if (left <= 0 || poll(&pfd, 1, (int)left) <= 0 || *len + 1 >= size)
            return false;
        ssize_t n = read(fd, buf + *len, size - *len - 1);
        if (n <= 0)
            return false;
        *len += (size_t)n;
        buf[*len] = '\0';
    }
    return true;
}

/* Copy FROM to DIR/flip.so under a temporary name, then rename it in. */
static void install_flip(const char *from, const char *dir)
{
    char tmp[512], to[512], data[65536];
    snprintf(tmp, sizeof tmp, "%s/.flip.tmp", dir);
    snprintf(to, sizeof to, "%s/flip.so", dir);
    int in = open(from, O_RDONLY | O_CLOEXEC), out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
    ck_assert_msg(in >= 0 && out >= 0, "cannot copy %s to %s", from, tmp);
    ssize_t n;
    while ((n = read(in, data, sizeof data)) > 0)
        ck_assert(write(out, data, (size_t)n) == n);
    close(in);
    ck_assert(close(out) == 0);
    ck_assert(rename(tmp, to) == 0);
}

/* Open the session's standalone stream with GET (LAST: Last-Event-ID, or
 * NULL); checks the 200 and text/event-stream. BUF gets what was read. */
static int open_get_stream(int port, const char *sid, const char *last, char *buf, size_t size, size_t *len)
{
    char hdrs[512];
    snprintf(hdrs, sizeof hdrs, "Accept: text/event-stream\r\nMcp-Session-Id: %s\r\n%s%s%s", sid,
             last ? "Last-Event-ID: " : "", last ? last : "", last ? "\r\n" : "");
    int fd = send_request(port, "GET", "/mcp", hdrs, NULL);
    *len = 0;
    buf[0] = '\0';
    ck_assert_msg(read_until(fd, buf, size, len, 0, "\r\n\r\n"), "no response head: '%s'", buf);
    ck_assert_msg(strncmp(buf, "HTTP/1.1 200", 12) == 0 && strstr(buf, "text/event-stream"), "GET: %s", buf);
    return fd;
}

/*
** A legacy session's GET stream: a client with no request in flight hears
** notifications/tools/list_changed after a reload (SIGHUP); calls are still
** answered on their POSTs; a client that reconnects with Last-Event-ID gets
** what it missed; DELETE of the session ends the stream.
*/
START_TEST(standalone_stream_carries_list_changed)
{
    char *dir = mh_private_dir(SLOW_SO, NULL);
    mh_proc *p = mh_spawn("--http", "127.0.0.1:0", "--plugin-dir", dir, isolation[_i], NULL);
    ck_assert_msg(mh_stderr_wait(p, LISTENING, MH_TIMEOUT_MS), "toolhost did not start listening");
    char *err = mh_stderr(p);
    int port = atoi(strstr(err, LISTENING) + strlen(LISTENING));
    free(err);
    char *sid = open_session(port);
    static char buf[65536];
    size_t len;
    int fd = open_get_stream(port, sid, NULL, buf, sizeof buf, &len);
    size_t head = (size_t)(strstr(buf, "\r\n\r\n") - buf) + 4;
    ck_assert_msg(read_until(fd, buf, sizeof buf, &len, head, "\n\n"), "no priming event: %s", buf);
    unsigned long long stream;
    ck_assert_msg(sscanf(strstr(buf + head, "id: "), "id: %llu-0", &stream) == 1, "priming event: %s", buf + head);

    /* Nothing in flight; a reload adds a tool. */
    install_flip(FLIP_V1, dir);
    mh_kill(p, SIGHUP);
    char want[128];
    snprintf(want, sizeof want, "id: %llu-1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"", stream);
    ck_assert_msg(read_until(fd, buf, sizeof buf, &len, head, want), "no list_changed on the GET stream: %s", buf + head);

    /* A call is answered on its own POST, not on the GET stream. */
    char hdrs[256];
    snprintf(hdrs, sizeof hdrs, ACCEPT_BOTH "Mcp-Session-Id: %s\r\n", sid);
    hres r = request(port, "POST", hdrs,
                     "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"flip\"}}");
    ck_assert_msg(r.status == 200 && strstr(r.body, "flip v1"), "call: HTTP %d %s", r.status, r.body);
    hres_free(&r);
    close(fd);
    ck_assert_msg(!strstr(buf + head, "\"id\":5"), "a response on the GET stream: %s", buf + head);

    /* Missed while disconnected, delivered on resumption. */
    char path[512];
    snprintf(path, sizeof path, "%s/flip.so", dir);
    ck_assert(unlink(path) == 0);
    mh_kill(p, SIGHUP);
    /* The removal is told once the rescan ran: wait for tools/list to agree. */
    for (int i = 0; i < 100; i++) {
        r = request(port, "POST", hdrs, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/list\"}");
        bool gone = r.status == 200 && !strstr(r.body, "\"flip\"");
        hres_free(&r);
        if (gone)
            break;
        usleep(50 * 1000);
    }
    char last[64];
    snprintf(last, sizeof last, "%llu-1", stream);
    fd = open_get_stream(port, sid, last, buf, sizeof buf, &len);
    snprintf(want, sizeof want, "id: %llu-2\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"", stream);
    ck_assert_msg(read_until(fd, buf, sizeof buf, &len, 0, want), "not resumed after %s: %s", last, buf);
    snprintf(want, sizeof want, "id: %llu-1\n", stream);
    ck_assert_msg(!strstr(buf, want), "event 1 sent again: %s", buf);

    /* The session ends: so does its stream (the server closes it). */
    r = request(port, "DELETE", hdrs, NULL);
    ck_assert_int_eq(r.status, 200);
    hres_free(&r);
    ck_assert_msg(!read_until(fd, buf, sizeof buf, &len, 0, "never sent"), "%s", buf);
    ck_assert_msg(strstr(buf, "\r\n0\r\n\r\n"), "the stream did not end with its last chunk: %s", buf);
    close(fd);

    /* An unknown session has no stream; neither has a modern client. */
    r = request(port, "GET", "Accept: text/event-stream\r\nMcp-Session-Id: nosuch\r\n", NULL);
    ck_assert_int_eq(r.status, 404);
    hres_free(&r);
    r = request(port, "GET", "Accept: text/event-stream\r\n" MODERN_HEADERS, NULL);
    ck_assert_int_eq(r.status, 405);
    hres_free(&r);
    free(sid);
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
    mh_rm_dir(dir);
}
END_TEST

/* A GET stream left open does not hold up shutdown. */
START_TEST(standalone_stream_does_not_delay_shutdown)
{
    int port;
    mh_proc *p = start_http(&port, "--shutdown-grace-ms=60000", NULL, NULL);
    char *sid = open_session(port);
    static char buf[8192];
    size_t len;
    int fd = open_get_stream(port, sid, NULL, buf, sizeof buf, &len);
    /* The grace period is longer than the test waits. */
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    close(fd);
    free(sid);
    mh_free(p);
}
END_TEST

/* ---- shutdown ------------------------------------------------------------------ */

/* A file name for slow's "mark" (made when the call starts), not there yet. */
static void mark_path(char *buf, size_t size)
{
    snprintf(buf, size, "%s/mark", mh_marks_dir());
    unlink(buf);
}

/* Until the slow call marked MARK has started (it used to be a 500 ms
 * sleep: a loaded machine may not have read the request by then). */
static void await_mark(const char *mark)
{
    long long until = mh_now_ms() + MH_TIMEOUT_MS;
    while (access(mark, F_OK) != 0) {
        ck_assert_msg(mh_now_ms() < until, "the slow call did not start in %d ms", MH_TIMEOUT_MS);
        usleep(10 * 1000);
    }
    unlink(mark);
}

START_TEST(sigterm_finishes_calls_in_flight)
{
    int port;
    mh_proc *p = start_http(&port, isolation[_i], "--shutdown-grace-ms=15000", NULL);
    char mark[64], body[512];
    mark_path(mark, sizeof mark);
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":\"slow\","
             "\"arguments\":{\"ms\":1500,\"mark\":\"%s\"}," MH_MODERN_META "}}",
             mark);
    int fd = send_request(port, "POST", "/mcp", ACCEPT_BOTH MODERN_HEADERS "Mcp-Method: tools/call\r\nMcp-Name: slow\r\n",
                          body);
    /* Once the call runs, ask the host to stop. */
    await_mark(mark);
    mh_kill(p, SIGTERM);
    hres r = read_response(fd);
    ck_assert_msg(r.status == 200, "HTTP %d %s", r.status, r.body);
    json_object *o = body_json(&r);
    MH_ASSERT_INT(o, "id", 9);
    ck_assert_msg(!mh_has(o, "result isError"), "the call finished: %s", mh_json(o));
    json_object_put(o);
    hres_free(&r);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    /* Stopped: nothing listens any more. */
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_ne(connect(s, (struct sockaddr *)&a, sizeof a), 0);
    close(s);
    mh_free(p);
}
END_TEST

/* A modern call that outlasts --shutdown-grace-ms is cancelled at SIGTERM:
 * the host does not wait for its deadline (100 s here) to exit. (Whether
 * its outcome is logged before the exit depends on the worker's speed.) */
START_TEST(sigterm_cancels_a_modern_call)
{
    int port;
    mh_proc *p = start_http(&port, isolation[_i], "--shutdown-grace-ms=300", "--call-timeout=100");
    char mark[64], body[512];
    mark_path(mark, sizeof mark);
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":\"slow\","
             "\"arguments\":{\"ms\":90000,\"tag\":\"long\",\"mark\":\"%s\"}," MH_MODERN_META "}}",
             mark);
    int fd = send_request(port, "POST", "/mcp", ACCEPT_BOTH MODERN_HEADERS "Mcp-Method: tools/call\r\nMcp-Name: slow\r\n",
                          body);
    await_mark(mark);
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    char *err = mh_stderr(p);
    ck_assert_msg(strstr(err, "http: 1 request still open at shutdown; cancelling"), "the call was not cancelled: %s",
                  err);
    free(err);
    close(fd);
    mh_free(p);
}
END_TEST

/* POST BODY on a new connection; status 0 when the server closes it
 * without an answer. */
static hres try_post(int port, const char *body)
{
    int fd = connect_to(port);
    char req[2048];
    int n = snprintf(req, sizeof req,
                     "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n" ACCEPT_BOTH
                     "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
                     port, strlen(body), body);
    if (send(fd, req, (size_t)n, MSG_NOSIGNAL) != n) {
        close(fd);
        return (hres){0};
    }
    return read_response_or_empty(fd);
}

/* How many connections wait in the accept queue of the server listening
 * on 127.0.0.1:PORT: the rx_queue of its LISTEN line in /proc/net/tcp. */
static unsigned accept_backlog(int port)
{
    FILE *f = fopen("/proc/net/tcp", "r");
    ck_assert_msg(f, "/proc/net/tcp: %s", strerror(errno));
    char line[512];
    bool found = false;
    unsigned backlog = 0;
    while (!found && fgets(line, sizeof line, f)) {
        unsigned local, state, tx, rx;
        found = sscanf(line, " %*u: %*x:%x %*x:%*x %x %x:%x", &local, &state, &tx, &rx) == 4 &&
                local == (unsigned)port && state == 0x0A;
        backlog = rx;
    }
    fclose(f);
    ck_assert_msg(found, "no socket listens on port %d in /proc/net/tcp", port);
    return backlog;
}

START_TEST(connection_limit_holds)
{
    int port;
    mh_proc *p = start_http(&port, "--http-max-connections=1", NULL, NULL);
    /* One connection holds the only slot with a request not yet complete. */
    int held = connect_to(port);
    const char partial[] = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    ck_assert(write(held, partial, sizeof partial - 1) == (ssize_t)(sizeof partial - 1));
    /* It holds the slot once the server has accepted it: the kernel queued
     * it for accept() when connect() returned. */
    while (accept_backlog(port) > 0)
        usleep(10 * 1000);
    /* A second one is closed without an answer. */
    hres r = try_post(port, INIT_BODY);
    ck_assert_msg(r.status == 0, "a connection past the limit was served: HTTP %d", r.status);
    close(held);
    /* The slot is free again once the server saw the close (Check's time
     * limit bounds the wait). */
    while (r.status != 200) {
        usleep(10 * 1000);
        hres_free(&r);
        r = try_post(port, INIT_BODY);
    }
    ck_assert_int_eq(r.status, 200);
    hres_free(&r);
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
}
END_TEST

START_TEST(request_time_limit)
{
    int port;
    mh_proc *p = start_http(&port, "--http-timeout=1", "--call-timeout=0", NULL);
    hres r = request(port, "POST", ACCEPT_BOTH MODERN_HEADERS "Mcp-Method: tools/call\r\nMcp-Name: slow\r\n",
                     "{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"tools/call\",\"params\":{\"name\":\"slow\","
                     "\"arguments\":{\"ms\":5000}," MH_MODERN_META "}}");
    ck_assert_msg(r.status == 504, "HTTP %d %s", r.status, r.body);
    hres_free(&r);
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
}
END_TEST

/*
** 2026-07-28 calls in both isolation modes: a result as JSON (one that
** speaks of an "error" too), events as a stream, calls on two connections
** side by side, and the deadline's answer on time, even while a handler
** that ignores its cancellation still runs (a call run on its connection's
** thread would hold that answer back: the thread owes it).
*/
#define MODERN_SLOW(id, ms, tag, meta)                                                                                 \
    "{\"jsonrpc\":\"2.0\",\"id\":" #id ",\"method\":\"tools/call\",\"params\":{\"name\":\"slow\","                \
    "\"arguments\":{\"ms\":" #ms ",\"tag\":\"" tag "\"},\"_meta\":{" meta MH_MODERN_META_FIELDS "}}}"
#define SLOW_HEADERS ACCEPT_BOTH MODERN_HEADERS "Mcp-Method: tools/call\r\nMcp-Name: slow\r\n"

/* A modern echo call on PORT is answered: the host serves on. */
static void echo_answers(int port)
{
    hres r = request(port, "POST", ACCEPT_BOTH MODERN_HEADERS "Mcp-Method: tools/call\r\nMcp-Name: echo\r\n",
                     MODERN_CALL("echo"));
    ck_assert_msg(r.status == 200 && strstr(r.body, "\"text\":\"x\""), "HTTP %d %s", r.status, r.body);
    hres_free(&r);
}

START_TEST(modern_calls_answer_on_time)
{
    int port;
    mh_proc *p = start_http(&port, isolation[_i], "--call-timeout=2", "--cancel-grace-ms=30000");
    /* A quick call answers with JSON. */
    hres r = request(port, "POST", ACCEPT_BOTH MODERN_HEADERS "Mcp-Method: tools/call\r\nMcp-Name: echo\r\n",
                     MODERN_CALL("echo"));
    ck_assert_msg(r.status == 200, "HTTP %d %s", r.status, r.body);
    char *type = header_of(&r, "Content-Type");
    ck_assert_msg(type && strcmp(type, "application/json") == 0, "Content-Type %s", type ? type : "(none)");
    free(type);
    json_object *o = body_json(&r);
    MH_ASSERT_STR(o, "result content 0 text", "x");
    json_object_put(o);
    hres_free(&r);

    /* A result that speaks of an "error" is still a result (the status is
     * read from the response, not from its bytes). */
    r = request(port, "POST", ACCEPT_BOTH MODERN_HEADERS "Mcp-Method: tools/call\r\nMcp-Name: echo\r\n",
                "{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                "\"arguments\":{\"text\":\"\\\"error\\\":{\\\"code\\\":-32601}\"}," MH_MODERN_META "}}");
    ck_assert_msg(r.status == 200, "HTTP %d %s", r.status, r.body);
    o = body_json(&r);
    MH_ASSERT_STR(o, "result content 0 text", "\"error\":{\"code\":-32601}");
    json_object_put(o);
    hres_free(&r);

    /* With a progress token its progress streams before the result. */
    r = request(port, "POST", ACCEPT_BOTH MODERN_HEADERS "Mcp-Method: tools/call\r\nMcp-Name: progress\r\n",
                "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":\"progress\","
                "\"arguments\":{\"steps\":2},\"_meta\":{\"progressToken\":\"t\"," MH_MODERN_META_FIELDS "}}}");
    ck_assert_msg(r.status == 200, "HTTP %d %s", r.status, r.body);
    type = header_of(&r, "Content-Type");
    ck_assert_msg(type && strcmp(type, "text/event-stream") == 0, "Content-Type %s", type ? type : "(none)");
    free(type);
    const char *at = strstr(r.body, "notifications/progress");
    ck_assert_msg(at && strstr(at, "\"id\":8") && strstr(at, "progress: 2 steps"), "progress, then result: %s",
                  r.body);
    hres_free(&r);

    /* Two calls on two connections run side by side: the second to finish
     * saw both running (the slow tool's peak). */
    int a = send_request(port, "POST", "/mcp", SLOW_HEADERS, MODERN_SLOW(9, 600, "a", ""));
    int b = send_request(port, "POST", "/mcp", SLOW_HEADERS, MODERN_SLOW(10, 600, "b", ""));
    hres ra = read_response(a), rb = read_response(b);
    ck_assert_msg(ra.status == 200 && rb.status == 200, "HTTP %d %s / %d %s", ra.status, ra.body, rb.status, rb.body);
    ck_assert_msg(strstr(ra.body, "peak 2") || strstr(rb.body, "peak 2"), "calls overlap: %s / %s", ra.body, rb.body);
    hres_free(&ra);
    hres_free(&rb);

    /* A call past --call-timeout is answered with its timeout result. */
    r = request(port, "POST", SLOW_HEADERS, MODERN_SLOW(11, 30000, "late", ""));
    ck_assert_msg(r.status == 200 && strstr(r.body, "timed out after"), "HTTP %d %s", r.status, r.body);
    hres_free(&r);

    /* So is one whose handler ignores its cancellation, before the handler
     * stops (it says so on stderr, after 15 s; its worker is not killed
     * before that, --cancel-grace-ms). */
    r = request(port, "POST", SLOW_HEADERS,
                "{\"jsonrpc\":\"2.0\",\"id\":13,\"method\":\"tools/call\",\"params\":{\"name\":\"slow\","
                "\"arguments\":{\"ms\":15000,\"ignore_cancel\":true,\"tag\":\"stubborn\"}," MH_MODERN_META "}}");
    ck_assert_msg(r.status == 200 && strstr(r.body, "timed out after"), "HTTP %d %s", r.status, r.body);
    hres_free(&r);
    char *err = mh_stderr(p);
    ck_assert_msg(!strstr(err, "slow[stubborn]: saw cancellation"), "the answer waited for the handler: %s", err);
    free(err);
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
}
END_TEST

/* The names of P's threads, one a line (/proc/PID/task/TID/comm), into
 * OUT (SIZE bytes). */
static void thread_names(const mh_proc *p, char *out, size_t size)
{
    char dir[64], path[400], name[64];
    size_t n = 0;
    snprintf(dir, sizeof dir, "/proc/%ld/task", mh_pid(p));
    DIR *d = opendir(dir);
    ck_assert_msg(d, "%s: %s", dir, strerror(errno));
    out[0] = '\0';
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s/comm", dir, e->d_name);
        FILE *f = fopen(path, "r");
        if (f && fgets(name, sizeof name, f) && n + strlen(name) < size) {
            memcpy(out + n, name, strlen(name) + 1);
            n += strlen(name);
        }
        if (f)
            fclose(f);
    }
    closedir(d);
}

/*
** A 2026-07-28 call of a process-isolated tool waits for its worker on its
** connection's thread: no pool thread is ever started for it. An
** in-process handler never runs there (the thread owes the deadline's
** answer, and the handler might never return): it runs on the pool.
*/
START_TEST(modern_worker_calls_wait_on_their_connection)
{
    int port;
    mh_proc *p = start_http(&port, isolation[_i], NULL, NULL);
    for (int i = 0; i < 3; i++) {
        echo_answers(port);
    }
    char names[8192];
    thread_names(p, names, sizeof names);
    bool pooled = strstr(names, "th-pool\n") != NULL;
    if (_i == 0)
        ck_assert_msg(!pooled, "a worker's call went through a pool thread:\n%s", names);
    else
        ck_assert_msg(pooled, "an in-process call ran without a pool thread:\n%s", names);
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
}
END_TEST

/*
** A call waiting on its connection's thread lets go at its deadline even
** when its handler ignores the cancellation: the timeout is answered, and
** what is left goes to the worker's monitor, which kills the worker past
** --cancel-grace-ms; the plugin serves again after.
*/
START_TEST(modern_call_let_go_at_deadline_is_finished_by_the_monitor)
{
    int port;
    mh_proc *p = start_http(&port, "--call-timeout=0.5", "--cancel-grace-ms=300", NULL);
    hres r = request(port, "POST", SLOW_HEADERS,
                     "{\"jsonrpc\":\"2.0\",\"id\":13,\"method\":\"tools/call\",\"params\":{\"name\":\"slow\","
                     "\"arguments\":{\"ms\":15000,\"ignore_cancel\":true,\"tag\":\"stubborn\"}," MH_MODERN_META "}}");
    ck_assert_msg(r.status == 200 && strstr(r.body, "timed out after"), "HTTP %d %s", r.status, r.body);
    hres_free(&r);
    ck_assert_msg(mh_stderr_wait(p, "'slow' ignored cancellation for 300 ms", MH_TIMEOUT_MS),
                  "the worker of the abandoned call was not killed");
    echo_answers(port);
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
}
END_TEST

/*
** A call waiting on its connection's thread gives that thread back as
** soon as it has something to stream: its progress reaches the client
** while it still runs, not with its result.
*/
START_TEST(modern_worker_call_streams_progress_as_it_comes)
{
    int port;
    mh_proc *p = start_http(&port, NULL, NULL, NULL);
    int fd = send_request(port, "POST", "/mcp", SLOW_HEADERS,
                          "{\"jsonrpc\":\"2.0\",\"id\":21,\"method\":\"tools/call\",\"params\":{\"name\":\"slow\","
                          "\"arguments\":{\"ms\":20000,\"progress\":true,\"tag\":\"live\"},"
                          "\"_meta\":{\"progressToken\":\"t\"," MH_MODERN_META_FIELDS "}}}");
    char buf[8192] = "";
    size_t len = 0;
    ck_assert_msg(read_until(fd, buf, sizeof buf, &len, 0, "notifications/progress"), "no progress came: %s", buf);
    ck_assert_msg(!strstr(buf, "\"result\""), "the progress came with the result: %s", buf);
    close(fd); /* a modern client that leaves cancels its call */
    echo_answers(port);
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
}
END_TEST

/* ---- the command line ------------------------------------------------------------ */

START_TEST(http_alone_does_not_read_stdin)
{
    int port;
    mh_proc *p = start_http(&port, NULL, NULL, NULL);
    /* stdio is not served: end of input does not end the host. */
    mh_close_stdin(p);
    ck_assert_int_eq(mh_wait(p, 500), -1);
    hres r = request(port, "POST", ACCEPT_BOTH, INIT_BODY);
    ck_assert_int_eq(r.status, 200);
    hres_free(&r);
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
}
END_TEST

START_TEST(http_and_stdio_together)
{
    int port;
    mh_proc *p = start_http(&port, "--stdio", NULL, NULL);
    mh_initialize(p, "2025-11-25");
    hres r = request(port, "POST", ACCEPT_BOTH, INIT_BODY);
    ck_assert_int_eq(r.status, 200);
    hres_free(&r);
    mh_finish(p); /* end of input ends both */
}
END_TEST

/* ---- authorization (--auth-token-file) ------------------------------------ */

/* A token file: a plain token without scopes, one with scope "tools", and
 * the SHA-256 of "hashed-secret" with scope "tools", then the lines of
 * EXTRA. Returns its path. */
static char *token_file_with(const char *extra)
{
    char *path = strdup("/tmp/th-auth-XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    const char *text = "# test tokens\n"
                       "plain-token\n"
                       "scoped-token tools\n"
                       "sha256:4e598f5daafc2fda61641ddbb5956deb23fde6616366dc9dd5a7c9f47da4d787 tools admin\n";
    ck_assert(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    ck_assert(write(fd, extra, strlen(extra)) == (ssize_t)strlen(extra));
    close(fd);
    return path;
}

static char *token_file(void)
{
    return token_file_with("");
}

static hres init_with(int port, const char *auth)
{
    char hdrs[2048];
    snprintf(hdrs, sizeof hdrs, ACCEPT_BOTH "%s", auth ? auth : "");
    return request(port, "POST", hdrs, INIT_BODY);
}

static void assert_www_auth(const hres *r, int status, const char *want)
{
    ck_assert_msg(r->status == status, "want HTTP %d, got %d: %s", status, r->status, r->body);
    char *w = header_of(r, "WWW-Authenticate");
    ck_assert_msg(w != NULL, "no WWW-Authenticate in %s", r->headers);
    ck_assert_msg(strstr(w, want) != NULL, "WWW-Authenticate '%s' lacks '%s'", w, want);
    free(w);
}

START_TEST(bearer_tokens_checked)
{
    char *file = token_file(), opt[128];
    snprintf(opt, sizeof opt, "--auth-token-file=%s", file);
    int port;
    mh_proc *p = start_http(&port, opt, NULL, NULL);
    hres r = init_with(port, NULL);
    assert_www_auth(&r, 401, "Bearer resource_metadata=\"http://127.0.0.1:");
    char *w = header_of(&r, "WWW-Authenticate");
    ck_assert_msg(strstr(w, "/.well-known/oauth-protected-resource/mcp\"") && !strstr(w, "error="), "%s", w);
    ck_assert_msg(strstr(w, "scope=\"tools admin\""), "%s", w);
    free(w);
    hres_free(&r);
    r = init_with(port, "Authorization: Bearer wrong-token\r\n");
    assert_www_auth(&r, 401, "error=\"invalid_token\"");
    hres_free(&r);
    r = init_with(port, "Authorization: Basic cGxhaW4tdG9rZW4=\r\n");
    ck_assert_int_eq(r.status, 401);
    hres_free(&r);
    r = init_with(port, "Authorization: Bearer plain-token\r\n");
    ck_assert_msg(r.status == 200, "HTTP %d %s", r.status, r.body);
    hres_free(&r);
    /* The file holds only the hash of this one. */
    r = init_with(port, "Authorization: Bearer hashed-secret\r\n");
    ck_assert_msg(r.status == 200, "HTTP %d %s", r.status, r.body);
    hres_free(&r);
    r = init_with(port, "Authorization: Bearer sha256:4e598f5daafc2fda61641ddbb5956deb23fde6616366dc9dd5a7c9f47da4d787\r\n");
    ck_assert_int_eq(r.status, 401);
    hres_free(&r);
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
    unlink(file);
    free(file);
}
END_TEST

START_TEST(insufficient_scope_is_403)
{
    char *file = token_file(), opt[128];
    snprintf(opt, sizeof opt, "--auth-token-file=%s", file);
    int port;
    mh_proc *p = start_http(&port, opt, "--auth-scope=tools", NULL);
    hres r = init_with(port, "Authorization: Bearer plain-token\r\n");
    assert_www_auth(&r, 403, "error=\"insufficient_scope\"");
    char *w = header_of(&r, "WWW-Authenticate");
    ck_assert_msg(strstr(w, "scope=\"tools\""), "%s", w);
    free(w);
    hres_free(&r);
    r = init_with(port, "Authorization: Bearer scoped-token\r\n");
    ck_assert_msg(r.status == 200, "HTTP %d %s", r.status, r.body);
    hres_free(&r);
    r = init_with(port, "Authorization: Bearer hashed-secret\r\n");
    ck_assert_msg(r.status == 200, "HTTP %d %s", r.status, r.body);
    hres_free(&r);
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
    unlink(file);
    free(file);
}
END_TEST

START_TEST(protected_resource_metadata)
{
    char *file = token_file(), opt[128];
    snprintf(opt, sizeof opt, "--auth-token-file=%s", file);
    int port;
    mh_proc *p = start_http(&port, opt, "--auth-issuer=https://as.example", "--http-resource-url=https://mcp.example/mcp");
    static const char *const paths[] = {"/.well-known/oauth-protected-resource",
                                        "/.well-known/oauth-protected-resource/mcp"};
    for (size_t i = 0; i < 2; i++) {
        hres r = read_response(send_request(port, "GET", paths[i], NULL, NULL));
        ck_assert_msg(r.status == 200, "%s: HTTP %d %s", paths[i], r.status, r.body);
        json_object *o = body_json(&r);
        MH_ASSERT_STR(o, "resource", "https://mcp.example/mcp");
        MH_ASSERT_STR(o, "authorization_servers 0", "https://as.example");
        MH_ASSERT_STR(o, "scopes_supported 0", "tools");
        MH_ASSERT_STR(o, "scopes_supported 1", "admin");
        json_object_put(o);
        hres_free(&r);
    }
    hres r = init_with(port, NULL);
    assert_www_auth(&r, 401,
                    "resource_metadata=\"https://mcp.example/.well-known/oauth-protected-resource/mcp\"");
    hres_free(&r);
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
    unlink(file);
    free(file);
}
END_TEST

/* A legacy session opened with bearer token TOKEN; returns its id. */
static char *open_session_as(int port, const char *token)
{
    char auth[1024], hdrs[2048];
    snprintf(auth, sizeof auth, "Authorization: Bearer %s\r\n", token);
    hres r = init_with(port, auth);
    ck_assert_msg(r.status == 200, "initialize: HTTP %d %s", r.status, r.body);
    char *sid = header_of(&r, "Mcp-Session-Id");
    ck_assert(sid != NULL);
    hres_free(&r);
    snprintf(hdrs, sizeof hdrs, ACCEPT_BOTH "%sMcp-Session-Id: %s\r\n", auth, sid);
    r = request(port, "POST", hdrs, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    ck_assert_int_eq(r.status, 202);
    hres_free(&r);
    return sid;
}

static hres post_as(int port, const char *token, const char *sid, const char *body)
{
    char hdrs[2048];
    snprintf(hdrs, sizeof hdrs, ACCEPT_BOTH "Authorization: Bearer %s\r\nMcp-Session-Id: %s\r\n", token, sid);
    return request(port, "POST", hdrs, body);
}

#define CALL_ECHO                                                                                                      \
    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","                          \
    "\"arguments\":{\"text\":\"hi\"}}}"

START_TEST(tool_scope_checked_at_call)
{
    char *file = token_file_with("near-token toolsmith xtools\n"), opt[128];
    snprintf(opt, sizeof opt, "--auth-token-file=%s", file);
    int port;
    mh_proc *p = start_http(&port, opt, "--auth-tool-scope=echo=tools", NULL);
    char *sid = open_session_as(port, "plain-token");
    /* Listing is allowed; calling needs the tool's scope. */
    hres r = post_as(port, "plain-token", sid, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
    ck_assert_msg(r.status == 200 && strstr(r.body, "\"echo\""), "HTTP %d %s", r.status, r.body);
    hres_free(&r);
    r = post_as(port, "plain-token", sid, CALL_ECHO);
    assert_www_auth(&r, 403, "error=\"insufficient_scope\"");
    hres_free(&r);
    r = post_as(port, "plain-token", sid, "[" CALL_ECHO "]");
    ck_assert_int_eq(r.status, 403);
    hres_free(&r);
    free(sid);
    /* A scope is a whole word: "toolsmith" and "xtools" are not "tools". */
    sid = open_session_as(port, "near-token");
    r = post_as(port, "near-token", sid, CALL_ECHO);
    assert_www_auth(&r, 403, "error=\"insufficient_scope\"");
    hres_free(&r);
    free(sid);
    sid = open_session_as(port, "scoped-token");
    r = post_as(port, "scoped-token", sid, CALL_ECHO);
    ck_assert_msg(r.status == 200 && strstr(r.body, "hi"), "HTTP %d %s", r.status, r.body);
    hres_free(&r);
    free(sid);
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
    unlink(file);
    free(file);
}
END_TEST

/* Messages whose method or tool name is JSON null (alone and in a batch):
 * with tokens and a per-tool scope they get the answer a server without
 * tokens gives, not a crash of the scope check. */
/* The same bodies through one authorised host (OPT and, for a JWKS, ISSUER
 * and RESOURCE; a session opened with TOKEN) and a host without tokens: the
 * same answer, then echo still runs. */
static void assert_null_names_answered(const char *opt, const char *issuer, const char *resource,
                                       const char *token)
{
    static const char *const bodies[] = {
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":null}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":null}}",
        "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":null}}]",
        "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":null}]",
    };
    int open_port, auth_port;
    mh_proc *open = start_http(&open_port, "--auth-tool-scope=echo=tools", NULL, NULL);
    mh_proc *authd = mh_start("--http", "127.0.0.1:0", opt, "--auth-tool-scope=echo=tools", issuer, resource, NULL);
    ck_assert_msg(mh_stderr_wait(authd, LISTENING, MH_TIMEOUT_MS), "%s: toolhost did not start listening", opt);
    char *err = mh_stderr(authd);
    auth_port = atoi(strstr(err, LISTENING) + strlen(LISTENING));
    free(err);
    char *open_sid = open_session(open_port), *sid = open_session_as(auth_port, token);
    char hdrs[256];
    snprintf(hdrs, sizeof hdrs, ACCEPT_BOTH "Mcp-Session-Id: %s\r\n", open_sid);
    for (size_t i = 0; i < sizeof bodies / sizeof *bodies; i++) {
        hres want = request(open_port, "POST", hdrs, bodies[i]);
        hres got = post_as(auth_port, token, sid, bodies[i]);
        ck_assert_msg(got.status == want.status && strcmp(got.body, want.body) == 0,
                      "%s %s: with tokens HTTP %d %s, without HTTP %d %s", opt, bodies[i], got.status, got.body,
                      want.status, want.body);
        ck_assert_msg(strstr(got.body, "\"error\""), "%s: answered %s", bodies[i], got.body);
        hres_free(&want);
        hres_free(&got);
    }
    hres r = post_as(auth_port, token, sid, CALL_ECHO);
    ck_assert_msg(r.status == 200 && strstr(r.body, "hi"), "%s: HTTP %d %s", opt, r.status, r.body);
    hres_free(&r);
    free(sid);
    free(open_sid);
    mh_kill(authd, SIGTERM);
    ck_assert_int_eq(mh_wait(authd, MH_TIMEOUT_MS), 0);
    mh_free(authd);
    mh_kill(open, SIGTERM);
    ck_assert_int_eq(mh_wait(open, MH_TIMEOUT_MS), 0);
    mh_free(open);
}

START_TEST(null_method_or_tool_name_with_scopes)
{
    char *file = token_file(), opt[128];
    snprintf(opt, sizeof opt, "--auth-token-file=%s", file);
    assert_null_names_answered(opt, NULL, NULL, "scoped-token");
    unlink(file);
    free(file);

    /* With a JWKS, scopes come from the token's claim: the same answers. */
    tk_key k = tk_key_new("k1", "ES256");
    char *jwks = tk_jwks_file(&k, 1), claims[512];
    snprintf(claims, sizeof claims,
             "{\"iss\":\"https://as.example\",\"aud\":\"https://mcp.example/mcp\",\"sub\":\"alice\","
             "\"scope\":\"tools\",\"exp\":%ld}",
             (long)time(NULL) + 300);
    char *jwt = tk_sign(&k, NULL, 0, claims);
    snprintf(opt, sizeof opt, "--auth-jwks-file=%s", jwks);
    assert_null_names_answered(opt, "--auth-issuer=https://as.example", "--http-resource-url=https://mcp.example/mcp",
                               jwt);
    free(jwt);
    unlink(jwks);
    free(jwks);
    tk_key_free(&k);
}
END_TEST

/* With --qualified-names a tool is called default__echo__echo: a scope on
 * "echo" names no tool, and would leave it open, so start-up refuses it
 * and says which name was meant; on the qualified name the scope holds. */
START_TEST(tool_scope_names_an_exposed_tool)
{
    char *file = token_file(), opt[128];
    snprintf(opt, sizeof opt, "--auth-token-file=%s", file);
    mh_proc *p = mh_start("--http", "127.0.0.1:0", opt, "--qualified-names", "--auth-tool-scope=echo=tools", NULL);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 1);
    char *err = mh_stderr(p);
    ck_assert_msg(strstr(err, "--auth-tool-scope: 'echo' names no tool served") &&
                      strstr(err, "'default__echo__echo'") && !strstr(err, "listening"),
                  "stderr: %s", err);
    free(err);
    mh_free(p);
    p = mh_start("--http", "127.0.0.1:0", opt, "--qualified-names", "--auth-tool-scope=default__echo__echo=tools",
                 NULL);
    ck_assert_msg(mh_stderr_wait(p, LISTENING, MH_TIMEOUT_MS), "toolhost did not start listening");
    err = mh_stderr(p);
    int port = atoi(strstr(err, LISTENING) + strlen(LISTENING));
    free(err);
    static const char call[] = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":"
                               "\"default__echo__echo\",\"arguments\":{\"text\":\"hi\"}}}";
    char *sid = open_session_as(port, "plain-token");
    hres r = post_as(port, "plain-token", sid, call);
    assert_www_auth(&r, 403, "error=\"insufficient_scope\"");
    hres_free(&r);
    free(sid);
    sid = open_session_as(port, "scoped-token");
    r = post_as(port, "scoped-token", sid, call);
    ck_assert_msg(r.status == 200 && strstr(r.body, "hi"), "HTTP %d %s", r.status, r.body);
    hres_free(&r);
    free(sid);
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
    unlink(file);
    free(file);
}
END_TEST

/* A reload that removes the scoped tool warns and keeps serving. */
START_TEST(tool_scope_on_a_removed_tool_warns)
{
    char *file = token_file(), opt[128], so[512];
    snprintf(opt, sizeof opt, "--auth-token-file=%s", file);
    char *dir = mh_private_dir(TOP_BUILDDIR "/plugins/.libs/echo.so", NULL);
    mh_proc *p = mh_spawn("--http", "127.0.0.1:0", opt, "--auth-tool-scope=echo=tools", "-d", dir, NULL);
    ck_assert_msg(mh_stderr_wait(p, LISTENING, MH_TIMEOUT_MS), "toolhost did not start listening");
    char *err = mh_stderr(p);
    int port = atoi(strstr(err, LISTENING) + strlen(LISTENING));
    free(err);
    snprintf(so, sizeof so, "%s/echo.so", dir);
    ck_assert(unlink(so) == 0);
    mh_kill(p, SIGHUP);
    ck_assert_msg(mh_stderr_wait(p, "--auth-tool-scope: 'echo' names no tool served", MH_TIMEOUT_MS),
                  "no warning after the reload");
    char *sid = open_session_as(port, "plain-token");
    hres r = post_as(port, "plain-token", sid, CALL_ECHO);
    ck_assert_msg(r.status == 403, "a call of the removed tool: HTTP %d %s", r.status, r.body);
    hres_free(&r);
    free(sid);
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
    mh_rm_dir(dir);
    unlink(file);
    free(file);
}
END_TEST

/* A 2026-07-28 requestState is bound to the bearer token that earned it:
 * replayed with another client's token it is refused (-32602); the same
 * token completes the call. */
START_TEST(request_state_bound_to_the_token)
{
    char *file = token_file(), opt[128];
    snprintf(opt, sizeof opt, "--auth-token-file=%s", file);
    char *dir = mh_private_dir(TEST_BUILDDIR "/conformance/.libs/input_required_tools.so", NULL);
    int port;
    mh_proc *p = mh_start("--http", "127.0.0.1:0", opt, "-d", dir, NULL);
    ck_assert(mh_stderr_wait(p, LISTENING, MH_TIMEOUT_MS));
    char *err = mh_stderr(p);
    port = atoi(strstr(err, LISTENING) + strlen(LISTENING));
    free(err);
#define MRTR_HEADERS(tok)                                                                                             \
    ACCEPT_BOTH MODERN_HEADERS "Mcp-Method: tools/call\r\nMcp-Name: test_input_required_result_elicitation\r\n"      \
                               "Authorization: Bearer " tok "\r\n"
#define MRTR_META                                                                                                     \
    "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","                                          \
    "\"io.modelcontextprotocol/clientCapabilities\":{\"elicitation\":{}}}"
    hres r = request(port, "POST", MRTR_HEADERS("plain-token"),
                     "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
                     "\"test_input_required_result_elicitation\",\"arguments\":{}," MRTR_META "}}");
    json_object *o = body_json(&r);
    MH_ASSERT_STR(o, "result resultType", "input_required");
    char body[2048];
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":"
             "\"test_input_required_result_elicitation\",\"arguments\":{},\"inputResponses\":{\"user_name\":"
             "{\"action\":\"accept\",\"content\":{\"name\":\"Ada\"}}},\"requestState\":\"%s\"," MRTR_META "}}",
             mh_str(o, "result requestState"));
    json_object_put(o);
    hres_free(&r);
    r = request(port, "POST", MRTR_HEADERS("scoped-token"), body);
    assert_error(&r, 400, -32602);
    ck_assert_msg(strstr(r.body, "another client"), "%s", r.body);
    hres_free(&r);
    r = request(port, "POST", MRTR_HEADERS("plain-token"), body);
    o = body_json(&r);
    MH_ASSERT_STR(o, "result content 0 text", "Hello, Ada!");
    json_object_put(o);
    hres_free(&r);
#undef MRTR_HEADERS
#undef MRTR_META
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
    mh_rm_dir(dir);
    unlink(file);
    free(file);
}
END_TEST

/* ---- authorization (--auth-jwks-file) ------------------------------------- */

/* A token by K for AUD, expiring DEXP seconds from now, with SCOPE (or none). */
static char *jwt_for(const tk_key *k, const char *aud, long dexp, const char *scope)
{
    char claims[512];
    snprintf(claims, sizeof claims, "{\"iss\":\"https://as.example\",\"aud\":\"%s\",\"exp\":%ld%s%s%s}", aud,
             (long)time(NULL) + dexp, scope ? ",\"scope\":\"" : "", scope ? scope : "", scope ? "\"" : "");
    return tk_sign(k, NULL, 0, claims);
}

START_TEST(jwt_bearer_tokens)
{
    tk_key k = tk_key_new("k1", "ES256");
    char *jwks = tk_jwks_file(&k, 1), opt[128];
    snprintf(opt, sizeof opt, "--auth-jwks-file=%s", jwks);
    /* The audience must be configured, not taken from Host. */
    mh_proc *p = mh_start("--http", "127.0.0.1:0", opt, "--auth-issuer=https://as.example", NULL);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 1);
    char *err = mh_stderr(p);
    ck_assert_msg(strstr(err, "--auth-jwks-file needs --http-resource-url"), "stderr: %s", err);
    free(err);
    mh_free(p);
    p = mh_start("--http", "127.0.0.1:0", opt, "--auth-issuer=https://as.example",
                 "--http-resource-url=https://mcp.example/mcp", "--auth-tool-scope=echo=tools:call", NULL);
    ck_assert_msg(mh_stderr_wait(p, LISTENING, MH_TIMEOUT_MS), "toolhost did not start listening");
    err = mh_stderr(p);
    int port = atoi(strstr(err, LISTENING) + strlen(LISTENING));
    free(err);
    char *good = jwt_for(&k, "https://mcp.example/mcp", 300, "tools:call"),
         *unscoped = jwt_for(&k, "https://mcp.example/mcp", 300, NULL),
         *expired = jwt_for(&k, "https://mcp.example/mcp", -3600, "tools:call"),
         *elsewhere = jwt_for(&k, "https://other.example/mcp", 300, "tools:call"), hdr[1024];
    const char *bad[] = {expired, elsewhere, "not.a.jwt"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(hdr, sizeof hdr, "Authorization: Bearer %s\r\n", bad[i]);
        hres r = init_with(port, hdr);
        assert_www_auth(&r, 401, "error=\"invalid_token\"");
        hres_free(&r);
    }
    char *sid = open_session_as(port, good);
    hres r = post_as(port, good, sid, CALL_ECHO);
    ck_assert_msg(r.status == 200 && strstr(r.body, "hi"), "HTTP %d %s", r.status, r.body);
    hres_free(&r);
    free(sid);
    sid = open_session_as(port, unscoped);
    r = post_as(port, unscoped, sid, CALL_ECHO);
    assert_www_auth(&r, 403, "scope=\"tools:call\", error=\"insufficient_scope\"");
    hres_free(&r);
    free(sid);
    /* The metadata lists the scope a JWKS cannot name by itself. */
    int fd = send_request(port, "GET", "/.well-known/oauth-protected-resource/mcp", "", NULL);
    r = read_response(fd);
    close(fd);
    ck_assert_msg(r.status == 200 && strstr(r.body, "\"tools:call\""), "HTTP %d %s", r.status, r.body);
    hres_free(&r);
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
    free(good);
    free(unscoped);
    free(expired);
    free(elsewhere);
    unlink(jwks);
    free(jwks);
    tk_key_free(&k);
}
END_TEST

/* A JWT by K for https://mcp.example/mcp naming subject SUB, expiring DEXP
 * seconds from now. */
static char *jwt_of(const tk_key *k, const char *sub, long dexp)
{
    char claims[512];
    snprintf(claims, sizeof claims,
             "{\"iss\":\"https://as.example\",\"aud\":\"https://mcp.example/mcp\",\"sub\":\"%s\",\"exp\":%ld}", sub,
             (long)time(NULL) + dexp);
    return tk_sign(k, NULL, 0, claims);
}

/* What another principal gets for session SID opened by OWNER: each way
 * of reaching it (POST, GET, DELETE) is tried with INTRUDER's token, and
 * each must be 404; the owner's session is unharmed. */
static void assert_session_private(int port, const char *owner, const char *intruder, const char *sid)
{
    hres r = post_as(port, intruder, sid, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\"}");
    ck_assert_msg(r.status == 404, "POST with another token: HTTP %d %s", r.status, r.body);
    hres_free(&r);
    char hdrs[4096];
    snprintf(hdrs, sizeof hdrs, "Accept: text/event-stream\r\nAuthorization: Bearer %s\r\nMcp-Session-Id: %s\r\n",
             intruder, sid);
    r = request(port, "GET", hdrs, NULL);
    ck_assert_msg(r.status == 404, "GET with another token: HTTP %d %s", r.status, r.body);
    hres_free(&r);
    snprintf(hdrs, sizeof hdrs, "Authorization: Bearer %s\r\nMcp-Session-Id: %s\r\n", intruder, sid);
    r = request(port, "DELETE", hdrs, NULL);
    ck_assert_msg(r.status == 404, "DELETE with another token: HTTP %d %s", r.status, r.body);
    hres_free(&r);
    r = post_as(port, owner, sid, CALL_ECHO);
    ck_assert_msg(r.status == 200 && strstr(r.body, "hi"), "the owner after the attempts: HTTP %d %s", r.status,
                  r.body);
    hres_free(&r);
    snprintf(hdrs, sizeof hdrs, "Authorization: Bearer %s\r\nMcp-Session-Id: %s\r\n", owner, sid);
    r = request(port, "DELETE", hdrs, NULL);
    ck_assert_int_eq(r.status, 200);
    hres_free(&r);
}

/* A legacy session belongs to the principal that opened it: a token-file
 * token (by its hash), or a JWT's subject, so that a fresh token of the
 * same subject keeps it while another subject's does not reach it. */
START_TEST(session_bound_to_its_principal)
{
    char *file = token_file(), opt[128];
    snprintf(opt, sizeof opt, "--auth-token-file=%s", file);
    int port;
    mh_proc *p = start_http(&port, opt, NULL, NULL);
    char *sid = open_session_as(port, "plain-token");
    assert_session_private(port, "plain-token", "scoped-token", sid);
    free(sid);
    /* "hashed-secret" is listed by its hash: the same principal either way. */
    sid = open_session_as(port, "hashed-secret");
    assert_session_private(port, "hashed-secret", "plain-token", sid);
    free(sid);
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);

    tk_key k = tk_key_new("k1", "ES256");
    char *jwks = tk_jwks_file(&k, 1);
    snprintf(opt, sizeof opt, "--auth-jwks-file=%s", jwks);
    p = mh_start("--http", "127.0.0.1:0", opt, "--auth-issuer=https://as.example",
                 "--http-resource-url=https://mcp.example/mcp", NULL);
    ck_assert_msg(mh_stderr_wait(p, LISTENING, MH_TIMEOUT_MS), "toolhost did not start listening");
    char *err = mh_stderr(p);
    port = atoi(strstr(err, LISTENING) + strlen(LISTENING));
    free(err);
    char *alice = jwt_of(&k, "alice", 300), *alice2 = jwt_of(&k, "alice", 600), *bob = jwt_of(&k, "bob", 300);
    sid = open_session_as(port, alice);
    hres r = post_as(port, alice2, sid, CALL_ECHO);
    ck_assert_msg(r.status == 200 && strstr(r.body, "hi"), "alice's next token: HTTP %d %s", r.status, r.body);
    hres_free(&r);
    assert_session_private(port, alice, bob, sid);
    free(sid);
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
    free(alice);
    free(alice2);
    free(bob);
    unlink(jwks);
    free(jwks);
    tk_key_free(&k);
    unlink(file);
    free(file);
}
END_TEST

/* --http-session-prefix starts every session id (a load balancer routes by
 * it: tests/scaleout/nginx.sh); a prefix a header cannot carry is refused. */
/* The status of an initialize with a bearer TOKEN. */
static int init_status(int port, const char *token)
{
    char hdr[1024];
    snprintf(hdr, sizeof hdr, "Authorization: Bearer %s\r\n", token);
    hres r = init_with(port, hdr);
    int status = r.status;
    hres_free(&r);
    return status;
}

/* Key rotation: SIGHUP re-reads --auth-jwks-file; the new key set replaces
 * the old one whole, and a file that does not load leaves it in use. */
START_TEST(jwks_reread_on_sighup)
{
    tk_key k1 = tk_key_new("k1", "ES256"), k2 = tk_key_new("k2", "RS256");
    char *jwks = tk_jwks_file(&k1, 1), opt[128];
    snprintf(opt, sizeof opt, "--auth-jwks-file=%s", jwks);
    mh_proc *p = mh_start("--http", "127.0.0.1:0", opt, "--auth-issuer=https://as.example",
                          "--http-resource-url=https://mcp.example/mcp", NULL);
    ck_assert_msg(mh_stderr_wait(p, LISTENING, MH_TIMEOUT_MS), "toolhost did not start listening");
    char *err = mh_stderr(p);
    int port = atoi(strstr(err, LISTENING) + strlen(LISTENING));
    free(err);
    char *by1 = jwt_for(&k1, "https://mcp.example/mcp", 300, NULL), *by2 = jwt_for(&k2, "https://mcp.example/mcp", 300, NULL);
    ck_assert_int_eq(init_status(port, by1), 200);
    ck_assert_int_eq(init_status(port, by2), 401);

    /* Rotated: k2 replaces k1 (written aside, renamed over the file). */
    char *next = tk_jwks_file(&k2, 1);
    ck_assert(rename(next, jwks) == 0);
    free(next);
    mh_kill(p, SIGHUP);
    ck_assert_msg(mh_stderr_wait(p, "--auth-jwks-file re-read", MH_TIMEOUT_MS), "no re-read logged");
    ck_assert_int_eq(init_status(port, by2), 200);
    ck_assert_int_eq(init_status(port, by1), 401);

    /* A file that does not load: logged, and k2 stays. */
    FILE *f = fopen(jwks, "w");
    ck_assert(f && fputs("{\"keys\":[{\"kty\":\"EC\",\"crv\":\"P-256\"}]}", f) >= 0 && fclose(f) == 0);
    mh_kill(p, SIGHUP);
    ck_assert_msg(mh_stderr_wait(p, "the keys loaded before stay in use", MH_TIMEOUT_MS), "no refusal logged");
    err = mh_stderr(p);
    ck_assert_msg(strstr(err, jwks), "the refusal names the file: %s", err);
    free(err);
    ck_assert_int_eq(init_status(port, by2), 200);
    ck_assert_int_eq(init_status(port, by1), 401);
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
    free(by1);
    free(by2);
    unlink(jwks);
    free(jwks);
    tk_key_free(&k1);
    tk_key_free(&k2);
}
END_TEST

START_TEST(session_prefix)
{
    int port;
    mh_proc *p = start_http(&port, "--http-session-prefix=i7-", NULL, NULL);
    for (int i = 0; i < 2; i++) {
        char *sid = open_session(port);
        ck_assert_msg(strncmp(sid, "i7-", 3) == 0 && strlen(sid) == 3 + 32, "session id %s", sid);
        free(sid);
    }
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
    static const char *const bad[] = {"--http-session-prefix=a b", "--http-session-prefix=",
                                      "--http-session-prefix=123456789012345678901234567890123"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        p = mh_start("--http", "127.0.0.1:0", bad[i], NULL);
        ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 2);
        char *err = mh_stderr(p);
        ck_assert_msg(strstr(err, "--http-session-prefix: '"), "stderr: %s", err);
        free(err);
        mh_free(p);
    }
}
END_TEST

START_TEST(non_loopback_needs_authorization)
{
    mh_proc *p = mh_start("--http", "0.0.0.0:0", NULL);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 1);
    char *err = mh_stderr(p);
    ck_assert_msg(strstr(err, "--allow-unauthenticated"), "stderr: %s", err);
    free(err);
    mh_free(p);
    p = mh_start("--http", "0.0.0.0:0", "--allow-unauthenticated", NULL);
    ck_assert_msg(mh_stderr_wait(p, "listening on http://0.0.0.0:", MH_TIMEOUT_MS), "did not listen");
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
}
END_TEST

/* How many of P's threads serve an HTTP connection: libmicrohttpd names
 * each "MHD-connection", and it ends once its connection is closed. */
static int connection_threads(const mh_proc *p)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%ld/task", mh_pid(p));
    DIR *d = opendir(dir);
    ck_assert_msg(d, "%s: %s", dir, strerror(errno));
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        char path[sizeof dir + sizeof e->d_name + 8], comm[32] = "";
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s/comm", dir, e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue; /* that thread ended meanwhile */
        if (fgets(comm, sizeof comm, f) && strncmp(comm, "MHD-connection", 14) == 0)
            n++;
        fclose(f);
    }
    closedir(d);
    return n;
}

/* A resource read in process isolation starts the plugin's worker; it must
 * outlive the HTTP connection whose request started it (a worker dies with
 * the thread that spawned it, and a modern request is served on its
 * connection's thread), so reads on later connections find it. */
START_TEST(resource_worker_outlives_its_connection)
{
    char *dir = mh_private_dir(TEST_BUILDDIR "/resplugins/.libs/resfix.so", NULL);
    mh_proc *p = mh_spawn("--http", "127.0.0.1:0", "-d", dir, "--isolation=process", "--no-registry-cache", NULL);
    ck_assert_msg(mh_stderr_wait(p, LISTENING, MH_TIMEOUT_MS), "toolhost did not start listening");
    char *err = mh_stderr(p);
    int port = atoi(strstr(err, LISTENING) + strlen(LISTENING));
    free(err);
    for (int k = 0; k < 3; k++) {
        hres r = request(port, "POST", ACCEPT_BOTH MODERN_HEADERS "Mcp-Method: resources/read\r\n"
                         "Mcp-Name: mem://items/3\r\n",
                         "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"resources/read\",\"params\":{\"uri\":"
                         "\"mem://items/3\"," MH_MODERN_META "}}");
        ck_assert_msg(r.status == 200, "read %d: HTTP %d %s", k, r.status, r.body);
        ck_assert_msg(strstr(r.body, "\"text\":\"item 3\""), "read %d: %s", k, r.body);
        hres_free(&r);
        while (connection_threads(p) > 0) /* the connection's thread ends */
            usleep(10 * 1000);
    }
    err = mh_stderr(p);
    ck_assert_msg(!strstr(err, "ended:"), "a worker ended:\n%s", err);
    free(err);
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
    mh_rm_dir(dir);
}
END_TEST

/* 2025-11-25 tasks over a legacy HTTP session: tasks/result of an
 * unfinished task is deferred, and its response still finds the POST that
 * asked (it is routed by id, like a call's). */
START_TEST(legacy_task_result_deferred_over_http)
{
    char *tdir = mh_private_dir(TEST_BUILDDIR "/conformance/.libs/task_tools.so", NULL);
    int port;
    mh_proc *p = start_http(&port, isolation[_i], "-d", tdir);
    char *sid = open_session(port);
    char hdrs[256];
    snprintf(hdrs, sizeof hdrs, ACCEPT_BOTH "Mcp-Session-Id: %s\r\n", sid);
    hres r = request(port, "POST", hdrs,
                     "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"slow_compute\","
                     "\"arguments\":{\"seconds\":0.3,\"label\":\"h\"},\"task\":{}}}");
    ck_assert_msg(r.status == 200, "HTTP %d %s", r.status, r.body);
    json_object *o = body_json(&r);
    MH_ASSERT_STR(o, "result task status", "working");
    char *task_id = strdup(mh_str(o, "result task taskId"));
    json_object_put(o);
    hres_free(&r);
    char body[256];
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tasks/result\",\"params\":{\"taskId\":\"%s\"}}", task_id);
    r = request(port, "POST", hdrs, body);
    ck_assert_msg(r.status == 200, "HTTP %d %s", r.status, r.body);
    ck_assert_msg(strstr(r.body, "\"id\":3") && strstr(r.body, "Computed 'h' after 0.3 s") &&
                      strstr(r.body, task_id),
                  "tasks/result: %s", r.body);
    hres_free(&r);
    r = request(port, "POST", hdrs, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tasks/list\"}");
    ck_assert_msg(r.status == 200 && strstr(r.body, task_id) && strstr(r.body, "completed"), "tasks/list: %s",
                  r.body);
    hres_free(&r);
    free(task_id);
    free(sid);
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
    mh_rm_dir(tdir);
}
END_TEST

static Suite *http_suite(void)
{
    Suite *s = suite_create("http");
    TCase *tc = tcase_create("http");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_loop_test(tc, legacy_session_lifecycle, 0, 2);
    tcase_add_loop_test(tc, progress_makes_an_event_stream, 0, 2);
    tcase_add_loop_test(tc, legacy_ask_on_the_call_stream, 0, 2);
    tcase_add_test(tc, a_full_session_table_refuses_newcomers);
    tcase_add_test(tc, idle_sessions_expire);
    tcase_add_loop_test(tc, modern_headers_checked, 0, 1);
    tcase_add_test(tc, refusals_have_their_status);
    tcase_add_loop_test(tc, sse_polling_resumes_with_last_event_id, 0, 2);
    tcase_add_test(tc, unresumed_answers_are_bounded);
    tcase_add_test(tc, a_retry_under_the_internal_poll_is_honoured);
    tcase_add_loop_test(tc, standalone_stream_carries_list_changed, 0, 2);
    tcase_add_test(tc, standalone_stream_does_not_delay_shutdown);
    tcase_add_loop_test(tc, sigterm_finishes_calls_in_flight, 0, 2);
    tcase_add_test(tc, connection_limit_holds);
    tcase_add_test(tc, request_time_limit);
    tcase_add_loop_test(tc, modern_calls_answer_on_time, 0, 2);
    tcase_add_loop_test(tc, sigterm_cancels_a_modern_call, 0, 2);
    tcase_add_loop_test(tc, modern_worker_calls_wait_on_their_connection, 0, 2);
    tcase_add_test(tc, modern_call_let_go_at_deadline_is_finished_by_the_monitor);
    tcase_add_test(tc, modern_worker_call_streams_progress_as_it_comes);
    tcase_add_test(tc, http_alone_does_not_read_stdin);
    tcase_add_test(tc, resource_worker_outlives_its_connection);
    tcase_add_test(tc, http_and_stdio_together);
    tcase_add_test(tc, bearer_tokens_checked);
    tcase_add_test(tc, insufficient_scope_is_403);
    tcase_add_test(tc, protected_resource_metadata);
    tcase_add_test(tc, non_loopback_needs_authorization);
    tcase_add_test(tc, request_state_bound_to_the_token);
    tcase_add_test(tc, tool_scope_checked_at_call);
    tcase_add_test(tc, null_method_or_tool_name_with_scopes);
    tcase_add_test(tc, tool_scope_names_an_exposed_tool);
    tcase_add_test(tc, tool_scope_on_a_removed_tool_warns);
    tcase_add_test(tc, jwt_bearer_tokens);
    tcase_add_test(tc, session_prefix);
    tcase_add_test(tc, jwks_reread_on_sighup);
    tcase_add_test(tc, session_bound_to_its_principal);
    tcase_add_loop_test(tc, legacy_task_result_deferred_over_http, 0, 2);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN_WITH(http_suite, mh_global_setup, mh_global_teardown)
