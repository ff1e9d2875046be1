/* SPDX-License-Identifier: MIT */
/*
** test_register_tool.c: 23 register_tool scenarios of doc/registry-rules.md
** (sections 1-6) against th_registry_add, one Check test per scenario named
** after it, asserting the outcome, the th_rc code (the rule's kind) and the
** message.
*/
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "plugin/registry.h"
#include "check_main.h"

#define EMPTY_SCHEMA "{\"type\":\"object\",\"properties\":{}}"
#define ADD_MEMORY_SCHEMA                                                         \
    "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"},"        \
    "\"metadata\":{\"type\":\"object\",\"description\":\"Optional metadata\"}},"   \
    "\"required\":[\"text\"]}"

static th_rc noop_handler(th_call *call, json_object *args, void *user_data)
{
    (void)call;
    (void)args;
    (void)user_data;
    return TH_OK;
}

/* A valid handler tool; tests break one field at a time. */
static th_tool valid_tool(const char *name, const char *description)
{
    th_tool t = {
        TH_TOOL_INIT,
        .name = name,
        .description = description,
        .input_schema = EMPTY_SCHEMA,
        .handler = noop_handler,
    };
    return t;
}

/* The AddMemoryTool of the scenarios: a tool every rule accepts. */
static th_tool add_memory_tool(void)
{
    th_tool t = valid_tool("add_memory", "Add a memory to the knowledge graph");
    t.input_schema = ADD_MEMORY_SCHEMA;
    return t;
}

/* --- log capture ------------------------------------------------------- */

static char logged[8192];
static size_t logged_len;
static int logged_lines;

static void capture(th_log_level level, const char *line, void *ctx)
{
    (void)ctx;
    int n = snprintf(logged + logged_len, sizeof logged - logged_len, "%s: %s\n",
                     th_log_level_name(level), line);
    if (n > 0 && (size_t)n < sizeof logged - logged_len)
        logged_len += (size_t)n;
    logged_lines++;
}

static th_registry *reg;

static void setup(void)
{
    logged[0] = '\0';
    logged_len = 0;
    logged_lines = 0;
    th_log_set_threshold(TH_LOG_INFO);
    th_log_set_sink(capture, NULL);
    reg = th_registry_new();
    ck_assert_ptr_nonnull(reg);
}

static void teardown(void)
{
    th_registry_unref(reg);
    reg = NULL;
    th_log_set_sink(NULL, NULL);
}

/* --- assertions -------------------------------------------------------- */

static void expect_ok(const th_tool *t)
{
    th_err err;
    th_rc rc = th_registry_add(reg, t, NULL, &err);
    ck_assert_msg(rc == TH_OK, "registering '%s' failed: %s [%s]", t->name ? t->name : "(null)", err.msg,
                  th_rc_name(rc));
    ck_assert_int_eq(err.code, TH_OK);
    ck_assert_str_eq(err.msg, "");
    ck_assert_ptr_nonnull(th_registry_get(reg, t->name));
}

/*
** Registering T must fail with CODE and exactly MSG (or, when PREFIX, a
** message starting with MSG), and change nothing.
*/
static void expect_refused_as(const th_tool *t, th_rc code, const char *msg, bool prefix)
{
    size_t before = th_registry_count(reg);
    int lines_before = logged_lines;
    th_err err;
    th_rc rc = th_registry_add(reg, t, NULL, &err);
    ck_assert_msg(rc == code, "expected %s, got %s (%s)", th_rc_name(code), th_rc_name(rc), err.msg);
    ck_assert_int_eq(err.code, code);
    if (prefix)
        ck_assert_msg(strncmp(err.msg, msg, strlen(msg)) == 0, "message '%s' does not start with '%s'", err.msg,
                      msg);
    else
        ck_assert_str_eq(err.msg, msg);
    ck_assert_uint_eq(th_registry_count(reg), before);
    /* The registry reports refusals to its caller; it does not log them. */
    ck_assert_int_eq(logged_lines, lines_before);
}

static void expect_refused(const th_tool *t, th_rc code, const char *msg)
{
    expect_refused_as(t, code, msg, false);
}

/* --- happy path -------------------------------------------------------- */

START_TEST(test_register_tool_success_single)
{
    th_tool t = add_memory_tool();
    expect_ok(&t);
    ck_assert_uint_eq(th_registry_count(reg), 1);
    ck_assert_str_eq(th_registry_at(reg, 0)->name, "add_memory");
}
END_TEST

