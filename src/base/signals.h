/* SPDX-License-Identifier: MIT */
/*
** base/signals.h: the host's signal dispositions. Stop signals (SIGTERM, SIGINT)
** become a readable descriptor while serving and end the process while
** plugins load (SIGHUP too; while serving it is a rescan request); SIGPIPE is harmless; nothing depends on thread masks.
*/
#ifndef TH_SIGNALS_H
#define TH_SIGNALS_H

#include <stdbool.h>

/*
** Install the handlers (loading phase: a stop signal exits with status 1,
** naming the plugin being loaded). Returns the read end of the stop pipe,
** or -1 with errno set. Call once, before any plugin code runs.
*/
int th_signals_init(void);

/* The plugin file being loaded, for the loading-phase message; NULL when
 * none (then the handlers are re-installed, in case the plugin changed
 * them). PATH must stay valid until the next call. */
void th_signals_loading(const char *path);

/*
** Loading is over: re-install every handler (a plugin may have changed a
** disposition or blocked a signal in this thread) and from now on deliver
** stop signals to the stop pipe. Returns false with errno set on failure.
*/
bool th_signals_serve(void);

/*
** Only the SIGPIPE handler of th_signals_init, for a worker process: a
** write to a reader that is gone fails with EPIPE and ends nothing.
** False with errno set on failure.
*/
bool th_signals_catch_sigpipe(void);

/* The read end of the SIGHUP pipe: while serving, SIGHUP asks for a
 * rescan of the plugin directories (plugin/reload.h) instead of a stop. */
int th_signals_hup_fd(void);

/* Write S to stderr with write(2) alone, retrying short writes: safe in a
 * signal handler, where stdio and th_log are not. */
void th_signal_safe_put(const char *s);

#endif
