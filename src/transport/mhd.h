/* SPDX-License-Identifier: MIT */
/*
** transport/mhd.h: the libmicrohttpd functions the HTTP transport calls,
** resolved with dlopen() when --http first needs them instead of by the
** dynamic linker at every start (with GnuTLS and its eight dependencies).
*/
#ifndef TH_MHD_H
#define TH_MHD_H

/* Before the #defines below: include <microhttpd.h> only through here. */
#include <stdarg.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <microhttpd.h>

#include <stdbool.h>
#include <stddef.h>

/* X(name) for every function called; add one here and below when a new
 * call fails to link (the binary does not link libmicrohttpd). */
#define TH_MHD_FUNCS(X) \
    X(MHD_add_response_header) \
    X(MHD_create_response_from_buffer) \
    X(MHD_create_response_from_callback) \
    X(MHD_destroy_response) \
    X(MHD_get_connection_info) \
    X(MHD_get_connection_values) \
    X(MHD_get_daemon_info) \
    X(MHD_lookup_connection_value) \
    X(MHD_queue_response) \
    X(MHD_quiesce_daemon) \
    X(MHD_start_daemon) \
    X(MHD_stop_daemon)

enum {
#define TH_MHD_INDEX(f) th_mhd_i_##f,
    TH_MHD_FUNCS(TH_MHD_INDEX)
#undef TH_MHD_INDEX
    th_mhd_count
};

/* The table of addresses, libmicrohttpd opened on the first call (one that
 * cannot be opened aborts, base/dynlib.h: th_http_start() calls
 * th_mhd_open() first so that --http fails cleanly instead). TH_MHD_FN
 * gives an entry the type of its prototype, as TH_CRYPTO_FN does. */
void *const *th_mhd(void);
#define TH_MHD_FN(f) ((__typeof__(&f))th_mhd()[th_mhd_i_##f])

/* Open libmicrohttpd now; false with a message in ERR (ERRLEN bytes)
 * naming the library and what failed. */
bool th_mhd_open(char *err, size_t errlen);

#define MHD_add_response_header TH_MHD_FN(MHD_add_response_header)
#define MHD_create_response_from_buffer TH_MHD_FN(MHD_create_response_from_buffer)
#define MHD_create_response_from_callback TH_MHD_FN(MHD_create_response_from_callback)
#define MHD_destroy_response TH_MHD_FN(MHD_destroy_response)
#define MHD_get_connection_info TH_MHD_FN(MHD_get_connection_info)
#define MHD_get_connection_values TH_MHD_FN(MHD_get_connection_values)
#define MHD_get_daemon_info TH_MHD_FN(MHD_get_daemon_info)
#define MHD_lookup_connection_value TH_MHD_FN(MHD_lookup_connection_value)
#define MHD_queue_response TH_MHD_FN(MHD_queue_response)
#define MHD_quiesce_daemon TH_MHD_FN(MHD_quiesce_daemon)
#define MHD_start_daemon TH_MHD_FN(MHD_start_daemon)
#define MHD_stop_daemon TH_MHD_FN(MHD_stop_daemon)

#endif
