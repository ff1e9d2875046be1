/* SPDX-License-Identifier: MIT */
/*
** dlnote.c: the .note.dlopen ELF note (https://systemd.io/ELF_DLOPEN_METADATA/)
** that declares the libraries the binary opens with dlopen() (base/dynlib.h),
** which packaging tools cannot see among its DT_NEEDED entries.
*/
#include "config.h"

#include <stdint.h>

/* The sonames are configure's (TH_SONAME in configure.ac), the very macros
 * transport/mhd.c and base/crypto.c open. libcrypto is required: besides
 * tokens and JWTs it MACs the requestState of every input-required call,
 * on stdio too. libmicrohttpd only serves --http and --metrics. */
#define DLOPEN_JSON                                                                                          \
    "[{\"feature\":\"http\",\"description\":\"Streamable HTTP (--http) and the --metrics listener\","        \
    "\"priority\":\"recommended\",\"soname\":[\"" TH_MHD_SONAME "\"]},"                                      \
    "{\"feature\":\"crypto\",\"description\":\"bearer tokens, JWT signatures and requestState MACs\","       \
    "\"priority\":\"required\",\"soname\":[\"" TH_CRYPTO_SONAME "\"]}]"

#define DLOPEN_VENDOR "FDO"
#define DLOPEN_TYPE UINT32_C(0x407c0c0a)

/* The ELF note layout: header, owner name and descriptor, each 4-aligned;
 * "used" keeps the otherwise unreferenced object in the binary, and a
 * section named .note.* is emitted as SHT_NOTE. */
__attribute__((used, section(".note.dlopen"))) static const struct {
    struct {
        uint32_t n_namesz, n_descsz, n_type;
    } nhdr;
    char name[sizeof DLOPEN_VENDOR];
    _Alignas(uint32_t) char json[sizeof DLOPEN_JSON];
} _Alignas(uint32_t) dlopen_note = {
    {sizeof DLOPEN_VENDOR, sizeof DLOPEN_JSON, DLOPEN_TYPE},
    DLOPEN_VENDOR,
    DLOPEN_JSON,
};
