/* SPDX-License-Identifier: MIT */
/*
** cli/autostart.h: `toolhost connect --start`: when no daemon answers on
** the socket, start exactly one (however many clients try at once) and
** wait for it to answer.
*/
#ifndef TH_CLI_AUTOSTART_H
#define TH_CLI_AUTOSTART_H

#include <stdbool.h>
#include <stddef.h>

/*
** Make sure a daemon answers on the socket at PATH. When none does and
** START is set, start `toolhost --http unix:PATH` with the ARGC options in
** ARGV, detached from this process (its own session, stdio on /dev/null,
** its log in PATH.log), under an exclusive lock on PATH.lock so that
** concurrent callers start one between them; then wait up to 10 s for it.
** False with ERR (ERRLEN bytes) naming what failed.
*/
bool th_autostart(const char *path, bool start, int argc, char **argv, char *err, size_t errlen);

#endif
