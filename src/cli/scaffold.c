/* SPDX-License-Identifier: MIT */
/*
** cli/scaffold.c: `toolhost new-plugin NAME [--typed]`, a commented plugin
** skeleton NAME.c and a Makefile that builds it against the installed
** header and installs it into pkg-config's plugindir.
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
#include "plugin/registry.h"

/* The skeletons; every @NAME@ becomes the plugin's name. */
static const char handler_source[] =
    "/*\n"
    "** @NAME@.c: a toolhost plugin serving the tool '@NAME@'. Build with `make`,\n"
    "** try with `toolhost call --plugin ./@NAME@.so @NAME@ '{\"text\": \"hi\"}'`,\n"
    "** check with `toolhost inspect ./@NAME@.so`, install with `make install`.\n"
    "*/\n"
    "#include <stdio.h>\n"
    "#include <toolhost/plugin.h>\n"
    "\n"
    "/* The prefix of every answer: a setting, read once at registration (see\n"
    "** TH_REGISTER below) and handed to the handler as its user_data. */\n"
    "static char prefix[128] = \"@NAME@: \";\n"
    "\n"
    "/* Runs for every call. ARGS has been validated against input_schema below,\n"
    "** so \"text\" is present and a string. Build the result through CALL. */\n"
    "static th_rc @NAME@(th_call *call, json_object *args, void *user_data)\n"
    "{\n"
    "    const char *pre = user_data;\n"
    "    json_object *text;\n"
    "    if (!json_object_object_get_ex(args, \"text\", &text))\n"
    "        return th_call_error(call, \"argument 'text' is required\");\n"
    "    /* A failure the model can correct: th_call_error(call, \"...\") and\n"
    "    ** return TH_OK. Never write to stdout: it carries the protocol. */\n"
    "    return th_call_textf(call, \"%s%s\", pre, json_object_get_string(text));\n"
    "}\n"
    "\n"
    "/* The descriptor: static, as the host reads it after registration. The\n"
    "** name must be the file's NAME; the description (10-500 characters) is\n"
    "** what the model reads to decide when to call the tool. */\n"
    "static const th_tool @NAME@_tool = {\n"
    "    TH_TOOL_INIT,\n"
    "    .name = \"@NAME@\",\n"
    "    .description = \"" TH_PLACEHOLDER_HEAD "@NAME@ does" TH_PLACEHOLDER_TAIL "\",\n"
    "    .input_schema = \"{\\\"type\\\":\\\"object\\\",\"\n"
    "                    \"\\\"properties\\\":{\\\"text\\\":{\\\"type\\\":\\\"string\\\",\\\"description\\\":\\\"Input text\\\"}},\"\n"
    "                    \"\\\"required\\\":[\\\"text\\\"],\\\"additionalProperties\\\":false}\",\n"
    "    .handler = @NAME@,\n"
    "    .user_data = prefix,\n"
    "};\n"
    "\n"
    "/* Called once when the host loads @NAME@.so. SERVER is valid only during\n"
    "** this call: use it to log (th_server_log) or add more tools. */\n"
    "TH_REGISTER(@NAME@)\n"
    "{\n"
    "    th_server_log(server, TH_LOG_DEBUG, \"registering @NAME@\");\n"
    "    /* Settings come from `toolhost --set @NAME@.prefix=...`, from the\n"
    "    ** environment (TOOLHOST_<NAME>_PREFIX, upper-case), or from the\n"
    "    ** [@NAME@] section of a --config file. The string is valid only\n"
    "    ** during this call: copy it. For an API key, have the operator mark\n"
    "    ** it secret (--set-secret, \"secret key = ...\", or the environment)\n"
    "    ** and never log it or put it in a description. */\n"
    "    const char *p = th_server_config(server, \"prefix\");\n"
    "    if (p)\n"
    "        snprintf(prefix, sizeof prefix, \"%s\", p);\n"
    "    return &@NAME@_tool;\n"
    "}\n";

static const char typed_source[] =
    "/*\n"
    "** @NAME@.c: a toolhost plugin serving the typed tool '@NAME@': an ordinary C\n"
    "** function the host calls with checked, converted arguments. Build with\n"
    "** `make`, try with `toolhost call --plugin ./@NAME@.so @NAME@ '{\"a\": 2, \"b\": 3}'`,\n"
    "** check with `toolhost inspect ./@NAME@.so`, install with `make install`.\n"
    "*/\n"
    "#include <toolhost/plugin.h>\n"
    "\n"
    "/* The tool itself: plain C, no JSON. The host generates the input schema\n"
    "** from the parameters below and returns the value as text and as\n"
    "** structuredContent {\"result\": ...}. */\n"
    "static double @NAME@(double a, double b)\n"
    "{\n"
    "    return a + b;\n"
    "}\n"
    "\n"
    "/* One entry per parameter, in the function's order. */\n"
    "static const th_param @NAME@_params[] = {\n"
    "    {.name = \"a\", .type = TH_T_DOUBLE, .description = \"First operand\"},\n"
    "    {.name = \"b\", .type = TH_T_DOUBLE, .description = \"Second operand\"},\n"
    "};\n"
    "\n"
    "static const th_function @NAME@_fn = {\n"
    "    .fn = (void (*)(void))@NAME@,\n"
    "    .result = TH_T_DOUBLE,\n"
    "    .n_params = sizeof @NAME@_params / sizeof @NAME@_params[0],\n"
    "    .params = @NAME@_params,\n"
    "};\n"
    "\n"
    "/* The descriptor: static, as the host reads it after registration. The\n"
    "** name must be the file's NAME; the description (10-500 characters) is\n"
    "** what the model reads to decide when to call the tool. */\n"
    "static const th_tool @NAME@_tool = {\n"
    "    TH_TOOL_INIT,\n"
    "    .name = \"@NAME@\",\n"
    "    .description = \"" TH_PLACEHOLDER_HEAD "@NAME@ computes" TH_PLACEHOLDER_TAIL "\",\n"
    "    .function = &@NAME@_fn,\n"
    "};\n"
    "\n"
    "/* Called once when the host loads @NAME@.so. SERVER is valid only during\n"
    "** this call: use it to log (th_server_log) or add more tools. */\n"
    "TH_REGISTER(@NAME@)\n"
    "{\n"
    "    th_server_log(server, TH_LOG_DEBUG, \"registering @NAME@\");\n"
    "    return &@NAME@_tool;\n"
    "}\n";

