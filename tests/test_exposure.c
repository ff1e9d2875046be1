/* SPDX-License-Identifier: MIT */
/*
** test_exposure.c: the exposure policy (--tools, --exclude-tools,
** --read-only and their per-plugin forms, and over HTTP each caller's own
** set, --auth-tools) seen by a client of the real toolhost, over stdio at
** every revision and over HTTP in both eras: tools/list and tools/call give
** one answer, and a hidden tool is refused exactly as a name never served.
*/
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check_main.h"
#include "http_client.h"
#include "jwt_keys.h"
#include "mcp_harness.h"

/* The revisions a test runs at: the last of the initialize handshake's
 * first era, its later ones, and per-request _meta (no handshake). */
static const char *const revisions[] = {"2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"};
#define MODERN_REV 3

#define PROMPTFIX_SO TEST_BUILDDIR "/promptplugins/.libs/promptfix.so"
#define RESFIX_SO TEST_BUILDDIR "/resplugins/.libs/resfix.so"

static const char *const modes[] = {"--isolation=none", "--isolation=process"};

static int last_id;

static mh_proc *start_rev(int rev, const char *a, const char *b, const char *c)
{
    mh_proc *p = mh_start(a, b, c, NULL);
    if (rev != MODERN_REV)
        mh_initialize(p, revisions[rev]);
    return p;
}

/* The params' _meta at REV, as members after a comma, or "". */
static const char *meta(int rev)
{
    return rev == MODERN_REV ? "," MH_MODERN_META : "";
}

static json_object *rpc(mh_proc *p, int rev, const char *method, const char *params)
{
    char id[16];
    snprintf(id, sizeof id, "%d", ++last_id);
    mh_send(p, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"%s\",\"params\":{%s%s}}", id, method, params,
            *params ? meta(rev) : meta(rev) + (*meta(rev) ? 1 : 0));
    json_object *o = mh_next(p);
    MH_ASSERT_ID(o, id);
    return o;
}

static json_object *call(mh_proc *p, int rev, const char *name)
{
    char params[256];
    snprintf(params, sizeof params, "\"name\":\"%s\",\"arguments\":{\"text\":\"x\"}", name);
    return rpc(p, rev, "tools/call", params);
}

/* Every name tools/list gives, page by page, joined by spaces. */
static char *listed(mh_proc *p, int rev)
{
    char *all = calloc(1, 4096), cursor[256] = "";
    ck_assert_ptr_nonnull(all);
    for (;;) {
        json_object *o = rpc(p, rev, "tools/list", cursor);
        MH_ASSERT_RESULT(o);
        for (size_t i = 0; i < mh_len(o, "result tools"); i++) {
            char path[64];
            snprintf(path, sizeof path, "result tools %zu name", i);
            strcat(strcat(all, *all ? " " : ""), mh_str(o, path));
        }
        const char *next = mh_str(o, "result nextCursor");
        if (next)
            snprintf(cursor, sizeof cursor, "\"cursor\":\"%s\"", next);
        json_object_put(o);
        if (!next)
            return all;
    }
}

/* A call of NAME is refused as a name never served is: same code, and the
 * message the unknown name gets with NAME in it. */
static void refused_as_unknown(mh_proc *p, int rev, const char *name)
{
    json_object *o = call(p, rev, name), *u = call(p, rev, "never_served");
    MH_ASSERT_ERROR(o, -32602);
    MH_ASSERT_ERROR(u, -32602);
    char want[128];
    snprintf(want, sizeof want, "Unknown tool: %s", name);
    MH_ASSERT_STR(o, "error message", want);
    MH_ASSERT_STR(u, "error message", "Unknown tool: never_served");
    json_object_put(o);
    json_object_put(u);
}

static void served(mh_proc *p, int rev, const char *name)
{
    json_object *o = call(p, rev, name);
    MH_ASSERT_RESULT(o);
    json_object_put(o);
}

