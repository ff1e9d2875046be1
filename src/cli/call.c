/* SPDX-License-Identifier: MIT */
/*
** cli/call.c: `toolhost call TOOL 'JSON'`, one tool call from the shell. The
** call goes through a real server (this executable, over pipes, as a client
** would drive it), so plugins load, isolate and answer exactly as served.
*/
/* asprintf */
#define _GNU_SOURCE
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cli/cli.h"
#include "cli/hostproc.h"

/* Exit statuses: what a script calling a tool can branch on. */
enum { CALL_OK = 0, CALL_TOOL_ERROR = 1, CALL_USAGE = 2 };

/* The synopsis alone is also what a usage error shows, so that a mistake
 * is answered with the command's shape, not only a pointer to --help. */
static const char call_synopsis[] =
    "Usage: toolhost call [--plugin-dir=[BOX=]DIR]... [--plugin=FILE.so]... [--json]\n"
    "                     [--isolation=MODE] [--qualified-names] [--set=NAME.KEY=VALUE]...\n"
    "                     [--set-secret=NAME.KEY=VALUE]... [--config=FILE] TOOL ['JSON']\n";

static const char call_usage[] =
    "Run one call of TOOL with the arguments JSON (an object; default {}) through\n"
    "a toolhost server, without a client, and print the result: text blocks as\n"
    "text, other blocks as JSON; --json prints the whole result. --plugin loads\n"
    "the one file given; without --plugin-dir or --plugin, the plugin directory.\n"
    "BOX= and --qualified-names name toolboxes and tools as the server does\n"
    "(TOOL is then BOX__PLUGIN__NAME; --plugin files are in the toolbox default).\n"
    "Plugin settings work as for toolhost itself (TOOLHOST_NAME_KEY too).\n"
    "Exit status: 0 for a result, 1 for a result with isError, 2 for a usage\n"
    "error, an unknown tool or invalid arguments refused by the protocol.\n";

/* Copy FILE into the private directory DIR under its own name, so that the
 * server's directory rules (NAME.so owns NAME) apply to it alone. */
static bool copy_plugin(const char *file, const char *dir)
{
    const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
    char dest[PATH_MAX];
    if ((size_t)snprintf(dest, sizeof dest, "%s/%s", dir, base) >= sizeof dest)
        return false;
    int in = open(file, O_RDONLY | O_CLOEXEC), out = -1;
    bool ok = in >= 0 && (out = open(dest, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755)) >= 0;
    char buf[65536];
    ssize_t got;
    while (ok && (got = read(in, buf, sizeof buf)) > 0)
        ok = write(out, buf, (size_t)got) == got;
    if (in >= 0)
        close(in);
    if (out >= 0 && close(out) != 0)
        ok = false;
    return ok;
}

/* Remove the private directory and the copies in it. */
static void remove_dir(char *dir, char *const *files, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *base = strrchr(files[i], '/') ? strrchr(files[i], '/') + 1 : files[i];
        char p[PATH_MAX];
        if ((size_t)snprintf(p, sizeof p, "%s/%s", dir, base) < sizeof p)
            unlink(p);
    }
    rmdir(dir);
}

