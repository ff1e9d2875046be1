/* SPDX-License-Identifier: MIT */
/*
** test_testing.c: the test kit (toolhost/testing.h) as a plugin author uses
** it. Every condition runs in both isolation modes (the loop index: 0 in
** the host, 1 in workers): loading and refusals, calls and schema
** refusals, logs, progress, deadline, cancellation, scripted answers to
** the client requests (results and errors), the stateless 2026-07-28
** revision, settings and secrets,
** resources, prompts and completions, a crashing handler (a worker's crash
** is an error result; in the host it is the process's death, reported as
** toolhost reports it), and register functions linked into the test; and
** the diff messages.
*/
#define _GNU_SOURCE /* strndup */
#include "config.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>

#include "check_main.h"
#include "toolhost/testing.h"

#define KIT TEST_BUILDDIR "/kitplugins/.libs/kit.so"

static const char *const modes[] = {"--isolation=none", "--isolation=process"};

/* A NULL-terminated list of strings, for the fixtures below. */
#define LIST(...) ((const char *const[]){__VA_ARGS__, NULL})

/* A host in mode I with the options EXTRA and the plugin files PLUGINS
 * (NULL-terminated lists; NULL: none), not started yet. */
static th_test_host *new_host(int i, const char *const *extra, const char *const *plugins)
{
    const char *args[8] = {modes[i]};
    size_t n = 1;
    for (; extra && *extra; extra++) {
        ck_assert_uint_lt(n, 7);
        args[n++] = *extra;
    }
    th_test_host *h = th_test_host_new(args);
    ck_assert_ptr_nonnull(h);
    for (; plugins && *plugins; plugins++)
        ck_assert_int_eq(th_test_host_load(h, *plugins), 0);
    return h;
}

/* A started host in mode I with kit.so and the options EXTRA. */
static th_test_host *kit_host(int i, const char *const *extra)
{
    th_test_host *h = new_host(i, extra, LIST(KIT));
    ck_assert_msg(th_test_host_start(h) == 0, "start: %s", th_test_host_error(h));
    return h;
}

/* Call TOOL (ARGS, OPTS may be NULL) on H into R, expecting th_test_call
 * to return RC; R is cleared first, so a test can reuse it. */
static void call_rc(th_test_host *h, const char *tool, const char *args, const th_test_call_opts *o,
                    th_test_result *r, int rc)
{
    th_test_result_clear(r);
    int got = th_test_call(h, tool, args, o, r);
    ck_assert_msg(got == rc, "%s: returned %d (status %d: %s)", tool, got, r->status,
                  r->result_json ? r->result_json : r->error_text ? r->error_text : "nothing");
}

/* The same for any request METHOD with PARAMS. */
static void request_rc(th_test_host *h, const char *method, const char *params, th_test_result *r, int rc)
{
    th_test_result_clear(r);
    int got = th_test_request(h, method, params, NULL, r);
    ck_assert_msg(got == rc, "%s: returned %d (status %d: %s)", method, got, r->status,
                  r->result_json ? r->result_json : r->error_text ? r->error_text : "nothing");
}

/* The end of every test: R and H released. */
static void done(th_test_host *h, th_test_result *r)
{
    th_test_result_clear(r);
    th_test_host_free(h);
}

/* The string member KEY of the element I of the array A. */
static const char *member_at(json_object *a, size_t i, const char *key)
{
    json_object *v;
    ck_assert_uint_gt(json_object_array_length(a), i);
    ck_assert(json_object_object_get_ex(json_object_array_get_idx(a, i), key, &v));
    return json_object_get_string(v);
}

#define ASSERT_JSON(r, path, want)                                                                                     \
    do {                                                                                                               \
        char m_[512];                                                                                                  \
        ck_assert_msg(th_test_expect((r), (path), (want), m_, sizeof m_), "%s", m_);                                   \
    } while (0)