/* Paged two at a time, so that the filtered list is paged too. */
START_TEST(excluded_tools_are_neither_listed_nor_called)
{
    mh_proc *p = start_rev(_i, "--exclude-tools=fail*,slow", "--page-size=2", NULL);
    char *names = listed(p, _i);
    ck_assert_str_eq(names, "logger printer progress rich_structured rich echo");
    free(names);
    refused_as_unknown(p, _i, "slow");
    refused_as_unknown(p, _i, "failer");
    served(p, _i, "echo");
    mh_finish(p);
}
END_TEST

START_TEST(only_the_chosen_tools_are_listed_and_called)
{
    mh_proc *p = start_rev(_i, "--tools=echo,rich*", "--tools=printer", NULL);
    char *names = listed(p, _i);
    ck_assert_str_eq(names, "printer rich_structured rich echo");
    free(names);
    refused_as_unknown(p, _i, "logger");
    served(p, _i, "echo");
    mh_finish(p);
}
END_TEST

/* echo and rich_structured say readOnlyHint: true; rich says nothing. */
START_TEST(read_only_exposes_the_read_only_tools)
{
    mh_proc *p = start_rev(_i, "--read-only", NULL, NULL);
    char *names = listed(p, _i);
    ck_assert_str_eq(names, "rich_structured echo");
    free(names);
    refused_as_unknown(p, _i, "printer");
    served(p, _i, "echo");
    mh_finish(p);
}
END_TEST

/* PLUGIN/TOOL names a tool by its plugin; PLUGIN: confines globs to it. */
START_TEST(globs_may_name_the_plugin)
{
    mh_proc *p = start_rev(_i, "--exclude-tools=failer/*", "--tools=rich:rich_s*", NULL);
    char *names = listed(p, _i);
    ck_assert_str_eq(names, "logger printer progress rich_structured slow echo");
    free(names);
    refused_as_unknown(p, _i, "failer_bare");
    refused_as_unknown(p, _i, "rich");
    mh_finish(p);
}
END_TEST

/* A plugin's config section holds the same keys, which never reach it as
 * settings. */
