/* SPDX-License-Identifier: MIT */
/*
** test_registry.c: 16 ToolRegistry unit tests, named after what they check,
** against the C registry (register, register_all, get_tool, list_tools,
** validate_tool), plus the registry rules particular to C: strict JSON, ABI
** checks, ownership of user_data, the hash table under growth.
*/
#include "config.h"

#include <check.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "call/callctx.h"
#include "plugin/registry.h"
#include "check_main.h"

#define EMPTY_SCHEMA "{\"type\":\"object\",\"properties\":{}}"

static th_rc handler_one(th_call *call, json_object *args, void *user_data)
{
    (void)call;
    (void)args;
    (void)user_data;
    return TH_OK;
}

static th_rc handler_two(th_call *call, json_object *args, void *user_data)
{
    (void)call;
    (void)args;
    (void)user_data;
    return TH_ERR_TOOL;
}

static th_tool make_tool(const char *name, const char *description)
{
    th_tool t = {
        TH_TOOL_INIT,
        .name = name,
        .description = description,
        .input_schema = EMPTY_SCHEMA,
        .handler = handler_one,
    };
    return t;
}

static int logged_lines;

static void count_lines(th_log_level level, const char *line, void *ctx)
{
    (void)level;
    (void)line;
    (void)ctx;
    logged_lines++;
}

static th_registry *reg;

static void setup(void)
{
    logged_lines = 0;
    th_log_set_threshold(TH_LOG_DEBUG);
    th_log_set_sink(count_lines, NULL);
    reg = th_registry_new();
    ck_assert_ptr_nonnull(reg);
}

static void teardown(void)
{
    th_registry_unref(reg);
    reg = NULL;
    th_log_set_sink(NULL, NULL);
}

static th_rc add(const th_tool *t, th_err *err)
{
    return th_registry_add(reg, t, NULL, err);
}

/* The names in registration order, comma-separated (list_tools()). */
static const char *list_tools(void)
{
    static char buf[4096];
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < th_registry_count(reg); i++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", i ? "," : "", th_registry_at(reg, i)->name);
    return buf;
}

/* --- happy path -------------------------------------------------------- */

START_TEST(test_init_creates_empty_registry)
{
    ck_assert_uint_eq(th_registry_count(reg), 0);
    ck_assert_str_eq(list_tools(), "");
    ck_assert_ptr_null(th_registry_at(reg, 0));
    ck_assert_ptr_null(th_registry_get(reg, "anything"));
    ck_assert_ptr_null(th_registry_get(reg, ""));
    ck_assert(!th_registry_started(reg));
    /* Each registry has its own storage. */
    th_registry *other = th_registry_new();
    th_tool t = make_tool("add_memory", "Add a memory to the graph");
    ck_assert_int_eq(th_registry_add(other, &t, NULL, NULL), TH_OK);
    ck_assert_ptr_null(th_registry_get(reg, "add_memory"));
    th_registry_unref(other);
}
END_TEST

START_TEST(test_register_single_tool_success)
{
    th_tool t = make_tool("add_memory", "Add a memory to the graph");
    th_err err;
    ck_assert_int_eq(add(&t, &err), TH_OK);
    const th_entry *e = th_registry_get(reg, "add_memory");
    ck_assert_ptr_nonnull(e);
    ck_assert_str_eq(e->name, "add_memory");
    ck_assert_str_eq(list_tools(), "add_memory");
}
END_TEST

START_TEST(test_register_all_multiple_tools_success)
{
    th_tool a = make_tool("add_memory", "Add a memory to the graph");
    th_tool b = make_tool("search_memory", "Search the memory graph");
    th_tool c = make_tool("get_stats", "Statistics about the graph");
    const th_tool *tools[] = {&a, &b, &c};
    size_t n_added = 99;
    th_err err;
    ck_assert_int_eq(th_registry_add_all(reg, tools, 3, NULL, &n_added, &err), TH_OK);
    ck_assert_uint_eq(n_added, 3);
    ck_assert_str_eq(list_tools(), "add_memory,search_memory,get_stats");
    for (size_t i = 0; i < 3; i++) {
        const th_entry *e = th_registry_get(reg, tools[i]->name);
        ck_assert_ptr_nonnull(e);
        ck_assert_str_eq(e->description, tools[i]->description);
    }
}
END_TEST