START_TEST(call_result_log_progress)
{
    th_test_host *h = kit_host(_i, NULL);
    th_test_result r = {0};
    ck_assert_uint_eq(th_test_host_tool_count(h), 5);
    call_rc(h, "kit", "{\"a\":1,\"b\":2}", NULL, &r, 0);
    ck_assert(!r.is_error);
    ASSERT_JSON(&r, "structuredContent", "{\"sum\":3}");
    ck_assert_str_eq(th_test_text(&r, 0), "{\"sum\":3}");
    ck_assert_uint_eq(json_object_array_length(r.logs), 1);
    ck_assert_str_eq(member_at(r.logs, 0, "data"), "adding 1 and 2");
    ck_assert_str_eq(member_at(r.logs, 0, "level"), "info");
    ck_assert_uint_eq(json_object_array_length(r.progress), 2);
    ck_assert_str_eq(member_at(r.progress, 1, "message"), "done");
    ck_assert(r.duration_ms >= 0);
    done(h, &r);
}
END_TEST

/* The host's schema check, not the handler, refuses (the handler would
 * have added a string as 0), with the host's message, as a tool error. */
START_TEST(schema_refusal)
{
    th_test_host *h = kit_host(_i, NULL);
    th_test_result r = {0};
    call_rc(h, "kit", "{\"a\":\"one\",\"b\":2}", NULL, &r, 0);
    ck_assert(r.is_error);
    ck_assert_str_eq(th_test_text(&r, 0), "Invalid arguments for tool 'kit' (1 problem):\n/a: must be integer, got string (type)");
    ck_assert_uint_eq(json_object_array_length(r.logs), 0);
    call_rc(h, "nosuch", NULL, NULL, &r, -1);
    ck_assert_int_eq(r.status, TH_TEST_REFUSED);
    ck_assert_ptr_nonnull(strstr(r.error_text, "nosuch"));
    call_rc(h, "kit", "[1]", NULL, &r, -1);
    ck_assert_int_eq(r.status, TH_TEST_FAILED);
    done(h, &r);
}
END_TEST

/* A plugin whose descriptor names another tool is refused with the
 * loader's message, and the good plugin next to it still serves. */
START_TEST(refused_plugin)
{
    th_test_host *h = new_host(_i, NULL, LIST(KIT, TEST_BUILDDIR "/plugins/.libs/mismatch.so"));
    th_test_result r = {0};
    ck_assert_int_eq(th_test_host_start(h), -1);
    const char *e = th_test_host_error(h);
    ck_assert_msg(strstr(e, "mismatch.so refused") && strstr(e, "does not match the plugin file"), "%s", e);
    call_rc(h, "kit", "{\"a\":2,\"b\":2}", NULL, &r, 0);
    ASSERT_JSON(&r, "structuredContent.sum", "4");
    ck_assert_int_eq(th_test_host_load(h, KIT), -1); /* too late */
    done(h, &r);
}
END_TEST

START_TEST(deadline)
{
    th_test_host *h = kit_host(_i, NULL);
    th_test_call_opts o = {.deadline_ms = 300};
    th_test_result r = {0};
    th_test_call(h, "kit_wait", NULL, &o, &r);
    /* The deadline's answer, not the kit's own wait running out. */
    ck_assert_int_ne(r.status, TH_TEST_NO_ANSWER);
    ck_assert_msg(r.is_error || r.status == TH_TEST_REFUSED, "%s", r.result_json ? r.result_json : "");
    done(h, &r);
}
END_TEST

START_TEST(cancel_on_progress)
{
    th_test_host *h = kit_host(_i, NULL);
    th_test_call_opts o = {.cancel_on_progress = true};
    th_test_result r = {0};
    call_rc(h, "kit_wait", NULL, &o, &r, -1);
    ck_assert_int_eq(r.status, TH_TEST_CANCELLED);
    ck_assert_uint_eq(json_object_array_length(r.progress), 1);
    done(h, &r);
}
END_TEST

