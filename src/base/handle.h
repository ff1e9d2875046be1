/* SPDX-License-Identifier: MIT */
/*
** base/handle.h: handles that stay safe to use after what they name has
** ended. A handle packs a slot index and a generation into a pointer-sized
** value; it resolves to its object only while that object is open, so a
** plugin that keeps a th_call or th_server past its end is refused instead of
** reaching freed memory.
*/
#ifndef TH_HANDLE_H
#define TH_HANDLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A handle: odd, so it never equals a (aligned) host pointer or NULL. */
typedef uintptr_t th_handle;

/* What a handle names; a handle of one kind never resolves as another. */
enum { TH_HANDLE_CALL = 1, TH_HANDLE_SERVER = 2 };

/* Is P a handle rather than a host pointer? */
static inline bool th_handle_is(const void *p)
{
    return ((uintptr_t)p & 1u) != 0;
}

/*
** Open a handle on OBJ of KIND. NAME (copied, cut to a few dozen bytes)
** names its owner in the message when it is misused. Returns 0 when out of
** memory or slots. Takes a global lock: once per object, not per use.
*/
th_handle th_handle_open(void *obj, int kind, const char *name);

/*
** The object H names, if H is open and of KIND; the caller is then "inside"
** and must call th_handle_leave(H) when done with the object. NULL for an
** ended, foreign or made-up handle. Lock-free: one atomic compare-and-swap.
** Any thread.
*/
void *th_handle_enter(th_handle h, int kind);
void th_handle_leave(th_handle h);

/*
** End H: from now on th_handle_enter(H) fails. Returns once no thread is
** inside, so the caller may free the object. Must not be called from inside.
*/
void th_handle_close(th_handle h);

/*
** For a handle th_handle_enter refused: true the first time it is asked
** about that ended handle (so a misuse is logged once), with the name it was
** opened with in NAME (SIZE bytes). A handle too old to remember gives
** "(ended long ago)" and true once per process.
*/
bool th_handle_first_misuse(th_handle h, char *name, size_t size);

#endif