START_TEST(test_get_tool_returns_correct_tool)
{
    static int data1, data2;
    th_tool t1 = make_tool("tool1", "The first test tool");
    th_tool t2 = make_tool("tool2", "The second test tool");
    t1.user_data = &data1;
    t2.user_data = &data2;
    t2.handler = handler_two;
    ck_assert_int_eq(add(&t1, NULL), TH_OK);
    ck_assert_int_eq(add(&t2, NULL), TH_OK);
    const th_entry *e1 = th_registry_get(reg, "tool1");
    const th_entry *e2 = th_registry_get(reg, "tool2");
    ck_assert_ptr_nonnull(e1);
    ck_assert_ptr_nonnull(e2);
    ck_assert_ptr_ne(e1, e2);
    ck_assert_str_eq(e1->description, "The first test tool");
    ck_assert_ptr_eq(e1->user_data, &data1);
    ck_assert(e1->handler == handler_one);
    ck_assert_ptr_eq(e2->user_data, &data2);
    ck_assert(e2->handler == handler_two);
}
END_TEST

START_TEST(test_list_tools_returns_all_names)
{
    th_tool a = make_tool("add_memory", "Add a memory to the graph");
    th_tool b = make_tool("search_memory", "Search the memory graph");
    th_tool c = make_tool("get_stats", "Statistics about the graph");
    ck_assert_int_eq(add(&c, NULL), TH_OK);
    ck_assert_int_eq(add(&a, NULL), TH_OK);
    ck_assert_int_eq(add(&b, NULL), TH_OK);
    ck_assert_uint_eq(th_registry_count(reg), 3);
    /* Registration order, not name order. */
    ck_assert_str_eq(list_tools(), "get_stats,add_memory,search_memory");
    ck_assert_ptr_null(th_registry_at(reg, 3));
}
END_TEST

/* --- error tests ------------------------------------------------------- */

START_TEST(test_register_duplicate_name_raises_ValueError)
{
    th_tool t = make_tool("add_memory", "Add a memory to the graph");
    th_err err;
    ck_assert_int_eq(add(&t, &err), TH_OK);
    ck_assert_int_eq(add(&t, &err), TH_ERR_VALUE);
    ck_assert_int_eq(err.code, TH_ERR_VALUE);
    ck_assert_str_eq(err.msg, "Tool 'add_memory' already registered");
    ck_assert_uint_eq(th_registry_count(reg), 1);
}
END_TEST

/* The tasks extension's task_support: known values kept, others refused
 * with a message naming the field and its values. */
START_TEST(test_task_support_values)
{
    th_tool t = make_tool("long_job", "Runs for a long while");
    th_err err;
    t.task_support = TH_TASK_REQUIRED | TH_TASK_AFTER_INPUT;
    ck_assert_int_eq(add(&t, &err), TH_OK);
    ck_assert_uint_eq(th_registry_get(reg, "long_job")->task_support, TH_TASK_REQUIRED | TH_TASK_AFTER_INPUT);
    static const uint32_t bad[] = {3, TH_TASK_AFTER_INPUT, 0x20 | TH_TASK_OPTIONAL};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        th_tool b = make_tool("bad_job", "Runs for a long while");
        b.task_support = bad[i];
        ck_assert_int_eq(add(&b, &err), TH_ERR_VALUE);
        ck_assert_msg(strstr(err.msg, "Tool task_support must be TH_TASK_FORBIDDEN, TH_TASK_OPTIONAL or "
                                      "TH_TASK_REQUIRED") != NULL,
                      "message: %s", err.msg);
    }
    ck_assert_uint_eq(th_registry_count(reg), 1);
}
END_TEST

START_TEST(test_register_empty_name_raises_ValueError)
{
    th_tool t = make_tool("", "Add a memory to the graph");
    th_err err;
    ck_assert_int_eq(add(&t, &err), TH_ERR_VALUE);
    ck_assert_int_eq(err.code, TH_ERR_VALUE);
    ck_assert_msg(strstr(err.msg, "Tool name cannot be empty") != NULL, "message: %s", err.msg);
    ck_assert_uint_eq(th_registry_count(reg), 0);
}
END_TEST

START_TEST(test_register_invalid_protocol_raises_TypeError)
{
    th_err err;
    ck_assert_int_eq(add(NULL, &err), TH_ERR_TYPE);
    ck_assert_int_eq(err.code, TH_ERR_TYPE);
    ck_assert_msg(strncmp(err.msg, "Tool must implement MCPTool protocol", 36) == 0, "message: %s", err.msg);
    ck_assert_uint_eq(th_registry_count(reg), 0);
}
END_TEST

