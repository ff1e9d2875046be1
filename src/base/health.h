/* SPDX-License-Identifier: MIT */
/*
** base/health.h: whether the host is ready to serve calls (plugins loaded,
** workers able to start), set by the host's start-up and stop and read by
** whichever transport answers /readyz.
*/
#ifndef TH_BASE_HEALTH_H
#define TH_BASE_HEALTH_H

#include <stdbool.h>

void th_health_set_ready(bool ready);
bool th_health_ready(void);

#endif