START_TEST(a_config_section_sets_the_plugin_policy)
{
    char path[] = "/tmp/th-exposure-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    static const char text[] = "[rich]\nread-only = true\n[failer]\nexclude-tools = *\n[slow]\ntools = nothing\n";
    ck_assert_int_eq(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
    close(fd);
    char opt[64];
    snprintf(opt, sizeof opt, "--config=%s", path);
    mh_proc *p = start_rev(_i, opt, NULL, NULL);
    char *names = listed(p, _i);
    ck_assert_str_eq(names, "logger printer progress rich_structured echo");
    free(names);
    refused_as_unknown(p, _i, "rich");
    mh_finish(p);
    unlink(path);
}
END_TEST

START_TEST(bad_policy_options_are_usage_errors)
{
    static const char *const bad[][2] = {
        {"--tools=echo,,rich", "empty glob"},
        {"--exclude-tools=Bad:x", "not a plugin name"},
        {"--read-only-plugin=no-such", "not a plugin name"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        mh_proc *p = mh_start(bad[i][0], NULL);
        ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 2);
        char *err = mh_stderr(p);
        ck_assert_msg(strstr(err, bad[i][1]), "%s: %s", bad[i][0], err);
        free(err);
        mh_free(p);
    }
}
END_TEST

/* Whether the list at PATH of O holds an entry with FIELD equal to WANT. */
static bool lists(json_object *o, const char *path, const char *field, const char *want)
{
    json_object *a = mh_at(o, path);
    for (size_t i = 0; a && i < json_object_array_length(a); i++) {
        const char *v = mh_str(json_object_array_get_idx(a, i), field);
        if (v && strcmp(v, want) == 0)
            return true;
    }
    return false;
}

/* METHOD with PARAMS for a hidden name and for one never served: one error. */
static void same_error(mh_proc *p, const char *method, const char *hidden, const char *never)
{
    json_object *h = rpc(p, 2, method, hidden), *n = rpc(p, 2, method, never);
    ck_assert_msg(mh_has(h, "error"), "%s %s: %s", method, hidden, mh_json(h));
    ck_assert_int_eq(json_object_get_int(mh_at(h, "error code")), json_object_get_int(mh_at(n, "error code")));
    json_object_put(h);
    json_object_put(n);
}

/* Prompts and resources are chosen by plugin: an exclusion that covers all
 * a plugin's tools hides them too. Each run is checked against one where
 * the same plugins are served, so the hidden names are real ones. */
START_TEST(a_plugin_excluded_whole_shows_no_prompts_or_resources)
{
    char *dir = mh_private_dir(PROMPTFIX_SO, RESFIX_SO, NULL);
    for (int hide = 0; hide < 2; hide++) {
        mh_proc *p = mh_spawn("-d", dir, modes[_i], "--no-registry-cache",
                              hide ? "--exclude-tools=resfix/*,promptfix/*" : "--exclude-tools=resfix/nothing", NULL);
        mh_initialize(p, "2025-11-25");
        json_object *o = rpc(p, 2, "prompts/list", "");
        ck_assert_msg(lists(o, "result prompts", "name", "greet") == !hide, "%s", mh_json(o));
        json_object_put(o);
        o = rpc(p, 2, "resources/list", "");
        ck_assert_msg(lists(o, "result resources", "uri", "mem://hello") == !hide, "%s", mh_json(o));
        json_object_put(o);
        o = rpc(p, 2, "resources/templates/list", "");
        ck_assert_msg(lists(o, "result resourceTemplates", "name", "items") == !hide, "%s", mh_json(o));
        json_object_put(o);
        if (hide) {
            same_error(p, "prompts/get", "\"name\":\"greet\"", "\"name\":\"never_served\"");
            same_error(p, "resources/read", "\"uri\":\"mem://hello\"", "\"uri\":\"mem://never\"");
            same_error(p, "resources/read", "\"uri\":\"mem://items/1\"", "\"uri\":\"mem://never\"");
        }
        mh_finish(p);
    }
    mh_rm_dir(dir);
}
END_TEST

/* Over HTTP, a legacy session (2025-06-18) and per-request modern POSTs
 * (2026-07-28, whose Mcp-Name header is checked through the same lookup):
 * the hidden tool and a name never served get one answer. */
static hres http_post(int port, const char *sid, const char *method, const char *name, const char *body)
{
    char hdrs[512];
    if (sid)
        snprintf(hdrs, sizeof hdrs, ACCEPT_BOTH "Mcp-Session-Id: %s\r\n", sid);
    else
        snprintf(hdrs, sizeof hdrs, ACCEPT_BOTH MODERN_HEADERS "Mcp-Method: %s\r\n%s%s%s", method,
                 name ? "Mcp-Name: " : "", name ? name : "", name ? "\r\n" : "");
    return request(port, "POST", hdrs, body);
}

static hres http_call(int port, const char *sid, const char *name)
{
    char body[512];
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\","
             "\"arguments\":{\"text\":\"x\"}%s}}",
             name, sid ? "" : "," MH_MODERN_META);
    return http_post(port, sid, "tools/call", name, body);
}

