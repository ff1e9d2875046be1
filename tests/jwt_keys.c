/* SPDX-License-Identifier: MIT */
/*
** tests/jwt_keys.c: key pairs, JWKS files and signed tokens for the JWT
** tests (see jwt_keys.h). Keys are generated per run; nothing is fixed.
*/
#include "jwt_keys.h"

#include <check.h>
#include <jwt.h>
#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base64.h"

/* The big-endian bytes of the BIGNUM parameter NAME, padded to PAD bytes. */
static char *bn_b64(EVP_PKEY *k, const char *name, int pad)
{
    BIGNUM *bn = NULL;
    ck_assert(EVP_PKEY_get_bn_param(k, name, &bn) == 1);
    int n = pad ? pad : BN_num_bytes(bn);
    unsigned char *buf = malloc((size_t)n);
    ck_assert(buf && BN_bn2binpad(bn, buf, n) == n);
    char *s = th_b64url_encode(buf, (size_t)n);
    ck_assert(s);
    free(buf);
    BN_free(bn);
    return s;
}

static char *pem_of(EVP_PKEY *k, int priv)
{
    BIO *b = BIO_new(BIO_s_mem());
    ck_assert(b);
    ck_assert(priv ? PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL) : PEM_write_bio_PUBKEY(b, k));
    char *data;
    long n = BIO_get_mem_data(b, &data);
    char *s = strndup(data, (size_t)n);
    BIO_free(b);
    return s;
}

tk_key tk_key_new(const char *kid, const char *alg)
{
    tk_key t = {kid, alg, NULL, NULL, NULL};
    int rsa = strcmp(alg, "RS256") == 0;
    EVP_PKEY *k = rsa ? EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048) : EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
    ck_assert(k);
    t.priv_pem = pem_of(k, 1);
    t.pub_pem = pem_of(k, 0);
    char *a = bn_b64(k, rsa ? OSSL_PKEY_PARAM_RSA_N : OSSL_PKEY_PARAM_EC_PUB_X, rsa ? 0 : 32);
    char *b = bn_b64(k, rsa ? OSSL_PKEY_PARAM_RSA_E : OSSL_PKEY_PARAM_EC_PUB_Y, rsa ? 0 : 32);
    size_t len = strlen(a) + strlen(b) + strlen(kid) + 128;
    t.jwk = malloc(len);
    ck_assert(t.jwk);
    if (rsa)
        snprintf(t.jwk, len, "{\"kty\":\"RSA\",\"use\":\"sig\",\"kid\":\"%s\",\"n\":\"%s\",\"e\":\"%s\"}", kid, a, b);
    else
        snprintf(t.jwk, len, "{\"kty\":\"EC\",\"crv\":\"P-256\",\"kid\":\"%s\",\"x\":\"%s\",\"y\":\"%s\"}", kid, a, b);
    free(a);
    free(b);
    EVP_PKEY_free(k);
    return t;
}

void tk_key_free(tk_key *k)
{
    free(k->priv_pem);
    free(k->pub_pem);
    free(k->jwk);
}

char *tk_jwks_file(const tk_key *keys, size_t n)
{
    char *path = strdup("/tmp/th-jwks-XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    ck_assert(f);
    /* An encryption key and a symmetric key first: both must be skipped. */
    fputs("{\"keys\":[{\"kty\":\"oct\",\"k\":\"c2VjcmV0\"},"
          "{\"kty\":\"RSA\",\"use\":\"enc\",\"n\":\"AQAB\",\"e\":\"AQAB\"}",
          f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, ",%s", keys[i].jwk);
    fputs("]}\n", f);
    fclose(f);
    return path;
}

char *tk_sign(const tk_key *k, const char *alg, int no_kid, const char *claims)
{
    jwt_t *j = NULL;
    ck_assert(jwt_new(&j) == 0);
    ck_assert(jwt_add_grants_json(j, claims) == 0);
    if (!no_kid)
        ck_assert(jwt_add_header(j, "kid", k->kid) == 0);
    const char *use = alg ? alg : k->alg;
    int r;
    if (strcmp(use, "none") == 0)
        r = jwt_set_alg(j, JWT_ALG_NONE, NULL, 0);
    else if (strcmp(use, "HS256") == 0)
        r = jwt_set_alg(j, JWT_ALG_HS256, (const unsigned char *)k->pub_pem, (int)strlen(k->pub_pem));
    else
        r = jwt_set_alg(j, jwt_str_alg(use), (const unsigned char *)k->priv_pem, (int)strlen(k->priv_pem));
    ck_assert_int_eq(r, 0);
    char *tok = jwt_encode_str(j);
    ck_assert(tok);
    jwt_free(j);
    return tok;
}

/* HEADER.CLAIMS signed by K with the digest MD; an EC signature is turned
 * from DER into JWS's R || S of HALF bytes each, RSA's is sent as it is. */
static char *sign_as(const tk_key *k, const char *header, const char *claims, const EVP_MD *md, int half)
{
    char *h = th_b64url_encode((const unsigned char *)header, strlen(header)),
         *c = th_b64url_encode((const unsigned char *)claims, strlen(claims));
    ck_assert(h && c);
    size_t inlen = strlen(h) + 1 + strlen(c);
    char *input = malloc(inlen + 1);
    ck_assert(input);
    snprintf(input, inlen + 1, "%s.%s", h, c);
    BIO *b = BIO_new_mem_buf(k->priv_pem, -1);
    EVP_PKEY *key = b ? PEM_read_bio_PrivateKey(b, NULL, NULL, NULL) : NULL;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    unsigned char sig[1024];
    size_t siglen = sizeof sig;
    ck_assert(key && ctx && EVP_DigestSignInit(ctx, NULL, md, NULL, key) == 1 &&
              EVP_DigestSign(ctx, sig, &siglen, (const unsigned char *)input, inlen) == 1);
    if (half > 0) {
        const unsigned char *der = sig;
        ECDSA_SIG *es = d2i_ECDSA_SIG(NULL, &der, (long)siglen);
        ck_assert(es && 2 * half <= (int)sizeof sig);
        ck_assert(BN_bn2binpad(ECDSA_SIG_get0_r(es), sig, half) == half &&
                  BN_bn2binpad(ECDSA_SIG_get0_s(es), sig + half, half) == half);
        siglen = 2 * (size_t)half;
        ECDSA_SIG_free(es);
    }
    char *s = th_b64url_encode(sig, siglen);
    ck_assert(s);
    char *tok = malloc(inlen + 2 + strlen(s));
    ck_assert(tok);
    sprintf(tok, "%s.%s", input, s);
    EVP_MD_CTX_free(ctx);
    EVP_PKEY_free(key);
    BIO_free(b);
    free(h);
    free(c);
    free(s);
    free(input);
    return tok;
}

char *tk_sign_raw(const tk_key *k, const char *header, const char *claims)
{
    return sign_as(k, header, claims, EVP_sha256(), 0);
}

char *tk_sign_ec384(const tk_key *k, const char *header, const char *claims)
{
    return sign_as(k, header, claims, EVP_sha384(), 48);
}

char *tk_rsa_modulus(int bits, size_t pad)
{
    EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)bits);
    BIGNUM *bn = NULL;
    ck_assert(k && EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_RSA_N, &bn) == 1);
    size_t n = (size_t)BN_num_bytes(bn);
    unsigned char *buf = calloc(1, pad + n);
    ck_assert(buf && BN_bn2bin(bn, buf + pad) == (int)n);
    char *s = th_b64url_encode(buf, pad + n);
    ck_assert(s);
    free(buf);
    BN_free(bn);
    EVP_PKEY_free(k);
    return s;
}