START_TEST(test_register_tool_success_multiple)
{
    th_tool tools[] = {
        add_memory_tool(),
        valid_tool("search_memory", "Search memories by semantic similarity"),
        valid_tool("get_stats", "Get statistics about the memory store"),
    };
    for (size_t i = 0; i < 3; i++)
        expect_ok(&tools[i]);
    ck_assert_uint_eq(th_registry_count(reg), 3);
    for (size_t i = 0; i < 3; i++) {
        const th_entry *e = th_registry_get(reg, tools[i].name);
        ck_assert_ptr_nonnull(e);
        ck_assert_str_eq(e->description, tools[i].description);
    }
}
END_TEST

START_TEST(test_register_tool_success_complex_schema)
{
    th_tool t = valid_tool("add_memory", "Add a memory with nested metadata");
    t.input_schema = "{\"type\":\"object\",\"properties\":{"
                     "\"text\":{\"type\":\"string\",\"minLength\":1},"
                     "\"metadata\":{\"type\":\"object\",\"properties\":{"
                     "\"tags\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
                     "\"source\":{\"type\":\"object\",\"properties\":{"
                     "\"url\":{\"type\":\"string\"},\"line\":{\"type\":\"integer\",\"minimum\":0}},"
                     "\"required\":[\"url\"]}}}},"
                     "\"required\":[\"text\"],\"additionalProperties\":false}";
    expect_ok(&t);

    /* Parsed once, at registration, with the nesting intact. */
    const th_entry *e = th_registry_get(reg, "add_memory");
    json_object *props, *meta, *meta_props, *tags, *items, *type;
    ck_assert(json_object_object_get_ex(e->input_schema, "properties", &props));
    ck_assert(json_object_object_get_ex(props, "metadata", &meta));
    ck_assert(json_object_object_get_ex(meta, "properties", &meta_props));
    ck_assert(json_object_object_get_ex(meta_props, "tags", &tags));
    ck_assert(json_object_object_get_ex(tags, "items", &items));
    ck_assert(json_object_object_get_ex(items, "type", &type));
    ck_assert_str_eq(json_object_get_string(type), "string");
    /* Compiled on first use, once: a second use gets the same form. */
    const th_schema *v = th_entry_validator(e);
    ck_assert_ptr_nonnull(v);
    ck_assert_ptr_eq(th_entry_validator(e), v);
}
END_TEST

START_TEST(test_register_tool_name_with_underscores)
{
    th_tool t = valid_tool("search_memory_advanced", "Search memories with filters");
    expect_ok(&t);
    th_tool u = valid_tool("a_1_b_", "Trailing underscore and a digit");
    expect_ok(&u);
    ck_assert_uint_eq(th_registry_count(reg), 2);
}
END_TEST

START_TEST(test_register_tool_name_boundary_length)
{
    const char *fifty = "abcdefghij_abcdefghij_abcdefghij_abcdefghij_abcdef";
    ck_assert_uint_eq(strlen(fifty), 50);
    th_tool t = valid_tool(fifty, "Tool whose name is exactly fifty characters");
    expect_ok(&t);
    th_tool one = valid_tool("x", "Tool whose name is one character");
    expect_ok(&one);
}
END_TEST

/* --- validation errors ------------------------------------------------- */

START_TEST(test_register_tool_empty_name)
{
    th_tool t = valid_tool("", "Valid description");
    /* Rule 4.4's text, then rule 4.2's ("Tool name cannot be empty"). */
    expect_refused(&t, TH_ERR_VALUE, "Tool name length must be 1-50 chars, got 0 (Tool name cannot be empty)");
}
END_TEST

START_TEST(test_register_tool_duplicate_name)
{
    th_tool first = add_memory_tool();
    th_tool second = add_memory_tool();
    second.description = "A second add_memory that must not replace the first";
    expect_ok(&first);
    expect_refused(&second, TH_ERR_VALUE, "Tool 'add_memory' already registered");
    ck_assert_uint_eq(th_registry_count(reg), 1);
    ck_assert_str_eq(th_registry_get(reg, "add_memory")->description, first.description);
}
END_TEST

START_TEST(test_register_tool_invalid_name_pattern)
{
    static const char *const bad[] = {
        "Add-Memory", "add_memory!", "addMemory", "add memory", "123_add", "Add-Memory!",
        "_add", "add-memory", "caf\xc3\xa9",
        /* Too long as well: the pattern is checked before the length. */
        "Add-Memory-Add-Memory-Add-Memory-Add-Memory-Add-Memory-Add-Memory",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char msg[256];
        snprintf(msg, sizeof msg, "Tool name '%s' invalid (must be lowercase, alphanumeric, underscores)",
                 bad[i]);
        th_tool t = valid_tool(bad[i], "Valid description");
        expect_refused(&t, TH_ERR_VALUE, msg);
    }
    ck_assert_uint_eq(th_registry_count(reg), 0);
}
END_TEST

