/*
** base/b64url.h: base64url (RFC 4648 section 5) without padding, the
** spelling of JWTs and JWKs (RFC 7515 section 2) and of requestStates.
*/
#ifndef TH_B64URL_H
#define TH_B64URL_H

#include <stddef.h>

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

#endif
