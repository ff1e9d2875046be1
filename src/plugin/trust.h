/* SPDX-License-Identifier: MIT */
/*
** plugin/trust.h: who may have written a plugin file or directory, the rule
** sshd applies as StrictModes: owned by root or the user running toolhost,
** and writable by nobody else (neither its group nor others).
*/
#ifndef TH_TRUST_H
#define TH_TRUST_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/*
** Does ST (of the file or directory PATH) pass the rule for a process running
** as EUID? True when it does. Otherwise WHY (SIZE bytes) gets the broken rule
** and its fix, naming PATH, e.g. "writable by others (mode 0757); fix with:
** chmod go-w /x/plugins". The owner rule is reported before the mode rule.
*/
bool th_trust_check(const struct stat *st, uid_t euid, const char *path, char *why, size_t size);

/*
** The rule for a directory above a plugin directory (or above the registry
** cache), as sshd's StrictModes walks to /: owned by root or EUID, and
** writable by nobody else unless it is sticky (/tmp), where others cannot
** rename or remove what they do not own. Same WHY as th_trust_check.
*/
bool th_trust_check_ancestor(const struct stat *st, uid_t euid, const char *path, char *why, size_t size);

/*
** Open directory PATH (absolute, a realpath: a symbolic link in it is not
** followed but refused) one component at a time from /, never following a
** link, judging every directory above PATH by th_trust_check_ancestor as it
** is opened; PATH itself is left to the caller's th_trust_check. Returns its
** descriptor (O_PATH, O_CLOEXEC: for fstat and openat; reopen "." from it
** to list it), through which what lies below is then opened, so
** the check and the use see the same directory. *TRUSTED is false, with WHY
** naming the first ancestor refused and the rule, when one was. -1 when it
** cannot be opened, WHY saying why.
*/
int th_trust_open_dir(const char *path, uid_t euid, bool *trusted, char *why, size_t size);

#endif
