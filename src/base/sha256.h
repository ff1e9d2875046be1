/* SPDX-License-Identifier: MIT */
/*
** base/sha256.h: SHA-256 (FIPS 180-4) of a byte string, for the digests the
** skills extension publishes. Built in, so the host does not need OpenSSL
** (an optional dependency, present only with HTTP auth) to serve skills.
*/
#ifndef TH_SHA256_H
#define TH_SHA256_H

#include <stddef.h>
#include <stdint.h>

/* The SHA-256 of the LEN bytes at DATA into OUT. */
void th_sha256(const void *data, size_t len, uint8_t out[32]);

/* "sha256:" and the 64 lowercase hex digits of DATA's SHA-256 into OUT. */
#define TH_SHA256_DIGEST_LEN (7 + 64)
void th_sha256_digest(const void *data, size_t len, char out[TH_SHA256_DIGEST_LEN + 1]);

#endif
