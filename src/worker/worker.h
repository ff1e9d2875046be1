/* SPDX-License-Identifier: MIT */
/*
** worker/worker.h: the child side of the process boundary. The host's own
** executable, started with TH_WORKER_ARG, runs one ordered start-up
** sequence, then either scans a list of plugins (reporting each one's
** descriptors) or loads one plugin and serves its calls.
*/
#ifndef TH_WORKER_H
#define TH_WORKER_H

#include <stddef.h>

#include <json-c/json.h>

#include "plugin/registry.h"

/*
** How the child parses a CALL's arguments (TEXT, LEN bytes of JSON): with
** the protocol's own parser, which keeps every literal exactly as the
** client sent it (json-c alone would clamp a huge integer). Returns the
** value (a new reference) or NULL. main.c passes it in, as the protocol
** layer sits above this one.
*/
typedef json_object *(*th_worker_parse_fn)(const char *text, size_t len);

/* The child's main(); never returns to the host's start-up. */
int th_worker_main(int argc, char **argv, th_worker_parse_fn parse_call);

/* The descriptors of tools [BASE, end) of REG as a JSON array (what the
 * scanner reports; the host rebuilds th_tool values from it). */
json_object *th_worker_describe(const th_registry *reg, size_t base);

#endif