START_TEST(test_register_missing_attribute_raises_AttributeError)
{
    th_tool t = make_tool("test", NULL);
    th_err err;
    ck_assert_int_eq(add(&t, &err), TH_ERR_ATTRIBUTE);
    ck_assert_int_eq(err.code, TH_ERR_ATTRIBUTE);
    ck_assert_str_eq(err.msg, "Tool missing required attribute: description "
                              "(Tool must have 'name' and 'description' attributes)");
    ck_assert_ptr_null(th_registry_get(reg, "test"));
}
END_TEST

START_TEST(test_register_all_partial_failure_registers_valid_tools)
{
    th_tool valid = make_tool("add_memory", "Add a memory to the graph");
    th_tool after = make_tool("get_stats", "Statistics about the graph");
    const th_tool *tools[] = {&valid, NULL, &after};
    size_t n_added = 99;
    th_err err;
    ck_assert_int_eq(th_registry_add_all(reg, tools, 3, NULL, &n_added, &err), TH_ERR_TYPE);
    ck_assert_uint_eq(n_added, 1);
    ck_assert_str_eq(list_tools(), "add_memory");
    ck_assert_ptr_null(th_registry_get(reg, "get_stats"));

    /* The same tool twice in one list: the first stays. */
    th_tool dup = make_tool("search_memory", "Search the memory graph");
    const th_tool *twice[] = {&dup, &dup};
    ck_assert_int_eq(th_registry_add_all(reg, twice, 2, NULL, &n_added, &err), TH_ERR_VALUE);
    ck_assert_str_eq(err.msg, "Tool 'search_memory' already registered");
    ck_assert_uint_eq(n_added, 1);
    ck_assert_str_eq(list_tools(), "add_memory,search_memory");
}
END_TEST

/* --- edge cases -------------------------------------------------------- */

START_TEST(test_get_tool_unknown_name_returns_None)
{
    th_tool t = make_tool("add_memory", "Add a memory to the graph");
    ck_assert_int_eq(add(&t, NULL), TH_OK);
    ck_assert_ptr_null(th_registry_get(reg, "nonexistent"));
    ck_assert_ptr_null(th_registry_get(reg, "add_memor"));
    ck_assert_ptr_null(th_registry_get(reg, "add_memory_"));
    ck_assert_ptr_null(th_registry_get(reg, ""));
    ck_assert_ptr_null(th_registry_get(reg, NULL));
}
END_TEST

START_TEST(test_get_tool_case_sensitive)
{
    th_tool t = make_tool("add_memory", "Add a memory to the graph");
    ck_assert_int_eq(add(&t, NULL), TH_OK);
    ck_assert_ptr_nonnull(th_registry_get(reg, "add_memory"));
    ck_assert_ptr_null(th_registry_get(reg, "Add_Memory"));
    ck_assert_ptr_null(th_registry_get(reg, "ADD_MEMORY"));
}
END_TEST

START_TEST(test_list_tools_empty_registry)
{
    ck_assert_uint_eq(th_registry_count(reg), 0);
    ck_assert_str_eq(list_tools(), "");
    ck_assert_ptr_null(th_registry_at(reg, 0));
}
END_TEST

START_TEST(test_register_all_empty_list)
{
    size_t n_added = 99;
    th_err err;
    ck_assert_int_eq(th_registry_add_all(reg, NULL, 0, NULL, &n_added, &err), TH_OK);
    ck_assert_uint_eq(n_added, 0);
    ck_assert_uint_eq(th_registry_count(reg), 0);
    ck_assert_int_eq(logged_lines, 0);
}
END_TEST

START_TEST(test_validate_tool_valid_returns_True)
{
    th_tool t = make_tool("add_memory", "Add a memory to the graph");
    ck_assert(th_registry_validate(reg, &t));
    /* No side effects: nothing registered, nothing logged. */
    ck_assert_uint_eq(th_registry_count(reg), 0);
    ck_assert_ptr_null(th_registry_get(reg, "add_memory"));
    ck_assert_int_eq(logged_lines, 0);
    ck_assert_int_eq(add(&t, NULL), TH_OK);
}
END_TEST

