/* SPDX-License-Identifier: MIT */
/*
** test_resources.c: unit tests of the resource registry (plugin/resources.c:
** every rule and its message, URI resolution and template matching, update
** notices), the loader's handling of resource-only and refused plugins, and
** the resource methods (protocol/mcpresources.c) called directly: paging,
** each revision's errors, reads, subscriptions and resource events.
*/
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <check.h>

#include "plugin/loader.h"
#include "plugin/registry.h"
#include "plugin/resources.h"
#include "protocol/jsonrpc.h"
#include "protocol/mcpresources.h"
#include "check_main.h"

#define RESFIX_SO TEST_BUILDDIR "/resplugins/.libs/resfix.so"
#define RESREFUSED_SO TEST_BUILDDIR "/resplugins/.libs/resrefused.so"

static int destroyed;

static void count_destroy(void *p)
{
    (void)p;
    destroyed++;
}

static th_rc read_text(th_call *call, const char *uri, json_object *vars, void *user_data)
{
    (void)user_data;
    json_object *v;
    if (json_object_object_get_ex(vars, "id", &v)) {
        const char *id = json_object_get_string(v);
        if (strcmp(id, "gone") == 0)
            return TH_ERR_NOT_FOUND;
        if (strcmp(id, "no") == 0) {
            th_call_error(call, "id 'no' is refused");
            return TH_ERR_VALUE;
        }
        if (strcmp(id, "fail") == 0)
            return th_call_error(call, "backend down");
        if (strcmp(id, "link") == 0)
            return th_call_resource_link(call, uri, "x", NULL, NULL);
        return th_call_textf(call, "id=%s", id);
    }
    return th_call_resource_text(call, uri, "text/plain", "plain");
}

static th_resource res(const char *uri, const char *name)
{
    th_resource r = {TH_RESOURCE_INIT, .uri = uri, .name = name, .read = read_text};
    return r;
}

static th_resource tpl(const char *t, const char *name)
{
    th_resource r = {TH_RESOURCE_INIT, .uri_template = t, .name = name, .read = read_text};
    return r;
}

static th_resources *rs;
static th_err err;

static void setup(void)
{
    rs = th_resources_new();
    ck_assert_ptr_nonnull(rs);
    th_err_clear(&err);
    destroyed = 0;
}

static void teardown(void)
{
    th_resources_free(rs);
}

/* Add R (a template when T) and expect CODE and, when MSG, that exact message. */
static void expect(const th_resource *r, bool t, th_rc code, const char *msg)
{
    th_rc rc = th_resources_add(rs, r, t, false, "/p/a.so", &err);
    ck_assert_msg(rc == code, "got %s (%s), wanted %s", th_rc_name(rc), err.msg, th_rc_name(code));
    if (msg)
        ck_assert_str_eq(err.msg, msg);
}

START_TEST(test_valid_resource_and_template)
{
    th_resource r = res("test://a", "a");
    r.title = "A";
    r.description = "the a";
    r.mime_type = "text/plain";
    r.size = 12;
    r.annotations = "{\"audience\":[\"user\",\"assistant\"],\"priority\":1,\"lastModified\":\"2025-01-12T15:00:58Z\"}";
    expect(&r, false, TH_OK, NULL);
    th_resource t = tpl("file:///{path}", "files");
    expect(&t, true, TH_OK, NULL);
    ck_assert_uint_eq(th_resources_count(rs), 1);
    ck_assert_uint_eq(th_resources_template_count(rs), 1);
    const th_res_entry *e = th_resources_at(rs, 0);
    ck_assert_str_eq(e->uri, "test://a");
    ck_assert_str_eq(e->mime_type, "text/plain");
    ck_assert_uint_eq(e->size, 12);
    ck_assert_str_eq(e->origin, "/p/a.so");
    ck_assert_ptr_null(e->uri_template);
}
END_TEST

