/* SPDX-License-Identifier: MIT */
/*
** input_required_tools.c: the conformance suite's fixture tools of the
** multi round-trip pattern (input-required-result-* scenarios, and the
** capability probes test_missing_capability and test_streaming_elicitation
** of the stateless scenario), written against th_call_ask's contract: ask
** first, stop on TH_ERR_INPUT_REQUIRED, finish when every answer is in.
*/
#include <string.h>

#include <toolhost/plugin.h>

#define NAME_SCHEMA                                                                                           \
    "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}},\"required\":[\"name\"]}"
#define OK_SCHEMA "{\"type\":\"object\",\"properties\":{\"ok\":{\"type\":\"boolean\"}},\"required\":[\"ok\"]}"
#define NO_ARGS "{\"type\":\"object\",\"properties\":{}}"

/* content[FIELD] of an accepted elicitation, or FALLBACK. */
static const char *field(json_object *answer, const char *name, const char *fallback)
{
    json_object *content, *v;
    if (answer && json_object_object_get_ex(answer, "content", &content) &&
        json_object_object_get_ex(content, name, &v) && json_object_is_type(v, json_type_string))
        return json_object_get_string(v);
    return fallback;
}

/* The text of a sampling answer, or FALLBACK. */
static const char *sampled(json_object *answer, const char *fallback)
{
    json_object *content, *v;
    if (answer && json_object_object_get_ex(answer, "content", &content) &&
        json_object_object_get_ex(content, "text", &v))
        return json_object_get_string(v);
    return fallback;
}

static size_t roots_count(json_object *answer)
{
    json_object *roots;
    return answer && json_object_object_get_ex(answer, "roots", &roots) && json_object_is_type(roots, json_type_array)
               ? json_object_array_length(roots)
               : 0;
}

static th_rc elicitation(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    json_object *a = NULL;
    th_rc rc = th_call_elicit(call, "user_name", "What is your name?", NAME_SCHEMA, &a);
    if (rc != TH_OK)
        return rc;
    rc = th_call_textf(call, "Hello, %s!", field(a, "name", "stranger"));
    json_object_put(a);
    return rc;
}

static th_rc sampling(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    json_object *a = NULL;
    th_rc rc = th_call_sample(call, "capital_question", "What is the capital of France?", 100, &a);
    if (rc != TH_OK)
        return rc;
    rc = th_call_textf(call, "Sampling result: %s", sampled(a, "no response"));
    json_object_put(a);
    return rc;
}

static th_rc list_roots(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    json_object *a = NULL;
    th_rc rc = th_call_list_roots(call, "client_roots", &a);
    if (rc != TH_OK)
        return rc;
    rc = th_call_textf(call, "Found %zu root(s)", roots_count(a));
    json_object_put(a);
    return rc;
}

static th_rc request_state(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    json_object *a = NULL, *content, *ok;
    th_rc rc = th_call_elicit(call, "confirm", "Please confirm", OK_SCHEMA, &a);
    if (rc != TH_OK)
        return rc;
    /* Reaching here on a retry means the host verified the requestState. */
    bool yes = json_object_object_get_ex(a, "content", &content) && json_object_object_get_ex(content, "ok", &ok) &&
               json_object_get_boolean(ok);
    rc = th_call_textf(call, "state-ok: requestState validated (ok=%s)", yes ? "true" : "false");
    json_object_put(a);
    return rc;
}

static th_rc multiple_inputs(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    json_object *name = NULL, *greeting = NULL, *roots = NULL;
    /* Three independent questions: all asked before stopping, so the
     * client gets them in one round. */
    th_rc r1 = th_call_elicit(call, "user_name", "What is your name?", NAME_SCHEMA, &name);
    th_rc r2 = th_call_sample(call, "greeting", "Generate a greeting", 50, &greeting);
    th_rc r3 = th_call_list_roots(call, "client_roots", &roots);
    th_rc rc = r1 != TH_OK ? r1 : r2 != TH_OK ? r2 : r3;
    if (rc == TH_OK)
        rc = th_call_textf(call, "Name: %s; Greeting: %s; Roots: %zu", field(name, "name", "?"),
                           sampled(greeting, "?"), roots_count(roots));
    json_object_put(name);
    json_object_put(greeting);
    json_object_put(roots);
    return rc;
}

