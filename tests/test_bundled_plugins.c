/* SPDX-License-Identifier: MIT */
/*
** test_bundled_plugins.c: the bundled echo, files, prompts and skills
** plugins through the test kit (toolhost/testing.h), in both isolation
** modes (loop index: none, process); add and text are test_typed_plugins.c's.
**
** Where each bundled plugin's own behaviour is tested, and why there:
** - here and test_typed_plugins.c, with the kit: every call, read, get and
**   completion, each refusal's message, the settings and what a plugin
**   logs while it registers (the kit keeps the host's warnings).
** - plugins.cases.json, with `toolhost test`: each tool's, resource's and
**   prompt's documented behaviour, as an author's cases file states it
**   (it has no way to check a blob, a log line or a completion).
** - left in the harness tests, which test the host through a plugin and
**   need a spawned toolhost the kit does not give (an exit status, SIGHUP,
**   a registry cache across restarts, raw framing, HTTP, a process's
**   memory): test_mcp_resources.c (listing order across plugins),
**   test_mcp_skills.c (the capability per era, --strict, one name from two
**   plugins, reload, the registry cache), test_mcp_prompts.c (code_review
**   as any prompt: size limit, reload, cache, end of input),
**   test_memory_bounds.c (big files reads per transport), and every test
**   calling echo as a convenient tool.
*/
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "check_main.h"
#include "toolhost/testing.h"

#define BUNDLED TOP_BUILDDIR "/plugins/.libs/"
#define MODERN "2026-07-28"

static const char *const modes[] = {"--isolation=none", "--isolation=process"};

/* A NULL-terminated list of strings. */
#define LIST(...) ((const char *const[]){__VA_ARGS__, NULL})

static char froot[64], sroot[64], outside[64];

/* A host in mode I with the options EXTRA and the bundled plugin PLUGIN. */
static th_test_host *new_host(int i, const char *const *extra, const char *plugin)
{
    const char *args[8] = {modes[i]};
    size_t n = 1;
    for (; extra && *extra; extra++) {
        ck_assert_uint_lt(n, 7);
        args[n++] = *extra;
    }
    th_test_host *h = th_test_host_new(args);
    ck_assert_ptr_nonnull(h);
    char path[256];
    snprintf(path, sizeof path, BUNDLED "%s.so", plugin);
    ck_assert_int_eq(th_test_host_load(h, path), 0);
    return h;
}

/* The same, started, every plugin accepted. */
static th_test_host *started(int i, const char *const *extra, const char *plugin)
{
    th_test_host *h = new_host(i, extra, plugin);
    ck_assert_msg(th_test_host_start(h) == 0, "start: %s", th_test_host_error(h));
    return h;
}

/* A request whose result must hold WANT at each PATH (pairs, NULL-ended). */
static void expect_result(th_test_host *h, const char *method, const char *params, const th_test_call_opts *o,
                          const char *const *want)
{
    th_test_result r;
    char msg[1024];
    th_test_request(h, method, params, o, &r);
    ck_assert_msg(r.status == TH_TEST_RESULT && !r.is_error, "%s %s: %s", method, params,
                  r.result_json ? r.result_json : r.error_text);
    for (; want[0]; want += 2)
        ck_assert_msg(th_test_expect(&r, want[0], want[1], msg, sizeof msg), "%s %s: %s", method, params, msg);
    th_test_result_clear(&r);
}

/* A request that must be the JSON-RPC error CODE with MESSAGE. */
static void expect_error(th_test_host *h, const char *method, const char *params, const th_test_call_opts *o,
                         int code, const char *message)
{
    th_test_result r;
    th_test_request(h, method, params, o, &r);
    ck_assert_msg(r.status == TH_TEST_REFUSED, "%s %s: not refused: %s", method, params,
                  r.result_json ? r.result_json : r.error_text);
    json_object *c = json_object_object_get(r.error, "code");
    ck_assert_msg(json_object_get_int(c) == code && strcmp(r.error_text, message) == 0,
                  "%s %s: got %d \"%s\", expected %d \"%s\"", method, params, json_object_get_int(c), r.error_text,
                  code, message);
    th_test_result_clear(&r);
}