START_TEST(test_descriptor_and_abi)
{
    expect(NULL, false, TH_ERR_TYPE, "Resource must be a th_resource (descriptor is NULL)");
    th_resource r = res("test://a", "a");
    r.abi_version = 99;
    expect(&r, false, TH_ERR_ABI,
           "incompatible resource descriptor: ABI version mismatch. Host ABI version is 1, plugin ABI version is 99.");
    r = res("test://a", "a");
    r.struct_size = 8;
    expect(&r, false, TH_ERR_ABI, NULL);
    ck_assert_ptr_nonnull(strstr(err.msg, "struct size mismatch"));
    r.struct_size = sizeof(th_resource) + 8;
    expect(&r, false, TH_ERR_ABI, NULL);
    ck_assert_ptr_nonnull(strstr(err.msg, "built against a newer toolhost"));
}
END_TEST

START_TEST(test_required_fields)
{
    th_resource r = res(NULL, "a");
    expect(&r, false, TH_ERR_ATTRIBUTE, "Resource missing required attribute: uri");
    r = tpl(NULL, "a");
    expect(&r, true, TH_ERR_ATTRIBUTE, "Resource template missing required attribute: uri_template");
    r = res("test://a", NULL);
    expect(&r, false, TH_ERR_ATTRIBUTE, "Resource missing required attribute: name");
    r = res("test://a", "a");
    r.read = NULL;
    expect(&r, false, TH_ERR_VALUE, "Resource must have a 'read' function");
    r = res("test://a", "a");
    r.uri_template = "test://{x}";
    expect(&r, false, TH_ERR_VALUE, NULL);
    ck_assert_ptr_nonnull(strstr(err.msg, "not both"));
}
END_TEST

START_TEST(test_uri_must_be_absolute)
{
    th_resource r = res("notes.txt", "a");
    expect(&r, false, TH_ERR_VALUE,
           "Resource uri 'notes.txt' must be an absolute URI: a scheme (a letter, then letters, digits, '+', '-', "
           "'.') and ':', e.g. file:///path or test://name");
    r = res("/etc/passwd", "a");
    expect(&r, false, TH_ERR_VALUE, NULL);
    r = res("1http://x", "a");
    expect(&r, false, TH_ERR_VALUE, NULL);
    r = res("test://a b", "a");
    expect(&r, false, TH_ERR_VALUE, "Resource uri 'test://a b' must not contain spaces or control characters");
    r = res("test://{x}", "a");
    expect(&r, false, TH_ERR_VALUE, NULL);
    ck_assert_ptr_nonnull(strstr(err.msg, "th_server_add_resource_template"));
    r = res("te\xffst://a", "a");
    expect(&r, false, TH_ERR_VALUE, "Resource uri must be valid UTF-8");
    ck_assert(th_uri_absolute("urn:isbn:1"));
    ck_assert(th_uri_absolute("git+ssh://h/r"));
    ck_assert(!th_uri_absolute(""));
    ck_assert(!th_uri_absolute("a/b:c"));
    ck_assert_uint_eq(th_resources_count(rs), 0);
}
END_TEST

START_TEST(test_template_syntax)
{
    th_resource t = tpl("test://{id", "t");
    expect(&t, true, TH_ERR_VALUE,
           "Resource uri_template 'test://{id': the expression at offset 7 must be {name} with a name of letters, "
           "digits and '_' (operators and lists are not supported)");
    t = tpl("test://{+path}", "t");
    expect(&t, true, TH_ERR_VALUE, NULL);
    t = tpl("test://a}", "t");
    expect(&t, true, TH_ERR_VALUE, "Resource uri_template 'test://a}': '}' at offset 8 closes no expression");
    t = tpl("test://{a}{b}", "t");
    expect(&t, true, TH_ERR_VALUE, NULL);
    ck_assert_ptr_nonnull(strstr(err.msg, "follow each other"));
    t = tpl("test://plain", "t");
    expect(&t, true, TH_ERR_VALUE, NULL);
    ck_assert_ptr_nonnull(strstr(err.msg, "has no {variable}"));
    t = tpl("{scheme}://x", "t");
    expect(&t, true, TH_ERR_VALUE, NULL);
    ck_assert_ptr_nonnull(strstr(err.msg, "absolute URI"));
}
END_TEST

