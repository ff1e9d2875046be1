/* SPDX-License-Identifier: MIT */
/*
** transport/jwt.h: JWT bearer tokens (RFC 7519) checked against a JWKS file
** (RFC 7517): key set loading in jwks.c, verification and claims in jwt.c,
** both with OpenSSL 3. Used by transport/auth.c; knows nothing of HTTP or MCP.
*/
#ifndef TH_TRANSPORT_JWT_H
#define TH_TRANSPORT_JWT_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

struct evp_pkey_st; /* OpenSSL's EVP_PKEY, kept out of this header */

/* One verification key of a JWKS. */
typedef enum th_jwk_type { TH_JWK_RSA, TH_JWK_EC } th_jwk_type;

typedef struct th_jwk {
    char *kid;      /* NULL: the key has no "kid" */
    th_jwk_type type;
    const char *curve; /* EC: "P-256", "P-384" or "P-521"; NULL for RSA (static) */
    char *alg;      /* the JWK's "alg", or NULL: any algorithm of its type */
    struct evp_pkey_st *key; /* the public key, built once at load */
} th_jwk;

typedef struct th_jwks {
    th_jwk *keys;
    size_t n;
} th_jwks;

/* Loads PATH ({"keys":[...]}). RSA keys (n, e) and EC keys (crv, x, y) with
** "use" absent or "sig" are kept; other key types and encryption keys are
** skipped. Returns NULL with ERR naming the file, key and field on failure,
** or when no key is left. */
th_jwks *th_jwks_load(const char *path, char *err, size_t errlen);
void th_jwks_free(th_jwks *ks);

typedef enum th_jwt_result {
    TH_JWT_OK,
    TH_JWT_INVALID, /* malformed, bad signature, wrong iss/aud, expired */
    TH_JWT_SCOPE,   /* valid, but the "scope" claim lacks the scope asked for */
} th_jwt_result;

typedef struct th_jwt_policy {
    const th_jwks *keys;
    const char *issuer;   /* "iss" must equal this */
    const char *audience; /* "aud" (string or array) must hold this */
    long leeway_s;        /* clock skew allowed on exp and nbf */
    const char *set_claim; /* a claim whose words GRANTED also gets, or NULL */
} th_jwt_policy;

/* Checks TOKEN (LEN bytes, the compact serialisation) at time NOW. SCOPE may
** be NULL. Unless TH_JWT_INVALID, WHO (if not NULL; 32 bytes) gets the
** principal: a SHA-256 of the subject ("sub"), or of TOKEN when it has none,
** and GRANTED (if SIZE) the words of the "scope" claim and of P's
** set_claim (a string of words, or an array of strings each one word): ""
** when they do not fit, since a cut list could end in a word cut into
** another's.
** On TH_JWT_INVALID, WHY (if not NULL) gets a short reason for the log; it
** never reaches the client. */
th_jwt_result th_jwt_check(const th_jwt_policy *p, const char *token, size_t len, const char *scope, time_t now,
                           unsigned char *who, char *granted, size_t size, char *why, size_t whylen);

#endif
