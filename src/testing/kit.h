/* SPDX-License-Identifier: MIT */
/*
** testing/kit.h: what the kit's session (testing/session.c) needs of its
** host (testing/host.c): the registry built and the protocol configuration
** the command line gave.
*/
#ifndef TH_TESTING_KIT_H
#define TH_TESTING_KIT_H

#include "protocol/mcp.h"
#include "toolhost/testing.h"

/* H's registry, started on first use; NULL when the start failed. */
th_registry *th_test_host_registry(th_test_host *h);

/* The protocol configuration H's options give (--call-timeout, ...). */
const th_mcp_config *th_test_host_mcp_config(const th_test_host *h);

#endif
