/* SPDX-License-Identifier: MIT */
/*
** tests/test_options.c: the option table (src/host/options.c) against what
** is written from it or beside it: doc/toolhost.1's OPTIONS section (every
** option, its argument and its default), --help, the defaults the protocol
** layer assumes, and the range checks the table declares.
*/
#include "config.h"

#include <check.h>
#include <ctype.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "host/options.h"

/* One .TP entry of the man page: its tag and its text, both plain. */
typedef struct man_entry {
    char tag[160];
    char *text;
} man_entry;

/* Troff to plain text: font changes dropped, \- and \(en as '-'. */
static void plain(const char *in, char *out, size_t size, bool keep_spaces)
{
    size_t k = 0;
    for (const char *p = in; *p && k + 1 < size; p++) {
        if (p[0] == '\\' && p[1] == 'f' && p[2]) {
            p += 2;
        } else if (p[0] == '\\' && p[1] == '-') {
            out[k++] = '-';
            p++;
        } else if (strncmp(p, "\\(en", 4) == 0) {
            out[k++] = '-';
            p += 3;
        } else if (keep_spaces || (*p != ' ' && *p != '"')) {
            out[k++] = *p;
        }
    }
    out[k] = '\0';
}

/* The OPTIONS section of doc/toolhost.1 as entries; *N of them. */
static man_entry *man_options(size_t *n)
{
    FILE *f = fopen(TOP_SRCDIR "/doc/toolhost.1", "r");
    ck_assert_ptr_nonnull(f);
    static man_entry entries[128];
    char line[2048];
    bool in = false, tag_next = false;
    *n = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (strncmp(line, ".SH", 3) == 0) {
            in = strcmp(line, ".SH OPTIONS") == 0;
            continue;
        }
        if (!in)
            continue;
        if (strcmp(line, ".TP") == 0) {
            tag_next = true;
            continue;
        }
        if (tag_next) {
            ck_assert_uint_lt(*n, sizeof entries / sizeof entries[0]);
            const char *t = strncmp(line, ".BR ", 4) == 0 ? line + 4 : strncmp(line, ".B ", 3) == 0 ? line + 3 : line;
            plain(t, entries[*n].tag, sizeof entries[*n].tag, false);
            entries[(*n)++].text = calloc(1, 1);
            tag_next = false;
            continue;
        }
        if (*n == 0)
            continue;
        /* Text lines, and the words of .B/.BR/.I lines, joined by spaces. */
        const char *words = line[0] == '.' ? strchr(line, ' ') : line;
        if (!words)
            continue;
        char buf[2048];
        plain(words, buf, sizeof buf, true);
        man_entry *e = &entries[*n - 1];
        size_t len = strlen(e->text);
        e->text = realloc(e->text, len + strlen(buf) + 2);
        ck_assert_ptr_nonnull(e->text);
        snprintf(e->text + len, strlen(buf) + 2, " %s", buf);
    }
    fclose(f);
    return entries;
}

/* How the man page tags OPT: "-d,--plugin-dir=[BOX=]DIR". */
static void table_tag(const th_option *opt, char *out, size_t size)
{
    snprintf(out, size, "%s%c%s--%s%s%s", opt->short_name ? "-" : "", opt->short_name ? opt->short_name : '\0',
             opt->short_name ? "," : "", opt->name, opt->arg ? "=" : "", opt->arg ? opt->arg : "");
    if (!opt->short_name)
        snprintf(out, size, "--%s%s%s", opt->name, opt->arg ? "=" : "", opt->arg ? opt->arg : "");
}

/* Whether TEXT states DEF as the default: "default DEF" (any case) or
 * "DEF (the default" / "DEF (default", DEF ending at a word's end. */
static bool states_default(const char *text, const char *def)
{
    char a[128], b[128], c[128];
    snprintf(a, sizeof a, "default %s", def);
    snprintf(b, sizeof b, "%s (the default", def);
    snprintf(c, sizeof c, "%s (default", def);
    size_t la = strlen(a);
    for (const char *p = text; *p; p++) {
        if (strncasecmp(p, a, la) == 0 && !isalnum((unsigned char)p[la]))
            return true;
        if (strncmp(p, b, strlen(b)) == 0 || strncmp(p, c, strlen(c)) == 0)
            return p == text || !isalnum((unsigned char)p[-1]);
    }
    return false;
}

