/* SPDX-License-Identifier: MIT */
/*
** tests/jwt_keys.h: what the JWT tests need of an authorization server:
** fresh key pairs (OpenSSL), a JWKS file of their public halves, and tokens
** signed with them (libjwt). Test code only.
*/
#ifndef TH_TEST_JWT_KEYS_H
#define TH_TEST_JWT_KEYS_H

#include <stddef.h>

typedef struct tk_key {
    const char *kid;
    const char *alg; /* "RS256" or "ES256" */
    char *priv_pem;  /* private key, PEM */
    char *pub_pem;   /* public key, PEM (for the forgeries) */
    char *jwk;       /* the public JWK, JSON text */
} tk_key;

/* A fresh key for ALG ("RS256": RSA 2048, "ES256": P-256) with KID. */
tk_key tk_key_new(const char *kid, const char *alg);
void tk_key_free(tk_key *k);

/* Writes {"keys":[...]} of the N keys to a new temporary file; returns its path. */
char *tk_jwks_file(const tk_key *keys, size_t n);

/* A token signed by K (with its kid unless NO_KID) over CLAIMS (a JSON object
** text). ALG overrides K's algorithm: "none", or "HS256" to MAC it with K's
** public PEM as the secret (the algorithm-confusion forgery). */
char *tk_sign(const tk_key *k, const char *alg, int no_kid, const char *claims);

/* A token of HEADER and CLAIMS exactly as given (JSON texts, sent as they
** are: duplicate names, NaN and all), RS256-signed by the RSA key K. */
char *tk_sign_raw(const tk_key *k, const char *header, const char *claims);

/* Like tk_sign_raw, by the EC key K, but as ES384 signs: SHA-384, and R and
** S of 48 bytes each, whatever K's curve (a P-256 key made to pass as P-384). */
char *tk_sign_ec384(const tk_key *k, const char *header, const char *claims);

/* The base64url modulus of a fresh RSA key of BITS bits, after PAD zero
** bytes (a short key made to look long). */
char *tk_rsa_modulus(int bits, size_t pad);

#endif