START_TEST(test_register_tool_name_too_long)
{
    const char *fifty_one = "abcdefghij_abcdefghij_abcdefghij_abcdefghij_abcdefg";
    ck_assert_uint_eq(strlen(fifty_one), 51);
    th_tool t = valid_tool(fifty_one, "Valid description");
    expect_refused(&t, TH_ERR_VALUE, "Tool name length must be 1-50 chars, got 51");
}
END_TEST

START_TEST(test_register_tool_description_too_short)
{
    th_tool t = valid_tool("bad_tool", "Too short");
    ck_assert_uint_eq(strlen(t.description), 9);
    /* The rule's text, then the length that was given. */
    expect_refused(&t, TH_ERR_VALUE, "Tool description too short (min 10 chars), got 9");
    /* Characters, not bytes: nine two-byte characters are still nine. */
    t.description = "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9";
    expect_refused(&t, TH_ERR_VALUE, "Tool description too short (min 10 chars), got 9");
    t.description = "Ten chars!";
    expect_ok(&t);
}
END_TEST

START_TEST(test_register_tool_description_too_long)
{
    char desc[2 * 501 + 1];
    memset(desc, 'd', 501);
    desc[501] = '\0';
    th_tool t = valid_tool("bad_tool", desc);
    expect_refused(&t, TH_ERR_VALUE, "Tool description too long (max 500 chars), got 501");
    desc[500] = '\0';
    th_tool ok = valid_tool("ascii_500", desc);
    expect_ok(&ok);
    /* 500 two-byte characters (1000 bytes) are 500 characters. */
    for (size_t i = 0; i < 500; i++)
        memcpy(desc + 2 * i, "\xc3\xa9", 2);
    desc[1000] = '\0';
    th_tool wide = valid_tool("utf8_500", desc);
    expect_ok(&wide);
}
END_TEST

/* --- type errors ------------------------------------------------------- */

START_TEST(test_register_tool_missing_name)
{
    th_tool t = valid_tool(NULL, "Missing name field");
    expect_refused(&t, TH_ERR_ATTRIBUTE,
                   "Tool missing required attribute: name (Tool must have 'name' and 'description' attributes)");
}
END_TEST

START_TEST(test_register_tool_missing_input_schema)
{
    th_tool t = valid_tool("bad_tool", "Valid description");
    t.input_schema = NULL;
    expect_refused(&t, TH_ERR_ATTRIBUTE,
                   "Tool missing required attribute: input_schema "
                   "(Tool must have 'input_schema' and 'execute' attributes)");
}
END_TEST

/* A C name cannot be an int; the C analog of "not a str" is not UTF-8. */
START_TEST(test_register_tool_name_wrong_type)
{
    th_tool t = valid_tool("bad\xff", "Valid description");
    expect_refused_as(&t, TH_ERR_VALUE, "Tool name must be string, got ", true);
    t.name = "caf\xc3"; /* truncated sequence */
    expect_refused_as(&t, TH_ERR_VALUE, "Tool name must be string, got ", true);
}
END_TEST

/* --- schema validation ------------------------------------------------- */

START_TEST(test_register_tool_schema_not_object)
{
    /* Each refusal names the type it was given. */
    static const char *const schemas[][2] = {
        {"{\"type\":\"array\",\"items\":{}}", "got type=\"array\""},
        {"{\"properties\":{}}", "got no type"},
        {"{\"type\":[\"object\"],\"properties\":{}}", "got type=[\"object\"]"},
        {"{\"type\":\"Object\",\"properties\":{}}", "got type=\"Object\""},
    };
    for (size_t i = 0; i < sizeof schemas / sizeof *schemas; i++) {
        th_tool t = valid_tool("bad_tool", "Valid description");
        t.input_schema = schemas[i][0];
        char want[128];
        snprintf(want, sizeof want, "Tool input_schema must have type='object', %s", schemas[i][1]);
        expect_refused(&t, TH_ERR_VALUE, want);
    }
    /* A long type is shown cut at a character boundary: the message stays
     * UTF-8 ("a, then two-byte characters: a 63-byte cut falls inside one). */
    char schema[512] = "{\"properties\":{},\"type\":\"a";
    for (int i = 0; i < 60; i++)
        strcat(schema, "\xc3\xa9");
    strcat(schema, "\"}");
    th_tool t = valid_tool("bad_tool", "Valid description");
    t.input_schema = schema;
    th_err err;
    ck_assert_int_eq(th_registry_add(reg, &t, NULL, &err), TH_ERR_VALUE);
    ck_assert_msg(th_utf8_valid(err.msg, strlen(err.msg)), "not UTF-8: %s", err.msg);
    ck_assert_msg(strstr(err.msg, "got type=\"a\xc3\xa9"), "%s", err.msg);
}
END_TEST