START_TEST(test_duplicates_name_first_registrant)
{
    th_resource r = res("test://a", "a");
    expect(&r, false, TH_OK, NULL);
    ck_assert_int_eq(th_resources_add(rs, &r, false, false, "/p/b.so", &err), TH_ERR_VALUE);
    ck_assert_str_eq(err.msg, "Resource 'test://a' already registered (first by /p/a.so)");
    th_resource t = tpl("test://{x}", "t");
    expect(&t, true, TH_OK, NULL);
    ck_assert_int_eq(th_resources_add(rs, &t, true, false, NULL, &err), TH_ERR_VALUE);
    ck_assert_str_eq(err.msg, "Resource template 'test://{x}' already registered (first by /p/a.so)");
    ck_assert_uint_eq(th_resources_count(rs), 1);
    ck_assert_uint_eq(th_resources_template_count(rs), 1);
}
END_TEST

START_TEST(test_texts_mime_annotations)
{
    th_resource r = res("test://a", "");
    expect(&r, false, TH_ERR_VALUE, "Resource name length must be 1-128 chars, got 0");
    char longname[200];
    memset(longname, 'n', 129);
    longname[129] = '\0';
    r = res("test://a", longname);
    expect(&r, false, TH_ERR_VALUE, "Resource name length must be 1-128 chars, got 129");
    r = res("test://a", "a");
    r.description = "caf\xe9";
    expect(&r, false, TH_ERR_VALUE, "Resource description must be valid UTF-8");
    r = res("test://a", "a");
    r.mime_type = "text";
    expect(&r, false, TH_ERR_VALUE, "Resource mime_type 'text' must be type/subtype, e.g. text/plain");
    r.mime_type = "text/plain; charset=utf-8";
    expect(&r, false, TH_ERR_VALUE, NULL);
    r = res("test://a", "a");
    r.annotations = "{\"priority\":2}";
    expect(&r, false, TH_ERR_VALUE, "Resource annotations.priority must be a number from 0 to 1, got 2");
    r.annotations = "{\"audience\":[\"bot\"]}";
    expect(&r, false, TH_ERR_VALUE,
           "Resource annotations.audience must be an array of \"user\" and \"assistant\", got [\"bot\"]");
    r.annotations = "{\"lastModified\":5}";
    expect(&r, false, TH_ERR_VALUE, "Resource annotations.lastModified must be an ISO 8601 timestamp string, got 5");
    r.annotations = "[1]";
    expect(&r, false, TH_ERR_VALUE, "Resource annotations must be a JSON object");
    r.annotations = "{\"priority\":0.5,}";
    expect(&r, false, TH_ERR_VALUE, "Resource annotations is not valid JSON");
    ck_assert_uint_eq(th_resources_count(rs), 0);
}
END_TEST

START_TEST(test_after_start_and_older_struct)
{
    th_resource r = res("test://a", "a");
    ck_assert_int_eq(th_resources_add(rs, &r, false, true, NULL, &err), TH_ERR_RUNTIME);
    ck_assert_str_eq(err.msg, "Cannot register resources after server has started");
    /* A plugin built before a field is appended: its struct_size ends at
     * destroy, and anything later reads as zero. */
    r.struct_size = (uint32_t)(offsetof(th_resource, destroy) + sizeof(void (*)(void *)));
    expect(&r, false, TH_OK, NULL);
}
END_TEST