static void read_uri(th_test_host *h, const char *uri, const th_test_call_opts *o, const char *const *want)
{
    char params[512];
    snprintf(params, sizeof params, "{\"uri\":\"%s\"}", uri);
    expect_result(h, "resources/read", params, o, want);
}

static void read_refused(th_test_host *h, const char *uri, const th_test_call_opts *o, int code, const char *message)
{
    char params[512];
    snprintf(params, sizeof params, "{\"uri\":\"%s\"}", uri);
    expect_error(h, "resources/read", params, o, code, message);
}

static void has_line(th_test_host *h, const char *line)
{
    ck_assert_msg(strstr(th_test_host_error(h), line), "no \"%s\" in the host's log:\n%s", line,
                  th_test_host_error(h));
}

/* ---- echo ------------------------------------------------------------- */

/* echo gives back exactly its text as one block (an embedded NUL too);
 * its schema refuses the rest. */
START_TEST(echo_returns_its_text)
{
    static const struct {
        const char *args, *want;
    } cases[] = {
        {"{\"text\":\"two\\nlines\"}", "[{\"type\":\"text\",\"text\":\"two\\nlines\"}]"},
        {"{\"text\":\"\"}", "[{\"type\":\"text\",\"text\":\"\"}]"},
        {"{\"text\":\"a\\u0000b\"}", "[{\"type\":\"text\",\"text\":\"a\\u0000b\"}]"},
        {"{\"text\":\"\\u00e9\\u20ac\\ud83d\\ude00\"}", "[{\"type\":\"text\",\"text\":\"\\u00e9\\u20ac\\ud83d\\ude00\"}]"},
        {"{}", "[{\"type\":\"text\",\"text\":\"Invalid arguments for tool 'echo' (1 problem):\\n(root): missing required "
               "property 'text' (required)\"}]"},
        {"{\"text\":1}", "[{\"type\":\"text\",\"text\":\"Invalid arguments for tool 'echo' (1 problem):\\n/text: "
                         "must be string, got integer (type)\"}]"},
        {"{\"text\":\"x\",\"more\":1}", "[{\"type\":\"text\",\"text\":\"Invalid arguments for tool 'echo' (1 "
                                        "problem):\\n/more: additional property not allowed (additionalProperties)\"}]"},
    };
    th_test_host *h = started(_i, NULL, "echo");
    th_test_result r;
    char msg[1024];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        th_test_call(h, "echo", cases[i].args, NULL, &r);
        ck_assert_msg(r.status == TH_TEST_RESULT && r.is_error == (i >= 4), "echo %s: %s", cases[i].args,
                      r.result_json ? r.result_json : r.error_text);
        ck_assert_msg(th_test_expect(&r, "content", cases[i].want, msg, sizeof msg), "echo %s [%s]: %s",
                      cases[i].args, modes[_i], msg);
        ck_assert_ptr_null(th_test_at(&r, "structuredContent"));
        th_test_result_clear(&r);
    }
    expect_result(h, "tools/list", NULL, NULL,
                  LIST("tools.0.name", "\"echo\"", "tools.0.annotations.readOnlyHint", "true",
                       "tools.0.inputSchema.required", "[\"text\"]"));
    th_test_host_free(h);
}
END_TEST

/* ---- files ------------------------------------------------------------ */

/* The files root: a text file, a Markdown one, a binary one, a big one, a
 * link inside and one out, a link to a directory above the root, two names
 * a URI must percent-encode, and bytes that are not UTF-8 by the host's
 * rules (a surrogate, an overlong form, a code point above U+10FFFF) beside
 * the last code point, which is. */