/* Print RESULT as a person reads it; returns the exit status. */
static int print_result(json_object *result, bool as_json)
{
    json_object *v;
    bool is_error = json_object_object_get_ex(result, "isError", &v) && json_object_get_boolean(v);
    if (as_json) {
        printf("%s\n", json_object_to_json_string_ext(result, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                                  JSON_C_TO_STRING_NOSLASHESCAPE));
        return is_error ? CALL_TOOL_ERROR : CALL_OK;
    }
    json_object *content = json_object_object_get(result, "content");
    size_t n = json_object_array_length(content);
    FILE *out = is_error ? stderr : stdout;
    for (size_t i = 0; i < n; i++) {
        json_object *b = json_object_array_get_idx(content, i), *type, *text;
        if (json_object_object_get_ex(b, "type", &type) && strcmp(json_object_get_string(type), "text") == 0 &&
            json_object_object_get_ex(b, "text", &text)) {
            const char *s = json_object_get_string(text);
            size_t len = (size_t)json_object_get_string_len(text);
            fwrite(s, 1, len, out);
            if (len == 0 || s[len - 1] != '\n')
                fputc('\n', out);
        } else {
            fprintf(out, "%s\n", json_object_to_json_string_ext(b, JSON_C_TO_STRING_PLAIN |
                                                                       JSON_C_TO_STRING_NOSLASHESCAPE));
        }
    }
    if (n == 0 && json_object_object_get_ex(result, "structuredContent", &v))
        fprintf(out, "%s\n", json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
    return is_error ? CALL_TOOL_ERROR : CALL_OK;
}

enum { C_PLUGIN = 256, C_JSON, C_ISOLATION, C_INSECURE, C_FOLLOW, C_QUALIFIED, C_SET, C_SET_SECRET, C_CONFIG };

/* --set-secret NAME.key=value for the server as TOOLHOST_NAME_KEY, which is
 * secret too, so the value never shows on the server's command line. */
static bool secret_to_env(const char *arg)
{
    const char *dot = strchr(arg, '.'), *eq = strchr(arg, '=');
    char var[160];
    if (!dot || !eq || eq < dot || (size_t)(eq - arg) + 10 >= sizeof var)
        return false;
    int n = snprintf(var, sizeof var, "TOOLHOST_%.*s_%.*s", (int)(dot - arg), arg, (int)(eq - dot - 1), dot + 1);
    for (int i = 0; i < n; i++)
        var[i] = (char)toupper((unsigned char)var[i]);
    return setenv(var, eq + 1, 1) == 0;
}

int th_cli_call(int argc, char **argv)
{
    static const struct option opts[] = {
        {"plugin-dir", required_argument, NULL, 'd'},
        {"plugin", required_argument, NULL, C_PLUGIN},
        {"json", no_argument, NULL, C_JSON},
        {"isolation", required_argument, NULL, C_ISOLATION},
        {"allow-insecure-plugins", no_argument, NULL, C_INSECURE},
        {"follow-symlinks", no_argument, NULL, C_FOLLOW},
        {"qualified-names", no_argument, NULL, C_QUALIFIED},
        {"set", required_argument, NULL, C_SET},
        {"set-secret", required_argument, NULL, C_SET_SECRET},
        {"config", required_argument, NULL, C_CONFIG},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    /* The server's argv: the fixed options, then two per -d; owned strings
     * are only the optional ones built here. */
    char **sargv = calloc((size_t)argc * 2 + 8, sizeof *sargv);
    char **files = calloc((size_t)argc, sizeof *files);
    size_t ns = 0, nfiles = 0;
    bool as_json = false, have_dirs = false;
    char tmpdir[] = "/tmp/toolhost-call-XXXXXX";
    bool made_dir = false;
    json_object *args = NULL, *resp = NULL;
    th_hostproc host = {.pid = -1, .to = -1, .from = -1};
    int status = CALL_USAGE, c;

    if (!sargv || !files) {
        fprintf(stderr, "toolhost call: out of memory\n");
        goto cleanup;
    }
    sargv[ns++] = "toolhost";
    sargv[ns++] = "--log-level=warning";
    optind = 1;
    while ((c = getopt_long(argc, argv, "+d:h", opts, NULL)) != -1) {
        switch (c) {
        case 'd':
            sargv[ns++] = "--plugin-dir";
            sargv[ns++] = optarg;
            have_dirs = true;
            break;
        case C_PLUGIN: files[nfiles++] = optarg; break;
        case C_JSON: as_json = true; break;
        case C_ISOLATION:
            sargv[ns++] = "--isolation";
            sargv[ns++] = optarg;
            break;
        case C_INSECURE: sargv[ns++] = "--allow-insecure-plugins"; break;
        case C_FOLLOW: sargv[ns++] = "--follow-symlinks"; break;
        case C_QUALIFIED: sargv[ns++] = "--qualified-names"; break;
        case C_SET:
            sargv[ns++] = "--set";
            sargv[ns++] = optarg;
            break;
        case C_CONFIG:
            sargv[ns++] = "--config";
            sargv[ns++] = optarg;
            break;
        case C_SET_SECRET:
            if (!secret_to_env(optarg)) {
                fprintf(stderr, "toolhost call: --set-secret: '%.80s' is not NAME.key=value\n", optarg);
                goto usage;
            }
            break;
        case 'h':
            fputs(call_synopsis, stdout);
            fputs(call_usage, stdout);
            status = CALL_OK;
            goto cleanup;
        default: goto usage;
        }
    }
    if (optind >= argc) {
        fputs("toolhost call: no tool named: give the TOOL to call, then optionally its arguments as 'JSON'\n",
              stderr);
        goto usage;
    }
    if (argc - optind > 2) {
        fprintf(stderr, "toolhost call: unexpected '%.80s' after the arguments (quote the JSON as one word)\n",
                argv[optind + 2]);
        goto usage;
    }
    const char *tool = argv[optind];
    args = json_tokener_parse(optind + 1 < argc ? argv[optind + 1] : "{}");
    if (!args || !json_object_is_type(args, json_type_object)) {
        fprintf(stderr, "toolhost call: the arguments must be a JSON object, like '{\"text\": \"hi\"}'\n");
        goto usage;
    }
    if (nfiles) {
        if (!mkdtemp(tmpdir)) {
            fprintf(stderr, "toolhost call: cannot make a directory for --plugin: %s\n", strerror(errno));
            goto cleanup;
        }
        made_dir = true;
        for (size_t i = 0; i < nfiles; i++)
            if (!copy_plugin(files[i], tmpdir)) {
                fprintf(stderr, "toolhost call: --plugin %s: cannot read it: %s\n", files[i], strerror(errno));
                goto cleanup;
            }
        sargv[ns++] = "--plugin-dir";
        sargv[ns++] = tmpdir;
    } else if (!have_dirs) {
        sargv[ns++] = "--plugin-dir";
        sargv[ns++] = (char *)TH_PLUGINDIR;
    }
    sargv[ns] = NULL;

    if (!th_hostproc_start(&host, sargv)) {
        fprintf(stderr, "toolhost call: cannot start the server: %s\n", strerror(errno));
        goto cleanup;
    }
    json_object *params = json_object_new_object();
    json_object_object_add(params, "name", json_object_new_string(tool));
    json_object_object_add(params, "arguments", json_object_get(args));
    char *line = NULL;
    if (asprintf(&line,
                 "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                 "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"toolhost call\",\"version\":\"%s\"}}}\n"
                 "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
                 "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":%s}",
                 PACKAGE_VERSION, json_object_to_json_string_ext(params, JSON_C_TO_STRING_PLAIN)) < 0)
        line = NULL;
    json_object_put(params);
    /* All three at once: a server that fails to start answers none. */
    if (line && th_hostproc_send(&host, line))
        resp = th_hostproc_await(&host, 2);
    free(line);
    json_object *v;
    if (!resp) {
        fprintf(stderr, "toolhost call: the server ended without answering (see above)\n");
    } else if (json_object_object_get_ex(resp, "error", &v)) {
        fprintf(stderr, "toolhost call: %s\n", json_object_get_string(json_object_object_get(v, "message")));
    } else {
        status = print_result(json_object_object_get(resp, "result"), as_json);
    }
    goto cleanup;

usage:
    fputs(call_synopsis, stderr);
    fputs("Try 'toolhost call --help' for more information.\n", stderr);
    status = CALL_USAGE;
cleanup:
    th_hostproc_stop(&host, false);
    if (made_dir)
        remove_dir(tmpdir, files, nfiles);
    json_object_put(resp);
    json_object_put(args);
    free(files);
    free(sargv);
    return status;
}