START_TEST(cancel_after)
{
    th_test_host *h = kit_host(_i, NULL);
    th_test_call_opts o = {.cancel_after_ms = 100};
    th_test_result r = {0};
    call_rc(h, "kit_wait", NULL, &o, &r, -1);
    ck_assert_int_eq(r.status, TH_TEST_CANCELLED);
    ck_assert(r.duration_ms >= 100);
    done(h, &r);
}
END_TEST

START_TEST(scripted_answers)
{
    th_test_host *h = kit_host(_i, NULL);
    const th_test_answer answers[] = {
        {"sampling/createMessage", "{\"role\":\"assistant\",\"content\":{\"type\":\"text\",\"text\":\"ok\"},"
                                   "\"model\":\"m\",\"stopReason\":\"endTurn\"}", NULL},
        {"elicitation/create", "{\"action\":\"accept\",\"content\":{\"name\":\"Ada\"}}", NULL},
        {"roots/list", "{\"roots\":[{\"uri\":\"file:///srv\",\"name\":\"srv\"}]}", NULL},
        {"elicitation/create", NULL, "the user closed the form"}, /* below */
    };
    th_test_call_opts o = {.answers = answers, .nanswers = 3};
    th_test_result r = {0};
    call_rc(h, "kit_ask", "{\"what\":\"elicit\"}", &o, &r, 0);
    ASSERT_JSON(&r, "structuredContent.content.name", "\"Ada\"");
    ck_assert_uint_eq(json_object_array_length(r.asked), 1);
    ck_assert_str_eq(member_at(r.asked, 0, "method"), "elicitation/create");
    call_rc(h, "kit_ask", "{\"what\":\"sample\"}", &o, &r, 0);
    ASSERT_JSON(&r, "structuredContent.content.text", "\"ok\"");
    call_rc(h, "kit_ask", "{\"what\":\"roots\"}", &o, &r, 0);
    ASSERT_JSON(&r, "structuredContent.roots.0.uri", "\"file:///srv\"");
    /* A scripted error reaches the handler as TH_ERR_IO. */
    th_test_call_opts closed = {.answers = answers + 3, .nanswers = 1};
    call_rc(h, "kit_ask", "{\"what\":\"elicit\"}", &closed, &r, 0);
    ck_assert(r.is_error);
    ck_assert_str_eq(th_test_text(&r, 0), "asking failed: TH_ERR_IO");
    ck_assert_uint_eq(json_object_array_length(r.asked), 1);
    /* Unscripted: the kit's own error, the same to the handler. */
    th_test_call_opts none = {0};
    call_rc(h, "kit_ask", "{\"what\":\"elicit\"}", &none, &r, 0);
    ck_assert(r.is_error);
    ck_assert_str_eq(th_test_text(&r, 0), "asking failed: TH_ERR_IO");
    done(h, &r);
}
END_TEST

/* A plugin setting and a secret one reach the plugin as given. */
START_TEST(settings_and_secrets)
{
    th_test_host *h = kit_host(_i, LIST("--set=kit.greeting=hello", "--set-secret=kit.token=s3cret"));
    th_test_result r = {0};
    call_rc(h, "kit_setting", NULL, NULL, &r, 0);
    ck_assert_str_eq(th_test_text(&r, 0), "hello");
    call_rc(h, "kit_setting", "{\"key\":\"token\"}", NULL, &r, 0);
    ck_assert_str_eq(th_test_text(&r, 0), "s3cret");
    done(h, &r);
}
END_TEST

/* A resource and a template are listed and read, the read's log line
 * reaching the test; a missing one is the protocol's error. */