static void files_fixture(void)
{
    snprintf(froot, sizeof froot, "/tmp/th-bundled-files-%ld", (long)getpid());
    snprintf(outside, sizeof outside, "/tmp/th-bundled-out-%ld.txt", (long)getpid());
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "rm -rf %s && mkdir -p %s/sub && printf 'hello\\n' > %s/a.txt && printf '# T\\n' > %s/n.md && "
             "printf '\\000\\001\\002' > %s/sub/b.bin && head -c 5000 /dev/zero > %s/big && printf secret > %s && "
             "ln -s %s %s/out && ln -s a.txt %s/in && ln -s ../.. %s/sub/up && printf 'spaced\\n' > '%s/a b%%.txt' && "
             "printf 'accent\\n' > '%s/\xc3\xa9.txt' && printf 'a\\355\\240\\200b' > %s/sub/surrogate && "
             "printf 'a\\340\\200\\200b' > %s/sub/overlong && printf 'a\\364\\220\\200\\200b' > %s/sub/above && "
             "printf 'a\\364\\217\\277\\277b' > %s/sub/last",
             froot, froot, froot, froot, froot, froot, outside, outside, froot, froot, froot, froot, froot, froot,
             froot, froot, froot);
    if (system(cmd) != 0) { /* before the runner: no ck_assert here */
        fprintf(stderr, "cannot create the files root %s\n", froot);
        exit(1);
    }
}

static th_test_host *files_host(int i)
{
    char root[128];
    snprintf(root, sizeof root, "--set=files.root=%s", froot);
    return started(i, LIST(root, "--set=files.max_bytes=4096"), "files");
}

/* Top-level regular files only, sorted by bytes, names percent-encoded
 * where a URI needs it, with sizes and MIME types; then the template. */
START_TEST(files_lists_its_root)
{
    th_test_host *h = files_host(_i);
    expect_result(h, "resources/list", NULL, NULL,
                  LIST("resources", "[{\"uri\":\"file:///a%20b%25.txt\",\"name\":\"a b%.txt\",\"mimeType\":"
                                    "\"text/plain\",\"size\":7},"
                                    "{\"uri\":\"file:///a.txt\",\"name\":\"a.txt\",\"mimeType\":\"text/plain\","
                                    "\"size\":6},"
                                    "{\"uri\":\"file:///big\",\"name\":\"big\",\"size\":5000},"
                                    "{\"uri\":\"file:///n.md\",\"name\":\"n.md\",\"mimeType\":\"text/markdown\","
                                    "\"size\":4},"
                                    "{\"uri\":\"file:///%C3%A9.txt\",\"name\":\"\xc3\xa9.txt\",\"mimeType\":"
                                    "\"text/plain\",\"size\":7}]"));
    expect_result(h, "resources/templates/list", NULL, NULL,
                  LIST("resourceTemplates.0.uriTemplate", "\"file:///{path}\"", "resourceTemplates.0.name",
                       "\"files\""));
    th_test_host_free(h);
}
END_TEST

/* Text as text, with the type its extension says; a link that stays inside
 * is followed; anything not UTF-8 is a blob of exactly the file's bytes. */
