/* SPDX-License-Identifier: MIT */
/*
** fuzz/fuzz_config.c: a libFuzzer harness for the settings parsers of
** plugin/settings.c: a --config file (INI-like), a --set argument, and the
** JSON form settings cross the worker IPC in, which must round-trip.
*/

/*
** The input is a configuration file's text, loaded from a memfd with
** th_config_load_file as `toolhost --config` loads it. Then:
**   - every [toolhost] option it yields is "--name" or "--name=value";
**   - a refusal names the file (ERR is not empty);
**   - th_config_to_json / th_config_from_json keep every setting, its value
**     and its secrecy, and the cache digest does not change through them;
**   - each line is also given to th_config_set_arg as a --set argument.
** A crash, a sanitizer report or an abort() below is a bug.
*/
#define _GNU_SOURCE
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/log.h"
#include "plugin/settings.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int memfd = -1;
static char memfd_path[64];

static void quiet(th_log_level level, const char *line, void *ctx)
{
    (void)level;
    (void)line;
    (void)ctx;
}

static _Noreturn void die(const char *what, const uint8_t *data, size_t size)
{
    fprintf(stderr, "fuzz_config: %s: %.*s\n", what, (int)(size > 2000 ? 2000 : size), (const char *)data);
    abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    th_log_set_sink(quiet, NULL);
    memfd = memfd_create("fuzz_config", MFD_CLOEXEC);
    if (memfd < 0) {
        fprintf(stderr, "fuzz_config: cannot make a memfd\n");
        exit(1);
    }
    snprintf(memfd_path, sizeof memfd_path, "/proc/self/fd/%d", memfd);
    return 0;
}

/* Every plugin of CFG's JSON form has the same settings in COPY's. */
static void same_settings(const th_config *cfg, const th_config *copy, json_object *all, const uint8_t *data,
                          size_t size)
{
    json_object_object_foreach(all, plugin, keys)
    {
        bool unc1 = false, unc2 = false;
        if (th_config_digest(cfg, plugin, &unc1) != th_config_digest(copy, plugin, &unc2) || unc1 != unc2)
            die("the settings digest changed through the IPC form", data, size);
        json_object_object_foreach(keys, key, v)
        {
            (void)v;
            bool s1 = false, s2 = false;
            const char *a = th_config_get(cfg, plugin, key, &s1), *b = th_config_get(copy, plugin, key, &s2);
            if (!a || !b || strcmp(a, b) != 0 || s1 != s2)
                die("a setting was lost or changed through the IPC form", data, size);
        }
        json_object_put(th_config_describe(cfg, plugin));
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    th_config *cfg = th_config_new();
    if (!cfg)
        return 0;
    if (ftruncate(memfd, 0) != 0 || pwrite(memfd, data, size, 0) != (ssize_t)size)
        abort();
    char **args = NULL;
    size_t nargs = 0;
    th_err err = {0};
    th_rc rc = th_config_load_file(cfg, memfd_path, &args, &nargs, &err);
    if (rc != TH_OK && !strstr(err.msg, memfd_path) && rc != TH_ERR_NOMEM)
        die("a refusal that does not name the file", data, size);
    for (size_t i = 0; i < nargs; i++) {
        if (strncmp(args[i], "--", 2) != 0)
            die("a [toolhost] option that is not --name[=value]", data, size);
        free(args[i]);
    }
    free(args);

    /* Each line as a --set argument, into the same store. */
    const char *p = (const char *)data, *end = p + size;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = (size_t)((nl ? nl : end) - p);
        char *arg = strndup(p, len);
        if (!arg)
            break;
        th_err e = {0};
        if (th_config_set_arg(cfg, arg, (len & 1) != 0, &e) != TH_OK && !e.msg[0])
            die("a --set refusal without a message", data, size);
        free(arg);
        p += len + (nl != NULL);
    }

    json_object *all = th_config_to_json(cfg, NULL);
    if (all) {
        th_config *copy = th_config_from_json(all);
        if (!copy)
            die("th_config_from_json refused what th_config_to_json made", data, size);
        same_settings(cfg, copy, all, data, size);
        th_config_free(copy);
        json_object_put(all);
    }
    th_config_free(cfg);
    return 0;
}