START_TEST(resources)
{
    th_test_host *h = kit_host(_i, NULL);
    th_test_result r = {0};
    request_rc(h, "resources/list", NULL, &r, 0);
    ASSERT_JSON(&r, "resources.0.uri", "\"kit://note\"");
    request_rc(h, "resources/templates/list", NULL, &r, 0);
    ASSERT_JSON(&r, "resourceTemplates.0.uriTemplate", "\"kit://items/{id}\"");
    request_rc(h, "resources/read", "{\"uri\":\"kit://note\"}", &r, 0);
    ASSERT_JSON(&r, "contents.0.text", "\"a note\"");
    ck_assert_str_eq(member_at(r.logs, 0, "data"), "reading kit://note");
    request_rc(h, "resources/read", "{\"uri\":\"kit://items/7\"}", &r, 0);
    ASSERT_JSON(&r, "contents.0.text", "\"item 7\"");
    request_rc(h, "resources/read", "{\"uri\":\"kit://items/missing\"}", &r, -1);
    ck_assert_int_eq(r.status, TH_TEST_REFUSED);
    done(h, &r);
}
END_TEST

/* The stateless revision: no handshake, yet the handler's log line and
 * progress still reach the test (the log level rides in _meta); a question
 * to the client comes back as the InputRequiredResult, not asked. */
START_TEST(stateless_revision)
{
    th_test_host *h = kit_host(_i, NULL);
    th_test_call_opts o = {.protocol_version = "2026-07-28"};
    th_test_result r = {0};
    th_test_call(h, "kit", "{\"a\":1,\"b\":2}", &o, &r);
    th_test_assert_ok(&r);
    ASSERT_JSON(&r, "resultType", "\"complete\"");
    ASSERT_JSON(&r, "structuredContent", "{\"sum\":3}");
    ck_assert_str_eq(member_at(r.logs, 0, "data"), "adding 1 and 2");
    ck_assert_uint_eq(json_object_array_length(r.progress), 2);
    const th_test_answer yes[] = {{"elicitation/create", "{\"action\":\"accept\",\"content\":{}}", NULL}};
    o.answers = yes;
    o.nanswers = 1;
    call_rc(h, "kit_ask", "{\"what\":\"elicit\"}", &o, &r, 0);
    ASSERT_JSON(&r, "resultType", "\"input_required\"");
    ck_assert_uint_eq(json_object_array_length(r.asked), 0);
    /* In the legacy revision (the default) there is no resultType. */
    call_rc(h, "kit", "{\"a\":1,\"b\":2}", NULL, &r, 0);
    ck_assert_ptr_null(th_test_at(&r, "resultType"));
    done(h, &r);
}
END_TEST

/* Process isolation: the worker's SIGSEGV reaches the test as the host
 * reports it, and the worker is restarted for the next call. */
START_TEST(crash_in_worker)
{
    th_test_host *h = kit_host(1, NULL);
    th_test_result r = {0};
    th_test_call(h, "kit_crash", NULL, NULL, &r);
    ck_assert_msg(r.status == TH_TEST_RESULT ? r.is_error : r.status == TH_TEST_REFUSED, "status %d", r.status);
    const char *said = r.result_json ? r.result_json : r.error_text;
    ck_assert_msg(strstr(said, "SIGSEGV") != NULL, "%s", said);
    call_rc(h, "kit", "{\"a\":1,\"b\":1}", NULL, &r, 0);
    done(h, &r);
}
END_TEST

/* In the host a crash is the process's death, as it is toolhost's: a
 * child of the test makes the call, and dies of SIGSEGV after the line
 * toolhost writes naming the tool. */
START_TEST(crash_in_host)
{
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        dup2(fds[1], 2);
        th_test_host *h = kit_host(0, NULL);
        th_test_result r = {0};
        th_test_call(h, "kit_crash", NULL, NULL, &r);
        _exit(0); /* not reached when the crash is a crash */
    }
    close(fds[1]);
    char said[4096];
    size_t n = 0;
    ssize_t got;
    while (n < sizeof said - 1 && (got = read(fds[0], said + n, sizeof said - 1 - n)) > 0)
        n += (size_t)got;
    said[n] = '\0';
    close(fds[0]);
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV, "status %#x: %s", status, said);
    ck_assert_msg(strstr(said, "SIGSEGV while running tool 'kit_crash'; the host dies with it"), "%s", said);
}
END_TEST

