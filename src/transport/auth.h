/*
** Bearer token checks for the HTTP transport: loads a token file and says
** whether a presented token is known and carries a scope. No MCP logic here.
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

/* Checks an Authorization header value (may be NULL); SCOPE may be NULL. */
th_auth_result th_auth_check(const th_auth *a, const char *authorization, const char *scope);

/* The scopes named in the file, space-separated (owned by A). */
const char *th_auth_scopes(const th_auth *a);

void th_auth_free(th_auth *a);

#endif