/* Runs of white space as one space. */
static void squeeze(char *s)
{
    char *w = s;
    for (char *r = s; *r; r++)
        if (!isspace((unsigned char)*r) || (w > s && w[-1] != ' '))
            *w++ = isspace((unsigned char)*r) ? ' ' : *r;
    *w = '\0';
}

START_TEST(man_page_tags_every_option_as_the_table_does)
{
    size_t n, nopts;
    man_entry *man = man_options(&n);
    const th_option *opts = th_host_options(&nopts);
    for (size_t i = 0; i < nopts; i++) {
        char tag[160];
        table_tag(&opts[i], tag, sizeof tag);
        bool found = false;
        for (size_t k = 0; k < n && !found; k++)
            found = strcmp(man[k].tag, tag) == 0;
        ck_assert_msg(found, "doc/toolhost.1 OPTIONS has no entry '%s' (the option table's --%s)", tag, opts[i].name);
    }
    /* And nothing the table does not have; "--http=systemd" documents a value. */
    for (size_t k = 0; k < n; k++) {
        char name[160];
        snprintf(name, sizeof name, "%s", strstr(man[k].tag, "--") ? strstr(man[k].tag, "--") + 2 : man[k].tag);
        char *eq = strchr(name, '=');
        bool literal = eq && !strpbrk(eq + 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZ");
        if (eq)
            *eq = '\0';
        const th_option *t = th_host_option_find(name);
        ck_assert_msg(t != NULL, "doc/toolhost.1 documents '%s', which the option table does not have", man[k].tag);
        if (literal)
            ck_assert_msg(t->arg != NULL, "doc/toolhost.1: '%s' gives a value to a switch", man[k].tag);
    }
}
END_TEST

START_TEST(man_page_and_help_state_each_default)
{
    size_t n, nopts;
    man_entry *man = man_options(&n);
    const th_option *opts = th_host_options(&nopts);
    for (size_t i = 0; i < nopts; i++) {
        if (!opts[i].def)
            continue;
        char tag[160];
        table_tag(&opts[i], tag, sizeof tag);
        const char *text = NULL;
        for (size_t k = 0; k < n && !text; k++)
            if (strcmp(man[k].tag, tag) == 0)
                text = man[k].text;
        ck_assert_ptr_nonnull(text);
        ck_assert_msg(states_default(text, opts[i].def), "doc/toolhost.1 --%s does not give its default %s: %s",
                      opts[i].name, opts[i].def, text);
        char *help = strdup(opts[i].help);
        squeeze(help);
        ck_assert_msg(states_default(help, opts[i].def), "--help's --%s does not give its default %s: %s",
                      opts[i].name, opts[i].def, help);
        free(help);
    }
}
END_TEST

/* --help is written from the table: every option, in the column. */
START_TEST(help_lists_every_option)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    th_host_usage(f);
    fclose(f);
    size_t nopts;
    const th_option *opts = th_host_options(&nopts);
    for (size_t i = 0; i < nopts; i++) {
        char want[160];
        snprintf(want, sizeof want, "\n  %c%c%s--%s%s%s", opts[i].short_name ? '-' : ' ',
                 opts[i].short_name ? opts[i].short_name : ' ', opts[i].short_name ? ", " : "  ", opts[i].name,
                 opts[i].arg ? "=" : "", opts[i].arg ? opts[i].arg : "");
        ck_assert_msg(strstr(text, want), "--help has no line for --%s", opts[i].name);
    }
    free(text);
}
END_TEST

static th_host_parse_rc parse(th_host_opts *o, const char *a, const char *b)
{
    char *argv[] = {(char *)"toolhost", (char *)a, (char *)b, NULL};
    int argc = b ? 3 : a ? 2 : 1;
    optind = 0; /* glibc: start a new scan */
    return th_host_parse(argc, argv, o);
}

