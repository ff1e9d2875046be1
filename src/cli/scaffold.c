/* SPDX-License-Identifier: MIT */
/*
** cli/scaffold.c: `toolhost new-plugin NAME [--typed] [--autotools]`: a
** commented plugin skeleton NAME.c, its tests (the C test kit and a cases
** file) and a Makefile or an Autotools project, from cli/templates/.
*/
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/templates.h"
#include "plugin/registry.h"

/* Which project a file belongs to: a plain Makefile, or Autotools. */
enum { PLAIN = 1, AUTOTOOLS = 2 };

/* The files written: the name (with @NAME@), the template for a handler
** and for a typed tool (cli/templates/), and the layouts it is part of. */
static const struct output {
    const char *file;
    const char *handler;
    const char *typed;
    unsigned layouts;
} outputs[] = {
    {"@NAME@.c", "plugin.c.in", "typed.c.in", PLAIN | AUTOTOOLS},
    {"test_@NAME@.c", "test.c.in", "test.c.in", PLAIN | AUTOTOOLS},
    {"@NAME@.cases.json", "cases.json", "cases-typed.json", PLAIN | AUTOTOOLS},
    {"Makefile", "Makefile", "Makefile", PLAIN},
    {"configure.ac", "configure.ac", "configure.ac", AUTOTOOLS},
    {"Makefile.am", "Makefile.am", "Makefile.am", AUTOTOOLS},
};

/* What is being written: the values of the templates' markers. */
typedef struct scaffold {
    const char *name;
    bool typed;
    unsigned layout;
} scaffold;

/* The markers: a fixed text, the plugin's name (NULL), or another template,
** for a handler and for a typed tool. The placeholder description is the
** registry's, so that inspect and the host can flag it. */
static const struct marker {
    const char *marker;
    const char *text;
    const char *handler_template;
    const char *typed_template;
} markers[] = {
    {"@NAME@", NULL, NULL, NULL},
    {"@DESCRIBE@", TH_PLACEHOLDER_HEAD, NULL, NULL},
    {"@DESCRIBE_END@", TH_PLACEHOLDER_TAIL, NULL, NULL},
    {"@KIT_CASES@", NULL, "kit-cases.inc", "kit-cases-typed.inc"},
};

static const char *template_text(const char *name)
{
    for (const th_template *t = th_templates; t->name; t++)
        if (strcmp(t->name, name) == 0)
            return t->text;
    return NULL;
}

static void expand(FILE *f, const char *text, const scaffold *s);

/* Write the marker at P (one of markers[]) and return its length, or 0
** when P starts no marker. */
static size_t expand_marker(FILE *f, const char *p, const scaffold *s)
{
    for (size_t i = 0; i < sizeof markers / sizeof markers[0]; i++) {
        const struct marker *m = &markers[i];
        size_t len = strlen(m->marker);
        if (strncmp(p, m->marker, len) != 0)
            continue;
        const char *nested = s->typed ? m->typed_template : m->handler_template;
        if (nested)
            expand(f, template_text(nested), s);
        else
            fputs(m->text ? m->text : s->name, f);
        return len;
    }
    return 0;
}

/* Write TEXT to F with its markers replaced. */
static void expand(FILE *f, const char *text, const scaffold *s)
{
    for (const char *p = text; p && *p;) {
        const char *at = strchr(p, '@');
        size_t len = at ? (size_t)(at - p) : strlen(p);
        fwrite(p, 1, len, f);
        if (!at)
            break;
        size_t used = expand_marker(f, at, s);
        if (!used) {
            fputc('@', f);
            used = 1;
        }
        p = at + used;
    }
}

/* A tool name as the registry accepts it, and so a C identifier. */
static bool valid_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 50 || s[0] < 'a' || s[0] > 'z')
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
            return false;
    return true;
}

/* Write the template TEMPLATE, expanded for S, to PATH, refusing to
** overwrite. */
static bool write_file(const char *path, const char *template, const scaffold *s)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        fprintf(stderr, "toolhost new-plugin: %s: %s\n", path, errno == EEXIST ? "already exists" : strerror(errno));
        return false;
    }
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        return false;
    }
    expand(f, template_text(template), s);
    bool ok = !ferror(f);
    if (fclose(f) != 0)
        ok = false;
    if (!ok)
        fprintf(stderr, "toolhost new-plugin: %s: cannot write it\n", path);
    return ok;
}

