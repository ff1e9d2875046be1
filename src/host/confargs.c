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
#include "host/options.h"

/* The expanded argv and the strings it owns; static, so they stay
 * reachable (and valid for getopt's optarg) until th_cli_config_free. */
static char **expanded;
static char **owned;
static size_t nowned;

/* Whether ARG ("--KEY" or "--KEY=VALUE", from th_config_load_file) is a
 * [toolhost] key the table allows, with or without a value as it takes;
 * if so, ARG becomes the option it stands for. */
static bool known(char **arg, const char **why)
{
    char key[128];
    const char *eq = strchr(*arg + 2, '=');
    snprintf(key, sizeof key, "%.*s", (int)(eq ? (size_t)(eq - *arg - 2) : strlen(*arg + 2)), *arg + 2);
    const th_option *t = th_host_option_by_key(key);
    if (!t && (t = th_host_option_find(key)) != NULL) {
        /* Options that name files or secrets belong on the command line
         * (or, for secrets, in "secret key = value"). */
        *why = "cannot be given in a configuration file";
        return false;
    }
    if (!t)
        *why = "is not a toolhost option";
    else if (t->arg && !eq)
        *why = "needs a value (name = value)";
    else if (!t->arg && eq)
        *why = "takes no value (give the name alone)";
    else if (strcmp(key, t->name) == 0)
        return true;
    else {
        size_t len = strlen(t->name) + (eq ? strlen(eq) : 0) + 3;
        char *opt = malloc(len);
        if (!opt) {
            *why = "cannot be read: out of memory";
            return false;
        }
        snprintf(opt, len, "--%s%s", t->name, eq ? eq : "");
        free(*arg);
        *arg = opt;
        return true;
    }
    return false;
}

int th_host_config_args(int *argc, char ***argv, th_config *settings)
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