START_TEST(prompts_and_completions)
{
    th_test_host *h = new_host(_i, NULL, LIST(TOP_BUILDDIR "/plugins/.libs/prompts.so"));
    th_test_result r = {0};
    request_rc(h, "prompts/get", "{\"name\":\"code_review\",\"arguments\":{\"code\":\"x=1\"}}", &r, 0);
    ASSERT_JSON(&r, "messages.0.role", "\"user\"");
    request_rc(h, "completion/complete",
               "{\"ref\":{\"type\":\"ref/prompt\",\"name\":\"code_review\"},"
               "\"argument\":{\"name\":\"language\",\"value\":\"py\"}}",
               &r, 0);
    ASSERT_JSON(&r, "completion.values.0", "\"python\"");
    done(h, &r);
}
END_TEST

/* Register functions linked into this test, no .so: one good, one that
 * names another tool, as plugins/mismatch.c does. */
static th_rc linked_twice(th_call *call, json_object *args, void *user_data)
{
    (void)user_data;
    json_object *n;
    json_object_object_get_ex(args, "n", &n);
    return th_call_textf(call, "%d", 2 * json_object_get_int(n));
}

static const th_tool linked_tool = {
    TH_TOOL_INIT,
    .name = "linked",
    .description = "Twice the integer n.",
    .input_schema = "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\"}},\"required\":[\"n\"]}",
    .handler = linked_twice,
};

TH_REGISTER(linked)
{
    (void)server;
    return &linked_tool;
}

static const th_tool other_tool = {
    TH_TOOL_INIT,
    .name = "other_tool",
    .description = "Valid tool whose name does not match its file.",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = linked_twice,
};

TH_REGISTER(mismatch)
{
    (void)server;
    return &other_tool;
}

/* The text after "refused: " in the line of LOG naming WHO (malloc'd). */
static char *refusal(const char *log, const char *who)
{
    const char *at = strstr(log, who);
    ck_assert_msg(at != NULL, "no line about %s in: %s", who, log);
    const char *why = strstr(at, "refused: ");
    ck_assert_ptr_nonnull(why);
    return strndup(why, strcspn(why, "\n"));
}

/* A linked function is loaded and registered as a plugin file is, and
 * refused with the very message the file mismatch.so gets. */
START_TEST(linked_in_host)
{
    th_test_host *h = new_host(0, NULL, LIST(KIT));
    th_test_result r = {0};
    ck_assert_int_eq(th_test_host_register(h, "linked", register_linked_tool), 0);
    ck_assert_msg(th_test_host_start(h) == 0, "start: %s", th_test_host_error(h));
    ck_assert_uint_eq(th_test_host_tool_count(h), 6);
    call_rc(h, "linked", "{\"n\":21}", NULL, &r, 0);
    ck_assert_str_eq(th_test_text(&r, 0), "42");
    call_rc(h, "linked", "{\"n\":\"x\"}", NULL, &r, 0);
    ck_assert(r.is_error); /* the host's schema check */
    ck_assert_int_eq(th_test_host_register(h, "linked", register_linked_tool), -1); /* too late */
    done(h, &r);

    h = new_host(0, NULL, LIST(TEST_BUILDDIR "/plugins/.libs/mismatch.so"));
    ck_assert_int_eq(th_test_host_start(h), -1);
    char *from_file = refusal(th_test_host_error(h), "mismatch.so");
    th_test_host_free(h);
    h = new_host(0, NULL, NULL);
    ck_assert_int_eq(th_test_host_register(h, "mismatch", register_mismatch_tool), 0);
    ck_assert_int_eq(th_test_host_start(h), -1);
    char *linked = refusal(th_test_host_error(h), "plugin (linked)/mismatch.so refused");
    ck_assert_str_eq(linked, from_file);
    free(from_file);
    free(linked);
    /* A name that cannot be part of a C identifier, as a file's. */
    th_test_host_free(h);
    h = new_host(0, NULL, NULL);
    ck_assert_int_eq(th_test_host_register(h, "no-dash", register_linked_tool), 0);
    ck_assert_int_eq(th_test_host_start(h), -1);
    ck_assert_ptr_nonnull(strstr(th_test_host_error(h), "'no-dash' cannot be part of the entry point's name"));
    th_test_host_free(h);
}
END_TEST