/*
** Create DIR and its missing parents, as mkdir -p does, so that --dir can
** name where a new plugin goes before it exists. Each component is tried
** in turn; one that exists as a directory is fine.
*/
static bool make_dirs(const char *dir)
{
    char path[4096];
    if (!*dir) {
        fputs("toolhost new-plugin: --dir is empty\n", stderr);
        return false;
    }
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) {
        fprintf(stderr, "toolhost new-plugin: --dir %s: path too long\n", dir);
        return false;
    }
    for (char *p = path + 1;; p++) {
        bool last = *p == '\0';
        if (*p != '/' && !last)
            continue;
        *p = '\0';
        struct stat st;
        if (mkdir(path, 0755) != 0 && (errno != EEXIST || stat(path, &st) != 0 || !S_ISDIR(st.st_mode))) {
            fprintf(stderr, "toolhost new-plugin: --dir %s: cannot create %s: %s\n", dir, path,
                    errno == EEXIST ? "not a directory" : strerror(errno));
            return false;
        }
        if (last)
            return true;
        *p = '/';
    }
}

static const char scaffold_usage[] =
    "Usage: toolhost new-plugin [--typed] [--autotools] [--dir=DIR] NAME\n"
    "Write a commented plugin skeleton DIR/NAME.c (default DIR: .; created,\n"
    "with its parents, when missing), its tests and a Makefile that builds\n"
    "NAME.so with pkg-config's toolhost module and installs it into its\n"
    "plugindir. The tests: test_NAME.c, a C test with the test kit\n"
    "(pkg-config module toolhost-testing), and NAME.cases.json, cases for\n"
    "`toolhost test`. `make check` runs both; `make check-asan` runs both\n"
    "with the plugin and the test built with AddressSanitizer and UBSan.\n"
    "--typed: a typed C function instead of a JSON handler.\n"
    "--autotools: configure.ac and Makefile.am instead of the Makefile\n"
    "(autoreconf -fi && ./configure && make check; make distcheck works).\n"
    "NAME is the tool's name: lowercase letters, digits and underscores,\n"
    "starting with a letter. Existing files are never replaced.\n";

/* PATH is DIR/FILE with @NAME@ in FILE replaced; false when too long. */
static bool output_path(char *path, size_t size, const char *dir, const char *file, const char *name)
{
    const char *at = strstr(file, "@NAME@");
    int n = at ? snprintf(path, size, "%s/%.*s%s%s", dir, (int)(at - file), file, name, at + 6)
               : snprintf(path, size, "%s/%s", dir, file);
    if (n < 0 || (size_t)n >= size) {
        fprintf(stderr, "toolhost new-plugin: %s/%s: path too long\n", dir, file);
        return false;
    }
    return true;
}

/* Write S's files into DIR, after checking that none exists yet. */
static bool write_outputs(const char *dir, const scaffold *s)
{
    char path[4096];
    for (size_t i = 0; i < sizeof outputs / sizeof outputs[0]; i++) {
        if (!(outputs[i].layouts & s->layout))
            continue;
        if (!output_path(path, sizeof path, dir, outputs[i].file, s->name))
            return false;
        if (access(path, F_OK) == 0) {
            fprintf(stderr, "toolhost new-plugin: %s already exists; nothing written\n", path);
            return false;
        }
    }
    for (size_t i = 0; i < sizeof outputs / sizeof outputs[0]; i++) {
        const struct output *o = &outputs[i];
        if ((o->layouts & s->layout) &&
            (!output_path(path, sizeof path, dir, o->file, s->name) ||
             !write_file(path, s->typed ? o->typed : o->handler, s)))
            return false;
    }
    return true;
}

int th_cli_new_plugin(int argc, char **argv)
{
    static const struct option opts[] = {
        {"typed", no_argument, NULL, 't'},
        {"autotools", no_argument, NULL, 'a'},
        {"dir", required_argument, NULL, 'C'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    scaffold s = {.layout = PLAIN};
    const char *dir = ".";
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "C:h", opts, NULL)) != -1) {
        switch (c) {
        case 't': s.typed = true; break;
        case 'a': s.layout = AUTOTOOLS; break;
        case 'C': dir = optarg; break;
        case 'h': fputs(scaffold_usage, stdout); return 0;
        default: goto usage;
        }
    }
    if (optind + 1 != argc)
        goto usage;
    s.name = argv[optind];
    if (!valid_name(s.name)) {
        fprintf(stderr, "toolhost new-plugin: '%s' is not a tool name (lowercase letters, digits, underscores; "
                        "a letter first; at most 50)\n", s.name);
        goto usage;
    }
    if (!make_dirs(dir) || !write_outputs(dir, &s))
        return 1;
    if (s.layout == AUTOTOOLS)
        printf("wrote %s/%s.c, its tests, configure.ac and Makefile.am; build and test with: "
               "cd %s && autoreconf -fi && ./configure && make check\n", dir, s.name, dir);
    else
        printf("wrote %s/%s.c, its tests and a Makefile; build with: make -C %s; test with: make -C %s check\n",
               dir, s.name, dir, dir);
    return 0;

usage:
    fputs("Try 'toolhost new-plugin --help' for more information.\n", stderr);
    return 2;
}