START_TEST(test_resolve_and_templates)
{
    th_resource r = res("test://items/special", "special");
    expect(&r, false, TH_OK, NULL);
    th_resource t1 = tpl("test://items/{id}/data", "data");
    th_resource t2 = tpl("test://items/{id}", "item");
    th_resource t3 = tpl("file:///{path}", "files");
    expect(&t1, true, TH_OK, NULL);
    expect(&t2, true, TH_OK, NULL);
    expect(&t3, true, TH_OK, NULL);
    json_object *vars;
    /* An exact resource wins over every template. */
    const th_res_entry *e = th_resources_resolve(rs, "test://items/special", &vars);
    ck_assert_str_eq(e->name, "special");
    ck_assert_str_eq(json_object_to_json_string(vars), "{ }");
    json_object_put(vars);
    e = th_resources_resolve(rs, "test://items/123/data", &vars);
    ck_assert_str_eq(e->name, "data");
    ck_assert_str_eq(json_object_get_string(json_object_object_get(vars, "id")), "123");
    json_object_put(vars);
    /* First template in order: "a/b" is not followed by "/data". */
    e = th_resources_resolve(rs, "test://items/a/b", &vars);
    ck_assert_str_eq(e->name, "item");
    ck_assert_str_eq(json_object_get_string(json_object_object_get(vars, "id")), "a/b");
    json_object_put(vars);
    /* Percent-decoded, except %00, which would cut a C string. */
    e = th_resources_resolve(rs, "file:///sub%2F..%2Fx%00y%zz", &vars);
    ck_assert_str_eq(e->name, "files");
    ck_assert_str_eq(json_object_get_string(json_object_object_get(vars, "path")), "sub/../x%00y%zz");
    json_object_put(vars);
    /* A variable is never empty; a literal must match exactly. */
    ck_assert_ptr_null(th_resources_resolve(rs, "test://items/", &vars));
    ck_assert_ptr_null(vars);
    ck_assert_ptr_null(th_resources_resolve(rs, "file:///", NULL));
    ck_assert_ptr_null(th_resources_resolve(rs, "other://x", NULL));
    ck_assert_ptr_nonnull(th_resources_find(rs, NULL, "file:///{path}"));
    ck_assert_ptr_null(th_resources_find(rs, "file:///{path}", NULL));
}
END_TEST

START_TEST(test_truncate_and_destroy)
{
    th_resource r = res("test://a", "a");
    r.destroy = count_destroy;
    expect(&r, false, TH_OK, NULL);
    r.uri = "test://b";
    expect(&r, false, TH_OK, NULL);
    th_resource t = tpl("test://{x}", "t");
    t.destroy = count_destroy;
    expect(&t, true, TH_OK, NULL);
    /* A refused descriptor's destroy is not called: its caller keeps it. */
    expect(&r, false, TH_ERR_VALUE, NULL);
    ck_assert_int_eq(destroyed, 0);
    th_resources_truncate(rs, 1, 0);
    ck_assert_int_eq(destroyed, 2);
    ck_assert_uint_eq(th_resources_count(rs), 1);
    ck_assert_uint_eq(th_resources_template_count(rs), 0);
}
END_TEST

static char heard[256];
static int heard_count;

static void listener(const char *uri, void *ctx)
{
    (void)ctx;
    snprintf(heard, sizeof heard, "%s", uri);
    heard_count++;
}

START_TEST(test_updated_reaches_the_listener)
{
    heard_count = 0;
    th_resources_on_update(listener, NULL);
    ck_assert_int_eq(th_resource_updated("test://a"), TH_OK);
    ck_assert_str_eq(heard, "test://a");
    ck_assert_int_eq(th_resource_updated("relative"), TH_ERR_MISUSE);
    ck_assert_int_eq(th_resource_updated(NULL), TH_ERR_MISUSE);
    ck_assert_int_eq(heard_count, 1);
    th_resources_on_update(NULL, NULL);
    ck_assert_int_eq(th_resource_updated("test://b"), TH_OK); /* nobody listens: still fine */
    ck_assert_int_eq(heard_count, 1);
}
END_TEST

/* ---- the loader ---------------------------------------------------------- */