START_TEST(files_reads_text_and_blobs)
{
    th_test_host *h = files_host(_i);
    read_uri(h, "file:///a.txt", NULL,
             LIST("contents", "[{\"uri\":\"file:///a.txt\",\"mimeType\":\"text/plain\",\"text\":\"hello\\n\"}]"));
    read_uri(h, "file:///n.md", NULL, LIST("contents.0.mimeType", "\"text/markdown\"", "contents.0.text", "\"# T\\n\""));
    read_uri(h, "file:///in", NULL, LIST("contents.0.text", "\"hello\\n\""));
    read_uri(h, "file:///a%20b%25.txt", NULL, LIST("contents.0.text", "\"spaced\\n\""));
    read_uri(h, "file:///%C3%A9.txt", NULL, LIST("contents.0.text", "\"accent\\n\""));
    read_uri(h, "file:///sub/b.bin", NULL,
             LIST("contents", "[{\"uri\":\"file:///sub/b.bin\",\"mimeType\":\"application/octet-stream\","
                              "\"blob\":\"AAEC\"}]"));
    static const char *const blobs[][2] = {
        {"file:///sub/surrogate", "\"Ye2ggGI=\""},
        {"file:///sub/overlong", "\"YeCAgGI=\""},
        {"file:///sub/above", "\"YfSQgIBi\""},
    };
    for (size_t i = 0; i < sizeof blobs / sizeof blobs[0]; i++)
        read_uri(h, blobs[i][0], NULL, LIST("contents.0.blob", blobs[i][1]));
    read_uri(h, "file:///sub/last", NULL, LIST("contents.0.text", "\"a\xf4\x8f\xbf\xbf" "b\""));
    th_test_host_free(h);
}
END_TEST

/* Every way out of the root is refused by name or by the kernel, with a
 * message that says which; so are a directory and a file over max_bytes. */
START_TEST(files_refuses_escapes)
{
    static const char *const refused[][2] = {
        {"file:///../etc/passwd", "Invalid params: path '../etc/passwd' refused: '..' (path traversal) is not allowed"},
        {"file:///sub%2F..%2F..%2Fetc%2Fpasswd",
         "Invalid params: path 'sub/../../etc/passwd' refused: '..' (path traversal) is not allowed"},
        {"file:////etc/passwd",
         "Invalid params: absolute path '/etc/passwd' refused: paths are relative to the served directory"},
        {"file:///out", "Invalid params: path 'out' refused: it leads outside the served directory (a symbolic link "
                        "or '..' that leaves it)"},
        {"file:///big", "Invalid params: 'big' is 5000 bytes, over the limit of 4096 (TOOLHOST_FILES_MAX_BYTES)"},
        {"file:///sub", "Invalid params: 'sub' is not a regular file"},
    };
    th_test_host *h = files_host(_i);
    for (size_t k = 0; k < sizeof refused / sizeof refused[0]; k++)
        read_refused(h, refused[k][0], NULL, -32602, refused[k][1]);
    /* A link to a directory above the root: sub/up/<the outside file>. */
    char uri[128], want[300];
    const char *base = strrchr(outside, '/') + 1;
    snprintf(uri, sizeof uri, "file:///sub/up/%s", base);
    snprintf(want, sizeof want,
             "Invalid params: path 'sub/up/%s' refused: it leads outside the served directory (a symbolic link or "
             "'..' that leaves it)",
             base);
    read_refused(h, uri, NULL, -32602, want);
    read_refused(h, "file:///no-such-file", NULL, -32002, "Resource not found");
    th_test_host_free(h);
}
END_TEST

/* Without a root the plugin still loads (a default plugin directory must
 * pass --strict): it lists nothing, and a read says why in its log. A bad
 * max_bytes refuses the plugin, naming the setting. */
START_TEST(files_settings)
{
    th_test_host *h = started(_i, NULL, "files");
    expect_result(h, "resources/list", NULL, NULL, LIST("resources", "[]"));
    th_test_result r;
    th_test_request(h, "resources/read", "{\"uri\":\"file:///a.txt\"}", NULL, &r);
    ck_assert_int_eq(r.status, TH_TEST_REFUSED);
    ck_assert_str_eq(r.error_text, "Resource not found");
    ck_assert_uint_eq(json_object_array_length(r.logs), 1);
    ck_assert_str_eq(json_object_get_string(json_object_object_get(json_object_array_get_idx(r.logs, 0), "data")),
                     "the files plugin serves nothing: TOOLHOST_FILES_ROOT is not set");
    th_test_result_clear(&r);
    th_test_host_free(h);

    h = new_host(_i, LIST("--set=files.max_bytes=lots"), "files");
    ck_assert_int_eq(th_test_host_start(h), -1);
    has_line(h, "setting files.max_bytes (TOOLHOST_FILES_MAX_BYTES) 'lots' is not a positive number");
    th_test_host_free(h);

    h = new_host(_i, LIST("--set=files.root=/nonexistent-th-root"), "files");
    ck_assert_int_eq(th_test_host_start(h), -1);
    has_line(h, "setting files.root (TOOLHOST_FILES_ROOT) /nonexistent-th-root: No such file or directory");
    th_test_host_free(h);
}
END_TEST

