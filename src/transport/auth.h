/* SPDX-License-Identifier: MIT */
/*
** Bearer token checks for the HTTP transport: loads a token file and/or a
** JWKS file and says whether a presented token is good and carries a scope.
** No MCP logic here.
*/
#ifndef TH_AUTH_H
#define TH_AUTH_H

#include <stdbool.h>
#include <stddef.h>

typedef enum th_auth_result {
    TH_AUTH_OK,
    TH_AUTH_MISSING, /* no bearer token was presented */
    TH_AUTH_INVALID, /* a token was presented but is unknown */
    TH_AUTH_SCOPE,   /* known, but lacks the scope asked for */
} th_auth_result;

typedef struct th_auth th_auth;

/* Loads PATH: one token per line, "TOKEN [SCOPE...]" or "sha256:HEX [SCOPE...]";
** blank lines and lines starting with '#' are skipped. Only SHA-256 hashes
** are kept in memory. Returns NULL with ERR filled on failure. */
th_auth *th_auth_load(const char *path, char *err, size_t errlen);

/* Also accepts JWTs (RS256/384/512, ES256/384/512) signed by a key in the
** JWKS file PATH, issued by ISSUER ("iss"), for AUDIENCE ("aud", this
** server's resource URI), not expired (60 s leeway on exp and nbf); scopes
** come from the "scope" claim. Creates *A when it is NULL. False with ERR
** naming the file and field on failure (*A is then left as it was). */
bool th_auth_add_jwks(th_auth **a, const char *path, const char *issuer, const char *audience, char *err,
                      size_t errlen);

/* Lets the words of a JWT's claim CLAIM (a string, or an array of
** strings) count as scopes in what th_auth_check_grants says the token
** carries, and only there: for choosing a caller's tools by, say, "roles".
** False when out of memory. */
bool th_auth_set_grants_claim(th_auth *a, const char *claim);

/* Re-reads the JWKS file th_auth_add_jwks loaded (key rotation, on SIGHUP)
** and swaps the new key set in at once: a check uses the old set or the new,
** never a mix. False with ERR naming the file and field when it cannot be
** loaded; the keys in use then stay. True when A has no JWKS. */
bool th_auth_reload_jwks(th_auth *a, char *err, size_t errlen);

/* Adds the space-separated SCOPES to those th_auth_scopes names (a JWKS has
** no scope list of its own: the required scopes are what clients may ask). */
bool th_auth_note_scopes(th_auth *a, const char *scopes);

/* Who a token speaks for: the SHA-256 of a token-file token (so a line
** "sha256:HEX" names the same one), or of a JWT's subject, which stays the
** same across the tokens an authorization server issues to it. */
typedef struct th_auth_principal {
    unsigned char id[32];
} th_auth_principal;

/* Checks an Authorization header value (may be NULL); SCOPE may be NULL. */
th_auth_result th_auth_check(const th_auth *a, const char *authorization, const char *scope);

/* th_auth_check, naming in *WHO (if not NULL) the principal of a token
** that is known (TH_AUTH_OK or TH_AUTH_SCOPE), all zero otherwise, and
** copying into GRANTED (if SIZE) the scopes a known token carries,
** space-separated: its token-file line's, or a JWT's "scope" claim (and
** th_auth_set_grants_claim's). ""
** when it carries none, is not known, or they do not fit (a cut list
** could end in part of a word that names another scope). */
th_auth_result th_auth_check_grants(const th_auth *a, const char *authorization, const char *scope,
                                    th_auth_principal *who, char *granted, size_t size);

/* The scopes named in the file, space-separated (owned by A). */
const char *th_auth_scopes(const th_auth *a);

void th_auth_free(th_auth *a);

#endif