START_TEST(http_lists_and_calls_agree)
{
    int port;
    mh_proc *p = start_http(&port, "--exclude-tools=slow", NULL, NULL);
    char *sid = NULL;
    if (_i == 0) {
        hres r = request(port, "POST", ACCEPT_BOTH,
                         "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                         "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
        ck_assert_msg(r.status == 200 && (sid = header_of(&r, "Mcp-Session-Id")), "HTTP %d %s", r.status, r.body);
        hres_free(&r);
        r = http_post(port, sid, NULL, NULL, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
        ck_assert_int_eq(r.status, 202);
        hres_free(&r);
    }
    hres r = http_post(port, sid, "tools/list", NULL,
                       _i == 0 ? "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}"
                               : "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{" MH_MODERN_META "}}");
    ck_assert_msg(r.status == 200 && strstr(r.body, "\"echo\"") && !strstr(r.body, "\"slow\""), "HTTP %d %s",
                  r.status, r.body);
    hres_free(&r);
    hres hidden = http_call(port, sid, "slow"), never = http_call(port, sid, "never_served");
    ck_assert_msg(strstr(hidden.body, "Unknown tool: slow"), "HTTP %d %s", hidden.status, hidden.body);
    ck_assert_msg(strstr(never.body, "Unknown tool: never_served"), "HTTP %d %s", never.status, never.body);
    ck_assert_int_eq(hidden.status, never.status);
    hres_free(&hidden);
    hres_free(&never);
    free(sid);
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
}
END_TEST

/* ---- per caller: --auth-tools ------------------------------------------- */

/* Tokens for the callers: one that may read, one that may also administer,
 * one with no scope the host names. */
static char *caller_tokens(void)
{
    char *path = strdup("/tmp/th-exposure-tokens-XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    static const char text[] = "reader-token read\nadmin-token read admin\nplain-token other\n";
    ck_assert_int_eq(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
    close(fd);
    return path;
}

/* A POST with bearer TOKEN, in session SID (legacy) or, NULL, as a modern
 * request whose Mcp-Method is METHOD and Mcp-Name NAME (may be NULL). */
static hres post_as(int port, const char *token, const char *sid, const char *method, const char *name,
                    const char *body)
{
    char hdrs[4096];
    int n = snprintf(hdrs, sizeof hdrs, ACCEPT_BOTH "Authorization: Bearer %s\r\n", token);
    if (sid)
        snprintf(hdrs + n, sizeof hdrs - (size_t)n, "Mcp-Session-Id: %s\r\n", sid);
    else
        snprintf(hdrs + n, sizeof hdrs - (size_t)n, MODERN_HEADERS "Mcp-Method: %s\r\n%s%s%s", method,
                 name ? "Mcp-Name: " : "", name ? name : "", name ? "\r\n" : "");
    return request(port, "POST", hdrs, body);
}

/* A legacy (2025-06-18) session opened with TOKEN; its id. The initialize
 * result's instructions, which name tools, must not name NOT_NAMED. */
static char *session_as(int port, const char *token, const char *not_named)
{
    char hdrs[4096];
    snprintf(hdrs, sizeof hdrs, ACCEPT_BOTH "Authorization: Bearer %s\r\n", token);
    hres r = request(port, "POST", hdrs,
                     "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                     "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
    char *sid = header_of(&r, "Mcp-Session-Id");
    ck_assert_msg(r.status == 200 && sid, "initialize: HTTP %d %s", r.status, r.body);
    ck_assert_msg(strstr(r.body, "\"instructions\"") && !strstr(r.body, not_named), "instructions name %s: %s",
                  not_named, r.body);
    hres_free(&r);
    r = post_as(port, token, sid, NULL, NULL, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    ck_assert_int_eq(r.status, 202);
    hres_free(&r);
    return sid;
}

/* The names of TOKEN's tools/list, joined by spaces. */
static char *listed_as(int port, const char *token, const char *sid)
{
    hres r = post_as(port, token, sid, "tools/list", NULL,
                     sid ? "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}"
                         : "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{" MH_MODERN_META "}}");
    ck_assert_msg(r.status == 200, "tools/list: HTTP %d %s", r.status, r.body);
    const char *at = strstr(r.body, "{\"");
    json_object *o = at ? json_tokener_parse(at) : NULL;
    ck_assert_msg(o && mh_has(o, "result tools"), "tools/list: %s", r.body);
    char *all = calloc(1, 4096);
    ck_assert_ptr_nonnull(all);
    for (size_t i = 0; i < mh_len(o, "result tools"); i++) {
        char path[64];
        snprintf(path, sizeof path, "result tools %zu name", i);
        strcat(strcat(all, *all ? " " : ""), mh_str(o, path));
    }
    json_object_put(o);
    hres_free(&r);
    return all;
}

static hres call_as(int port, const char *token, const char *sid, const char *name)
{
    char body[512];
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\","
             "\"arguments\":{\"text\":\"x\"}%s}}",
             name, sid ? "" : "," MH_MODERN_META);
    return post_as(port, token, sid, "tools/call", name, body);
}

/* TOKEN's call of NAME gets what its call of a name never served gets:
 * the same status, and -32602 "Unknown tool: NAME" (never a 403). */
static void unknown_to(int port, const char *token, const char *sid, const char *name)
{
    hres h = call_as(port, token, sid, name), n = call_as(port, token, sid, "never_served");
    char want[128];
    snprintf(want, sizeof want, "\"message\":\"Unknown tool: %s\"", name);
    ck_assert_msg(strstr(h.body, want) && strstr(h.body, "-32602"), "%s calls %s: HTTP %d %s", token, name, h.status,
                  h.body);
    ck_assert_msg(strstr(n.body, "Unknown tool: never_served"), "HTTP %d %s", n.status, n.body);
    ck_assert_int_eq(h.status, n.status);
    hres_free(&h);
    hres_free(&n);
}

static void callable_by(int port, const char *token, const char *sid, const char *name)
{
    hres r = call_as(port, token, sid, name);
    ck_assert_msg(r.status == 200 && strstr(r.body, "\"result\"") && !strstr(r.body, "Unknown tool"),
                  "%s calls %s: HTTP %d %s", token, name, r.status, r.body);
    hres_free(&r);
}

/* Three callers of one server, in a legacy session (_i 0) and per-request
 * modern POSTs (_i 1): each lists exactly what it may call. The server's
 * own policy (--exclude-tools=slow) holds for all of them, the admin too. */
START_TEST(each_caller_lists_and_calls_its_own_set)
{
    char *file = caller_tokens(), opt[128];
    snprintf(opt, sizeof opt, "--auth-token-file=%s", file);
    int port;
    mh_proc *p = mh_start("--http", "127.0.0.1:0", opt, "--exclude-tools=slow", "--auth-tools=read=echo,rich*",
                          "--auth-tools=admin=*", NULL);
    ck_assert_msg(mh_stderr_wait(p, LISTENING, MH_TIMEOUT_MS), "toolhost did not start listening");
    char *err = mh_stderr(p);
    port = atoi(strstr(err, LISTENING) + strlen(LISTENING));
    free(err);
    static const struct {
        const char *token, *list, *hidden, *callable;
    } callers[] = {
        {"reader-token", "rich_structured rich echo", "printer", "echo"},
        {"admin-token", "failer_bare failer logger printer progress rich_structured rich echo", "slow", "printer"},
        {"plain-token", "", "echo", NULL},
    };
    for (size_t i = 0; i < sizeof callers / sizeof *callers; i++) {
        const char *tok = callers[i].token;
        char *sid = _i == 0 ? session_as(port, tok, *callers[i].list ? callers[i].hidden : "echo") : NULL;
        char *names = listed_as(port, tok, sid);
        ck_assert_msg(strcmp(names, callers[i].list) == 0, "%s lists '%s'", tok, names);
        free(names);
        unknown_to(port, tok, sid, callers[i].hidden);
        unknown_to(port, tok, sid, "slow");
        if (callers[i].callable)
            callable_by(port, tok, sid, callers[i].callable);
        free(sid);
    }
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
    unlink(file);
    free(file);
}
END_TEST

/* A JWT by K for https://mcp.example/mcp, of subject alice, with SCOPE
 * and the claims MORE (",NAME:VALUE..." or ""). */
static char *alice_with_claims(const tk_key *k, const char *scope, const char *more)
{
    char claims[512];
    snprintf(claims, sizeof claims,
             "{\"iss\":\"https://as.example\",\"aud\":\"https://mcp.example/mcp\",\"sub\":\"alice\",\"exp\":%ld,"
             "\"scope\":\"%s\"%s}",
             (long)time(NULL) + 300, scope, more);
    return tk_sign(k, NULL, 0, claims);
}

static char *alice_with(const tk_key *k, const char *scope)
{
    return alice_with_claims(k, scope, "");
}

/* Another claim (here "roles", an array) picks sets as the scopes do, with
 * --auth-tools-claim; without it, the claim counts for nothing. */
START_TEST(a_jwt_roles_claim_picks_the_set)
{
    tk_key k = tk_key_new("k1", "ES256");
    char *jwks = tk_jwks_file(&k, 1), opt[128];
    snprintf(opt, sizeof opt, "--auth-jwks-file=%s", jwks);
    char *ops = alice_with_claims(&k, "openid", ",\"roles\":[\"viewer\",\"ops\",\"two words\"]"),
         *spaced = alice_with_claims(&k, "openid", ",\"roles\":[\"ops x\"]");
    for (int claim = 0; claim < 2; claim++) {
        mh_proc *p = mh_start("--http", "127.0.0.1:0", opt, "--auth-issuer=https://as.example",
                              "--http-resource-url=https://mcp.example/mcp", "--auth-tools=ops=printer,echo",
                              "--auth-tools=two=logger", claim ? "--auth-tools-claim=roles" : NULL, NULL);
        ck_assert_msg(mh_stderr_wait(p, LISTENING, MH_TIMEOUT_MS), "toolhost did not start listening");
        char *err = mh_stderr(p);
        int port = atoi(strstr(err, LISTENING) + strlen(LISTENING));
        free(err);
        char *names = listed_as(port, ops, NULL);
        ck_assert_str_eq(names, claim ? "printer echo" : "");
        free(names);
        if (claim)
            callable_by(port, ops, NULL, "printer");
        else
            unknown_to(port, ops, NULL, "printer");
        unknown_to(port, ops, NULL, "logger"); /* "two words" is no word "two" */
        names = listed_as(port, spaced, NULL);
        ck_assert_str_eq(names, "");
        free(names);
        mh_kill(p, SIGTERM);
        ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
        mh_free(p);
    }
    free(ops);
    free(spaced);
    unlink(jwks);
    free(jwks);
    tk_key_free(&k);
}
END_TEST

/* A JWT's "scope" claim picks the set, and in a legacy session each POST
 * is judged by the token it carries: alice's session, opened with a token
 * that may read, sees printer only while her POSTs carry admin too. */
START_TEST(a_jwt_scope_claim_picks_the_set_per_post)
{
    tk_key k = tk_key_new("k1", "ES256");
    char *jwks = tk_jwks_file(&k, 1), opt[128];
    snprintf(opt, sizeof opt, "--auth-jwks-file=%s", jwks);
    mh_proc *p = mh_start("--http", "127.0.0.1:0", opt, "--auth-issuer=https://as.example",
                          "--http-resource-url=https://mcp.example/mcp", "--auth-tools=tools:read=echo",
                          "--auth-tools=tools:admin=*", NULL);
    ck_assert_msg(mh_stderr_wait(p, LISTENING, MH_TIMEOUT_MS), "toolhost did not start listening");
    char *err = mh_stderr(p);
    int port = atoi(strstr(err, LISTENING) + strlen(LISTENING));
    free(err);
    char *reader = alice_with(&k, "openid tools:read"), *admin = alice_with(&k, "tools:read tools:admin");
    char *sid = session_as(port, reader, "printer");
    char *names = listed_as(port, reader, sid);
    ck_assert_str_eq(names, "echo");
    free(names);
    unknown_to(port, reader, sid, "printer");
    callable_by(port, admin, sid, "printer");
    names = listed_as(port, admin, sid);
    ck_assert_msg(strstr(names, "printer") && strstr(names, "echo"), "admin lists '%s'", names);
    free(names);
    unknown_to(port, reader, sid, "printer");
    names = listed_as(port, reader, NULL);
    ck_assert_str_eq(names, "echo");
    free(names);
    /* The metadata names the scopes a JWKS cannot name by itself. */
    int fd = send_request(port, "GET", "/.well-known/oauth-protected-resource/mcp", "", NULL);
    hres r = read_response(fd);
    ck_assert_msg(r.status == 200 && strstr(r.body, "\"tools:admin\""), "HTTP %d %s", r.status, r.body);
    hres_free(&r);
    free(sid);
    free(reader);
    free(admin);
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
    unlink(jwks);
    free(jwks);
    tk_key_free(&k);
}
END_TEST

/* The rules are checked when read, and they need tokens to choose by. */
START_TEST(bad_caller_rules_are_refused)
{
    static const char *const bad[][2] = {
        {"--auth-tools=echo", "is not SCOPE=GLOB"},
        {"--auth-tools==echo", "is not SCOPE=GLOB"},
        {"--auth-tools=read=files:*", "without PLUGIN:"},
        {"--auth-tools=read=echo,,x", "empty glob"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        mh_proc *p = mh_start(bad[i][0], NULL);
        ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 2);
        char *err = mh_stderr(p);
        ck_assert_msg(strstr(err, bad[i][1]), "%s: %s", bad[i][0], err);
        free(err);
        mh_free(p);
    }
    mh_proc *p = mh_start("--http", "127.0.0.1:0", "--auth-tools=read=echo", NULL);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 1);
    char *err = mh_stderr(p);
    ck_assert_msg(strstr(err, "--auth-tools needs --auth-token-file or --auth-jwks-file"), "%s", err);
    free(err);
    mh_free(p);
    char *file = caller_tokens(), opt[128];
    snprintf(opt, sizeof opt, "--auth-token-file=%s", file);
    p = mh_start("--http", "127.0.0.1:0", opt, "--auth-tools=read=echo", "--auth-tools-claim=roles", NULL);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 1);
    err = mh_stderr(p);
    ck_assert_msg(strstr(err, "--auth-tools-claim needs --auth-jwks-file"), "%s", err);
    free(err);
    mh_free(p);
    unlink(file);
    free(file);
}
END_TEST

static Suite *exposure_suite(void)
{
    Suite *s = suite_create("exposure");
    TCase *tc = tcase_create("stdio");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    int n = (int)(sizeof revisions / sizeof *revisions);
    tcase_add_loop_test(tc, excluded_tools_are_neither_listed_nor_called, 0, n);
    tcase_add_loop_test(tc, only_the_chosen_tools_are_listed_and_called, 0, n);
    tcase_add_loop_test(tc, read_only_exposes_the_read_only_tools, 0, n);
    tcase_add_loop_test(tc, globs_may_name_the_plugin, 0, n);
    tcase_add_loop_test(tc, a_config_section_sets_the_plugin_policy, 0, n);
    tcase_add_test(tc, bad_policy_options_are_usage_errors);
    tcase_add_loop_test(tc, a_plugin_excluded_whole_shows_no_prompts_or_resources, 0, 2);
    suite_add_tcase(s, tc);
    tc = tcase_create("http");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_loop_test(tc, http_lists_and_calls_agree, 0, 2);
    suite_add_tcase(s, tc);
    tc = tcase_create("callers");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_loop_test(tc, each_caller_lists_and_calls_its_own_set, 0, 2);
    tcase_add_test(tc, a_jwt_scope_claim_picks_the_set_per_post);
    tcase_add_test(tc, a_jwt_roles_claim_picks_the_set);
    tcase_add_test(tc, bad_caller_rules_are_refused);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN_WITH(exposure_suite, mh_global_setup, mh_global_teardown)