START_TEST(test_validate_tool_invalid_returns_False)
{
    th_tool registered = make_tool("add_memory", "Add a memory to the graph");
    ck_assert_int_eq(add(&registered, NULL), TH_OK);
    int lines = logged_lines;

    th_tool no_name = make_tool(NULL, "Bad tool without a name");
    th_tool no_execute = make_tool("bad", "Bad tool without execute");
    no_execute.handler = NULL;
    th_tool empty_schema = make_tool("bad", "Bad tool with an empty schema");
    empty_schema.input_schema = "{}";
    th_tool bad_abi = make_tool("bad", "Bad tool from another ABI");
    bad_abi.abi_version = TH_ABI_VERSION + 1;

    ck_assert(!th_registry_validate(reg, NULL));
    ck_assert(!th_registry_validate(reg, &no_name));
    ck_assert(!th_registry_validate(reg, &no_execute));
    ck_assert(!th_registry_validate(reg, &empty_schema));
    ck_assert(!th_registry_validate(reg, &bad_abi));
    ck_assert(!th_registry_validate(reg, &registered)); /* duplicate */
    ck_assert_uint_eq(th_registry_count(reg), 1);
    ck_assert_int_eq(logged_lines, lines);
}
END_TEST

/* --- the rules particular to C ----------------------------------------- */

/* "Valid JSON" means RFC 8259, not json-c's lenient default. */
START_TEST(test_input_schema_must_be_strict_json)
{
    static const char *const lenient[] = {
        "{\"type\":\"object\",\"properties\":{},}",
        "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\",\"enum\":[1,2,]}}}",
        "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\",\"minimum\":01}}}",
        "{\"type\":\"object\",\"properties\":{\"s\":{\"description\":\"\xff\"}}}",
        /* Found by fuzz/fuzz_schema_compile: json-c passes these, and a
         * "const" quoted them into violation messages. Overlong "d",
         * a surrogate, a code point past U+10FFFF. */
        "{\"type\":\"object\",\"properties\":{\"s\":{\"const\":\"\xc1\xa4\"}}}",
        "{\"type\":\"object\",\"properties\":{\"s\":{\"const\":\"\xed\xa0\x80\"}}}",
        "{\"type\":\"object\",\"properties\":{\"s\":{\"const\":\"\xf4\x90\x80\x80\"}}}",
    };
    for (size_t i = 0; i < sizeof lenient / sizeof *lenient; i++) {
        th_tool t = make_tool("strict", "Schema that is not strict JSON");
        t.input_schema = lenient[i];
        th_err err;
        ck_assert_msg(add(&t, &err) == TH_ERR_VALUE, "accepted %s", lenient[i]);
        ck_assert_msg(strncmp(err.msg, "Tool input_schema is not valid JSON: ", 37) == 0, "message: %s", err.msg);
    }
    /* Whitespace around the object is JSON. */
    th_tool ok = make_tool("strict", "Schema with surrounding whitespace");
    ok.input_schema = "\n  " EMPTY_SCHEMA "\n";
    ck_assert_int_eq(add(&ok, NULL), TH_OK);
}
END_TEST

START_TEST(test_optional_fields_parsed_and_checked)
{
    th_tool t = make_tool("with_extras", "Tool with every optional field");
    t.title = "With extras";
    t.output_schema = "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\"}}}";
    t.annotations = "{\"readOnlyHint\":true}";
    th_err err;
    ck_assert_int_eq(add(&t, &err), TH_OK);
    const th_entry *e = th_registry_get(reg, "with_extras");
    ck_assert_str_eq(e->title, "With extras");
    ck_assert(json_object_is_type(e->output_schema, json_type_object));
    json_object *hint;
    ck_assert(json_object_object_get_ex(e->annotations, "readOnlyHint", &hint));
    ck_assert(json_object_get_boolean(hint));

    th_tool bad = make_tool("bad_extras", "Tool with broken optional fields");
    bad.annotations = "[true]";
    ck_assert_int_eq(add(&bad, &err), TH_ERR_VALUE);
    ck_assert_str_eq(err.msg, "Tool annotations must be dict (a JSON object), got array");
    bad.annotations = NULL;
    bad.output_schema = "{\"type\":";
    ck_assert_int_eq(add(&bad, &err), TH_ERR_VALUE);
    ck_assert_msg(strncmp(err.msg, "Tool output_schema is not valid JSON: ", 38) == 0, "message: %s", err.msg);
    bad.output_schema = NULL;
    bad.title = "caf\xc3";
    ck_assert_int_eq(add(&bad, &err), TH_ERR_VALUE);
    ck_assert_str_eq(err.msg, "Tool title must be string (valid UTF-8)");
    ck_assert_uint_eq(th_registry_count(reg), 1);
}
END_TEST