/* A worker is a toolhost process that opens files: a linked function is
 * refused there, saying so, rather than run in the host unasked. */
START_TEST(linked_refused_in_workers)
{
    th_test_host *h = new_host(1, NULL, LIST(KIT));
    ck_assert_int_eq(th_test_host_register(h, "linked", register_linked_tool), -1);
    ck_assert_ptr_nonnull(strstr(th_test_host_error(h), "register_linked_tool: a function linked into the test "
                                                        "cannot run in a worker"));
    ck_assert_int_eq(th_test_host_start(h), 0);
    ck_assert_uint_eq(th_test_host_tool_count(h), 5);
    th_test_host_free(h);
}
END_TEST

START_TEST(diff_messages)
{
    json_object *want = json_tokener_parse("{\"total\":3,\"items\":[1,2],\"ok\":true}");
    json_object *got = json_tokener_parse("{\"items\":[1,2],\"total\":2,\"ok\":true}");
    char msg[256];
    ck_assert(!th_test_json_diff("structuredContent", want, got, msg, sizeof msg));
    ck_assert_str_eq(msg, "structuredContent.total: expected 3, got 2");
    json_object_put(got);
    got = json_tokener_parse("{\"items\":[1],\"total\":3.0,\"ok\":true,\"more\":1}");
    ck_assert(!th_test_json_diff(NULL, want, got, msg, sizeof msg));
    ck_assert_str_eq(msg, "items.1: expected 2, got nothing");
    json_object_array_add(json_object_object_get(got, "items"), json_object_new_int(2));
    ck_assert(!th_test_json_diff(NULL, want, got, msg, sizeof msg));
    ck_assert_str_eq(msg, "more: expected nothing, got 1");
    json_object_object_del(got, "more");
    ck_assert(th_test_json_diff(NULL, want, got, msg, sizeof msg));
    json_object_put(want);
    json_object_put(got);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("testing");
    TCase *tc = tcase_create("kit");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, call_result_log_progress, 0, 2);
    tcase_add_loop_test(tc, schema_refusal, 0, 2);
    tcase_add_loop_test(tc, refused_plugin, 0, 2);
    tcase_add_loop_test(tc, deadline, 0, 2);
    tcase_add_loop_test(tc, cancel_on_progress, 0, 2);
    tcase_add_loop_test(tc, cancel_after, 0, 2);
    tcase_add_loop_test(tc, scripted_answers, 0, 2);
    tcase_add_loop_test(tc, settings_and_secrets, 0, 2);
    tcase_add_loop_test(tc, resources, 0, 2);
    tcase_add_loop_test(tc, stateless_revision, 0, 2);
    tcase_add_test(tc, crash_in_worker);
    tcase_add_test(tc, crash_in_host);
    tcase_add_loop_test(tc, prompts_and_completions, 0, 2);
    tcase_add_test(tc, linked_in_host);
    tcase_add_test(tc, linked_refused_in_workers);
    tcase_add_test(tc, diff_messages);
    suite_add_tcase(s, tc);
    return s;
}

static void setup(void)
{
    /* Workers and scans run the toolhost just built, not an installed one. */
    setenv("TOOLHOST_TEST_EXE", TOP_BUILDDIR "/src/toolhost", 1);
}

TH_CHECK_MAIN_WITH(suite, setup, th_check_nothing)