/* ---- prompts ---------------------------------------------------------- */

#define REVIEW_ASK                                                                                                     \
    "Please review this code, written in %s. Focus on %s. List each problem with the line it is on, why it is one, " \
    "and a fix; end with what is good about it.\\n\\n%s"

/* code_review: a user turn with the defaults or the arguments given, then
 * the few-shot assistant turn; its one required argument is the host's
 * to check. */
START_TEST(prompts_code_review)
{
    th_test_host *h = started(_i, NULL, "prompts");
    expect_result(h, "prompts/list", NULL, NULL,
                  LIST("prompts.0.name", "\"code_review\"", "prompts.0.title", "\"Request Code Review\"",
                       "prompts.0.arguments.0", "{\"name\":\"code\",\"description\":\"The code to review\","
                                                "\"required\":true}",
                       "prompts.0.arguments.2.name", "\"focus\"", "prompts.1", "null"));
    char user[512], want[1024];
    snprintf(user, sizeof user, REVIEW_ASK, "the language it is written in",
             "correctness, error handling and readability", "x = 1");
    snprintf(want, sizeof want,
             "[{\"role\":\"user\",\"content\":{\"type\":\"text\",\"text\":\"%s\"}},"
             "{\"role\":\"assistant\",\"content\":{\"type\":\"text\",\"text\":\"I will list the problems first, "
             "most serious first, then what works well.\"}}]",
             user);
    expect_result(h, "prompts/get", "{\"name\":\"code_review\",\"arguments\":{\"code\":\"x = 1\"}}", NULL,
                  LIST("messages", want));
    snprintf(user, sizeof user, "\"" REVIEW_ASK "\"", "rust", "naming", "fn f() {}");
    expect_result(h, "prompts/get",
                  "{\"name\":\"code_review\",\"arguments\":{\"code\":\"fn f() {}\",\"language\":\"rust\","
                  "\"focus\":\"naming\"}}",
                  NULL, LIST("messages.0.content.text", user, "messages.1.role", "\"assistant\""));
    expect_error(h, "prompts/get", "{\"name\":\"code_review\",\"arguments\":{\"language\":\"c\"}}", NULL, -32602,
                 "Invalid params: missing required argument 'code' of prompt 'code_review'");
    th_test_host_free(h);
}
END_TEST

/* language completes from its list by prefix, in any case; code and focus
 * are free text, completed with nothing. */
START_TEST(prompts_completes_language)
{
    static const char *const cases[][3] = {
        {"language", "py", "[\"python\"]"},
        {"language", "JA", "[\"java\",\"javascript\"]"},
        {"language", "c", "[\"c\",\"c++\",\"csharp\"]"},
        {"language", "zz", "[]"},
        {"language", "", "[\"c\",\"c++\",\"csharp\",\"go\",\"java\",\"javascript\",\"kotlin\",\"python\",\"ruby\","
                         "\"rust\",\"shell\",\"sql\",\"swift\",\"typescript\"]"},
        {"focus", "c", "[]"},
    };
    th_test_host *h = started(_i, NULL, "prompts");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char params[256];
        snprintf(params, sizeof params,
                 "{\"ref\":{\"type\":\"ref/prompt\",\"name\":\"code_review\"},\"argument\":{\"name\":\"%s\","
                 "\"value\":\"%s\"}}",
                 cases[i][0], cases[i][1]);
        expect_result(h, "completion/complete", params, NULL, LIST("completion.values", cases[i][2]));
    }
    th_test_host_free(h);
}
END_TEST