START_TEST(test_register_tool_schema_missing_properties)
{
    th_tool t = valid_tool("bad_tool", "Valid description");
    t.input_schema = "{\"type\":\"object\",\"required\":[]}";
    expect_refused(&t, TH_ERR_VALUE, "Tool input_schema must have 'properties' field");
}
END_TEST

/* In C the schema is JSON text: "not a dict" is any text that is not a JSON
 * object, including text that is not JSON at all. */
START_TEST(test_register_tool_schema_not_dict)
{
    th_tool t = valid_tool("bad_tool", "Valid description");
    t.input_schema = "\"invalid\"";
    expect_refused(&t, TH_ERR_VALUE, "Tool input_schema must be dict (a JSON object), got string");
    t.input_schema = "[{\"type\":\"object\",\"properties\":{}}]";
    expect_refused(&t, TH_ERR_VALUE, "Tool input_schema must be dict (a JSON object), got array");
    t.input_schema = "null";
    expect_refused(&t, TH_ERR_VALUE, "Tool input_schema must be dict (a JSON object), got null");
    t.input_schema = "invalid";
    expect_refused_as(&t, TH_ERR_VALUE, "Tool input_schema is not valid JSON: ", true);
    t.input_schema = "";
    expect_refused_as(&t, TH_ERR_VALUE, "Tool input_schema is not valid JSON: ", true);
    t.input_schema = EMPTY_SCHEMA " {}";
    expect_refused_as(&t, TH_ERR_VALUE, "Tool input_schema is not valid JSON: ", true);
}
END_TEST

/* --- execute method ---------------------------------------------------- */

static void typed_fn(void)
{
}

/*
** Python's "execute must be async" has no C counterpart: every handler is a
** plain function the host runs on its worker threads. The closest rule is
** the one that refuses an execute method the host cannot run as the tool:
** a descriptor that gives both a handler and a typed function leaves the
** host unable to tell which one is the execute method. Like that case,
** a callable is present but of a kind the registry refuses, with TH_ERR_VALUE.
*/
START_TEST(test_register_tool_execute_not_async)
{
    static const th_function fn = {.fn = typed_fn, .result = TH_T_VOID};
    th_tool t = valid_tool("bad_tool", "Valid description");
    t.input_schema = NULL;
    t.function = &fn;
    expect_refused(&t, TH_ERR_VALUE,
                   "Tool must have exactly one execute method: 'handler' or 'function', not both");
}
END_TEST

START_TEST(test_register_tool_missing_execute)
{
    th_tool t = valid_tool("bad_tool", "Tool without execute method");
    t.handler = NULL;
    expect_refused(&t, TH_ERR_VALUE, "Tool must have callable 'execute' method");
}
END_TEST

/* --- state ------------------------------------------------------------- */

START_TEST(test_register_tool_after_server_started)
{
    th_tool t = add_memory_tool();
    ck_assert(!th_registry_started(reg));
    th_registry_start(reg);
    ck_assert(th_registry_started(reg));
    expect_refused(&t, TH_ERR_RUNTIME, "Cannot register tools after server has started");
    /* The state is checked first, before anything in the descriptor. */
    th_tool bad = valid_tool("Bad-Name", "x");
    expect_refused(&bad, TH_ERR_RUNTIME, "Cannot register tools after server has started");
    expect_refused(NULL, TH_ERR_RUNTIME, "Cannot register tools after server has started");
    ck_assert_ptr_null(th_registry_get(reg, "add_memory"));
}
END_TEST

/* --- integration ------------------------------------------------------- */

