/* SPDX-License-Identifier: MIT */
/*
** worker/isolate.h: keeping a worker away from the host and from the other
** workers (not dumpable, no capabilities, a seccomp filter), and the host's
** half of it: the host is not dumpable either, and says once what is missing.
*/
#ifndef TH_ISOLATE_H
#define TH_ISOLATE_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "base/util.h"

/* The hello's "sandbox" member: mode "off", "declared" (the default) or
 * "strict", and whether a part the kernel cannot enforce is fatal. */
typedef enum th_isolate_mode { TH_ISOLATE_OFF, TH_ISOLATE_DECLARED, TH_ISOLATE_STRICT } th_isolate_mode;

typedef struct th_isolate_policy {
    th_isolate_mode mode;
    bool require; /* a part that cannot be enforced fails the worker's start */
    bool report;  /* this child says what is not enforced (the host's first) */
} th_isolate_policy;

/* Read HELLO's "sandbox" {"mode", "require"} and "isolation_report" into P;
 * a missing member is mode "declared", require false. False with ERR naming
 * the field on a value of the wrong type or an unknown mode. */
bool th_isolate_policy_read(json_object *hello, th_isolate_policy *p, th_err *err);

/*
** In the child, before plugin code and before any thread: make the process
** not dumpable; unless the mode is "off", drop every capability and load
** the seccomp filter (ptrace, other processes' memory, signals to anything
** but itself, namespaces, mounts, modules, kexec, bpf, keys, perf, ...,
** answered EPERM, each refusal logged by worker/denials.c). MISSING gets
** the parts not enforced, each with its reason, comma-separated ("" when
** all hold); the others still apply.
** TH_OK unless P->require and a part is missing; ERR then names it.
*/
th_rc th_isolate_apply(const th_isolate_policy *p, char *missing, size_t size, th_err *err);

/*
** In the host, before its first child: make it not dumpable, so a worker
** running as its user (or as root without capabilities) cannot open its
** /proc/PID/fd, environ or mem. False with errno where that fails.
*/
bool th_isolate_host(void);

/* In the host, for each child's hello: the first child of the process is
** asked to report the parts it could not enforce, the rest stay quiet
** (every child runs on the same kernel). */
void th_isolate_hello(json_object *hello);

#endif