/* ---- skills ----------------------------------------------------------- */

static const char notes_md[] = "---\nname: notes\ndescription: Keep notes\n---\nWrite them down.\n";

/* A root of skill folders: notes (a text file in a subfolder, a binary
 * file, a link out of the root, a link to a folder, a name with a space),
 * a folder whose SKILL.md the host refuses, and a link to notes. */
static void skills_fixture(void)
{
    snprintf(sroot, sizeof sroot, "/tmp/th-bundled-skills-%ld", (long)getpid());
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "rm -rf %s && mkdir -p %s/notes/docs %s/broken && printf -- '%s' > %s/notes/SKILL.md && "
             "printf 'hello\\n' > %s/notes/docs/a.txt && printf '\\000\\001\\002' > %s/notes/b.bin && "
             "ln -s %s %s/notes/leak.txt && ln -s /tmp %s/notes/up && touch '%s/notes/sp ace.txt' && "
             "printf -- '---\\nname: broken\\ndescription: [x]\\n---\\n' > %s/broken/SKILL.md && "
             "ln -s %s/notes %s/linked",
             sroot, sroot, sroot, "---\\nname: notes\\ndescription: Keep notes\\n---\\nWrite them down.\\n", sroot,
             sroot, sroot, outside, sroot, sroot, sroot, sroot, sroot, sroot);
    if (system(cmd) != 0) {
        fprintf(stderr, "cannot create the skills root %s\n", sroot);
        exit(1);
    }
}

/* One skill from the root: the refused folder, the links and the name a
 * URI cannot carry left out, each logged with why. */
START_TEST(skills_serves_a_root)
{
    char root[128];
    snprintf(root, sizeof root, "--set=skills.root=%s", sroot);
    th_test_host *h = new_host(_i, LIST(root), "skills");
    ck_assert_int_eq(th_test_host_start(h), -1); /* broken is a refusal */
    has_line(h, "left out: Skill SKILL.md line 3: flow sequences ([...]) are not supported in skill frontmatter; "
                "quote the value");
    has_line(h, "skills: leak.txt skipped: a symbolic link");
    has_line(h, "skills: up skipped: a symbolic link");
    has_line(h, "skills: sp ace.txt skipped: a name a skill:// URI cannot carry");
    has_line(h, "/linked skipped: not a skill folder");

    const th_test_call_opts modern = {.protocol_version = MODERN};
    char md_size[16];
    snprintf(md_size, sizeof md_size, "%zu", sizeof notes_md - 1);
    /* SKILL.md first, then the files in name order, each with its digest. */
    expect_result(h, "skills/list", NULL, &modern,
                  LIST("skills.1", "null", "skills.0.uri", "\"skill://notes/SKILL.md\"",
                       "skills.0.frontmatter.description", "\"Keep notes\"", "skills.0.resources.0.uri",
                       "\"skill://notes/SKILL.md\"", "skills.0.resources.0.size", md_size,
                       "skills.0.resources.0.digest",
                       "\"sha256:eef4a09e6d32c424e07f2915010b853f81e7eea91c11b8f8c6c477d178ce98ab\"",
                       "skills.0.resources.1.uri", "\"skill://notes/b.bin\"", "skills.0.resources.1.digest",
                       "\"sha256:ae4b3280e56e2faf83f414a6e3dabe9d5fbe18976544c05fed121accb85b53fc\"",
                       "skills.0.resources.2.uri", "\"skill://notes/docs/a.txt\"", "skills.0.resources.3", "null"));
    /* The bytes read back are the ones digested, in either revision. */
    char md[128];
    snprintf(md, sizeof md, "\"%s\"", "---\\nname: notes\\ndescription: Keep notes\\n---\\nWrite them down.\\n");
    for (int rev = 0; rev < 2; rev++) {
        const th_test_call_opts *o = rev ? &modern : NULL;
        read_uri(h, "skill://notes/SKILL.md", o, LIST("contents.0.text", md, "contents.0.mimeType", "\"text/markdown\""));
        read_uri(h, "skill://notes/b.bin", o, LIST("contents.0.blob", "\"AAEC\""));
        read_uri(h, "skill://notes/docs/a.txt", o, LIST("contents.0.text", "\"hello\\n\""));
    }
    read_refused(h, "skill://notes/leak.txt", &modern, -32602, "Resource not found");
    expect_result(h, "resources/directory/read", "{\"uri\":\"skill://notes\"}", &modern,
                  LIST("resources.2.uri", "\"skill://notes/docs\"", "resources.2.mimeType", "\"inode/directory\"",
                       "resources.3", "null"));
    expect_error(h, "skills/get", "{\"uri\":\"skill://broken/SKILL.md\"}", &modern, -32602,
                 "Invalid params: no skill is served at this URI (a skill's URI is its skill://NAME/SKILL.md)");
    /* SKILL.md is listed with the frontmatter's name and description. */
    expect_result(h, "resources/list", NULL, NULL,
                  LIST("resources.0.name", "\"notes\"", "resources.0.description", "\"Keep notes\""));
    th_test_host_free(h);
}
END_TEST

