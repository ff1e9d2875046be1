/*
** worker/worker.h: the child side of the process boundary. The host's own
** executable, started with TH_WORKER_ARG, runs one ordered start-up
** sequence, then either scans a list of plugins (reporting each one's
** descriptors) or loads one plugin and serves its calls.
*/
#ifndef TH_WORKER_H
#define TH_WORKER_H

/* The child's main(); never returns to the host's start-up. */
int th_worker_main(int argc, char **argv);

/* The descriptors of tools [BASE, end) of REG as a JSON array (what the
 * scanner reports; the host rebuilds th_tool values from it). */
#include <json-c/json.h>
#include "plugin/registry.h"
json_object *th_worker_describe(const th_registry *reg, size_t base);

#endif
