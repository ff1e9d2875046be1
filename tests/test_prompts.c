/* SPDX-License-Identifier: MIT */
/*
** test_prompts.c: the prompt and completion registry's rules in-process:
** each refusal's code and exact message, ABI checks, duplicates naming the
** first registrant, argument checks of prompts/get, and the methods served
** from a registry (list, get with roles, completion capped at 100).
*/
#include "config.h"

#include <string.h>

#include <check.h>

#include "check_main.h"
#include "plugin/prompts.h"
#include "plugin/registry.h"
#include "protocol/mcpprompts.h"

static th_rc get_hi(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    th_rc rc = th_call_text(call, "hi");
    if (rc == TH_OK)
        rc = th_call_prompt_role(call, "assistant");
    return rc == TH_OK ? th_call_text(call, "yo") : rc;
}

static th_rc complete_many(th_call *call, const char *argument, const char *value, json_object *context,
                           void *user_data)
{
    (void)argument;
    (void)context;
    (void)user_data;
    for (int i = 0; i < 120; i++)
        th_call_textf(call, "%s%d", value, i);
    return TH_OK;
}

static th_rc add(th_prompts *ps, th_prompt p, const char *origin, th_err *err)
{
    th_err_clear(err);
    return th_prompts_add(ps, &p, false, origin, err);
}

