/* SPDX-License-Identifier: MIT */
/*
** call/crashnote.h: which tools are running, kept lock-free so that a fatal
** signal handler (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) can name them on
** stderr before the process dies with the signal.
*/
#ifndef TH_CRASHNOTE_H
#define TH_CRASHNOTE_H

#include <stdbool.h>

/*
** Install the fatal-signal handlers, on an alternate stack so a stack
** overflow is reported too. Safe to call again (after plugins loaded).
** Returns false with errno set on failure.
*/
bool th_crashnote_init(void);

/*
** Around a handler call: note TOOL (which must outlive the call) as running
** in this thread; returns a slot for th_crashnote_end (-1 if the table is
** full: the call runs, only unnamed). Also gives the calling thread an
** alternate signal stack the first time.
*/
int th_crashnote_begin(const char *tool);
void th_crashnote_end(int slot);

#endif
