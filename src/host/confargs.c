/* SPDX-License-Identifier: MIT */
/*
** host/confargs.c: --config FILE for the toolhost command: the file's plugin
** sections go to the settings store, and its [toolhost] section becomes
** options placed before the command line's own, so that the command line
** wins (a repeatable option such as --plugin-dir adds to the file's). Which
** keys the section may hold is the option table's to say (host/options.c).
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

int th_host_config_args(int *argc, char ***argv, th_config *settings, th_host_config_key_fn known)
{
    char **args = NULL;
    size_t nargs = 0;
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
        th_err err;
        size_t before = nargs;
        if (th_config_load_file(settings, file, &args, &nargs, &err) != TH_OK) {
            fprintf(stderr, "toolhost: %s\n", err.msg);
            goto fail;
        }
        for (size_t k = before; k < nargs; k++) {
            const char *why = NULL;
            char key[128];
            snprintf(key, sizeof key, "%s", args[k] + 2);
            if (!known(&args[k], &why)) {
                fprintf(stderr, "toolhost: --config %s: [%s] option '%s' %s\n", file, TH_CONFIG_SERVER_SECTION,
                        key, why);
                goto fail;
            }
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

void th_host_config_free(void)
{
    for (size_t k = 0; k < nowned; k++)
        free(owned[k]);
    free(owned);
    free(expanded);
    owned = expanded = NULL;
    nowned = 0;
}
