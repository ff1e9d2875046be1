/* SPDX-License-Identifier: MIT */
/*
** host/serve.h: the serving host's life: set up the descriptors and
** signals, load the plugins, start the transports (stdio, HTTP) and the
** reload thread, wait for the end, and stop everything in order.
*/
#ifndef TH_HOST_SERVE_H
#define TH_HOST_SERVE_H

#include "host/options.h"
#include "host/reload.h"
#include "host/start.h"
#include "host/stdfds.h"
#include "transport/observe.h"
#include "transport/otlp.h"

/* What a serving host holds, from set-up to its last stop. */
typedef struct th_host {
    th_host_opts *opts;
    th_stdfds fds;
    int stop_fd;            /* readable once a stop signal came */
    th_start_opts start;    /* the same for start-up and every reload */
    th_naming *naming;      /* toolboxes, fixed before any plugin runs */
    char *cache_path;       /* the registry cache, or NULL */
    th_registry *reg;       /* loaded, until the protocol takes it */
    th_mcp *mcp;
    th_auth *auth;
    th_http *http;
    th_observe *observe;    /* --metrics ADDR: its own listener, or NULL */
    th_otlp *otlp;          /* --otlp-endpoint: the span exporter, or NULL */
    th_reloader reload;
    bool unix_bound;        /* --http unix:PATH was created: unlinked at stop */
    unsigned long long unix_dev, unix_ino; /* which file it was (a newer one is not ours) */
} th_host;

/*
** Refuse, before any plugin code runs, what the options already show to be
** unsafe: HTTP on a non-loopback address without authorization. False with
** a message logged (critical).
*/
bool th_host_policy_ok(const th_host_opts *o);

/* Claim the descriptors and the signals, fix the toolboxes. False with a
 * message on stderr. */
bool th_host_setup(th_host *h, th_host_opts *o);

/* Load the plugins into H->reg. An exit status when the host should not
 * serve (0: the client left while plugins loaded), or -1 to go on. */
int th_host_load(th_host *h);

/* Serve until end of input, a stop signal, or --idle-exit; the exit status. */
int th_host_serve(th_host *h);

/* Stop everything in order and release H. */
void th_host_stop(th_host *h);

#endif