START_TEST(test_abi_checked_first)
{
    th_tool t = make_tool("future", "Tool from a newer header");
    t.abi_version = TH_ABI_VERSION + 1;
    t.name = NULL; /* not read: the ABI is checked before anything else */
    th_err err;
    ck_assert_int_eq(add(&t, &err), TH_ERR_ABI);
    char want[128];
    snprintf(want, sizeof want, "Host ABI version is %d, plugin ABI version is %d.", TH_ABI_VERSION,
             TH_ABI_VERSION + 1);
    ck_assert_msg(strstr(err.msg, want) != NULL, "message: %s", err.msg);

    /* An older version is refused too, not read as the current one: a
     * descriptor written without TH_TOOL_INIT has version 0. */
    th_tool old = make_tool("older", "Tool without TH_TOOL_INIT");
    old.abi_version = TH_ABI_VERSION - 1;
    ck_assert_int_eq(add(&old, &err), TH_ERR_ABI);
    snprintf(want, sizeof want, "Host ABI version is %d, plugin ABI version is %d.", TH_ABI_VERSION,
             TH_ABI_VERSION - 1);
    ck_assert_msg(strstr(err.msg, want) != NULL, "message: %s", err.msg);

    th_tool big = make_tool("bigger", "Descriptor larger than the host's");
    big.struct_size = sizeof(th_tool) + 8;
    ck_assert_int_eq(add(&big, &err), TH_ERR_ABI);
    ck_assert_msg(strstr(err.msg, "built against a newer toolhost") != NULL, "message: %s", err.msg);
    ck_assert_uint_eq(th_registry_count(reg), 0);
}
END_TEST

/* A plugin built before th_tool had timeout_ms: its struct ends before the
 * field, and whatever memory follows must read as 0 (the host's deadline). */
START_TEST(test_timeout_ms_past_an_older_struct_size_reads_as_zero)
{
    union {
        th_tool t;
        unsigned char bytes[sizeof(th_tool)];
    } old;
    memset(old.bytes, 0x5a, sizeof old.bytes); /* what lies past the old struct */
    th_tool t = make_tool("older", "Descriptor from an older header");
    memcpy(&old.t, &t, offsetof(th_tool, timeout_ms));
    old.t.struct_size = (uint32_t)offsetof(th_tool, timeout_ms);
    th_err err;
    ck_assert_int_eq(add(&old.t, &err), TH_OK);
    ck_assert_uint_eq(th_registry_get(reg, "older")->timeout_ms, 0);

    th_tool own = make_tool("newer", "Descriptor with its own deadline");
    own.timeout_ms = 250;
    ck_assert_int_eq(add(&own, &err), TH_OK);
    ck_assert_uint_eq(th_registry_get(reg, "newer")->timeout_ms, 250);
}
END_TEST

/* Every character at the edges of the allowed classes is taken where the
 * rule allows it, and each one just outside them refused, first or not:
 * a name is lowercase letters, then also digits and '_'. */
START_TEST(test_tool_name_character_classes_at_their_edges)
{
    static const char *const taken[] = {"a", "z", "az", "za", "a0", "a9", "a_", "z_9", "abcdefghijklmnopqrstuvwxyz"};
    static const char *const refused[] = {"`", "{", "A", "Z", "a`", "a{", "aA", "aZ", "a/", "a:", "a^", "a-",
                                          "a ", "a.", "0a", "9a", "_a", "-a", "a\x7f"};
    th_err err;
    for (size_t i = 0; i < sizeof taken / sizeof *taken; i++) {
        th_tool t = make_tool(taken[i], "A name inside the classes");
        ck_assert_msg(add(&t, &err) == TH_OK, "'%s' refused: %s", taken[i], err.msg);
        ck_assert_ptr_nonnull(th_registry_get(reg, taken[i]));
    }
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        th_tool t = make_tool(refused[i], "A name with a character just outside the classes");
        ck_assert_msg(add(&t, &err) == TH_ERR_VALUE, "'%s' taken", refused[i]);
        ck_assert_msg(strstr(err.msg, "invalid (must be lowercase, alphanumeric, underscores)"), "'%s': %s",
                      refused[i], err.msg);
    }
    ck_assert_uint_eq(th_registry_count(reg), sizeof taken / sizeof *taken);
}
END_TEST

