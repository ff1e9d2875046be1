/* SPDX-License-Identifier: MIT */
/*
** transport/observe.h: the operator's endpoints, /metrics, /healthz and
** /readyz, answered on the HTTP transport's listener or on one of their own
** (--metrics ADDR), which a host serving stdio needs.
*/
#ifndef TH_TRANSPORT_OBSERVE_H
#define TH_TRANSPORT_OBSERVE_H

#include <stdbool.h>
#include <stddef.h>

#include "transport/mhd.h"

/* Is URL one of the endpoints? /metrics only when METRICS. */
bool th_observe_path(const char *url, bool metrics);

/* Answer a GET of URL (one th_observe_path accepted) on C. */
enum MHD_Result th_observe_answer(struct MHD_Connection *c, const char *url);

typedef struct th_observe th_observe;

/*
** Serve the endpoints, /metrics included, on ADDR (an IPv4 or IPv6
** literal; NULL or "": 127.0.0.1) and PORT (0: any). NULL with a message
** in ERR when ADDR cannot be parsed or bound.
*/
th_observe *th_observe_start(const char *addr, unsigned port, char *err, size_t errlen);

/* The port bound. */
unsigned th_observe_port(const th_observe *o);

/* Close the listener and free O (NULL: nothing). */
void th_observe_stop(th_observe *o);

#endif