START_TEST(test_register_tool_appears_in_tools_dict)
{
    static int user_data;
    /* The descriptor's strings live in a buffer we overwrite afterwards:
     * the registry must keep its own copies. */
    char name[] = "add_memory", title[] = "Add memory", desc[] = "Add a memory to the knowledge graph";
    char schema[] = ADD_MEMORY_SCHEMA;
    th_tool t = {
        TH_TOOL_INIT,
        .name = name,
        .title = title,
        .description = desc,
        .input_schema = schema,
        .handler = noop_handler,
        .user_data = &user_data,
    };
    expect_ok(&t);
    memset(name, 'x', sizeof name - 1);
    memset(title, 'x', sizeof title - 1);
    memset(desc, 'x', sizeof desc - 1);
    memset(schema, ' ', sizeof schema - 1);

    const th_entry *e = th_registry_get(reg, "add_memory");
    ck_assert_ptr_nonnull(e);
    ck_assert_ptr_eq(e, th_registry_at(reg, 0));
    ck_assert_str_eq(e->name, "add_memory");
    ck_assert_str_eq(e->title, "Add memory");
    ck_assert_str_eq(e->description, "Add a memory to the knowledge graph");
    ck_assert(e->handler == noop_handler);
    ck_assert_ptr_eq(e->user_data, &user_data);
    ck_assert_ptr_null(e->typed);
    json_object *type;
    ck_assert(json_object_object_get_ex(e->input_schema, "type", &type));
    ck_assert_str_eq(json_object_get_string(type), "object");
    ck_assert_ptr_null(th_registry_get(reg, "xxxxxxxxxx"));
}
END_TEST

START_TEST(test_register_tool_increments_count)
{
    ck_assert_uint_eq(th_registry_count(reg), 0);
    th_tool a = add_memory_tool();
    expect_ok(&a);
    ck_assert_uint_eq(th_registry_count(reg), 1);
    th_tool bad = valid_tool("bad_tool", "short");
    expect_refused(&bad, TH_ERR_VALUE, "Tool description too short (min 10 chars), got 5");
    ck_assert_uint_eq(th_registry_count(reg), 1);
    th_tool b = valid_tool("search_memory", "Search memories by similarity");
    expect_ok(&b);
    ck_assert_uint_eq(th_registry_count(reg), 2);
}
END_TEST

START_TEST(test_register_tool_logs_registration)
{
    th_tool a = add_memory_tool();
    th_tool b = valid_tool("search_memory", "Search memories by similarity");
    expect_ok(&a);
    ck_assert_int_eq(logged_lines, 1);
    ck_assert_str_eq(logged, "info: tool_registered tool_name=add_memory total_tools=1\n");
    th_err err;
    ck_assert_int_eq(th_registry_add(reg, &b, "/plugins/search_memory.so", &err), TH_OK);
    ck_assert_int_eq(logged_lines, 2);
    ck_assert_str_eq(logged, "info: tool_registered tool_name=add_memory total_tools=1\n"
                             "info: tool_registered tool_name=search_memory total_tools=2"
                             " plugin=/plugins/search_memory.so\n");
}
END_TEST

static Suite *register_tool_suite(void)
{
    Suite *s = suite_create("register_tool");
    TCase *tc = tcase_create("scenarios");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_register_tool_success_single);
    tcase_add_test(tc, test_register_tool_success_multiple);
    tcase_add_test(tc, test_register_tool_success_complex_schema);
    tcase_add_test(tc, test_register_tool_name_with_underscores);
    tcase_add_test(tc, test_register_tool_name_boundary_length);
    tcase_add_test(tc, test_register_tool_empty_name);
    tcase_add_test(tc, test_register_tool_duplicate_name);
    tcase_add_test(tc, test_register_tool_invalid_name_pattern);
    tcase_add_test(tc, test_register_tool_name_too_long);
    tcase_add_test(tc, test_register_tool_description_too_short);
    tcase_add_test(tc, test_register_tool_description_too_long);
    tcase_add_test(tc, test_register_tool_missing_name);
    tcase_add_test(tc, test_register_tool_missing_input_schema);
    tcase_add_test(tc, test_register_tool_name_wrong_type);
    tcase_add_test(tc, test_register_tool_schema_not_object);
    tcase_add_test(tc, test_register_tool_schema_missing_properties);
    tcase_add_test(tc, test_register_tool_schema_not_dict);
    tcase_add_test(tc, test_register_tool_execute_not_async);
    tcase_add_test(tc, test_register_tool_missing_execute);
    tcase_add_test(tc, test_register_tool_after_server_started);
    tcase_add_test(tc, test_register_tool_appears_in_tools_dict);
    tcase_add_test(tc, test_register_tool_increments_count);
    tcase_add_test(tc, test_register_tool_logs_registration);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN(register_tool_suite)