START_TEST(test_loader_resource_plugin_and_refusal)
{
    th_registry *reg = th_registry_new();
    th_load_stats stats = {0};
    ck_assert_int_eq(th_loader_load_file(reg, RESFIX_SO, NULL, &stats), TH_OK);
    const th_resources *r = th_registry_resources(reg);
    ck_assert_uint_eq(th_resources_count(r), 5); /* the relative URI was refused */
    ck_assert_uint_eq(th_resources_template_count(r), 1);
    ck_assert_str_eq(th_resources_at(r, 0)->origin, RESFIX_SO);
    /* A refused plugin takes its staged resource with it. */
    ck_assert_int_ne(th_loader_load_file(reg, RESREFUSED_SO, NULL, &stats), TH_OK);
    ck_assert_uint_eq(th_resources_count(r), 5);
    ck_assert_ptr_null(th_resources_find(r, "mem://staged", NULL));
    /* A second copy's resources are duplicates: the plugin's tool is too,
     * so it is refused and adds nothing. */
    ck_assert_int_ne(th_loader_load_file(reg, RESFIX_SO, NULL, &stats), TH_OK);
    ck_assert_uint_eq(th_resources_count(r), 5);
    th_registry_unref(reg);
}
END_TEST

/* ---- the methods ----------------------------------------------------------- */

/* A session's identity for subscriptions; what it is told goes through
 * the server's th_mcp_notify (test_mcp_resources, test_reload). */
typedef struct inbox {
    int unused;
} inbox;

static th_registry *mreg;

static void msetup(void)
{
    mreg = th_registry_new();
    th_resources *r = th_registry_resources(mreg);
    th_err e;
    const char *uris[] = {"test://1", "test://2", "test://3"};
    for (size_t i = 0; i < 3; i++) {
        th_resource x = res(uris[i], "n");
        ck_assert_int_eq(th_resources_add(r, &x, false, false, NULL, &e), TH_OK);
    }
    th_resource t = tpl("test://t/{id}", "t");
    t.mime_type = "text/markdown";
    ck_assert_int_eq(th_resources_add(r, &t, true, false, NULL, &e), TH_OK);
}

static void mteardown(void)
{
    th_registry_unref(mreg);
}

/* Serve METHOD with PARAMS_JSON (may be NULL). */
static th_mcpres_answer serve(const char *method, const char *params_json, bool modern, size_t page, inbox *in)
{
    json_object *params = params_json ? json_tokener_parse(params_json) : NULL;
    th_mcpres_req q = {.reg = mreg, .method = method, .params = params, .modern = modern, .titles = true,
                       .page_size = page, .list_ttl_ms = 1000, .session = in};
    th_mcpres_answer a;
    th_mcpres_serve(&q, &a);
    json_object_put(params);
    return a;
}

static const char *text_of(th_mcpres_answer *a)
{
    return a->result ? json_object_to_json_string_ext(a->result, JSON_C_TO_STRING_PLAIN) : a->message;
}

static void answer_free(th_mcpres_answer *a)
{
    json_object_put(a->result);
    json_object_put(a->data);
}

START_TEST(test_list_pages)
{
    inbox in = {0};
    th_mcpres_answer a = serve("resources/list", NULL, false, 2, &in);
    ck_assert_str_eq(text_of(&a), "{\"resources\":[{\"uri\":\"test:\\/\\/1\",\"name\":\"n\"},{\"uri\":\"test:\\/\\/2\","
                                  "\"name\":\"n\"}],\"nextCursor\":\"r1:2\"}");
    answer_free(&a);
    a = serve("resources/list", "{\"cursor\":\"r1:2\"}", true, 2, &in);
    ck_assert_str_eq(text_of(&a), "{\"resources\":[{\"uri\":\"test:\\/\\/3\",\"name\":\"n\"}],\"ttlMs\":1000,"
                                  "\"cacheScope\":\"public\"}");
    answer_free(&a);
    a = serve("resources/list", "{\"cursor\":\"t1:1\"}", false, 2, &in);
    ck_assert_int_eq(a.code, TH_RPC_INVALID_PARAMS);
    ck_assert_str_eq(a.message, "Invalid params: invalid cursor");
    answer_free(&a);
    a = serve("resources/templates/list", NULL, false, 0, &in);
    ck_assert_str_eq(text_of(&a), "{\"resourceTemplates\":[{\"uriTemplate\":\"test:\\/\\/t\\/{id}\",\"name\":\"t\","
                                  "\"mimeType\":\"text\\/markdown\"}]}");
    answer_free(&a);
    th_mcpres_session_gone(&in);
}
END_TEST

