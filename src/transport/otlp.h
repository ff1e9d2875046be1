/* SPDX-License-Identifier: MIT */
/*
** transport/otlp.h: --otlp-endpoint, the export of the spans base/trace.c
** queues, as OTLP/HTTP JSON POSTs to a collector, from a thread of its own.
*/
#ifndef TH_TRANSPORT_OTLP_H
#define TH_TRANSPORT_OTLP_H

#include <stdbool.h>
#include <stddef.h>

typedef struct th_otlp th_otlp;

/*
** Check URL (http://HOST[:PORT][/PATH]; PATH defaults to /v1/traces) and
** say in ERR what is wrong with it. Nothing is connected yet: a collector
** that starts later is reached then.
*/
bool th_otlp_check_url(const char *url, char *err, size_t errlen);

/* Open the span queue and start exporting to URL (checked) as SERVICE
 * at VERSION. NULL with ERR set when that fails. */
th_otlp *th_otlp_start(const char *url, const char *version, char *err, size_t errlen);

/* Close the queue, export what it holds (each POST bounded in time), and
 * stop. NULL is fine. */
void th_otlp_stop(th_otlp *o);

#endif
