/* SPDX-License-Identifier: MIT */
/*
** test_loader.c: the plugin loader against real shared objects. Each test
** builds its plugin directory at run time in a fresh temporary directory,
** from the test plugins make check leaves in tests/plugins/.libs, and checks
** the load statistics, the registry and every logged line.
*/
#define _XOPEN_SOURCE 700 /* mkdtemp, nftw, symlink */
#include "config.h"

#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "call/callctx.h"
#include "plugin/loader.h"
#include "plugin/trust.h"
#include "base/log.h"
#include "check_main.h"

#define PLUGIN_BUILDDIR TEST_BUILDDIR "/plugins/.libs"

/* --- log capture ------------------------------------------------------- */

#define MAX_LINES 64
static char lines[MAX_LINES][2048];
static th_log_level levels[MAX_LINES];
static int nlines;

static void capture(th_log_level level, const char *line, void *ctx)
{
    (void)ctx;
    if (nlines < MAX_LINES) {
        snprintf(lines[nlines], sizeof lines[nlines], "%s", line);
        levels[nlines] = level;
    }
    nlines++;
}

/*
** The index of the first line at or after FROM that contains every one of
** the NULL-terminated strings, or -1.
*/
static int find_line_from(int from, const char *first, ...)
{
    for (int i = from; i < nlines && i < MAX_LINES; i++) {
        va_list ap;
        va_start(ap, first);
        bool all = true;
        for (const char *s = first; s; s = va_arg(ap, const char *))
            if (!strstr(lines[i], s)) {
                all = false;
                break;
            }
        va_end(ap);
        if (all)
            return i;
    }
    return -1;
}

#define find_line(...) find_line_from(0, __VA_ARGS__, (const char *)NULL)

/* Fails the test, printing everything logged, unless a line has them all. */
#define assert_logged(...)                                                         \
    do {                                                                           \
        if (find_line(__VA_ARGS__) < 0)                                            \
            ck_abort_msg("no log line with all of: %s\n%s", #__VA_ARGS__, dump()); \
    } while (0)

static const char *dump(void)
{
    static char buf[MAX_LINES * 256];
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < nlines && i < MAX_LINES && len < sizeof buf; i++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "  [%s] %.200s\n", th_log_level_name(levels[i]),
                                lines[i]);
    return buf;
}

static int count_level(th_log_level level)
{
    int n = 0;
    for (int i = 0; i < nlines && i < MAX_LINES; i++)
        n += levels[i] == level;
    return n;
}

/* --- temporary directories --------------------------------------------- */

static char root[PATH_MAX / 2]; /* one per test case, removed by the parent */
static char tmpdir[PATH_MAX / 2 + 16]; /* one per test, inside root */
static th_registry *reg;
static th_load_stats stats;

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void make_root(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(root, sizeof root, "%s/th-loader-XXXXXX", base && *base ? base : "/tmp");
    ck_assert_msg(mkdtemp(root) != NULL, "mkdtemp %s: %s", root, strerror(errno));
}

