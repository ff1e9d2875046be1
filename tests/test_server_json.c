/* SPDX-License-Identifier: MIT */
/*
** test_server_json.c: the top-level server.json against the MCP Registry's
** published schema (tests/mcp-registry/, pinned by SHA-256), its version
** against configure.ac's, and the draft-07 keywords that schema relies on.
*/
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "base/sha256.h"
#include "schema/jsonschema.h"
#include "check_main.h"

#define SCHEMA_FILE TEST_SRCDIR "/mcp-registry/server-2025-12-11.schema.json"
#define SCHEMA_URI "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
#define SCHEMA_SHA256 "3fba09590c99f61735d234822279f4223fab9e300c0a81e81c91ab62a4114de0"
#define SERVER_JSON TOP_SRCDIR "/server.json"

/* The whole of file PATH, NUL-terminated, its length in *LEN. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    char *buf = NULL;
    size_t cap = 0, n = 0, got;
    do {
        if (n + 4096 > cap) {
            cap = cap ? cap * 2 : 65536;
            buf = realloc(buf, cap + 1);
            ck_assert_ptr_nonnull(buf);
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
    } while (got > 0);
    ck_assert_msg(!ferror(f), "cannot read %s", path);
    fclose(f);
    buf[n] = '\0';
    *len = n;
    return buf;
}

static json_object *load(const char *path)
{
    size_t len;
    char *text = slurp(path, &len);
    json_object *j = json_tokener_parse(text);
    ck_assert_msg(j != NULL, "%s is not JSON", path);
    free(text);
    return j;
}

static th_schema *registry_schema(void)
{
    json_object *j = load(SCHEMA_FILE);
    char err[512] = "";
    th_schema *s = th_schema_compile(j, err, sizeof err);
    json_object_put(j);
    ck_assert_msg(s != NULL, "the registry schema does not compile: %s", err);
    return s;
}

/* Violations of INSTANCE (taken over), their messages in *MSGS ("" if none). */
static size_t violations(const th_schema *s, json_object *instance, char **msgs)
{
    *msgs = NULL;
    size_t n = th_schema_validate(s, instance, msgs);
    json_object_put(instance);
    if (!*msgs)
        *msgs = strdup("");
    return n;
}

START_TEST(schema_is_the_pinned_file)
{
    size_t len;
    char *text = slurp(SCHEMA_FILE, &len);
    char digest[TH_SHA256_DIGEST_LEN + 1];
    th_sha256_digest(text, len, digest);
    ck_assert_str_eq(digest, "sha256:" SCHEMA_SHA256);
    free(text);
}
END_TEST

START_TEST(server_json_is_valid)
{
    th_schema *s = registry_schema();
    json_object *doc = load(SERVER_JSON), *v;
    ck_assert(json_object_object_get_ex(doc, "$schema", &v));
    ck_assert_str_eq(json_object_get_string(v), SCHEMA_URI);
    char *msgs;
    size_t n = violations(s, doc, &msgs);
    ck_assert_msg(n == 0, "server.json: %s", msgs);
    free(msgs);
    th_schema_free(s);
}
END_TEST

/* The release names one version everywhere: configure.ac's. */
START_TEST(versions_match_configure)
{
    json_object *doc = load(SERVER_JSON), *v, *pkgs;
    ck_assert(json_object_object_get_ex(doc, "version", &v));
    ck_assert_str_eq(json_object_get_string(v), PACKAGE_VERSION);
    ck_assert(json_object_object_get_ex(doc, "packages", &pkgs));
    size_t n = json_object_array_length(pkgs);
    ck_assert_uint_ge(n, 2);
    for (size_t i = 0; i < n; i++) {
        json_object *p = json_object_array_get_idx(pkgs, i), *id;
        ck_assert(json_object_object_get_ex(p, "identifier", &id));
        const char *ident = json_object_get_string(id);
        ck_assert_msg(strstr(ident, PACKAGE_VERSION) != NULL, "package %s does not name version %s", ident,
                      PACKAGE_VERSION);
        if (json_object_object_get_ex(p, "version", &v))
            ck_assert_str_eq(json_object_get_string(v), PACKAGE_VERSION);
    }
    json_object_put(doc);
}
END_TEST

/*
** Broken variants of server.json, each refused for its own reason: proof
** that the draft-07 keywords the registry schema is built from ($ref into
** definitions, allOf, anyOf, not/const, pattern, required, enum) are
** applied, not skipped as unknown.
*/
static const struct {
    const char *pointer_parent; /* JSON pointer of the object to change */
    const char *key;
    const char *json; /* new value; NULL removes KEY */
    const char *why;  /* part of the violation message */
} broken[] = {
    {"", "name", "\"toolhost\"", "pattern"},
    {"", "description", NULL, "required"},
    {"/packages/1", "version", "\"latest\"", "not"},
    {"/packages/0", "transport", NULL, "required"},
    {"/packages/0/transport", "type", "\"carrier-pigeon\"", "anyOf"},
    {"/packages/1", "fileSha256", "\"ABC\"", "pattern"},
    {"/packages/1/packageArguments/0", "type", "\"positional\"", "anyOf"},
    {"/packages/0/environmentVariables/0", "format", "\"colour\"", "enum"},
};

START_TEST(broken_variants_are_refused)
{
    th_schema *s = registry_schema();
    const size_t i = (size_t)_i;
    json_object *doc = load(SERVER_JSON), *parent = NULL;
    ck_assert_int_eq(json_pointer_get(doc, broken[i].pointer_parent, &parent), 0);
    if (broken[i].json)
        json_object_object_add(parent, broken[i].key, json_tokener_parse(broken[i].json));
    else
        json_object_object_del(parent, broken[i].key);
    char *msgs;
    size_t n = violations(s, doc, &msgs);
    ck_assert_msg(n > 0, "%s/%s accepted", broken[i].pointer_parent, broken[i].key);
    ck_assert_msg(strstr(msgs, broken[i].why) != NULL, "%s/%s refused without '%s': %s", broken[i].pointer_parent,
                  broken[i].key, broken[i].why, msgs);
    free(msgs);
    th_schema_free(s);
}
END_TEST

static Suite *server_json_suite(void)
{
    Suite *s = suite_create("server_json");
    TCase *tc = tcase_create("registry");
    tcase_add_test(tc, schema_is_the_pinned_file);
    tcase_add_test(tc, server_json_is_valid);
    tcase_add_test(tc, versions_match_configure);
    tcase_add_loop_test(tc, broken_variants_are_refused, 0, (int)(sizeof broken / sizeof broken[0]));
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN(server_json_suite)