START_TEST(test_prompt_rules)
{
    th_prompts *ps = th_prompts_new();
    th_err err;
    static const struct {
        th_prompt p;
        th_rc rc;
        const char *msg;
    } cases[] = {
        {{TH_PROMPT_INIT, .get = get_hi}, TH_ERR_ATTRIBUTE, "Prompt missing required attribute: name"},
        {{TH_PROMPT_INIT, .name = "", .get = get_hi}, TH_ERR_VALUE, "Prompt name length must be 1-128 chars, got 0"},
        {{TH_PROMPT_INIT, .name = "a/b", .get = get_hi}, TH_ERR_VALUE,
         "Prompt name 'a/b' invalid (must be letters, digits, '_', '-' and '.')"},
        {{TH_PROMPT_INIT, .name = "x"}, TH_ERR_VALUE, "Prompt must have a 'get' function"},
        {{TH_PROMPT_INIT, .name = "x", .arguments = "{", .get = get_hi}, TH_ERR_VALUE,
         "Prompt arguments is not valid JSON"},
        {{TH_PROMPT_INIT, .name = "x", .arguments = "{}", .get = get_hi}, TH_ERR_VALUE,
         "Prompt arguments must be a JSON array"},
        {{TH_PROMPT_INIT, .name = "x", .arguments = "[{\"name\":\"a\",\"required\":1}]", .get = get_hi},
         TH_ERR_VALUE, "Prompt arguments[0].required must be true or false"},
        {{TH_PROMPT_INIT, .name = "x", .arguments = "[{\"name\":\"a\"},{\"name\":\"a\"}]", .get = get_hi},
         TH_ERR_VALUE, "Prompt arguments[1]: name 'a' already used by arguments[0]"},
        {{TH_PROMPT_INIT, .name = "x", .icons = "[{\"mimeType\":\"image/png\"}]", .get = get_hi}, TH_ERR_VALUE,
         "Prompt icons[0] must be an object with a string \"src\""},
        {{TH_PROMPT_INIT, .name = "x", .icons = "[{\"src\":\"a\",\"sizes\":[1]}]", .get = get_hi}, TH_ERR_VALUE,
         "Prompt icons[0].sizes must be an array of strings"},
        {{TH_PROMPT_INIT, .name = "x", .description = "\xff", .get = get_hi}, TH_ERR_VALUE,
         "Prompt description must be valid UTF-8"},
        {{.abi_version = 99, .struct_size = sizeof(th_prompt), .name = "x", .get = get_hi}, TH_ERR_ABI,
         "incompatible prompt descriptor: ABI version mismatch. Host ABI version is 1, plugin ABI version is 99."},
        {{.abi_version = TH_ABI_VERSION, .struct_size = 8, .name = "x", .get = get_hi}, TH_ERR_ABI,
         "incompatible prompt descriptor: struct size mismatch"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ck_assert_int_eq(add(ps, cases[i].p, "/p/a.so", &err), cases[i].rc);
        ck_assert_msg(strncmp(err.msg, cases[i].msg, strlen(cases[i].msg)) == 0, "case %zu: %s", i, err.msg);
    }
    ck_assert_uint_eq(th_prompts_count(ps), 0);
    ck_assert_int_eq(th_prompts_add(ps, NULL, false, NULL, &err), TH_ERR_TYPE);
    ck_assert_int_eq(add(ps, (th_prompt){TH_PROMPT_INIT, .name = "x.y-z_1", .get = get_hi}, "/p/a.so", &err), TH_OK);
    ck_assert_int_eq(add(ps, (th_prompt){TH_PROMPT_INIT, .name = "x.y-z_1", .get = get_hi}, "/p/b.so", &err),
                     TH_ERR_VALUE);
    ck_assert_str_eq(err.msg, "Prompt 'x.y-z_1' already registered (first by /p/a.so)");
    th_prompt late = {TH_PROMPT_INIT, .name = "late", .get = get_hi};
    ck_assert_int_eq(th_prompts_add(ps, &late, true, NULL, &err), TH_ERR_RUNTIME);
    ck_assert_str_eq(err.msg, "Cannot register prompts after server has started");
    ck_assert_uint_eq(th_prompts_count(ps), 1);
    th_prompts_free(ps);
}
END_TEST

START_TEST(test_completion_rules)
{
    th_prompts *ps = th_prompts_new();
    th_err err;
    th_completion c = {TH_COMPLETION_INIT, .complete = complete_many};
    ck_assert_int_eq(th_prompts_add_completion(ps, &c, false, NULL, &err), TH_ERR_ATTRIBUTE);
    ck_assert_str_eq(err.msg, "Completion must name exactly one of 'prompt' and 'uri_template' (got neither)");
    c.prompt = "p";
    c.uri_template = "x://{a}";
    ck_assert_int_eq(th_prompts_add_completion(ps, &c, false, NULL, &err), TH_ERR_ATTRIBUTE);
    c.uri_template = NULL;
    c.complete = NULL;
    ck_assert_int_eq(th_prompts_add_completion(ps, &c, false, NULL, &err), TH_ERR_VALUE);
    ck_assert_str_eq(err.msg, "Completion must have a 'complete' function");
    c.complete = complete_many;
    ck_assert_int_eq(th_prompts_add_completion(ps, &c, false, "/p/a.so", &err), TH_OK);
    ck_assert_int_eq(th_prompts_add_completion(ps, &c, false, "/p/b.so", &err), TH_ERR_VALUE);
    ck_assert_str_eq(err.msg, "Completion of prompt 'p' already registered (first by /p/a.so)");
    ck_assert_ptr_nonnull(th_prompts_find_completion(ps, "p", NULL));
    ck_assert_ptr_null(th_prompts_find_completion(ps, NULL, "p"));
    th_prompts_free(ps);
}
END_TEST

START_TEST(test_argument_checks)
{
    th_prompts *ps = th_prompts_new();
    th_err err;
    ck_assert_int_eq(add(ps,
                         (th_prompt){TH_PROMPT_INIT, .name = "p",
                                     .arguments = "[{\"name\":\"a\",\"required\":true},{\"name\":\"b\"}]",
                                     .get = get_hi},
                         NULL, &err),
                     TH_OK);
    const th_prompt_entry *e = th_prompts_find(ps, "p");
    char msg[512];
    json_object *args = json_tokener_parse("{\"a\":\"1\"}");
    ck_assert(th_prompts_check_args(e, args, msg, sizeof msg));
    json_object_put(args);
    ck_assert(!th_prompts_check_args(e, NULL, msg, sizeof msg));
    ck_assert_str_eq(msg, "Invalid params: missing required argument 'a' of prompt 'p'");
    args = json_tokener_parse("{\"a\":\"1\",\"c\":\"2\"}");
    ck_assert(!th_prompts_check_args(e, args, msg, sizeof msg));
    ck_assert_str_eq(msg, "Invalid params: prompt 'p' has no argument 'c'");
    json_object_put(args);
    args = json_tokener_parse("[]");
    ck_assert(!th_prompts_check_args(e, args, msg, sizeof msg));
    json_object_put(args);
    th_prompts_free(ps);
}
END_TEST

/* The methods over a registry: roles from the marker, the 100-value cap. */
START_TEST(test_methods_in_process)
{
    th_registry *reg = th_registry_new();
    th_err err;
    th_prompt p = {TH_PROMPT_INIT, .name = "p", .arguments = "[{\"name\":\"a\"}]", .get = get_hi};
    th_completion c = {TH_COMPLETION_INIT, .prompt = "p", .complete = complete_many};
    ck_assert_int_eq(th_prompts_add(th_registry_prompts(reg), &p, false, NULL, &err), TH_OK);
    ck_assert_int_eq(th_prompts_add_completion(th_registry_prompts(reg), &c, false, NULL, &err), TH_OK);
    json_object *params = json_tokener_parse("{\"name\":\"p\"}");
    th_mcpprompt_req q = {.reg = reg, .method = "prompts/get", .params = params, .titles = true};
    th_mcpprompt_answer a;
    th_mcpprompt_serve(&q, &a);
    ck_assert_ptr_nonnull(a.result);
    ck_assert_str_eq(json_object_to_json_string_ext(json_object_object_get(a.result, "messages"),
                                                    JSON_C_TO_STRING_PLAIN),
                     "[{\"role\":\"user\",\"content\":{\"type\":\"text\",\"text\":\"hi\"}},"
                     "{\"role\":\"assistant\",\"content\":{\"type\":\"text\",\"text\":\"yo\"}}]");
    json_object_put(a.result);
    json_object_put(params);
    params = json_tokener_parse(
        "{\"ref\":{\"type\":\"ref/prompt\",\"name\":\"p\"},\"argument\":{\"name\":\"a\",\"value\":\"v\"}}");
    q.method = "completion/complete";
    q.params = params;
    th_mcpprompt_serve(&q, &a);
    json_object *comp = json_object_object_get(a.result, "completion");
    ck_assert_uint_eq(json_object_array_length(json_object_object_get(comp, "values")), TH_COMPLETION_MAX);
    ck_assert_int_eq(json_object_get_int(json_object_object_get(comp, "total")), 120);
    ck_assert(json_object_get_boolean(json_object_object_get(comp, "hasMore")));
    json_object_put(a.result);
    json_object_put(params);
    q.method = "prompts/list";
    q.params = NULL;
    q.modern = true;
    q.list_ttl_ms = 5;
    th_mcpprompt_serve(&q, &a);
    ck_assert_int_eq(json_object_get_int(json_object_object_get(a.result, "ttlMs")), 5);
    ck_assert_uint_eq(json_object_array_length(json_object_object_get(a.result, "prompts")), 1);
    json_object_put(a.result);
    th_registry_unref(reg);
}
END_TEST

static Suite *prompts_suite(void)
{
    Suite *s = suite_create("prompts");
    TCase *tc = tcase_create("rules");
    tcase_add_test(tc, test_prompt_rules);
    tcase_add_test(tc, test_completion_rules);
    tcase_add_test(tc, test_argument_checks);
    tcase_add_test(tc, test_methods_in_process);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN(prompts_suite)
