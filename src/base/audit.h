/* SPDX-License-Identifier: MIT */
/*
** base/audit.h: the audit log (--audit-log): one JSON line per tools/call,
** naming who called what and how it ended, never what was passed. Appended
** with one write(2) a line; reopened on SIGHUP for logrotate.
*/
#ifndef TH_BASE_AUDIT_H
#define TH_BASE_AUDIT_H

#include <stdbool.h>

#include "base/util.h"

/* One call's line. ARGS_SHA256: "sha256:HEX" of the canonical arguments
 * (base/canonjson.h), or NULL when they could not be hashed. CODE: the
 * JSON-RPC error code of an "error" outcome, else 0. */
typedef struct th_audit_record {
    const char *principal;
    const char *tool;
    const char *outcome;
    int code;
    long long duration_ms;
    const char *args_sha256;
} th_audit_record;

/* Whether a log is open: the call path skips hashing when not. */
bool th_audit_on(void);

/* Open PATH for appending (created 0600). ERR names the file and errno. */
th_rc th_audit_open(const char *path, th_err *err);

/* Open the same path again (it may have been moved away) and swap the new
 * descriptor in; the old one is synced and closed. On failure the old one
 * stays and a warning says why. */
void th_audit_reopen(void);

/* Append R's line. A failed write is counted and warned about (once when
 * writes start failing, then at most once a minute) and never stops the
 * caller; the first line written after a failure says how many were lost. */
void th_audit_write(const th_audit_record *r);

/* Sync and close the log (at exit). */
void th_audit_close(void);

#endif