/* Without a root: one skill saying how to set it, and a clean start. */
START_TEST(skills_unset_root)
{
    th_test_host *h = started(_i, NULL, "skills");
    const th_test_call_opts modern = {.protocol_version = MODERN};
    expect_result(h, "skills/list", NULL, &modern,
                  LIST("skills.0.uri", "\"skill://toolhost-skills-setup/SKILL.md\"", "skills.1", "null",
                       "skills.0.resources.1.uri", "\"skill://toolhost-skills-setup/references/EXAMPLE.md\""));
    th_test_result r;
    th_test_request(h, "resources/read", "{\"uri\":\"skill://toolhost-skills-setup/SKILL.md\"}", NULL, &r);
    th_test_assert_ok(&r);
    const char *text = json_object_get_string(th_test_at(&r, "contents.0.text"));
    ck_assert_msg(text && strstr(text, "--set skills.root=DIR"), "%s", r.result_json);
    th_test_result_clear(&r);
    th_test_host_free(h);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("bundled_plugins");
    TCase *tc = tcase_create("kit");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, echo_returns_its_text, 0, 2);
    tcase_add_loop_test(tc, files_lists_its_root, 0, 2);
    tcase_add_loop_test(tc, files_reads_text_and_blobs, 0, 2);
    tcase_add_loop_test(tc, files_refuses_escapes, 0, 2);
    tcase_add_loop_test(tc, files_settings, 0, 2);
    tcase_add_loop_test(tc, prompts_code_review, 0, 2);
    tcase_add_loop_test(tc, prompts_completes_language, 0, 2);
    tcase_add_loop_test(tc, skills_serves_a_root, 0, 2);
    tcase_add_loop_test(tc, skills_unset_root, 0, 2);
    suite_add_tcase(s, tc);
    return s;
}

static void setup(void)
{
    /* Workers and scans run the toolhost just built, not an installed one. */
    setenv("TOOLHOST_TEST_EXE", TOP_BUILDDIR "/src/toolhost", 1);
    /* The plugins' settings come from --set here, not the environment. */
    unsetenv("TOOLHOST_FILES_ROOT");
    unsetenv("TOOLHOST_SKILLS_ROOT");
    files_fixture();
    skills_fixture();
}

static void teardown(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s %s %s", froot, sroot, outside);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", froot);
}

TH_CHECK_MAIN_WITH(suite, setup, teardown)
