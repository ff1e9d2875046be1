/* SPDX-License-Identifier: MIT */
/*
** base/base64.h: the host's base64 decoding, and base64url encoding: the
** URL alphabet without padding (RFC 4648 section 5) for JWTs and JWKs (RFC
** 7515 section 2) and requestStates; the standard padded one for Mcp-Param
** headers and skill files from workers. Standard base64 is encoded by
** th_base64_encode, declared in toolhost/plugin.h for plugins and the host
** alike.
*/
#ifndef TH_BASE64_H
#define TH_BASE64_H

#include <stddef.h>

#include "toolhost/plugin.h" /* th_base64_encode */

/* The LEN bytes at IN as base64url without padding, in a new NUL-terminated
** string the caller frees; NULL when out of memory. */
char *th_b64url_encode(const void *in, size_t len);

/* Decodes the LEN characters at S, base64url without padding, into a new
** buffer the caller frees: *OUTLEN bytes followed by a NUL (so a decoded
** JSON text can be parsed as a C string). NULL for anything else: a
** character outside the alphabet (the padding '=' included), a length
** that no byte string has, or a last character with unused bits set. The
** last rule gives every byte string one text, so a changed character
** always changes the bytes (RFC 4648 section 3.5), which a MAC or a
** signature over the text relies on. NULL too when out of memory. */
unsigned char *th_b64url_decode(const char *s, size_t len, size_t *outlen);

/* Decodes the LEN characters at S, standard base64 (RFC 4648 section 4)
** padded to a multiple of four, as th_b64url_decode does (a new buffer,
** *OUTLEN bytes and a NUL; NULL when malformed or out of memory). Unused
** bits in the last character are ignored, as most decoders do: nothing
** here is signed. */
unsigned char *th_base64_decode(const char *s, size_t len, size_t *outlen);

#endif