static th_rc multi_round(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    json_object *step1 = NULL, *step2 = NULL;
    /* Dependent questions: step 2 is asked only once step 1 is answered. */
    th_rc rc = th_call_elicit(call, "step1", "Step 1: What is your name?", NAME_SCHEMA, &step1);
    if (rc == TH_OK)
        rc = th_call_elicit(call, "step2", "Step 2: What is your favorite color?",
                            "{\"type\":\"object\",\"properties\":{\"color\":{\"type\":\"string\"}},"
                            "\"required\":[\"color\"]}",
                            &step2);
    if (rc == TH_OK)
        rc = th_call_textf(call, "Multi-round complete for %s who likes %s", field(step1, "name", "friend"),
                           field(step2, "color", "?"));
    json_object_put(step1);
    json_object_put(step2);
    return rc;
}

static th_rc tampered_state(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    json_object *a = NULL;
    th_rc rc = th_call_elicit(call, "confirm", "Please confirm", OK_SCHEMA, &a);
    if (rc != TH_OK)
        return rc;
    json_object_put(a);
    return th_call_text(call, "integrity-ok: state verified");
}

static th_rc capabilities(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    json_object *e = NULL, *s = NULL;
    th_rc re = TH_OK, rs = TH_OK;
    /* Only what the client declared may be asked. */
    if (th_call_client_can(call, TH_ASK_ELICITATION))
        re = th_call_elicit(call, "elicit_input", "Elicitation input",
                            "{\"type\":\"object\",\"properties\":{\"value\":{\"type\":\"string\"}},"
                            "\"required\":[\"value\"]}",
                            &e);
    if (th_call_client_can(call, TH_ASK_SAMPLING))
        rs = th_call_sample(call, "sample_input", "Sample request", 50, &s);
    th_rc rc = re != TH_OK ? re : rs;
    if (rc == TH_OK)
        rc = th_call_textf(call, "capabilities-ok: received%s%s", e ? " elicit_input" : "",
                           s ? " sample_input" : "");
    json_object_put(e);
    json_object_put(s);
    return rc;
}

static th_rc missing_capability(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    json_object *a = NULL;
    /* Without the sampling capability this is TH_ERR_CAPABILITY, and the
     * host answers -32021 naming it. */
    th_rc rc = th_call_sample(call, "probe", "Say hello", 20, &a);
    if (rc != TH_OK)
        return rc;
    json_object_put(a);
    return th_call_text(call, "Success");
}

static th_rc streaming_elicitation(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    json_object *a = NULL;
    th_call_progress(call, 50, 100, "asking");
    th_rc rc = th_call_elicit(call, "confirm", "Continue?", OK_SCHEMA, &a);
    if (rc != TH_OK)
        return rc;
    json_object_put(a);
    return th_call_text(call, "Streaming complete");
}

#define TOOL(NAME, DESC, FN) {TH_TOOL_INIT, .name = NAME, .description = DESC, .input_schema = NO_ARGS, .handler = FN}

static const th_tool tools[] = {
    TOOL("test_input_required_result_elicitation", "MRTR: returns InputRequiredResult with elicitation request",
         elicitation),
    TOOL("test_input_required_result_sampling", "MRTR: returns InputRequiredResult with sampling request", sampling),
    TOOL("test_input_required_result_list_roots", "MRTR: returns InputRequiredResult with roots/list request",
         list_roots),
    TOOL("test_input_required_result_request_state", "MRTR: returns InputRequiredResult with requestState",
         request_state),
    TOOL("test_input_required_result_multiple_inputs", "MRTR: returns InputRequiredResult with multiple input requests",
         multiple_inputs),
    TOOL("test_input_required_result_multi_round", "MRTR: multi-round InputRequiredResult workflow", multi_round),
    TOOL("test_input_required_result_tampered_state", "MRTR: HMAC-signed requestState integrity test",
         tampered_state),
    TOOL("test_input_required_result_capabilities", "MRTR: respects client capabilities in inputRequests",
         capabilities),
    TOOL("test_missing_capability", "Test tool requiring sampling", missing_capability),
    TOOL("test_streaming_elicitation", "Diagnostic tool validating response progress streams",
         streaming_elicitation),
};

TH_REGISTER(input_required_tools)
{
    for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++)
        if (th_server_add_tool(server, &tools[i]) != TH_OK)
            return NULL;
    return th_server_added_only(server);
}