/* A descriptor smaller than ABI 1's fields (which end at function) is
 * refused before anything past its end is read; exactly ABI 1's size is a
 * plugin built then, and is taken. */
START_TEST(test_tool_smaller_than_abi_1_is_refused)
{
    const uint32_t abi1 = (uint32_t)(offsetof(th_tool, function) + sizeof(const th_function *));
    th_err err;
    uint32_t sizes[] = {0, 8, abi1 - 1};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        th_tool t = make_tool("small", "Descriptor smaller than ABI 1");
        t.struct_size = sizes[i];
        ck_assert_int_eq(add(&t, &err), TH_ERR_ABI);
        ck_assert_msg(strstr(err.msg, "struct size mismatch"), "size %u: %s", (unsigned)sizes[i], err.msg);
        ck_assert_msg(!strstr(err.msg, "newer toolhost"), "size %u: %s", (unsigned)sizes[i], err.msg);
    }
    ck_assert_uint_eq(th_registry_count(reg), 0);
    union {
        th_tool t;
        unsigned char bytes[sizeof(th_tool)];
    } old;
    memset(old.bytes, 0x5a, sizeof old.bytes); /* what lies past the ABI 1 struct */
    th_tool t = make_tool("abi_one", "Descriptor of exactly ABI 1");
    memcpy(&old.t, &t, abi1);
    old.t.struct_size = abi1;
    ck_assert_msg(add(&old.t, &err) == TH_OK, "%s", err.msg);
    ck_assert_uint_eq(th_registry_get(reg, "abi_one")->timeout_ms, 0);
}
END_TEST

START_TEST(test_register_after_shutdown)
{
    th_registry_shutdown(reg);
    th_tool t = make_tool("add_memory", "Add a memory to the graph");
    th_err err;
    ck_assert_int_eq(add(&t, &err), TH_ERR_RUNTIME);
    ck_assert_str_eq(err.msg, "Server is shutting down, registration not allowed");
    ck_assert_uint_eq(th_registry_count(reg), 0);
}
END_TEST

static int destroyed;

static void count_destroy(void *user_data)
{
    ck_assert_ptr_eq(user_data, &destroyed);
    destroyed++;
}

/* destroy runs once per registered tool when the last reference goes, and
 * never for a refused descriptor (its user_data stays the plugin's). */
START_TEST(test_destroy_only_for_registered_tools)
{
    destroyed = 0;
    th_tool t = make_tool("owned", "Tool whose user_data the host owns");
    t.user_data = &destroyed;
    t.destroy = count_destroy;
    ck_assert_int_eq(add(&t, NULL), TH_OK);
    ck_assert_int_eq(add(&t, NULL), TH_ERR_VALUE);
    th_tool bad = t;
    bad.name = "refused";
    bad.description = "short";
    ck_assert_int_eq(add(&bad, NULL), TH_ERR_VALUE);
    th_registry_ref(reg);
    th_registry_unref(reg);
    ck_assert_int_eq(destroyed, 0);
    th_registry_unref(reg);
    reg = th_registry_new(); /* for teardown */
    ck_assert_int_eq(destroyed, 1);
}
END_TEST

/* Enough tools to grow the hash table several times; lookups stay exact. */
START_TEST(test_many_tools_lookup)
{
    char names[300][16];
    for (int i = 0; i < 300; i++) {
        snprintf(names[i], sizeof names[i], "t%03d", i);
        th_tool t = make_tool(names[i], "One of many test tools");
        ck_assert_int_eq(add(&t, NULL), TH_OK);
    }
    ck_assert_uint_eq(th_registry_count(reg), 300);
    for (int i = 0; i < 300; i++) {
        ck_assert_str_eq(th_registry_get(reg, names[i])->name, names[i]);
        ck_assert_ptr_eq(th_registry_at(reg, (size_t)i), th_registry_get(reg, names[i]));
    }
    ck_assert_ptr_null(th_registry_get(reg, "t300"));
    ck_assert_ptr_null(th_registry_get(reg, "t00"));
    ck_assert_int_eq(logged_lines, 300);
}
END_TEST

