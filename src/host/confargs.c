/* SPDX-License-Identifier: MIT */
/*
** host/confargs.c: --config FILE for the toolhost command: the file's plugin
** sections go to the settings store, and its [toolhost] section becomes
** options placed before the command line's own, so that the command line
** wins (a repeatable option such as --plugin-dir adds to the file's). Which
** keys the section may hold is the option table's to say (host/options.c).
** The files are read again on SIGHUP, for the options a reload applies.
*/
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/confargs.h"

/* The expanded argv and the strings it owns; static, so they stay
 * reachable (and valid for getopt's optarg) until th_cli_config_free. */
static char **expanded;
static char **owned;
static size_t nowned;
/* The --config files, into the command line, in order. */
static const char **files;
static size_t nfiles;

/* The [toolhost] options of FILE appended to *ARGS, each checked by KNOWN;
 * false after a message in ERR naming the file. */
static bool read_file(const char *file, th_config *settings, th_host_config_key_fn known, char ***args,
                      size_t *nargs, char *err, size_t errlen)
{
    th_err e;
    size_t before = *nargs;
    if (th_config_load_file(settings, file, args, nargs, &e) != TH_OK) {
        snprintf(err, errlen, "%s", e.msg);
        return false;
    }
    for (size_t k = before; k < *nargs; k++) {
        const char *why = NULL;
        char key[128];
        snprintf(key, sizeof key, "%s", (*args)[k] + 2);
        if (!known(&(*args)[k], &why)) {
            snprintf(err, errlen, "--config %s: [%s] option '%s' %s", file, TH_CONFIG_SERVER_SECTION, key, why);
            return false;
        }
    }
    return true;
}

int th_host_config_args(int *argc, char ***argv, th_config *settings, th_host_config_key_fn known)
{
    char **args = NULL;
    size_t nargs = 0;
    char err[1024];
    free(files);
    nfiles = 0;
    if (!(files = calloc((size_t)*argc, sizeof *files))) {
        fprintf(stderr, "toolhost: out of memory\n");
        return 2;
    }
    for (int i = 1; i < *argc; i++) {
        const char *a = (*argv)[i], *file = NULL;
        if (strcmp(a, "--") == 0)
            break;
        if (strncmp(a, "--config=", 9) == 0)
            file = a + 9;
        else if (strcmp(a, "--config") == 0 && i + 1 < *argc)
            file = (*argv)[++i];
        if (!file)
            continue;
        files[nfiles++] = file;
        if (!read_file(file, settings, known, &args, &nargs, err, sizeof err)) {
            fprintf(stderr, "toolhost: %s\n", err);
            goto fail;
        }
    }
    if (nargs == 0) {
        free(args);
        return 0;
    }
    char **v = calloc((size_t)*argc + nargs + 1, sizeof *v);
    if (!v) {
        fprintf(stderr, "toolhost: out of memory\n");
        goto fail;
    }
    v[0] = (*argv)[0];
    memcpy(v + 1, args, nargs * sizeof *v);
    memcpy(v + 1 + nargs, *argv + 1, (size_t)(*argc - 1) * sizeof *v);
    expanded = v;
    owned = args;
    nowned = nargs;
    *argc += (int)nargs;
    *argv = v;
    return 0;

fail:
    for (size_t k = 0; k < nargs; k++)
        free(args[k]);
    free(args);
    return 2;
}

bool th_host_config_reread(th_host_config_key_fn known, char ***args, size_t *nargs, char *err, size_t errlen)
{
    /* Plugin settings are read at start-up only: a scratch store takes them. */
    th_config *scratch = th_config_new();
    bool ok = scratch != NULL;
    *args = NULL;
    *nargs = 0;
    if (!ok)
        snprintf(err, errlen, "out of memory");
    for (size_t i = 0; ok && i < nfiles; i++)
        ok = read_file(files[i], scratch, known, args, nargs, err, errlen);
    th_config_free(scratch);
    if (!ok) {
        for (size_t k = 0; k < *nargs; k++)
            free((*args)[k]);
        free(*args);
        *args = NULL;
        *nargs = 0;
    }
    return ok;
}

size_t th_host_config_files(void)
{
    return nfiles;
}

void th_host_config_free(void)
{
    for (size_t k = 0; k < nowned; k++)
        free(owned[k]);
    free(owned);
    free(expanded);
    free(files);
    owned = expanded = NULL;
    files = NULL;
    nowned = nfiles = 0;
}
