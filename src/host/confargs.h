/* SPDX-License-Identifier: MIT */
/*
** host/confargs.h: --config FILE, read before the command line: the file's
** plugin sections go to the settings store, its [toolhost] section becomes
** options placed before the command line's.
*/
#ifndef TH_HOST_CONFARGS_H
#define TH_HOST_CONFARGS_H

#include "plugin/settings.h"

/*
** Load every --config file in *ARGV into SETTINGS, and put the options of
** their [toolhost] sections (checked against the option table) before the
** command line's, replacing *ARGC and *ARGV. 0, or 2 after a message on
** stderr naming the file and line. The new argv lives until
** th_host_config_free.
*/
int th_host_config_args(int *argc, char ***argv, th_config *settings);
void th_host_config_free(void);

#endif
