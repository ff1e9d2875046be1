/* SPDX-License-Identifier: MIT */
/*
** host/confargs.h: --config FILE, read before the command line: the file's
** plugin sections go to the settings store, its [toolhost] section becomes
** options placed before the command line's; read again on SIGHUP.
*/
#ifndef TH_HOST_CONFARGS_H
#define TH_HOST_CONFARGS_H

#include <stdbool.h>

#include "plugin/settings.h"

/*
** Load every --config file in *ARGV into SETTINGS, and put the options of
** their [toolhost] sections (each checked by KNOWN) before the
** command line's, replacing *ARGC and *ARGV. 0, or 2 after a message on
** stderr naming the file and line. The new argv lives until
** th_host_config_free.
*/
/* Whether *ARG ("--KEY" or "--KEY=VALUE") is a [toolhost] key the option
** table allows, with or without a value as it takes; if so, *ARG may be
** replaced (malloc'd) by the option it stands for; if not, *WHY says why.
** The option table's, passed down: this file stays below it. */
typedef bool (*th_host_config_key_fn)(char **arg, const char **why);
int th_host_config_args(int *argc, char ***argv, th_config *settings, th_host_config_key_fn known);
/*
** Read the --config files th_host_config_args found again: the options of
** their [toolhost] sections (each checked by KNOWN) into *ARGS (*NARGS of
** them, malloc'd, the caller frees each and the array); their plugin
** sections are not applied. False with ERR naming the file and line.
*/
bool th_host_config_reread(th_host_config_key_fn known, char ***args, size_t *nargs, char *err, size_t errlen);
/* How many --config files were given. */
size_t th_host_config_files(void);
void th_host_config_free(void);

#endif
