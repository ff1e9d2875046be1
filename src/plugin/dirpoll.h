/* SPDX-License-Identifier: MIT */
/*
** plugin/dirpoll.h: --watch where there is no inotify: the plugin
** directories' NAME.so files (name, size, change time, inode) compared
** between two looks.
*/
#ifndef TH_DIRPOLL_H
#define TH_DIRPOLL_H

#include <stdbool.h>
#include <stddef.h>

typedef struct th_dirpoll th_dirpoll;

/* Take the first look at DIRS (copied). NULL when out of memory. */
th_dirpoll *th_dirpoll_new(const char *const *dirs, size_t ndirs);

/* Look again: true when a NAME.so file appeared, went, or changed since the
 * last look; WHY (SIZE bytes) then names one ("poll: DIR/NAME.so"). A
 * directory that cannot be read is warned about once and counts as empty. */
bool th_dirpoll_changed(th_dirpoll *p, char *why, size_t size);

void th_dirpoll_free(th_dirpoll *p);

#endif