/* The table's defaults are the ones the protocol layer would pick. */
START_TEST(table_defaults_match_the_protocol_defaults)
{
    th_host_opts o;
    th_mcp_config want;
    th_mcp_config_default(&want);
    ck_assert_int_eq(parse(&o, NULL, NULL), TH_HOST_RUN);
    ck_assert_uint_eq(o.cfg.page_size, want.page_size);
    ck_assert_int_eq(o.cfg.list_ttl_ms, want.list_ttl_ms);
    ck_assert_uint_eq(o.cfg.max_threads, want.max_threads);
    ck_assert_uint_eq(o.cfg.max_result_bytes, want.max_result_bytes);
    ck_assert_uint_eq(o.cfg.max_inflight_bytes, want.max_inflight_bytes);
    ck_assert_int_eq(o.cfg.queue_timeout_ms, want.queue_timeout_ms);
    ck_assert_int_eq(o.cfg.call_timeout_ms, want.call_timeout_ms);
    ck_assert_int_eq(o.cfg.task_ttl_ms, want.task_ttl_ms);
    ck_assert_uint_eq(o.cfg.max_tasks, want.max_tasks);
    ck_assert_str_eq(o.cfg.server_name, want.server_name);
    ck_assert(o.isolate);
    ck_assert_int_eq(o.scan.load_timeout_ms, 10000);
    ck_assert_uint_eq(o.stdio.max_message_bytes, 4u << 20);
    th_host_opts_clear(&o);
}
END_TEST

/* Ranges are data: the bounds in the table are the bounds enforced. */
START_TEST(ranges_come_from_the_table)
{
    static const char *const cases[][3] = {
        {"--max-tasks=0", "2"},          {"--max-tasks=1", "-1"},         {"--max-tasks=100000", "-1"},
        {"--max-tasks=100001", "2"},     {"--max-message-bytes=63", "2"}, {"--max-message-bytes=64", "-1"},
        {"--http-max-sessions=0", "2"},  {"--task-ttl=0", "2"},           {"--task-ttl=0.5", "-1"},
        {"--isolation=none", "-1"},      {"--isolation=thread", "2"},     {"--name=", "2"},
        {"--log-level=loud", "2"},       {"--load-timeout=86401", "2"},   {"--http-timeout=0", "2"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        th_host_opts o;
        th_host_parse_rc rc = parse(&o, cases[i][0], NULL);
        th_host_opts_clear(&o);
        ck_assert_msg(rc == atoi(cases[i][1]), "%s: %d, not %s", cases[i][0], rc, cases[i][1]);
    }
    th_host_opts o;
    ck_assert_int_eq(parse(&o, "--load-timeout=3", "--isolation=none"), TH_HOST_RUN);
    ck_assert_int_eq(o.scan.load_timeout_ms, 3000);
    ck_assert(!o.isolate);
    th_host_opts_clear(&o);
}
END_TEST

/* The [toolhost] keys are the long names, but for the command line's own. */
START_TEST(config_keys_come_from_the_table)
{
    ck_assert_ptr_eq(th_host_option_by_key("page-size"), th_host_option_find("page-size"));
    static const char *const cmdline_only[] = {"config", "set-secret", "help", "version"};
    for (size_t i = 0; i < sizeof cmdline_only / sizeof cmdline_only[0]; i++)
        ck_assert_msg(th_host_option_by_key(cmdline_only[i]) == NULL, "%s is a --config key", cmdline_only[i]);
}
END_TEST

static Suite *options_suite(void)
{
    Suite *s = suite_create("options");
    TCase *tc = tcase_create("table");
    tcase_add_test(tc, man_page_tags_every_option_as_the_table_does);
    tcase_add_test(tc, man_page_and_help_state_each_default);
    tcase_add_test(tc, help_lists_every_option);
    tcase_add_test(tc, table_defaults_match_the_protocol_defaults);
    tcase_add_test(tc, ranges_come_from_the_table);
    tcase_add_test(tc, config_keys_come_from_the_table);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN(options_suite)
