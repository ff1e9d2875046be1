/* SPDX-License-Identifier: MIT */
/*
** test_hostile_ask.c: a plugin that forges ASK, RESULT and stray frames on
** its worker's real pipe (hostile/forge_ask.c), in a legacy session whose
** client can be asked: the client is asked the real question only, each
** call is answered once, the strays are logged naming the plugin, and the
** host serves on. In both isolation modes (in the host there is no pipe to
** forge on: the same calls, the real question only).
*/
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "mcp_harness.h"

#define ECHO_SO TOP_BUILDDIR "/plugins/.libs/echo.so"

static const char *const modes[] = {"--isolation=none", "--isolation=process"};
#define IN_PROCESS (_i == 1)

#define CALL(id, args)                                                                                                 \
    "{\"jsonrpc\":\"2.0\",\"id\":" #id ",\"method\":\"tools/call\",\"params\":{\"name\":\"forge_ask\","               \
    "\"arguments\":" args "}}"

/* The next stdout line, which may be a request from the server. */
static json_object *next_any(mh_proc *p)
{
    char *line = mh_read_line(p, MH_TIMEOUT_MS);
    ck_assert_msg(line != NULL, "no line from toolhost within %d ms", MH_TIMEOUT_MS);
    json_object *o = mh_parse(line);
    ck_assert_msg(o != NULL, "stdout line is not JSON: %s", line);
    free(line);
    return o;
}

static mh_proc *start(char **dir, const char *mode)
{
    *dir = mh_private_dir(mh_hostile("forge_ask"), ECHO_SO, NULL);
    mh_proc *p = mh_spawn("-d", *dir, mode, NULL);
    json_object *o = mh_rpc(p, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
                               "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"elicitation\":{},"
                               "\"roots\":{}},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
    MH_ASSERT_RESULT(o);
    json_object_put(o);
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    return p;
}

/* The response to ID is the next line: a text result TEXT. */
static void assert_text_next(mh_proc *p, int id, const char *text)
{
    json_object *o = next_any(p);
    ck_assert_msg(!mh_has(o, "method"), "a request or notification where response %d should be: %s", id,
                  mh_json(o));
    MH_ASSERT_INT(o, "id", id);
    MH_ASSERT_ABSENT(o, "result isError");
    MH_ASSERT_STR(o, "result content 0 text", text);
    json_object_put(o);
}

static void assert_echo_serves(mh_proc *p, int id)
{
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
               "\"arguments\":{\"text\":\"still here\"}}}",
            id);
    assert_text_next(p, id, "still here");
}

START_TEST(forged_asks_and_strays_around_a_real_question)
{
    char *dir;
    mh_proc *p = start(&dir, modes[_i]);
    mh_send(p, CALL(2, "{\"kind\":\"stray\"}"));
    /* The first line is the real question: no forged ASK (an id never
     * given out, id 0, a type the worker never sends) reached the client. */
    json_object *req = next_any(p);
    MH_ASSERT_STR(req, "method", "elicitation/create");
    MH_ASSERT_STR(req, "params message", "Who are you?");
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"action\":\"accept\",\"content\":{}}}",
            mh_json(mh_at(req, "id")));
    json_object_put(req);
    /* Then the response, not a request for the ASKs a C string would cut
     * short, and not the forged RESULT for another id. */
    assert_text_next(p, 2, "answer: accept (rc 0)");
    if (IN_PROCESS) {
        static const char *const logged[] = {
            "sent frame ASK for call 1001, which is no call of its own: dropped",
            "sent frame ASK for call 0,",
            "sent frame RESULT for call 1001,",
            "sent frame PROGRESS for call 4294967295,",
            "sent frame CALL for call 1,",
            "sent frame type 200 for call 1,",
        };
        for (size_t i = 0; i < sizeof logged / sizeof logged[0]; i++) {
            ck_assert_msg(mh_stderr_wait(p, logged[i], MH_TIMEOUT_MS), "stderr lacks \"%s\":\n%s", logged[i],
                          mh_stderr(p));
        }
        char *err = mh_stderr(p);
        const char *at = strstr(err, "sent frame ASK for call 1001");
        /* The line names the plugin's file. */
        const char *line = at;
        while (line > err && line[-1] != '\n')
            line--;
        ck_assert_msg(at && strstr(line, "forge_ask.so: worker ") && strstr(line, "forge_ask.so: worker ") < at,
                      "the stray's line does not name the plugin:\n%s", err);
        free(err);
    }
    /* Frames for the call that ended are dropped quietly: no request, no
     * second response, nothing logged. */
    mh_send(p, CALL(3, "{\"kind\":\"late\"}"));
    assert_text_next(p, 3, "late frames sent");
    assert_echo_serves(p, 4);
    /* The plugin's worker serves on too. */
    mh_send(p, CALL(5, "{\"kind\":\"late\"}"));
    assert_text_next(p, 5, "late frames sent");
    mh_ping_is_next(p, 6);
    static const char *const late[] = {"frame ASK for call 1,", "frame RESULT for call 1,", "frame PROGRESS for call 1,",
                                       "frame ASK for call 2,", "frame RESULT for call 2,", "frame PROGRESS for call 2,"};
    char *err = mh_stderr(p);
    for (size_t i = 0; i < sizeof late / sizeof late[0]; i++)
        ck_assert_msg(!strstr(err, late[i]), "a late frame was logged as a stray (%s):\n%s", late[i], err);
    free(err);
    mh_finish(p); /* which fails on any further stdout line */
    mh_rm_dir(dir);
}
END_TEST

static Suite *hostile_ask_suite(void)
{
    Suite *s = suite_create("hostile_ask");
    TCase *tc = tcase_create("forged");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_loop_test(tc, forged_asks_and_strays_around_a_real_question, 0, 2);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN_WITH(hostile_ask_suite, mh_global_setup, mh_global_teardown)
