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

#endif