START_TEST(test_read_outcomes_per_revision)
{
    inbox in = {0};
    th_mcpres_answer a = serve("resources/read", "{\"uri\":\"test://2\"}", false, 0, &in);
    ck_assert_str_eq(text_of(&a), "{\"contents\":[{\"uri\":\"test:\\/\\/2\",\"mimeType\":\"text\\/plain\","
                                  "\"text\":\"plain\"}]}");
    answer_free(&a);
    /* A text block becomes text of the URI, with the template's type. */
    a = serve("resources/read", "{\"uri\":\"test://t/7\"}", true, 0, &in);
    ck_assert_str_eq(text_of(&a), "{\"contents\":[{\"uri\":\"test:\\/\\/t\\/7\",\"mimeType\":\"text\\/markdown\","
                                  "\"text\":\"id=7\"}],\"ttlMs\":0,\"cacheScope\":\"private\"}");
    answer_free(&a);
    const char *missing[] = {"{\"uri\":\"test://none\"}", "{\"uri\":\"test://t/gone\"}"};
    for (int i = 0; i < 2; i++) {
        a = serve("resources/read", missing[i], false, 0, &in);
        ck_assert_int_eq(a.code, -32002); /* 2025-11-25 */
        ck_assert_str_eq(a.message, "Resource not found");
        ck_assert_ptr_nonnull(strstr(json_object_to_json_string(a.data), "test:"));
        answer_free(&a);
        a = serve("resources/read", missing[i], true, 0, &in);
        ck_assert_int_eq(a.code, -32602); /* 2026-07-28, SEP-2164 */
        ck_assert_ptr_null(a.result);
        answer_free(&a);
    }
    a = serve("resources/read", "{\"uri\":\"test://t/no\"}", false, 0, &in);
    ck_assert_int_eq(a.code, TH_RPC_INVALID_PARAMS);
    ck_assert_str_eq(a.message, "Invalid params: id 'no' is refused");
    answer_free(&a);
    a = serve("resources/read", "{\"uri\":\"test://t/fail\"}", false, 0, &in);
    ck_assert_int_eq(a.code, TH_RPC_INTERNAL_ERROR);
    ck_assert_str_eq(a.message, "Internal error: reading resource 't' failed: backend down");
    answer_free(&a);
    a = serve("resources/read", "{\"uri\":\"test://t/link\"}", false, 0, &in);
    ck_assert_int_eq(a.code, TH_RPC_INTERNAL_ERROR);
    ck_assert_ptr_nonnull(strstr(a.message, "not text, image, audio or an embedded resource"));
    answer_free(&a);
    a = serve("resources/read", "{\"uri\":5}", false, 0, &in);
    ck_assert_str_eq(a.message, "Invalid params: resources/read needs a string \"uri\"");
    answer_free(&a);
    th_mcpres_session_gone(&in);
}
END_TEST

static int events;
static char last_uri[128];

static void on_updated(const char *uri, void *ctx)
{
    ck_assert_ptr_eq(ctx, &events);
    events++;
    snprintf(last_uri, sizeof last_uri, "%s", uri);
}

