/* SPDX-License-Identifier: MIT */
/*
** test_skills.c: unit tests of the skills extension in-process: SHA-256,
** SKILL.md's frontmatter subset (what is accepted and how it is typed, each
** refusal and its message naming the line), the skill rules of th_skills_add
** with their messages, and skills/list, skills/get, resources/directory/read
** (protocol/mcpskills.c) and resources/read of skill files
** (protocol/mcpresources.c) called directly.
*/
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "base/sha256.h"
#include "plugin/registry.h"
#include "plugin/skills.h"
#include "protocol/jsonrpc.h"
#include "protocol/mcpresources.h"
#include "protocol/mcpskills.h"
#include "check_main.h"

#define MD(body) "---\n" body "---\nBody.\n"

/* ---- SHA-256 ------------------------------------------------------------- */

START_TEST(test_sha256_vectors)
{
    char d[TH_SHA256_DIGEST_LEN + 1];
    th_sha256_digest("", 0, d);
    ck_assert_str_eq(d, "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    th_sha256_digest("abc", 3, d);
    ck_assert_str_eq(d, "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    /* 56 bytes: the length no longer fits the first padding block. */
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    th_sha256_digest(two, strlen(two), d);
    ck_assert_str_eq(d, "sha256:248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    /* Several blocks. */
    char *million = malloc(1000000);
    ck_assert_ptr_nonnull(million);
    memset(million, 'a', 1000000);
    th_sha256_digest(million, 1000000, d);
    free(million);
    ck_assert_str_eq(d, "sha256:cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}
END_TEST

/* ---- the frontmatter --------------------------------------------------- */

/* TEXT parsed, as compact JSON (or "ERR: message"). */
static char out[2048];
static const char *fm(const char *text)
{
    th_err err;
    th_err_clear(&err);
    json_object *o = th_skills_parse_frontmatter(text, strlen(text), "SKILL.md", &err);
    if (!o) {
        snprintf(out, sizeof out, "ERR: %s", err.msg);
        return out;
    }
    snprintf(out, sizeof out, "%s", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
    json_object_put(o);
    return out;
}

START_TEST(test_frontmatter_accepted)
{
    ck_assert_str_eq(fm(MD("name: a-b\ndescription: Does things, well\n")),
                     "{\"name\":\"a-b\",\"description\":\"Does things, well\"}");
    /* YAML 1.2 core types for plain values; quotes keep strings. */
    ck_assert_str_eq(fm(MD("name: x\ndescription: d\nn: 42\nf: 1.5\nh: 0x1f\nt: true\nz: null\ne:\nq: \"42\"\n")),
                     "{\"name\":\"x\",\"description\":\"d\",\"n\":42,\"f\":1.5,\"h\":31,\"t\":true,\"z\":null,"
                     "\"e\":null,\"q\":\"42\"}");
    /* Quoting and escapes, comments, CRLF, a byte order mark, trailing spaces. */
    ck_assert_str_eq(fm("\xef\xbb\xbf---\r\nname: x   # the name\r\n# a comment\r\n\r\ndescription: 'it''s: "
                        "here'\r\nk: \"a\\\"b\\\\c\\n\\u00e9\"\r\n---  \r\nBody\r\n"),
                     "{\"name\":\"x\",\"description\":\"it's: here\",\"k\":\"a\\\"b\\\\c\\n\xc3\xa9\"}");
    /* One level of nested mapping (metadata). */
    ck_assert_str_eq(fm(MD("name: x\ndescription: d\nmetadata:\n  author: me\n  version: \"1.0\"\nlicense: MIT\n")),
                     "{\"name\":\"x\",\"description\":\"d\",\"metadata\":{\"author\":\"me\",\"version\":\"1.0\"},"
                     "\"license\":\"MIT\"}");
    /* A value may hold '#' and ':' where YAML keeps them in the text. */
    ck_assert_str_eq(fm(MD("name: x\ndescription: C# at 10:30\n")),
                     "{\"name\":\"x\",\"description\":\"C# at 10:30\"}");
}
END_TEST

START_TEST(test_frontmatter_refused)
{
    /* Structure. */
    ck_assert_str_eq(fm("name: x\n"), "ERR: Skill SKILL.md line 1: must begin with a '---' line opening the YAML "
                                      "frontmatter");
    ck_assert_str_eq(fm("---\nname: x\ndescription: d\n"),
                     "ERR: Skill SKILL.md line 1: the frontmatter opened by '---' is never closed by a '---' line");
    ck_assert_str_eq(fm(MD("name: x\ndescription: d\ntags:\n  - a\n")),
                     "ERR: Skill SKILL.md line 5: lists are not supported in skill frontmatter");
    ck_assert_str_eq(fm(MD("name: x\ndescription: [a, b]\n")),
                     "ERR: Skill SKILL.md line 3: flow sequences ([...]) are not supported in skill frontmatter; "
                     "quote the value");
    ck_assert_str_eq(fm(MD("name: x\ndescription: |\n  text\n")),
                     "ERR: Skill SKILL.md line 3: block scalars (|) are not supported in skill frontmatter; quote the "
                     "value");
    ck_assert_str_eq(fm(MD("name: &a x\ndescription: d\n")),
                     "ERR: Skill SKILL.md line 2: anchors (&) are not supported in skill frontmatter; quote the value");
    ck_assert_str_eq(fm(MD("name: x\ndescription: one\n  two\n")),
                     "ERR: Skill SKILL.md line 4: an indented line continues a value; multi-line values are not "
                     "supported (quote the value on one line)");
    ck_assert_str_eq(fm(MD("name: x\n\tdescription: d\n")),
                     "ERR: Skill SKILL.md line 3: tabs are not allowed for indentation in YAML");
    ck_assert_str_eq(fm(MD("name: x\nname: y\ndescription: d\n")),
                     "ERR: Skill SKILL.md line 3: the key 'name' appears twice");
    ck_assert_str_eq(fm(MD("name: x\ndescription: a: b\n")),
                     "ERR: Skill SKILL.md line 3: ': ' inside a plain value would start a mapping; quote the value");
    ck_assert_str_eq(fm(MD("name: x\ndescription: \"open\n")),
                     "ERR: Skill SKILL.md line 3: a double-quoted value must end on the same line (multi-line values "
                     "are not supported)");
    ck_assert_str_eq(fm(MD("name: x\nmetadata:\n  a: b\n    c: d\ndescription: d\n")),
                     "ERR: Skill SKILL.md line 5: indentation differs from the line above (nested mappings are one "
                     "level deep)");
    ck_assert_str_eq(fm(MD("name: x\ndescription: d\nbig: 12345678901234567\n")),
                     "ERR: Skill SKILL.md line 4: the number '12345678901234567' has too many digits to be compared "
                     "exactly; quote it");
    ck_assert_str_eq(fm(MD("name: x\ndescription: \"\\x41\"\n")),
                     "ERR: Skill SKILL.md line 3: unsupported escape '\\x' in a double-quoted value (accepted: \\\" "
                     "\\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX outside surrogates and NUL)");
    ck_assert_str_eq(fm("---\nname: \xff\n---\n"), "ERR: Skill SKILL.md is not UTF-8 text");
    /* The fields' rules. */
    ck_assert_str_eq(fm(MD("description: d\n")), "ERR: Skill SKILL.md line 1: the frontmatter has no name (required)");
    ck_assert_str_eq(fm(MD("name: x\n")), "ERR: Skill SKILL.md line 1: the frontmatter has no description (required)");
    ck_assert_str_eq(fm(MD("name: 12\ndescription: d\n")), "ERR: Skill SKILL.md line 2: name must be a string");
    ck_assert_str_eq(fm(MD("name: PDF--tool\ndescription: d\n")),
                     "ERR: Skill SKILL.md line 2: name 'PDF--tool' must be 1-64 characters of a-z, 0-9 and '-', "
                     "without a leading, trailing or double '-'");
    ck_assert_str_eq(fm(MD("name: -x\ndescription: d\n")),
                     "ERR: Skill SKILL.md line 2: name '-x' must be 1-64 characters of a-z, 0-9 and '-', without a "
                     "leading, trailing or double '-'");
    ck_assert_str_eq(fm(MD("name: x\ndescription: \"\"\n")),
                     "ERR: Skill SKILL.md line 3: description must be 1-1024 characters (it has 0)");
    ck_assert_str_eq(fm(MD("name: x\ndescription: d\nmetadata:\n  io.modelcontextprotocol/x: y\n")),
                     "ERR: Skill SKILL.md line 4: metadata key 'io.modelcontextprotocol/x': keys starting with "
                     "'io.modelcontextprotocol/' are reserved for MCP extensions");
    ck_assert_str_eq(fm(MD("name: x\ndescription: d\nmetadata:\n  version: 1.0\n")),
                     "ERR: Skill SKILL.md line 4: metadata.version must be a string (quote it)");
    char longname[200], a65[66];
    memset(a65, 'a', 65);
    a65[65] = '\0';
    snprintf(longname, sizeof longname, MD("name: %s\ndescription: d\n"), a65);
    ck_assert_str_eq(fm(longname), "ERR: Skill SKILL.md line 2: name must be 1-64 characters (it has 65)");
}
END_TEST

/* ---- the skill rules ------------------------------------------------------ */

static th_resources *rs;
static th_err err;

static void rsetup(void)
{
    rs = th_resources_new();
    th_err_clear(&err);
}

static void rteardown(void)
{
    th_resources_free(rs);
}

static const char pdf_md[] = MD("name: pdf\ndescription: PDF things\n");

static th_rc add(const th_skill_file *files, size_t n, const char *origin)
{
    th_skill s = {TH_SKILL_INIT, .files = files, .nfiles = n};
    return th_skills_add(rs, &s, false, origin, &err);
}

#define FILE_OF(p, text) {.path = (p), .data = (text), .size = sizeof(text) - 1}

START_TEST(test_skill_added_as_resources)
{
    const th_skill_file files[] = {FILE_OF("refs/a.txt", "alpha"), FILE_OF("SKILL.md", pdf_md),
                                   {.path = "bin/x", .data = "\0\1", .size = 2}};
    ck_assert_int_eq(add(files, 3, "p.so"), TH_OK);
    ck_assert_uint_eq(th_resources_count(rs), 3);
    /* SKILL.md first, named and described by its frontmatter. */
    const th_res_entry *m = th_resources_at(rs, 0);
    ck_assert_str_eq(m->uri, "skill://pdf/SKILL.md");
    ck_assert_str_eq(m->name, "pdf");
    ck_assert_str_eq(m->description, "PDF things");
    ck_assert_str_eq(m->mime_type, "text/markdown");
    ck_assert_uint_eq(m->size, sizeof pdf_md - 1);
    const th_skill_file_entry *f = th_skills_file_of(m);
    ck_assert_ptr_nonnull(f);
    char d[TH_SHA256_DIGEST_LEN + 1];
    th_sha256_digest(pdf_md, sizeof pdf_md - 1, d);
    ck_assert_str_eq(f->digest, d);
    ck_assert_ptr_nonnull(f->frontmatter);
    const th_res_entry *a = th_resources_at(rs, 1);
    ck_assert_str_eq(a->uri, "skill://pdf/refs/a.txt");
    ck_assert_str_eq(a->name, "refs/a.txt");
    ck_assert_str_eq(a->mime_type, "text/plain");
    ck_assert_ptr_null(th_skills_file_of(a)->frontmatter);
    const th_res_entry *b = th_resources_at(rs, 2);
    ck_assert_str_eq(b->mime_type, "application/octet-stream"); /* not text */
    ck_assert(!th_skills_file_of(b)->text);
}
END_TEST

START_TEST(test_skill_rules)
{
    ck_assert_int_eq(th_skills_add(rs, NULL, false, NULL, &err), TH_ERR_TYPE);
    th_skill bad = {.abi_version = 99, .struct_size = sizeof(th_skill)};
    ck_assert_int_eq(th_skills_add(rs, &bad, false, NULL, &err), TH_ERR_ABI);
    ck_assert_str_eq(err.msg, "Skill abi_version 99 is not 1");
    ck_assert_int_eq(add(NULL, 0, NULL), TH_ERR_ATTRIBUTE);
    ck_assert_str_eq(err.msg, "Skill files is required (at least SKILL.md)");
    const th_skill_file only[] = {FILE_OF("README.md", "x")};
    ck_assert_int_eq(add(only, 1, NULL), TH_ERR_VALUE);
    ck_assert_str_eq(err.msg, "Skill has no SKILL.md at its root (files[].path \"SKILL.md\")");
    static const struct {
        const char *path, *msg;
    } paths[] = {
        {"../x", "Skill file path '../x' has a '.' or '..' segment"},
        {"a//b", "Skill file path 'a//b' has an empty segment (a leading, trailing or double '/')"},
        {"/etc/passwd", "Skill file path '/etc/passwd' has an empty segment (a leading, trailing or double '/')"},
        {"a b", "Skill file path 'a b' has a character other than A-Z, a-z, 0-9, '.', '_', '-', '~' and '/'"},
        {"a%2e", "Skill file path 'a%2e' has a character other than A-Z, a-z, 0-9, '.', '_', '-', '~' and '/'"},
    };
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        const th_skill_file files[] = {FILE_OF("SKILL.md", pdf_md), {.path = paths[i].path, .data = "x", .size = 1}};
        ck_assert_int_eq(add(files, 2, NULL), TH_ERR_VALUE);
        ck_assert_str_eq(err.msg, paths[i].msg);
    }
    const th_skill_file twice[] = {FILE_OF("SKILL.md", pdf_md), FILE_OF("a", "1"), FILE_OF("a", "2")};
    ck_assert_int_eq(add(twice, 3, NULL), TH_ERR_VALUE);
    ck_assert_str_eq(err.msg, "Skill file path 'a' is given twice");
    const th_skill_file both[] = {FILE_OF("SKILL.md", pdf_md), FILE_OF("a/b", "1"), FILE_OF("a", "2")};
    ck_assert_int_eq(add(both, 3, NULL), TH_ERR_VALUE);
    ck_assert_str_eq(err.msg, "Skill file path 'a' is both a file and a folder");
    const th_skill_file nodata[] = {FILE_OF("SKILL.md", pdf_md), {.path = "x", .size = 3}};
    ck_assert_int_eq(add(nodata, 2, NULL), TH_ERR_VALUE);
    ck_assert_str_eq(err.msg, "Skill file x: data is NULL with size 3");
    const th_skill_file mime[] = {FILE_OF("SKILL.md", pdf_md), {.path = "x", .data = "", .mime_type = "text"}};
    ck_assert_int_eq(add(mime, 2, NULL), TH_ERR_VALUE);
    ck_assert_str_eq(err.msg, "Skill file x: mime_type 'text' is not type/subtype");
    const th_skill_file badmd[] = {FILE_OF("SKILL.md", MD("name: x\n"))};
    ck_assert_int_eq(add(badmd, 1, NULL), TH_ERR_VALUE);
    ck_assert_str_eq(err.msg, "Skill SKILL.md line 1: the frontmatter has no description (required)");
    /* Nothing of the refused skills stayed. */
    ck_assert_uint_eq(th_resources_count(rs), 0);
    /* After the start. */
    const th_skill_file ok[] = {FILE_OF("SKILL.md", pdf_md)};
    th_skill s = {TH_SKILL_INIT, .files = ok, .nfiles = 1};
    ck_assert_int_eq(th_skills_add(rs, &s, true, NULL, &err), TH_ERR_RUNTIME);
}
END_TEST

START_TEST(test_skill_limits)
{
    th_skill_file *many = calloc(TH_SKILL_FILES_MAX + 1, sizeof *many);
    char (*names)[16] = calloc(TH_SKILL_FILES_MAX + 1, 16);
    ck_assert(many && names);
    many[0] = (th_skill_file)FILE_OF("SKILL.md", pdf_md);
    for (size_t i = 1; i <= TH_SKILL_FILES_MAX; i++) {
        snprintf(names[i], 16, "f%zu", i);
        many[i] = (th_skill_file){.path = names[i], .data = "", .size = 0};
    }
    ck_assert_int_eq(add(many, TH_SKILL_FILES_MAX + 1, NULL), TH_ERR_VALUE);
    ck_assert_str_eq(err.msg, "Skill files: 513 files, more than the 512 a skill may have");
    ck_assert_int_eq(add(many, TH_SKILL_FILES_MAX, NULL), TH_OK); /* exactly 512 */
    ck_assert_uint_eq(th_resources_count(rs), TH_SKILL_FILES_MAX);
    free(many);
    free(names);
    /* 16 MiB in all, counted over every file, SKILL.md included. */
    size_t half = TH_SKILL_BYTES_MAX / 2;
    char *big = calloc(1, half);
    ck_assert_ptr_nonnull(big);
    const th_skill_file heavy[] = {FILE_OF("SKILL.md", MD("name: heavy\ndescription: d\n")),
                                   {.path = "a", .data = big, .size = half},
                                   {.path = "b", .data = big, .size = half}};
    ck_assert_int_eq(add(heavy, 3, NULL), TH_ERR_VALUE);
    ck_assert_str_eq(err.msg, "Skill files: more than 16777216 bytes in all (16 MiB, the limit per skill)");
    /* A size that would wrap the sum is refused the same, before any copy. */
    const th_skill_file wrap[] = {FILE_OF("SKILL.md", MD("name: wrap\ndescription: d\n")),
                                  {.path = "a", .data = big, .size = SIZE_MAX}};
    ck_assert_int_eq(add(wrap, 2, NULL), TH_ERR_VALUE);
    ck_assert_str_eq(err.msg, "Skill files: more than 16777216 bytes in all (16 MiB, the limit per skill)");
    free(big);
}
END_TEST

static th_rc read_nothing(th_call *call, const char *uri, json_object *vars, void *user_data)
{
    (void)call, (void)uri, (void)vars, (void)user_data;
    return TH_ERR_NOT_FOUND;
}

START_TEST(test_skill_names_unique_and_all_or_none)
{
    const th_skill_file files[] = {FILE_OF("SKILL.md", pdf_md)};
    ck_assert_int_eq(add(files, 1, "first.so"), TH_OK);
    ck_assert_int_eq(add(files, 1, "second.so"), TH_ERR_VALUE);
    ck_assert_str_eq(err.msg, "Skill name 'pdf' is already served by plugin first.so");
    /* A plain resource already at one of a skill's URIs: the skill is
     * refused whole, its SKILL.md taken back. */
    th_resource r = {TH_RESOURCE_INIT, .uri = "skill://other/x.txt", .name = "x", .read = read_nothing};
    ck_assert_int_eq(th_resources_add(rs, &r, false, false, "res.so", &err), TH_OK);
    size_t before = th_resources_count(rs);
    const th_skill_file other[] = {FILE_OF("SKILL.md", MD("name: other\ndescription: d\n")), FILE_OF("x.txt", "x")};
    ck_assert_int_ne(add(other, 2, "third.so"), TH_OK);
    ck_assert_uint_eq(th_resources_count(rs), before);
    ck_assert_ptr_null(th_resources_find(rs, "skill://other/SKILL.md", NULL));
}
END_TEST

/* ---- the methods ------------------------------------------------------------ */

static th_registry *mreg;

static void msetup(void)
{
    mreg = th_registry_new();
    th_resources *r = th_registry_resources(mreg);
    const th_skill_file pdf[] = {FILE_OF("SKILL.md", pdf_md), FILE_OF("references/FORMS.md", "# Forms\n"),
                                 FILE_OF("references/deep/more.txt", "more"), FILE_OF("logo.png", "\x89PNG\0")};
    const th_skill_file two[] = {FILE_OF("SKILL.md", MD("name: two\ndescription: Second\nmetadata:\n  a: b\n"))};
    const th_skill_file three[] = {FILE_OF("SKILL.md", MD("name: three\ndescription: Third\n"))};
    th_skill s[] = {{TH_SKILL_INIT, .files = pdf, .nfiles = 4},
                    {TH_SKILL_INIT, .files = two, .nfiles = 1},
                    {TH_SKILL_INIT, .files = three, .nfiles = 1}};
    for (size_t i = 0; i < 3; i++)
        ck_assert_int_eq(th_skills_add(r, &s[i], false, NULL, &err), TH_OK);
}

static void mteardown(void)
{
    th_registry_unref(mreg);
}

static th_mcpres_answer serve(const char *method, const char *params_json, size_t page)
{
    json_object *params = params_json ? json_tokener_parse(params_json) : NULL;
    th_mcpres_req q = {.reg = mreg, .method = method, .params = params, .modern = true, .titles = true,
                       .page_size = page, .list_ttl_ms = 1000};
    th_mcpres_answer a = {0};
    /* As protocol/mcp.c dispatches: the extension's methods, else the resources'. */
    if (th_mcpskills_is_method(method))
        th_mcpskills_serve(&q, &a);
    else
        th_mcpres_serve(&q, &a);
    json_object_put(params);
    return a;
}

static json_object *at(json_object *o, const char *k1, const char *k2)
{
    json_object *v = NULL;
    if (o && json_object_object_get_ex(o, k1, &v) && k2)
        json_object_object_get_ex(v, k2, &v);
    return v;
}

START_TEST(test_skills_list_pages_whole_entries)
{
    th_mcpres_answer a = serve("skills/list", NULL, 0);
    ck_assert_ptr_nonnull(a.result);
    json_object *skills = at(a.result, "skills", NULL);
    ck_assert_uint_eq(json_object_array_length(skills), 3);
    json_object *pdf = json_object_array_get_idx(skills, 0);
    ck_assert_str_eq(json_object_get_string(at(pdf, "uri", NULL)), "skill://pdf/SKILL.md");
    ck_assert_str_eq(json_object_to_json_string_ext(at(pdf, "frontmatter", NULL), JSON_C_TO_STRING_PLAIN),
                     "{\"name\":\"pdf\",\"description\":\"PDF things\"}");
    json_object *files = at(pdf, "resources", NULL);
    ck_assert_uint_eq(json_object_array_length(files), 4);
    json_object *f0 = json_object_array_get_idx(files, 0);
    char d[TH_SHA256_DIGEST_LEN + 1];
    th_sha256_digest(pdf_md, sizeof pdf_md - 1, d);
    ck_assert_str_eq(json_object_get_string(at(f0, "uri", NULL)), "skill://pdf/SKILL.md");
    ck_assert_str_eq(json_object_get_string(at(f0, "digest", NULL)), d);
    ck_assert_int_eq(json_object_get_int(at(f0, "size", NULL)), (int)sizeof pdf_md - 1);
    ck_assert_int_eq(json_object_get_int(at(a.result, "ttlMs", NULL)), 1000);
    ck_assert_str_eq(json_object_get_string(at(a.result, "cacheScope", NULL)), "public");
    ck_assert_ptr_null(at(a.result, "nextCursor", NULL));
    json_object_put(a.result);
    /* Pages of one skill each, its files never split. */
    a = serve("skills/list", NULL, 1);
    ck_assert_uint_eq(json_object_array_length(at(a.result, "skills", NULL)), 1);
    ck_assert_uint_eq(json_object_array_length(at(json_object_array_get_idx(at(a.result, "skills", NULL), 0),
                                                  "resources", NULL)),
                      4);
    char params[128];
    snprintf(params, sizeof params, "{\"cursor\":\"%s\"}", json_object_get_string(at(a.result, "nextCursor", NULL)));
    json_object_put(a.result);
    a = serve("skills/list", params, 2);
    ck_assert_uint_eq(json_object_array_length(at(a.result, "skills", NULL)), 2);
    ck_assert_str_eq(json_object_get_string(at(json_object_array_get_idx(at(a.result, "skills", NULL), 1), "uri",
                                               NULL)),
                     "skill://three/SKILL.md");
    ck_assert_ptr_null(at(a.result, "nextCursor", NULL));
    json_object_put(a.result);
    a = serve("skills/list", "{\"cursor\":\"bogus\"}", 1);
    ck_assert_int_eq(a.code, TH_RPC_INVALID_PARAMS);
    ck_assert_str_eq(a.message, "Invalid params: invalid cursor");
}
END_TEST

START_TEST(test_skills_get)
{
    th_mcpres_answer a = serve("skills/get", "{\"uri\":\"skill://two/SKILL.md\"}", 0);
    ck_assert_ptr_nonnull(a.result);
    ck_assert_str_eq(json_object_to_json_string_ext(at(a.result, "skill", "frontmatter"), JSON_C_TO_STRING_PLAIN),
                     "{\"name\":\"two\",\"description\":\"Second\",\"metadata\":{\"a\":\"b\"}}");
    ck_assert_ptr_null(at(a.result, "nextCursor", NULL));
    ck_assert_ptr_nonnull(at(a.result, "ttlMs", NULL));
    json_object_put(a.result);
    /* Not a skill: unknown, a skill's other file, no uri. */
    const char *bad[] = {"{\"uri\":\"skill://nope/SKILL.md\"}", "{\"uri\":\"skill://pdf/references/FORMS.md\"}"};
    for (size_t i = 0; i < 2; i++) {
        a = serve("skills/get", bad[i], 0);
        ck_assert_int_eq(a.code, TH_RPC_INVALID_PARAMS);
        ck_assert_str_eq(a.message, "Invalid params: no skill is served at this URI (a skill's URI is its "
                                    "skill://NAME/SKILL.md)");
        json_object_put(a.data);
    }
    a = serve("skills/get", "{}", 0);
    ck_assert_int_eq(a.code, TH_RPC_INVALID_PARAMS);
    ck_assert_str_eq(a.message, "Invalid params: skills/get needs a string \"uri\"");
}
END_TEST

START_TEST(test_directory_read)
{
    th_mcpres_answer a = serve("resources/directory/read", "{\"uri\":\"skill://pdf\"}", 0);
    ck_assert_ptr_nonnull(a.result);
    ck_assert_str_eq(json_object_to_json_string_ext(at(a.result, "resources", NULL), JSON_C_TO_STRING_PLAIN),
                     "[{\"uri\":\"skill:\\/\\/pdf\\/SKILL.md\",\"name\":\"SKILL.md\",\"mimeType\":\"text\\/markdown\","
                     "\"size\":48},{\"uri\":\"skill:\\/\\/pdf\\/references\",\"name\":\"references\",\"mimeType\":"
                     "\"inode\\/directory\"},{\"uri\":\"skill:\\/\\/pdf\\/logo.png\",\"name\":\"logo.png\","
                     "\"mimeType\":\"image\\/png\",\"size\":5}]");
    json_object_put(a.result);
    /* A subfolder, with a trailing "/", and paged. */
    a = serve("resources/directory/read", "{\"uri\":\"skill://pdf/references/\"}", 1);
    ck_assert_uint_eq(json_object_array_length(at(a.result, "resources", NULL)), 1);
    ck_assert_str_eq(json_object_get_string(at(a.result, "nextCursor", NULL)), "d1:1");
    json_object_put(a.result);
    a = serve("resources/directory/read", "{\"uri\":\"skill://pdf/references\",\"cursor\":\"d1:1\"}", 1);
    ck_assert_str_eq(json_object_get_string(at(json_object_array_get_idx(at(a.result, "resources", NULL), 0),
                                               "mimeType", NULL)),
                     "inode/directory");
    json_object_put(a.result);
    /* A file, an unknown folder, another scheme: -32602 with the URI. */
    const char *bad[] = {"skill://pdf/SKILL.md", "skill://nope", "file:///etc"};
    for (size_t i = 0; i < 3; i++) {
        char params[128];
        snprintf(params, sizeof params, "{\"uri\":\"%s\"}", bad[i]);
        a = serve("resources/directory/read", params, 0);
        ck_assert_int_eq(a.code, TH_RPC_INVALID_PARAMS);
        ck_assert_str_eq(a.message, "Invalid params: not a skill directory the server serves");
        ck_assert_str_eq(json_object_get_string(at(a.data, "uri", NULL)), bad[i]);
        json_object_put(a.data);
    }
}
END_TEST

START_TEST(test_read_skill_files)
{
    th_mcpres_answer a = serve("resources/read", "{\"uri\":\"skill://pdf/SKILL.md\"}", 0);
    ck_assert_ptr_nonnull(a.result);
    json_object *c = json_object_array_get_idx(at(a.result, "contents", NULL), 0);
    ck_assert_str_eq(json_object_get_string(at(c, "text", NULL)), pdf_md);
    ck_assert_str_eq(json_object_get_string(at(c, "mimeType", NULL)), "text/markdown");
    json_object_put(a.result);
    a = serve("resources/read", "{\"uri\":\"skill://pdf/logo.png\"}", 0);
    c = json_object_array_get_idx(at(a.result, "contents", NULL), 0);
    ck_assert_str_eq(json_object_get_string(at(c, "blob", NULL)), "iVBORwA=");
    ck_assert_ptr_null(at(c, "text", NULL));
    json_object_put(a.result);
}
END_TEST

static Suite *skills_suite(void)
{
    Suite *s = suite_create("skills");
    TCase *unit = tcase_create("unit");
    tcase_add_test(unit, test_sha256_vectors);
    tcase_add_test(unit, test_frontmatter_accepted);
    tcase_add_test(unit, test_frontmatter_refused);
    suite_add_tcase(s, unit);
    TCase *rules = tcase_create("rules");
    tcase_add_checked_fixture(rules, rsetup, rteardown);
    tcase_add_test(rules, test_skill_added_as_resources);
    tcase_add_test(rules, test_skill_rules);
    tcase_add_test(rules, test_skill_limits);
    tcase_add_test(rules, test_skill_names_unique_and_all_or_none);
    suite_add_tcase(s, rules);
    TCase *methods = tcase_create("methods");
    tcase_add_checked_fixture(methods, msetup, mteardown);
    tcase_add_test(methods, test_skills_list_pages_whole_entries);
    tcase_add_test(methods, test_skills_get);
    tcase_add_test(methods, test_directory_read);
    tcase_add_test(methods, test_read_skill_files);
    suite_add_tcase(s, methods);
    return s;
}

TH_CHECK_MAIN(skills_suite)