static const char makefile[] =
    "# Makefile for the toolhost plugin @NAME@.so (written by toolhost new-plugin).\n"
    "# `make` builds it against the installed <toolhost/plugin.h> (pkg-config\n"
    "# module toolhost); `make install` copies it into toolhost's plugin\n"
    "# directory (DESTDIR is honoured). From a toolhost source tree without\n"
    "# installing: make TOOLHOST_CFLAGS=\"-I/path/to/toolhost/include $(pkg-config --cflags json-c)\"\n"
    "PKG_CONFIG ?= pkg-config\n"
    "TOOLHOST_CFLAGS ?= $(shell $(PKG_CONFIG) --cflags toolhost)\n"
    "PLUGINDIR ?= $(shell $(PKG_CONFIG) --variable=plugindir toolhost)\n"
    "CFLAGS ?= -O2 -g\n"
    "WARNINGS = -Wall -Wextra -Werror\n"
    "\n"
    "@NAME@.so: @NAME@.c\n"
    "\t$(CC) -std=c11 $(WARNINGS) $(CFLAGS) -fPIC -shared $(TOOLHOST_CFLAGS) -o $@ $< $(LDFLAGS)\n"
    "\n"
    "install: @NAME@.so\n"
    "\tinstall -d \"$(DESTDIR)$(PLUGINDIR)\"\n"
    "\tinstall -m 755 @NAME@.so \"$(DESTDIR)$(PLUGINDIR)/@NAME@.so\"\n"
    "\n"
    "uninstall:\n"
    "\trm -f \"$(DESTDIR)$(PLUGINDIR)/@NAME@.so\"\n"
    "\n"
    "clean:\n"
    "\trm -f @NAME@.so\n"
    "\n"
    ".PHONY: install uninstall clean\n";

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

/* Write TEMPLATE with NAME substituted to PATH, refusing to overwrite. */
static bool write_file(const char *path, const char *template, const char *name)
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
    for (const char *p = template; *p;) {
        const char *at = strstr(p, "@NAME@");
        size_t len = at ? (size_t)(at - p) : strlen(p);
        fwrite(p, 1, len, f);
        if (!at)
            break;
        fputs(name, f);
        p = at + 6;
    }
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
    "Usage: toolhost new-plugin [--typed] [--dir=DIR] NAME\n"
    "Write a commented plugin skeleton DIR/NAME.c (default DIR: .; created,\n"
    "with its parents, when missing) and a Makefile that builds NAME.so\n"
    "with pkg-config's toolhost module and installs it into its plugindir.\n"
    "--typed: a typed C function instead of a JSON handler. NAME is the\n"
    "tool's name: lowercase letters, digits and underscores, starting with\n"
    "a letter. Existing files are never replaced.\n";

int th_cli_new_plugin(int argc, char **argv)
{
    static const struct option opts[] = {
        {"typed", no_argument, NULL, 't'},
        {"dir", required_argument, NULL, 'C'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    bool typed = false;
    const char *dir = ".";
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "C:h", opts, NULL)) != -1) {
        switch (c) {
        case 't': typed = true; break;
        case 'C': dir = optarg; break;
        case 'h': fputs(scaffold_usage, stdout); return 0;
        default: goto usage;
        }
    }
    if (optind + 1 != argc)
        goto usage;
    const char *name = argv[optind];
    if (!valid_name(name)) {
        fprintf(stderr, "toolhost new-plugin: '%s' is not a tool name (lowercase letters, digits, underscores; "
                        "a letter first; at most 50)\n", name);
        goto usage;
    }
    if (!make_dirs(dir))
        return 1;
    char src[4096], mk[4096];
    snprintf(src, sizeof src, "%s/%s.c", dir, name);
    snprintf(mk, sizeof mk, "%s/Makefile", dir);
    if (access(src, F_OK) == 0 || access(mk, F_OK) == 0) {
        fprintf(stderr, "toolhost new-plugin: %s already exists; nothing written\n", access(src, F_OK) == 0 ? src : mk);
        return 1;
    }
    if (!write_file(src, typed ? typed_source : handler_source, name) || !write_file(mk, makefile, name))
        return 1;
    printf("wrote %s and %s; build with: make -C %s\n", src, mk, dir);
    return 0;

usage:
    fputs("Try 'toolhost new-plugin --help' for more information.\n", stderr);
    return 2;
}