/*
** resources/subscribe records (session, URI) for th_mcpres_subscribed;
** every th_resource_updated() reaches the one listener (the server, which
** decides who hears it), until that listener is removed by its own context.
*/
START_TEST(test_subscribe_and_updates)
{
    inbox a_in = {0}, b_in = {0};
    th_mcpres_init();
    th_mcpres_on_updated(on_updated, &events);
    events = 0;
    th_mcpres_answer a = serve("resources/subscribe", "{\"uri\":\"test://t/9\"}", false, 0, &a_in);
    ck_assert_str_eq(text_of(&a), "{}");
    answer_free(&a);
    a = serve("resources/subscribe", "{\"uri\":\"test://nothing\"}", false, 0, &b_in);
    ck_assert_int_eq(a.code, -32002);
    answer_free(&a);
    ck_assert(th_mcpres_subscribed(&a_in, "test://t/9"));
    ck_assert(!th_mcpres_subscribed(&b_in, "test://t/9"));
    ck_assert(!th_mcpres_subscribed(&a_in, "test://1"));
    ck_assert(!th_mcpres_subscribed(&b_in, "test://nothing"));
    ck_assert_int_eq(th_resource_updated("test://t/9"), TH_OK);
    ck_assert_int_eq(events, 1);
    ck_assert_str_eq(last_uri, "test://t/9");
    ck_assert_int_eq(th_resource_updated("test://1"), TH_OK);
    ck_assert_int_eq(events, 2);
    ck_assert_str_eq(last_uri, "test://1");
    /* Removing with another context leaves the listener in place. */
    th_mcpres_on_updated(NULL, &b_in);
    th_resource_updated("test://2");
    ck_assert_int_eq(events, 3);
    /* Unsubscribed, or gone: no longer subscribed. */
    a = serve("resources/unsubscribe", "{\"uri\":\"test://t/9\"}", false, 0, &a_in);
    answer_free(&a);
    ck_assert(!th_mcpres_subscribed(&a_in, "test://t/9"));
    a = serve("resources/subscribe", "{\"uri\":\"test://2\"}", false, 0, &a_in);
    answer_free(&a);
    ck_assert(th_mcpres_subscribed(&a_in, "test://2"));
    th_mcpres_session_gone(&a_in);
    ck_assert(!th_mcpres_subscribed(&a_in, "test://2"));
    th_mcpres_on_updated(NULL, &events);
    th_resource_updated("test://2");
    ck_assert_int_eq(events, 3);
    th_mcpres_session_gone(&b_in);
    th_resources_on_update(NULL, NULL);
}
END_TEST

static Suite *resources_suite(void)
{
    Suite *s = suite_create("resources");
    TCase *rules = tcase_create("rules");
    tcase_add_checked_fixture(rules, setup, teardown);
    tcase_add_test(rules, test_valid_resource_and_template);
    tcase_add_test(rules, test_descriptor_and_abi);
    tcase_add_test(rules, test_required_fields);
    tcase_add_test(rules, test_uri_must_be_absolute);
    tcase_add_test(rules, test_template_syntax);
    tcase_add_test(rules, test_duplicates_name_first_registrant);
    tcase_add_test(rules, test_texts_mime_annotations);
    tcase_add_test(rules, test_after_start_and_older_struct);
    tcase_add_test(rules, test_resolve_and_templates);
    tcase_add_test(rules, test_truncate_and_destroy);
    tcase_add_test(rules, test_updated_reaches_the_listener);
    suite_add_tcase(s, rules);
    TCase *loader = tcase_create("loader");
    tcase_add_test(loader, test_loader_resource_plugin_and_refusal);
    suite_add_tcase(s, loader);
    TCase *methods = tcase_create("methods");
    tcase_add_checked_fixture(methods, msetup, mteardown);
    tcase_add_test(methods, test_list_pages);
    tcase_add_test(methods, test_read_outcomes_per_revision);
    tcase_add_test(methods, test_subscribe_and_updates);
    suite_add_tcase(s, methods);
    return s;
}

TH_CHECK_MAIN(resources_suite)