static void remove_root(void)
{
    nftw(root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void setup(void)
{
    snprintf(tmpdir, sizeof tmpdir, "%s/t-XXXXXX", root);
    ck_assert_msg(mkdtemp(tmpdir) != NULL, "mkdtemp %s: %s", tmpdir, strerror(errno));
    nlines = 0;
    th_log_set_threshold(TH_LOG_INFO);
    th_log_set_sink(capture, NULL);
    reg = th_registry_new();
    ck_assert_ptr_nonnull(reg);
    memset(&stats, 0, sizeof stats);
}

static void teardown(void)
{
    th_registry_unref(reg);
    reg = NULL;
    th_log_set_sink(NULL, NULL);
}

/* A path under this test's directory; PART may name subdirectories. */
static const char *tpath(const char *part)
{
    static char bufs[4][PATH_MAX];
    static int next;
    char *b = bufs[next++ % 4];
    snprintf(b, PATH_MAX, "%s/%s", tmpdir, part);
    return b;
}

static void make_dir(const char *part)
{
    ck_assert_msg(mkdir(tpath(part), 0700) == 0, "mkdir %s: %s", part, strerror(errno));
}

static void write_file(const char *path, const void *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    ck_assert_msg(fd >= 0, "create %s: %s", path, strerror(errno));
    ck_assert_msg(write(fd, data, len) == (ssize_t)len, "write %s: %s", path, strerror(errno));
    close(fd);
}

/* Copy the built shared object SRC to PART (relative to the test directory). */
static void copy_so(const char *src, const char *part)
{
    FILE *in = fopen(src, "rb");
    ck_assert_msg(in != NULL, "test plugin %s: %s (make check builds it)", src, strerror(errno));
    static char data[4 << 20];
    size_t len = fread(data, 1, sizeof data, in);
    ck_assert_msg(feof(in) && !ferror(in), "reading %s", src);
    fclose(in);
    write_file(tpath(part), data, len);
}

/* Copy the built plugin NAME.so to PART (relative to the test directory). */
static void copy_plugin(const char *name, const char *part)
{
    char src[PATH_MAX];
    snprintf(src, sizeof src, "%s/%s.so", PLUGIN_BUILDDIR, name);
    copy_so(src, part);
}

/* The same for the hostile plugin NAME.so and for the bundled echo.so. */
static void copy_hostile(const char *name, const char *part)
{
    char src[PATH_MAX];
    snprintf(src, sizeof src, "%s/hostile/.libs/%s.so", TEST_BUILDDIR, name);
    copy_so(src, part);
}

static void copy_echo(const char *part)
{
    copy_so(TOP_BUILDDIR "/plugins/.libs/echo.so", part);
}

static void write_text(const char *part, const char *text)
{
    write_file(tpath(part), text, strlen(text));
}

static th_rc load(const char *part)
{
    return th_loader_load_dir(reg, tpath(part), NULL, &stats);
}

static void assert_stats(size_t tools_loaded, size_t tools_refused, size_t plugins_loaded,
                         size_t plugins_refused, size_t dirs_refused)
{
    ck_assert_msg(stats.tools_loaded == tools_loaded && stats.tools_refused == tools_refused &&
                      stats.plugins_loaded == plugins_loaded && stats.plugins_refused == plugins_refused &&
                      stats.dirs_refused == dirs_refused,
                  "stats: tools %zu loaded %zu refused, plugins %zu loaded %zu refused, dirs %zu refused "
                  "(want %zu %zu %zu %zu %zu)\n%s",
                  stats.tools_loaded, stats.tools_refused, stats.plugins_loaded, stats.plugins_refused,
                  stats.dirs_refused, tools_loaded, tools_refused, plugins_loaded, plugins_refused, dirs_refused,
                  dump());
}

/* The registered names in registration order, comma-separated. */
static const char *names(void)
{
    static char buf[1024];
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < th_registry_count(reg); i++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", i ? "," : "", th_registry_at(reg, i)->name);
    return buf;
}

/* Call tool NAME's handler with {"text": TEXT}; return its first text. */
static char *call_tool(const char *name, const char *text)
{
    const th_entry *e = th_registry_get(reg, name);
    ck_assert_ptr_nonnull(e);
    ck_assert_ptr_nonnull(e->handler);
    th_call *call = th_call_new(name, NULL);
    json_object *args = json_object_new_object();
    json_object_object_add(args, "text", json_object_new_string(text));
    th_rc rc = e->handler(call, args, e->user_data);
    json_object *result = th_call_finish(call, rc);
    json_object *content, *first, *out;
    ck_assert(json_object_object_get_ex(result, "content", &content));
    first = json_object_array_get_idx(content, 0);
    ck_assert(json_object_object_get_ex(first, "text", &out));
    char *s = strdup(json_object_get_string(out));
    json_object_put(result);
    json_object_put(args);
    th_call_free(call);
    return s;
}

/* --- tests ------------------------------------------------------------- */

START_TEST(test_good_plugin)
{
    make_dir("p");
    copy_plugin("good", "p/good.so");
    ck_assert_int_eq(load("p"), TH_OK);
    assert_stats(1, 0, 1, 0, 0);
    ck_assert_str_eq(names(), "good");
    const th_entry *e = th_registry_get(reg, "good");
    ck_assert_str_eq(e->origin, tpath("p/good.so"));
    ck_assert_str_eq(e->title, "Good");
    ck_assert_str_eq(e->description, "A well-formed test tool that echoes its text argument.");
    assert_logged("tool_registered tool_name=good total_tools=1", tpath("p/good.so"));
    ck_assert_int_eq(count_level(TH_LOG_ERROR), 0);
    /* The plugin stays mapped and resolves th_* against this program. */
    char *out = call_tool("good", "hello");
    ck_assert_str_eq(out, "good says: hello");
    free(out);
}
END_TEST

START_TEST(test_missing_entry_point)
{
    make_dir("p");
    copy_plugin("noentry", "p/noentry.so");
    ck_assert_int_eq(load("p"), TH_OK);
    assert_stats(0, 0, 0, 1, 0);
    ck_assert_uint_eq(th_registry_count(reg), 0);
    assert_logged(tpath("p/noentry.so"), "refused", "no entry point", "[register_noentry_tool]");
    ck_assert_int_eq(nlines, 1);
}
END_TEST

START_TEST(test_entry_point_returns_null)
{
    make_dir("p");
    copy_plugin("nulldesc", "p/nulldesc.so");
    ck_assert_int_eq(load("p"), TH_OK);
    assert_stats(0, 0, 0, 1, 0);
    ck_assert_uint_eq(th_registry_count(reg), 0);
    assert_logged(tpath("p/nulldesc.so"), "tool 'nulldesc'",
                  "register_nulldesc_tool() returned NULL instead of a tool descriptor", "[TH_ERR_TYPE]");
    ck_assert_int_eq(nlines, 1);
}
END_TEST

/* A refused returned descriptor's user_data is released through destroy. */
START_TEST(test_refused_descriptor_destroyed)
{
    unsetenv("TH_TEST_REFUSED_DESTROYED");
    make_dir("p");
    copy_plugin("refused", "p/refused.so");
    ck_assert_int_eq(load("p"), TH_OK);
    assert_stats(0, 0, 0, 1, 0);
    assert_logged(tpath("p/refused.so"), "tool 'refused'", "Tool description too short (min 10 chars)",
                  "[TH_ERR_VALUE]");
    const char *mark = getenv("TH_TEST_REFUSED_DESTROYED");
    ck_assert_ptr_nonnull(mark);
    ck_assert_str_eq(mark, "yes");
}
END_TEST

/* Returning the very descriptor the plugin added itself is accepted, and
 * registers nothing more; its user_data is released once, at the end. */
START_TEST(test_returned_duplicate_keeps_shared_user_data)
{
    unsetenv("TH_TEST_SELFDUP_DESTROYED");
    make_dir("p");
    copy_plugin("selfdup", "p/selfdup.so");
    ck_assert_int_eq(load("p"), TH_OK);
    assert_stats(1, 0, 1, 0, 0);
    ck_assert_str_eq(names(), "selfdup");
    ck_assert_int_eq(count_level(TH_LOG_ERROR), 0);
    ck_assert_ptr_null(getenv("TH_TEST_SELFDUP_DESTROYED"));
    th_call *call = th_call_new("selfdup", NULL);
    json_object *args = json_object_new_object();
    json_object *result = th_call_finish(call, th_registry_get(reg, "selfdup")->handler(call, args, th_registry_get(reg, "selfdup")->user_data));
    ck_assert_str_eq(json_object_get_string(json_object_object_get(
                         json_object_array_get_idx(json_object_object_get(result, "content"), 0), "text")),
                     "still here");
    json_object_put(result);
    json_object_put(args);
    th_call_free(call);
    th_registry_unref(reg);
    reg = th_registry_new();
    ck_assert_str_eq(getenv("TH_TEST_SELFDUP_DESTROYED"), "once");
}
END_TEST

START_TEST(test_wrong_name)
{
    make_dir("p");
    copy_plugin("addMemory", "p/addMemory.so");
    ck_assert_int_eq(load("p"), TH_OK);
    assert_stats(0, 0, 0, 1, 0);
    ck_assert_uint_eq(th_registry_count(reg), 0);
    assert_logged(tpath("p/addMemory.so"), "tool 'addMemory'",
                  "Tool name 'addMemory' invalid (must be lowercase, alphanumeric, underscores)", "[TH_ERR_VALUE]");
    ck_assert_int_eq(nlines, 1);
}
END_TEST

START_TEST(test_name_mismatch)
{
    make_dir("p");
    copy_plugin("mismatch", "p/mismatch.so");
    ck_assert_int_eq(load("p"), TH_OK);
    assert_stats(0, 0, 0, 1, 0);
    ck_assert_ptr_null(th_registry_get(reg, "other_tool"));
    ck_assert_uint_eq(th_registry_count(reg), 0);
    /* The line names the tool by the name it was given, not the file's. */
    assert_logged(tpath("p/mismatch.so"), "refused: tool 'other_tool': tool name 'other_tool' does not match",
                  "register_mismatch_tool() must return the tool named 'mismatch'", "[TH_ERR_VALUE]");
    ck_assert_int_eq(nlines, 1);
}
END_TEST

/* dup_a.so registers dup_b as an extra tool. Alone, it serves both; with
 * dup_b.so present, the name dup_b is dup_b.so's, although dup_a.so loads
 * first: dup_a's dup_b is refused (and dup_a, seeing that, declines). */
START_TEST(test_duplicate_across_plugins)
{
    make_dir("alone");
    copy_plugin("dup_a", "alone/dup_a.so");
    ck_assert_int_eq(load("alone"), TH_OK);
    assert_stats(2, 0, 1, 0, 0);
    ck_assert_str_eq(names(), "dup_b,dup_a");
    th_registry_unref(reg);
    reg = th_registry_new();
    memset(&stats, 0, sizeof stats);
    nlines = 0;

    make_dir("p");
    copy_plugin("dup_b", "p/dup_b.so");
    copy_plugin("dup_a", "p/dup_a.so");
    ck_assert_int_eq(load("p"), TH_OK);
    assert_stats(1, 1, 1, 1, 0);
    ck_assert_str_eq(names(), "dup_b");
    ck_assert_str_eq(th_registry_get(reg, "dup_b")->origin, tpath("p/dup_b.so"));
    assert_logged(tpath("p/dup_a.so"), "tool 'dup_b' refused", "tool name 'dup_b' belongs to plugin file",
                  tpath("p/dup_b.so"), "[TH_ERR_VALUE]");
    assert_logged(tpath("p/dup_a.so"), "refused", "register_dup_a_tool() returned NULL");
    ck_assert_int_eq(count_level(TH_LOG_ERROR), 2);
}
END_TEST

/* aa.so adds a tool named echo that answers HIJACKED before echo.so
 * loads. The name belongs to echo.so, so the real echo is served. */
START_TEST(test_tool_name_belongs_to_its_plugin_file)
{
    make_dir("p");
    copy_hostile("aa", "p/aa.so");
    copy_echo("p/echo.so");
    ck_assert_int_eq(load("p"), TH_OK);
    assert_stats(2, 1, 2, 0, 0);
    ck_assert_str_eq(names(), "aa,echo");
    ck_assert_str_eq(th_registry_get(reg, "echo")->origin, tpath("p/echo.so"));
    assert_logged(tpath("p/aa.so"), "tool 'echo' refused", "tool name 'echo' belongs to plugin file",
                  tpath("p/echo.so"), "[TH_ERR_VALUE]");
    char *out = call_tool("echo", "real");
    ck_assert_str_eq(out, "real");
    free(out);
}
END_TEST

/* Every directory is listed before any plugin runs, so the rule
 * holds when echo.so is in a later directory. */
START_TEST(test_tool_name_owned_across_directories)
{
    make_dir("one");
    make_dir("two");
    copy_hostile("aa", "one/aa.so");
    copy_echo("two/echo.so");
    const char *dirs[] = {tpath("one"), tpath("two")};
    ck_assert_int_eq(th_loader_load_dirs(reg, dirs, 2, NULL, &stats), TH_OK);
    assert_stats(2, 1, 2, 0, 0);
    ck_assert_str_eq(th_registry_get(reg, "echo")->origin, tpath("two/echo.so"));
    assert_logged(tpath("one/aa.so"), "tool name 'echo' belongs to plugin file", tpath("two/echo.so"));
    char *out = call_tool("echo", "real");
    ck_assert_str_eq(out, "real");
    free(out);
}
END_TEST

/* The same plugin in two directories: the second copy is refused. */
START_TEST(test_duplicate_same_plugin_two_dirs)
{
    make_dir("one");
    make_dir("two");
    copy_plugin("good", "one/good.so");
    copy_plugin("good", "two/good.so");
    ck_assert_int_eq(load("one"), TH_OK);
    ck_assert_int_eq(load("two"), TH_OK);
    assert_stats(1, 0, 1, 1, 0);
    ck_assert_str_eq(names(), "good");
    ck_assert_str_eq(th_registry_get(reg, "good")->origin, tpath("one/good.so"));
    assert_logged(tpath("two/good.so"), "tool 'good'", "Tool 'good' already registered");
    /* The refusal names who registered the name first. */
    char first[PATH_MAX + 32];
    snprintf(first, sizeof first, "Tool 'good' already registered (first by %s)", tpath("one/good.so"));
    assert_logged(tpath("two/good.so"), first);
    /* The refused copy was closed; the first one still runs. */
    char *out = call_tool("good", "still here");
    ck_assert_str_eq(out, "good says: still here");
    free(out);
}
END_TEST

START_TEST(test_abi_mismatch)
{
    make_dir("p");
    copy_plugin("abi", "p/abi.so");
    ck_assert_int_eq(load("p"), TH_OK);
    assert_stats(0, 0, 0, 1, 0);
    ck_assert_uint_eq(th_registry_count(reg), 0);
    char versions[128];
    snprintf(versions, sizeof versions, "Host ABI version is %d, plugin ABI version is %d", TH_ABI_VERSION,
             TH_ABI_VERSION + 1);
    assert_logged(tpath("p/abi.so"), "tool 'abi'", versions, "[TH_ERR_ABI]");
    ck_assert_int_eq(nlines, 1);
}
END_TEST

START_TEST(test_three_tools_second_invalid)
{
    make_dir("p");
    copy_plugin("three", "p/three.so");
    ck_assert_int_eq(load("p"), TH_OK);
    /* "three" registered means the plugin saw TH_OK, then TH_ERR_VALUE with
     * the registry's message, from th_server_add_tool()/th_server_errmsg(). */
    assert_stats(2, 1, 1, 0, 0);
    ck_assert_str_eq(names(), "three_a,three");
    ck_assert_ptr_null(th_registry_get(reg, "three_b"));
    ck_assert_str_eq(th_registry_get(reg, "three_a")->origin, tpath("p/three.so"));
    assert_logged(tpath("p/three.so"), "tool 'three_b' refused", "Tool description too short (min 10 chars)",
                  "[TH_ERR_VALUE]");
    ck_assert_int_eq(count_level(TH_LOG_ERROR), 1);
    assert_logged("tool_registered tool_name=three_a total_tools=1");
    assert_logged("tool_registered tool_name=three total_tools=2");
    char *out = call_tool("three_a", "x");
    ck_assert_str_eq(out, "three_a's user data");
    free(out);
}
END_TEST

START_TEST(test_non_so_files_ignored)
{
    make_dir("p");
    make_dir("p/sub");
    copy_plugin("good", "p/good.so.1");
    copy_plugin("good", "p/good.so.bak");
    copy_plugin("good", "p/good.SO");
    copy_plugin("good", "p/sub/good.so"); /* not recursive */
    write_text("p/README.txt", "not a plugin\n");
    write_text("p/libgood.a", "!<arch>\n");
    write_text("p/so", "");
    write_text("p/.so", "");
    ck_assert_int_eq(load("p"), TH_OK);
    assert_stats(0, 0, 0, 0, 0);
    ck_assert_uint_eq(th_registry_count(reg), 0);
    assert_logged(tpath("p"), "no NAME.so files in it");
    ck_assert_msg(nlines == 1, "logged:\n%s", dump());
}
END_TEST

/* An empty directory is worth a warning, not a refusal. */
START_TEST(test_empty_directory)
{
    make_dir("p");
    ck_assert_int_eq(load("p"), TH_OK);
    assert_stats(0, 0, 0, 0, 0);
    ck_assert_uint_eq(th_load_stats_refusals(&stats), 0);
    ck_assert_uint_eq(th_registry_count(reg), 0);
    assert_logged(tpath("p"), "plugin directory", "no NAME.so files in it");
    ck_assert_msg(nlines == 1 && count_level(TH_LOG_WARNING) == 1, "logged:\n%s", dump());
}
END_TEST

/* A directory nobody named (dirs_required unset: the default one)
 * that cannot be opened is a warning, counted as a refused directory. */
START_TEST(test_directory_does_not_exist)
{
    ck_assert_int_eq(load("missing"), TH_ERR_IO);
    assert_stats(0, 0, 0, 0, 1);
    ck_assert_uint_eq(th_load_stats_refusals(&stats), 1);
    assert_logged(tpath("missing"), "cannot open", strerror(ENOENT));
    ck_assert_int_eq(count_level(TH_LOG_WARNING), 1);
    ck_assert_int_eq(count_level(TH_LOG_ERROR), 0);
    /* A file is not a directory either. */
    write_text("file", "x");
    ck_assert_int_eq(load("file"), TH_ERR_IO);
    assert_logged(tpath("file"), "cannot open", strerror(ENOTDIR));
    ck_assert_uint_eq(stats.dirs_refused, 2);
}
END_TEST

/* A directory the user named that cannot be opened is an error,
 * and nothing is loaded, not even from the directories that are fine. */
START_TEST(test_required_directory_missing_loads_nothing)
{
    make_dir("one");
    copy_plugin("good", "one/good.so");
    const char *dirs[] = {tpath("one"), tpath("missing")};
    th_load_opts required = {.dirs_required = true};
    ck_assert_int_eq(th_loader_load_dirs(reg, dirs, 2, &required, &stats), TH_ERR_IO);
    assert_stats(0, 0, 0, 0, 1);
    ck_assert_uint_eq(th_registry_count(reg), 0);
    assert_logged("plugin directory", tpath("missing"), "cannot open", strerror(ENOENT));
    ck_assert_int_eq(count_level(TH_LOG_ERROR), 1);
    ck_assert_msg(find_line("tool_registered") < 0, "a plugin was loaded:\n%s", dump());
}
END_TEST

/* The real path of PART, as the loader names link targets (TMPDIR may
 * itself lie behind a link). */
static const char *rpath(const char *part)
{
    static char bufs[2][PATH_MAX];
    static int next;
    char *b = bufs[next++ % 2];
    ck_assert_msg(realpath(tpath(part), b) != NULL, "realpath %s: %s", part, strerror(errno));
    return b;
}

/* Fails unless a line says PATH (a file or directory) was refused: WHO may
 * write to it (mode MODE), fixed by "chmod go-w FIX". */
static void assert_writable_refused(const char *kind, const char *path, const char *who, const char *mode,
                                    const char *fix)
{
    char head[PATH_MAX + 64], why[PATH_MAX + 128];
    snprintf(head, sizeof head, "%s %s refused: ", kind, path);
    snprintf(why, sizeof why, "writable by %s (mode %s); fix with: chmod go-w %s", who, mode, fix);
    assert_logged(head, why);
}

/* A link to a file inside its directory (here a versioned file name, which
 * is not itself listed) loads only with --follow-symlinks. */
START_TEST(test_symlink_refused_unless_follow_symlinks)
{
    make_dir("p");
    copy_plugin("good", "p/good.so.1");
    ck_assert_int_eq(symlink(tpath("p/good.so.1"), tpath("p/good.so")), 0);

    ck_assert_int_eq(load("p"), TH_OK);
    assert_stats(0, 0, 0, 1, 0);
    ck_assert_uint_eq(th_registry_count(reg), 0);
    assert_logged(tpath("p/good.so"), "refused", "symbolic link");

    th_load_opts follow = {.follow_symlinks = true};
    ck_assert_int_eq(th_loader_load_dir(reg, tpath("p"), &follow, &stats), TH_OK);
    assert_stats(1, 0, 1, 1, 0);
    ck_assert_str_eq(names(), "good");

    /* A dangling link is refused even when links are followed. */
    make_dir("q");
    ck_assert_int_eq(symlink(tpath("q/gone.so.1"), tpath("q/gone.so")), 0);
    ck_assert_int_eq(th_loader_load_dir(reg, tpath("q"), &follow, &stats), TH_OK);
    assert_stats(1, 0, 1, 2, 0);
    assert_logged(tpath("q/gone.so"), "dangling symbolic link");
}
END_TEST

/* Trust: a link whose target lies outside its plugin directory is
 * refused even with --follow-symlinks; --allow-insecure-plugins lets it
 * through with a warning naming the link and its target. */
START_TEST(test_symlink_leaving_the_directory_refused)
{
    make_dir("store");
    make_dir("p");
    copy_plugin("good", "store/good.so");
    ck_assert_int_eq(symlink(tpath("store/good.so"), tpath("p/good.so")), 0);

    th_load_opts follow = {.follow_symlinks = true};
    ck_assert_int_eq(th_loader_load_dir(reg, tpath("p"), &follow, &stats), TH_OK);
    assert_stats(0, 0, 0, 1, 0);
    ck_assert_uint_eq(th_registry_count(reg), 0);
    char want[PATH_MAX + 64];
    snprintf(want, sizeof want, "symbolic link to %s, outside its plugin directory", rpath("store/good.so"));
    assert_logged("plugin ", tpath("p/good.so"), " refused: ", want, "--allow-insecure-plugins");

    /* ".." inside the link is resolved before the check. */
    make_dir("q");
    ck_assert_int_eq(symlink("../store/good.so", tpath("q/good.so")), 0);
    ck_assert_int_eq(th_loader_load_dir(reg, tpath("q"), &follow, &stats), TH_OK);
    assert_stats(0, 0, 0, 2, 0);
    assert_logged(tpath("q/good.so"), " refused: ", want);

    th_load_opts allow = {.follow_symlinks = true, .allow_insecure = true};
    nlines = 0;
    ck_assert_int_eq(th_loader_load_dir(reg, tpath("p"), &allow, &stats), TH_OK);
    assert_stats(1, 0, 1, 2, 0);
    ck_assert_str_eq(names(), "good");
    assert_logged("plugin ", tpath("p/good.so"), want, "let through by --allow-insecure-plugins");
    ck_assert_msg(count_level(TH_LOG_WARNING) == 1 && count_level(TH_LOG_ERROR) == 0, "logged:\n%s", dump());
}
END_TEST

/* Trust: a link's target gets the owner and mode checks, and so
 * does every directory between the plugin directory and the target. */
START_TEST(test_symlink_target_checked)
{
    th_load_opts follow = {.follow_symlinks = true};
    make_dir("p");
    make_dir("p/lib");
    copy_plugin("good", "p/lib/good.so.1");
    ck_assert_int_eq(symlink("lib/good.so.1", tpath("p/good.so")), 0);
    ck_assert_int_eq(th_loader_load_dir(reg, tpath("p"), &follow, &stats), TH_OK);
    assert_stats(1, 0, 1, 0, 0); /* the subdirectory is fine so far */
    th_registry_unref(reg);
    reg = th_registry_new();

    ck_assert_int_eq(chmod(tpath("p/lib/good.so.1"), 0666), 0);
    ck_assert_int_eq(th_loader_load_dir(reg, tpath("p"), &follow, &stats), TH_OK);
    assert_stats(1, 0, 1, 1, 0);
    assert_writable_refused("plugin", tpath("p/good.so"), "group and others", "0666", rpath("p/lib/good.so.1"));

    ck_assert_int_eq(chmod(tpath("p/lib/good.so.1"), 0644), 0);
    ck_assert_int_eq(chmod(tpath("p/lib"), 0757), 0);
    ck_assert_int_eq(th_loader_load_dir(reg, tpath("p"), &follow, &stats), TH_OK);
    assert_stats(1, 0, 1, 2, 0);
    char into[PATH_MAX + 64], why[PATH_MAX + 64];
    snprintf(into, sizeof into, "symbolic link into %s, which is refused", rpath("p/lib"));
    snprintf(why, sizeof why, "writable by others (mode 0757); fix with: chmod go-w %s", rpath("p/lib"));
    assert_logged(tpath("p/good.so"), into, why);
    ck_assert_uint_eq(th_registry_count(reg), 0);
}
END_TEST

/* Trust: the rule itself, on made-up owners and modes, so that
 * the owner rule is tested without being root. */
START_TEST(test_trust_rule)
{
    static const struct {
        uid_t uid, euid;
        mode_t mode;
        const char *why; /* NULL: trusted */
    } cases[] = {
        {0, 0, S_IFREG | 0755, NULL},
        {0, 1000, S_IFREG | 0644, NULL}, /* root's files are anyone's */
        {1000, 1000, S_IFDIR | 0700, NULL},
        {1000, 1000, S_IFREG | 0555, NULL},
        {1234, 0, S_IFREG | 0644,
         "owned by uid 1234, not by root or the user running toolhost (uid 0); fix with: chown 0 /x/p.so"},
        {1000, 1001, S_IFREG | 0600,
         "owned by uid 1000, not by root or the user running toolhost (uid 1001); fix with: chown 1001 /x/p.so"},
        {1234, 0, S_IFREG | 0666, /* the owner first */
         "owned by uid 1234, not by root or the user running toolhost (uid 0); fix with: chown 0 /x/p.so"},
        {0, 0, S_IFDIR | 0777, "writable by group and others (mode 0777); fix with: chmod go-w /x/p.so"},
        {0, 0, S_IFDIR | 01777, "writable by group and others (mode 1777); fix with: chmod go-w /x/p.so"},
        {1000, 1000, S_IFREG | 0646, "writable by others (mode 0646); fix with: chmod go-w /x/p.so"},
        {1000, 1000, S_IFDIR | 0770, "writable by group (mode 0770); fix with: chmod go-w /x/p.so"},
        {0, 0, S_IFREG | 0620, "writable by group (mode 0620); fix with: chmod go-w /x/p.so"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct stat st;
        memset(&st, 0, sizeof st);
        st.st_uid = cases[i].uid;
        st.st_mode = cases[i].mode;
        char why[512] = "";
        bool ok = th_trust_check(&st, cases[i].euid, "/x/p.so", why, sizeof why);
        ck_assert_msg(ok == (cases[i].why == NULL), "case %zu: %s", i, ok ? "trusted" : why);
        if (cases[i].why)
            ck_assert_str_eq(why, cases[i].why);
    }
}
END_TEST

/* Trust: a plugin file owned by another user is refused, with the
 * chown that fixes it; the real file, where the test can chown it. */
START_TEST(test_file_owned_by_another_user_refused)
{
    make_dir("p");
    copy_plugin("good", "p/good.so");
    /* As root, hand the file to daemon (uid 1); as anyone else, a file of
     * root's is already trusted, so the check is the unit test above. */
    ck_assert_msg(geteuid() != 0 || chown(tpath("p/good.so"), 1, (gid_t)-1) == 0, "chown: %s", strerror(errno));
    ck_assert_int_eq(load("p"), TH_OK);
    if (geteuid() == 0) {
        assert_stats(0, 0, 0, 1, 0);
        char want[PATH_MAX + 128];
        snprintf(want, sizeof want,
                 "refused: owned by uid 1, not by root or the user running toolhost (uid 0); fix with: chown 0 %s",
                 tpath("p/good.so"));
        assert_logged(tpath("p/good.so"), want);
    } else {
        assert_stats(1, 0, 1, 0, 0);
    }
}
END_TEST

/* Trust: a directory anyone may write to is refused with the
 * chmod that fixes it, and none of its files is loaded; a directory nobody
 * named (the default one) is a warning and the others still load. */
START_TEST(test_directory_writable_by_others_refused)
{
    make_dir("one");
    copy_plugin("dup_a", "one/dup_a.so");
    make_dir("p");
    copy_plugin("good", "p/good.so");
    ck_assert_int_eq(chmod(tpath("p"), 0777), 0);
    const char *dirs[] = {tpath("one"), tpath("p")};
    ck_assert_int_eq(th_loader_load_dirs(reg, dirs, 2, NULL, &stats), TH_ERR_IO);
    assert_stats(2, 0, 1, 0, 1);
    ck_assert_str_eq(names(), "dup_b,dup_a");
    assert_writable_refused("plugin directory", tpath("p"), "group and others", "0777", tpath("p"));
    ck_assert_int_eq(count_level(TH_LOG_WARNING), 1);
    ck_assert_int_eq(count_level(TH_LOG_ERROR), 0);
}
END_TEST

/* Whoever may write a directory above the plugin directory can swap the
 * plugin directory itself between the check and dlopen(): a parent anyone
 * may write to, without the sticky bit, refuses the listing and a load of
 * one of its files, naming the parent and the rule; a sticky one (/tmp)
 * is accepted. */
START_TEST(test_parent_writable_by_others_refused)
{
    make_dir("open");
    make_dir("open/p");
    copy_plugin("good", "open/p/good.so");
    ck_assert_int_eq(chmod(tpath("open"), 0777), 0);
    char parent[PATH_MAX], why[PATH_MAX + 128];
    ck_assert_ptr_nonnull(realpath(tpath("open"), parent));
    snprintf(why, sizeof why, "%s above it: writable by group and others without the sticky bit (mode 0777)", parent);

    ck_assert_int_eq(th_loader_load_dir(reg, tpath("open/p"), NULL, &stats), TH_ERR_IO);
    assert_stats(0, 0, 0, 0, 1);
    assert_logged("plugin directory", tpath("open/p"), "refused", why, "fix with: chmod go-w");
    /* A worker loads one file by its path: the same walk refuses it. */
    ck_assert_int_eq(th_loader_load_file(reg, tpath("open/p/good.so"), NULL, &stats), TH_ERR_VALUE);
    assert_logged("plugin", tpath("open/p/good.so"), "refused: its directory is refused", why);
    ck_assert_str_eq(names(), "");

    ck_assert_int_eq(chmod(tpath("open"), 01777), 0);
    ck_assert_int_eq(th_loader_load_dir(reg, tpath("open/p"), NULL, &stats), TH_OK);
    ck_assert_str_eq(names(), "good");
}
END_TEST

/*
** The bytes mapped are the bytes judged: on Linux the loader dlopen()s the
** descriptor it checked (/proc/self/.../fd/N, which resolves to the plugin
** file), so a file swapped in at the path afterwards is never the one
** loaded. The portable build (no /proc) loads the path itself, spelled
** uniquely under the checked directory, and relies on the ancestors' check.
*/
START_TEST(test_the_checked_descriptor_is_what_is_loaded)
{
    make_dir("p");
    copy_plugin("whereami", "p/whereami.so");
    ck_assert_int_eq(th_loader_load_file(reg, tpath("p/whereami.so"), NULL, &stats), TH_OK);
    const th_entry *e = th_registry_get(reg, "whereami");
    ck_assert_ptr_nonnull(e);
    struct stat st;
    ck_assert_int_eq(stat(tpath("p/whereami.so"), &st), 0);
    char inode[64], name[PATH_MAX + 16];
    snprintf(inode, sizeof inode, ", inode %llu", (unsigned long long)st.st_ino);
    ck_assert_msg(strstr(e->description, inode) && strcmp(strstr(e->description, inode), inode) == 0,
                  "its code is not mapped from the file checked (inode %llu): %s", (unsigned long long)st.st_ino,
                  e->description);
#if defined(__linux__) && !defined(TH_PORTABLE_ONLY)
    const char *fd = strstr(e->description, "/fd/");
    ck_assert_msg(strncmp(e->description, "loaded as /proc/self/", 21) == 0 && fd &&
                      strspn(fd + 4, "0123456789") > 0 && fd[4 + strspn(fd + 4, "0123456789")] == ',',
                  "the plugin was not loaded through the descriptor that was checked: %s", e->description);
    (void)name;
#else
    snprintf(name, sizeof name, "loaded as %s/", tpath("p"));
    ck_assert_msg(strncmp(e->description, name, strlen(name)) == 0 && strstr(e->description, "/whereami.so, inode"),
                  "the portable build loads the checked path, spelled under its directory: %s", e->description);
#endif
}
END_TEST

/* Trust: one the user named is an error, and nothing is loaded. */
START_TEST(test_required_directory_writable_loads_nothing)
{
    make_dir("one");
    copy_plugin("good", "one/good.so");
    make_dir("p");
    ck_assert_int_eq(chmod(tpath("p"), 0757), 0);
    const char *dirs[] = {tpath("one"), tpath("p")};
    th_load_opts required = {.dirs_required = true};
    ck_assert_int_eq(th_loader_load_dirs(reg, dirs, 2, &required, &stats), TH_ERR_IO);
    assert_stats(0, 0, 0, 0, 1);
    ck_assert_uint_eq(th_registry_count(reg), 0);
    assert_writable_refused("plugin directory", tpath("p"), "others", "0757", tpath("p"));
    ck_assert_int_eq(count_level(TH_LOG_ERROR), 1);
}
END_TEST

/* Trust: group-writable is refused too, for directories and files. */
START_TEST(test_group_writable_refused)
{
    make_dir("p");
    ck_assert_int_eq(chmod(tpath("p"), 0770), 0);
    ck_assert_int_eq(load("p"), TH_ERR_IO);
    assert_stats(0, 0, 0, 0, 1);
    assert_writable_refused("plugin directory", tpath("p"), "group", "0770", tpath("p"));

    make_dir("q");
    copy_plugin("good", "q/good.so");
    ck_assert_int_eq(chmod(tpath("q/good.so"), 0664), 0);
    ck_assert_int_eq(load("q"), TH_OK);
    assert_stats(0, 0, 0, 1, 1);
    assert_writable_refused("plugin", tpath("q/good.so"), "group", "0664", tpath("q/good.so"));
    ck_assert_uint_eq(th_registry_count(reg), 0);
}
END_TEST

/* Trust: a plugin file anyone may write to is refused; the other
 * plugins of its directory load. */
START_TEST(test_file_writable_by_others_refused)
{
    make_dir("p");
    copy_plugin("good", "p/good.so");
    copy_plugin("dup_a", "p/dup_a.so");
    ck_assert_int_eq(chmod(tpath("p/good.so"), 0666), 0);
    ck_assert_int_eq(load("p"), TH_OK);
    assert_stats(2, 0, 1, 1, 0);
    ck_assert_str_eq(names(), "dup_b,dup_a");
    assert_writable_refused("plugin", tpath("p/good.so"), "group and others", "0666", tpath("p/good.so"));
    /* Not a word about it before the refusal: nothing of it ran. */
    ck_assert_msg(find_line("tool_name=good ") < 0, "good.so ran:\n%s", dump());
}
END_TEST

/* Trust: --allow-insecure-plugins loads them, with one warning per
 * path it let through. */
START_TEST(test_allow_insecure_plugins)
{
    make_dir("p");
    copy_plugin("good", "p/good.so");
    copy_plugin("dup_a", "p/dup_a.so");
    ck_assert_int_eq(chmod(tpath("p/good.so"), 0666), 0);
    ck_assert_int_eq(chmod(tpath("p"), 0777), 0);
    th_load_opts allow = {.allow_insecure = true, .dirs_required = true};
    ck_assert_int_eq(th_loader_load_dir(reg, tpath("p"), &allow, &stats), TH_OK);
    assert_stats(3, 0, 2, 0, 0);
    ck_assert_str_eq(names(), "dup_b,dup_a,good");
    char dir[PATH_MAX + 64], file[PATH_MAX + 64];
    snprintf(dir, sizeof dir, "plugin directory %s: writable by group and others (mode 0777)", tpath("p"));
    snprintf(file, sizeof file, "plugin %s: writable by group and others (mode 0666)", tpath("p/good.so"));
    assert_logged(dir, "let through by --allow-insecure-plugins");
    assert_logged(file, "let through by --allow-insecure-plugins");
    ck_assert_msg(count_level(TH_LOG_WARNING) == 2 && count_level(TH_LOG_ERROR) == 0, "logged:\n%s", dump());
}
END_TEST

START_TEST(test_not_a_shared_object)
{
    make_dir("p");
    write_text("p/x.so", "this is a text file, not an ELF shared object\n");
    /* What dlopen() says about this file, to find it in the log. */
    ck_assert_ptr_null(dlopen(tpath("p/x.so"), RTLD_NOW | RTLD_LOCAL));
    char why[1024];
    snprintf(why, sizeof why, "%s", dlerror());
    ck_assert_int_eq(load("p"), TH_OK);
    assert_stats(0, 0, 0, 1, 0);
    assert_logged(tpath("p/x.so"), "refused", "cannot load shared object", why);
    ck_assert_int_eq(nlines, 1);
}
END_TEST

/* A NAME that cannot be spelled in a C identifier has no entry point to
 * look up; a name without ".so" is not a plugin file. */
START_TEST(test_name_not_an_identifier)
{
    make_dir("p");
    write_text("p/bad-name.so", "x");
    ck_assert_int_eq(load("p"), TH_OK);
    assert_stats(0, 0, 0, 1, 0);
    assert_logged(tpath("p/bad-name.so"), "'bad-name' cannot be part of the entry point's name",
                  "register_bad-name_tool");
    ck_assert(th_loader_load_file(reg, tpath("p/notes.txt"), NULL, &stats) != TH_OK);
    assert_logged(tpath("p/notes.txt"), "file name must be NAME.so");
}
END_TEST

/* Files are loaded in strcmp order whatever order the directory lists them;
 * they are created here in reverse. */
START_TEST(test_sorted_deterministic_order)
{
    make_dir("p");
    copy_plugin("three", "p/three.so");
    copy_plugin("nulldesc", "p/nulldesc.so");
    copy_plugin("good", "p/good.so");
    copy_plugin("dup_a", "p/dup_a.so");
    copy_plugin("abi", "p/abi.so");
    ck_assert_int_eq(load("p"), TH_OK);
    assert_stats(5, 1, 3, 2, 0);
    ck_assert_str_eq(names(), "dup_b,dup_a,good,three_a,three");
    int abi = find_line(tpath("p/abi.so"));
    int dup_a = find_line("tool_name=dup_a ");
    int good = find_line("tool_name=good ");
    int nulldesc = find_line(tpath("p/nulldesc.so"));
    int three = find_line("tool_name=three ");
    ck_assert_msg(abi >= 0 && abi < dup_a && dup_a < good && good < nulldesc && nulldesc < three, "order:\n%s",
                  dump());
}
END_TEST

/* A plugin path without a slash is a file in the working directory, not a
 * name for dlopen() to search the library path for. */
START_TEST(test_load_file_relative_path)
{
    make_dir("p");
    copy_plugin("good", "p/good.so");
    ck_assert_int_eq(chdir(tpath("p")), 0);
    ck_assert_int_eq(th_loader_load_file(reg, "good.so", NULL, &stats), TH_OK);
    assert_stats(1, 0, 1, 0, 0);
    char *out = call_tool("good", "relative");
    ck_assert_str_eq(out, "good says: relative");
    free(out);
}
END_TEST

/* chdir_root.so changes to "/" in its constructor while a relative
 * directory is loaded; good.so, after it, must still be found. */
START_TEST(test_relative_directory_survives_chdir)
{
    char cwd[PATH_MAX];
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    make_dir("p");
    copy_hostile("chdir_root", "p/chdir_root.so");
    copy_plugin("good", "p/good.so");
    ck_assert_int_eq(chdir(tmpdir), 0);
    th_rc rc = th_loader_load_dir(reg, "p", NULL, &stats);
    char now[PATH_MAX];
    ck_assert_ptr_nonnull(getcwd(now, sizeof now));
    ck_assert_int_eq(chdir(cwd), 0);
    ck_assert_str_eq(now, "/"); /* the plugin did move */
    ck_assert_int_eq(rc, TH_OK);
    assert_stats(2, 0, 2, 0, 0);
    ck_assert_str_eq(names(), "chdir_root,good");
    ck_assert_str_eq(th_registry_get(reg, "good")->origin, tpath("p/good.so"));
}
END_TEST

/* A returned descriptor on the entry point's stack is refused
 * without being read (its frame is gone); a static one (good.so) loads. */
START_TEST(test_returned_descriptor_on_the_stack_refused)
{
    make_dir("p");
    copy_plugin("stackdesc", "p/stackdesc.so");
    ck_assert_int_eq(load("p"), TH_OK);
    assert_stats(0, 0, 0, 1, 0);
    ck_assert_uint_eq(th_registry_count(reg), 0);
    assert_logged(tpath("p/stackdesc.so"), "refused",
                  "register_stackdesc_tool() returned a descriptor on its own stack", "static storage");
}
END_TEST

/* Run staged.so in MODE (see tests/plugins/staged.c). */
static th_rc load_staged(const char *mode)
{
    setenv("TH_TEST_STAGED_MODE", mode, 1);
    unsetenv("TH_TEST_STAGED_DESTROYED");
    make_dir("p");
    copy_plugin("staged", "p/staged.so");
    th_rc rc = load("p");
    unsetenv("TH_TEST_STAGED_MODE");
    return rc;
}

/* A plugin declining with NULL takes back the tools it added; their
 * user_data is released, once. */
START_TEST(test_refused_plugin_discards_added_tools)
{
    ck_assert_int_eq(load_staged("null"), TH_OK);
    assert_stats(0, 1, 0, 1, 0);
    ck_assert_uint_eq(th_registry_count(reg), 0);
    ck_assert_ptr_null(th_registry_get(reg, "staged_extra"));
    assert_logged(tpath("p/staged.so"), "refused", "returned NULL");
    assert_logged(tpath("p/staged.so"), "tool 'staged_extra' discarded: its plugin was refused");
    ck_assert_str_eq(getenv("TH_TEST_STAGED_DESTROYED"), "once");
}
END_TEST

/* The same when the returned descriptor breaks a rule. */
START_TEST(test_invalid_descriptor_discards_added_tools)
{
    ck_assert_int_eq(load_staged("bad"), TH_OK);
    assert_stats(0, 1, 0, 1, 0);
    ck_assert_uint_eq(th_registry_count(reg), 0);
    assert_logged(tpath("p/staged.so"), "refused", "Tool description too short");
    assert_logged("tool 'staged_extra' discarded");
    ck_assert_str_eq(getenv("TH_TEST_STAGED_DESTROYED"), "once");
}
END_TEST

/* th_server_added_only() is the way to serve only added tools; with
 * none added, the plugin is refused. */
START_TEST(test_added_only)
{
    ck_assert_int_eq(load_staged("only"), TH_OK);
    assert_stats(1, 0, 1, 0, 0);
    ck_assert_str_eq(names(), "staged_extra");
    ck_assert_int_eq(count_level(TH_LOG_ERROR), 0);
    char *out = call_tool("staged_extra", "x");
    ck_assert_str_eq(out, "staged extra");
    free(out);
    ck_assert_ptr_null(getenv("TH_TEST_STAGED_DESTROYED"));
    th_registry_unref(reg);
    reg = th_registry_new();
    ck_assert_str_eq(getenv("TH_TEST_STAGED_DESTROYED"), "once");
}
END_TEST

START_TEST(test_added_only_without_tools_refused)
{
    ck_assert_int_eq(load_staged("none"), TH_OK);
    assert_stats(0, 0, 0, 1, 0);
    assert_logged(tpath("p/staged.so"), "refused", "returned th_server_added_only() but added no tool");
}
END_TEST

static Suite *loader_suite(void)
{
    Suite *s = suite_create("loader");
    TCase *tc = tcase_create("plugins");
    tcase_add_unchecked_fixture(tc, make_root, remove_root);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_good_plugin);
    tcase_add_test(tc, test_missing_entry_point);
    tcase_add_test(tc, test_entry_point_returns_null);
    tcase_add_test(tc, test_refused_descriptor_destroyed);
    tcase_add_test(tc, test_returned_duplicate_keeps_shared_user_data);
    tcase_add_test(tc, test_wrong_name);
    tcase_add_test(tc, test_name_mismatch);
    tcase_add_test(tc, test_duplicate_across_plugins);
    tcase_add_test(tc, test_tool_name_belongs_to_its_plugin_file);
    tcase_add_test(tc, test_tool_name_owned_across_directories);
    tcase_add_test(tc, test_duplicate_same_plugin_two_dirs);
    tcase_add_test(tc, test_abi_mismatch);
    tcase_add_test(tc, test_three_tools_second_invalid);
    tcase_add_test(tc, test_non_so_files_ignored);
    tcase_add_test(tc, test_empty_directory);
    tcase_add_test(tc, test_directory_does_not_exist);
    tcase_add_test(tc, test_symlink_refused_unless_follow_symlinks);
    tcase_add_test(tc, test_symlink_leaving_the_directory_refused);
    tcase_add_test(tc, test_symlink_target_checked);
    tcase_add_test(tc, test_trust_rule);
    tcase_add_test(tc, test_file_owned_by_another_user_refused);
    tcase_add_test(tc, test_directory_writable_by_others_refused);
    tcase_add_test(tc, test_parent_writable_by_others_refused);
    tcase_add_test(tc, test_the_checked_descriptor_is_what_is_loaded);
    tcase_add_test(tc, test_required_directory_writable_loads_nothing);
    tcase_add_test(tc, test_group_writable_refused);
    tcase_add_test(tc, test_file_writable_by_others_refused);
    tcase_add_test(tc, test_allow_insecure_plugins);
    tcase_add_test(tc, test_not_a_shared_object);
    tcase_add_test(tc, test_name_not_an_identifier);
    tcase_add_test(tc, test_sorted_deterministic_order);
    tcase_add_test(tc, test_load_file_relative_path);
    tcase_add_test(tc, test_required_directory_missing_loads_nothing);
    tcase_add_test(tc, test_relative_directory_survives_chdir);
    tcase_add_test(tc, test_returned_descriptor_on_the_stack_refused);
    tcase_add_test(tc, test_refused_plugin_discards_added_tools);
    tcase_add_test(tc, test_invalid_descriptor_discards_added_tools);
    tcase_add_test(tc, test_added_only);
    tcase_add_test(tc, test_added_only_without_tools_refused);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN(loader_suite)