/* th_entry_invoke: a plain tool runs its handler with its user_data, a
 * typed one its function with the arguments unpacked. */
static int plain_ran, typed_ran;

static th_rc plain_handler(th_call *call, json_object *args, void *user_data)
{
    (void)call;
    (void)args;
    plain_ran = *(int *)user_data;
    return TH_ERR_TOOL;
}

static void typed_fn(int n)
{
    typed_ran = n;
}

START_TEST(test_entry_invoke_runs_either_kind)
{
    static int token = 42;
    static const th_param params[] = {{.name = "n", .type = TH_T_INT}};
    static const th_function fn = {.fn = (void (*)(void))typed_fn, .result = TH_T_VOID, .params = params,
                                   .n_params = 1};
    th_tool plain = make_tool("plain_tool", "Runs its handler");
    plain.handler = plain_handler;
    plain.user_data = &token;
    th_tool typed = make_tool("typed_tool", "Runs its function");
    typed.handler = NULL;
    typed.input_schema = NULL;
    typed.function = &fn;
    th_err err;
    ck_assert_int_eq(th_registry_add(reg, &plain, NULL, &err), TH_OK);
    ck_assert_msg(th_registry_add(reg, &typed, NULL, &err) == TH_OK, "%s", err.msg);

    json_object *args = json_tokener_parse("{\"n\":7}");
    th_call *c = th_call_new("plain_tool", NULL);
    ck_assert_int_eq(th_entry_invoke(th_registry_get(reg, "plain_tool"), th_call_handle(c), args), TH_ERR_TOOL);
    json_object_put(th_call_finish(c, TH_ERR_TOOL));
    th_call_free(c);
    ck_assert_int_eq(plain_ran, 42);
    c = th_call_new("typed_tool", NULL);
    ck_assert_int_eq(th_entry_invoke(th_registry_get(reg, "typed_tool"), th_call_handle(c), args), TH_OK);
    json_object_put(th_call_finish(c, TH_OK));
    th_call_free(c);
    ck_assert_int_eq(typed_ran, 7);
    json_object_put(args);
}
END_TEST

static Suite *registry_suite(void)
{
    Suite *s = suite_create("registry");
    TCase *tc = tcase_create("unit");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_init_creates_empty_registry);
    tcase_add_test(tc, test_register_single_tool_success);
    tcase_add_test(tc, test_register_all_multiple_tools_success);
    tcase_add_test(tc, test_get_tool_returns_correct_tool);
    tcase_add_test(tc, test_list_tools_returns_all_names);
    tcase_add_test(tc, test_register_duplicate_name_raises_ValueError);
    tcase_add_test(tc, test_register_empty_name_raises_ValueError);
    tcase_add_test(tc, test_register_invalid_protocol_raises_TypeError);
    tcase_add_test(tc, test_register_missing_attribute_raises_AttributeError);
    tcase_add_test(tc, test_register_all_partial_failure_registers_valid_tools);
    tcase_add_test(tc, test_get_tool_unknown_name_returns_None);
    tcase_add_test(tc, test_get_tool_case_sensitive);
    tcase_add_test(tc, test_list_tools_empty_registry);
    tcase_add_test(tc, test_register_all_empty_list);
    tcase_add_test(tc, test_validate_tool_valid_returns_True);
    tcase_add_test(tc, test_validate_tool_invalid_returns_False);
    suite_add_tcase(s, tc);

    TCase *extra = tcase_create("c_rules");
    tcase_add_checked_fixture(extra, setup, teardown);
    tcase_add_test(extra, test_input_schema_must_be_strict_json);
    tcase_add_test(extra, test_optional_fields_parsed_and_checked);
    tcase_add_test(extra, test_abi_checked_first);
    tcase_add_test(extra, test_timeout_ms_past_an_older_struct_size_reads_as_zero);
    tcase_add_test(extra, test_tool_name_character_classes_at_their_edges);
    tcase_add_test(extra, test_tool_smaller_than_abi_1_is_refused);
    tcase_add_test(extra, test_register_after_shutdown);
    tcase_add_test(extra, test_destroy_only_for_registered_tools);
    tcase_add_test(extra, test_many_tools_lookup);
    tcase_add_test(extra, test_task_support_values);
    tcase_add_test(extra, test_entry_invoke_runs_either_kind);
    suite_add_tcase(s, extra);
    return s;
}

TH_CHECK_MAIN(registry_suite)
