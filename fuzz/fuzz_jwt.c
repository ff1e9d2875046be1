/* SPDX-License-Identifier: MIT */
/*
** fuzz/fuzz_jwt.c: a libFuzzer harness for the bearer-token parsers of
** transport/jwt.c and jwks.c: raw tokens, JWKS files, claims under a valid
** signature, and base64url decoding, which must have one spelling per value.
*/

/*
** The first byte picks the mode (its value modulo 4), the rest is its input:
**   0  a compact JWS as the Authorization header brings it: th_jwt_check
**      must refuse it (no input can carry a signature of a key made here);
**   1  a JWKS file's text, loaded with th_jwks_load (from a memfd);
**   2  "HEADER\nCLAIMS": both base64url-encoded and signed ES256 with the
**      key made at start, so the claims checks behind the signature run;
**   3  base64url text: what th_b64url_decode accepts must encode back to
**      the same text (RFC 4648's canonical form, padding aside).
** A crash, a sanitizer report or an abort() below is a bug.
*/
#define _GNU_SOURCE
#include "config.h"

#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/base64.h"
#include "transport/jwt.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ISSUER "https://issuer.example"
#define AUDIENCE "https://toolhost.example/mcp"
/* A fixed clock, so that exp and nbf claims decide the same way on replay. */
#define NOW ((time_t)1800000000)

static EVP_PKEY *priv;   /* the ES256 key tokens of mode 2 are signed with */
static th_jwks *keys;    /* its public half, as th_jwks_load read it */
static int memfd = -1;   /* mode 1's JWKS text, as a file */
static char memfd_path[64];

static _Noreturn void die(const char *what, const uint8_t *data, size_t size)
{
    fprintf(stderr, "fuzz_jwt: %s: %.*s\n", what, (int)(size > 2000 ? 2000 : size), (const char *)data);
    abort();
}

/* Write LEN bytes at TEXT as the whole content of the memfd. */
static void set_file(const void *text, size_t len)
{
    if (ftruncate(memfd, 0) != 0 || pwrite(memfd, text, len, 0) != (ssize_t)len)
        abort();
}

static char *coord(const char *name)
{
    BIGNUM *bn = NULL;
    unsigned char buf[32];
    if (EVP_PKEY_get_bn_param(priv, name, &bn) != 1 || BN_bn2binpad(bn, buf, 32) != 32)
        abort();
    BN_free(bn);
    return th_b64url_encode(buf, sizeof buf);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    memfd = memfd_create("fuzz_jwt", MFD_CLOEXEC);
    priv = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
    if (memfd < 0 || !priv) {
        fprintf(stderr, "fuzz_jwt: cannot make a memfd or a P-256 key\n");
        exit(1);
    }
    snprintf(memfd_path, sizeof memfd_path, "/proc/self/fd/%d", memfd);
    char *x = coord(OSSL_PKEY_PARAM_EC_PUB_X), *y = coord(OSSL_PKEY_PARAM_EC_PUB_Y);
    char jwks[512], err[256];
    int n = snprintf(jwks, sizeof jwks,
                     "{\"keys\":[{\"kty\":\"EC\",\"crv\":\"P-256\",\"kid\":\"k1\",\"x\":\"%s\",\"y\":\"%s\"}]}", x, y);
    free(x);
    free(y);
    set_file(jwks, (size_t)n);
    if (!(keys = th_jwks_load(memfd_path, err, sizeof err))) {
        fprintf(stderr, "fuzz_jwt: the harness's own JWKS: %s\n", err);
        exit(1);
    }
    return 0;
}

/* HEADER.CLAIMS signed ES256 with PRIV: a JWS R || S of 64 bytes. */
static char *sign(const char *header, size_t hlen, const char *claims, size_t clen)
{
    char *h = th_b64url_encode(header, hlen), *c = th_b64url_encode(claims, clen);
    if (!h || !c)
        abort();
    size_t inlen = strlen(h) + 1 + strlen(c);
    char *tok = malloc(inlen + 1 + 90);
    unsigned char der[80], rs[64];
    size_t derlen = sizeof der;
    if (!tok)
        abort();
    snprintf(tok, inlen + 1, "%s.%s", h, c);
    free(h);
    free(c);
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (!ctx || EVP_DigestSignInit_ex(ctx, NULL, "SHA256", NULL, NULL, priv, NULL) != 1 ||
        EVP_DigestSign(ctx, der, &derlen, (const unsigned char *)tok, inlen) != 1)
        abort();
    EVP_MD_CTX_free(ctx);
    const unsigned char *p = der;
    ECDSA_SIG *es = d2i_ECDSA_SIG(NULL, &p, (long)derlen);
    if (!es || BN_bn2binpad(ECDSA_SIG_get0_r(es), rs, 32) != 32 || BN_bn2binpad(ECDSA_SIG_get0_s(es), rs + 32, 32) != 32)
        abort();
    ECDSA_SIG_free(es);
    char *sig = th_b64url_encode(rs, sizeof rs);
    if (!sig)
        abort();
    snprintf(tok + inlen, 90, ".%s", sig);
    free(sig);
    return tok;
}

/* Whether the space-separated LIST holds the word W. */
static bool holds_word(const char *list, const char *w)
{
    size_t n = strlen(w);
    for (const char *p = list; (p = strstr(p, w)); p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return true;
    return false;
}

static void check(const char *token, size_t len)
{
    th_jwt_policy pol = {keys, ISSUER, AUDIENCE, 30, NULL};
    th_jwt_policy roles = {keys, ISSUER, AUDIENCE, 30, "roles"};
    unsigned char who[32];
    /* Small, so that long claims take the "do not fit" path too. */
    char why[256], granted[48];
    th_jwt_check(&pol, token, len, "tools", NOW, who, granted, sizeof granted, why, sizeof why);
    th_jwt_result r = th_jwt_check(&roles, token, len, "tools", NOW, who, granted, sizeof granted, why, sizeof why);
    /* The granted words start with the scope claim's, which held "tools";
     * a list that did not fit is "", never one cut inside a word. */
    if (r == TH_JWT_OK && granted[0] && !holds_word(granted, "tools"))
        die("the scope checked is not among the words granted", (const uint8_t *)token, len);
    th_jwt_check(&pol, token, len, NULL, NOW, NULL, NULL, 0, NULL, 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    unsigned mode = data[0] % 4;
    const uint8_t *in = data + 1;
    size_t len = size - 1;
    /* An exact-size copy, so that ASan sees a read past the end. */
    char *text = malloc(len ? len : 1);
    if (!text)
        return 0;
    memcpy(text, in, len);
    switch (mode) {
    case 0: {
        th_jwt_policy pol = {keys, ISSUER, AUDIENCE, 30, NULL};
        if (th_jwt_check(&pol, text, len, NULL, NOW, NULL, NULL, 0, NULL, 0) != TH_JWT_INVALID)
            die("a token the harness did not sign was accepted", data, size);
        check(text, len);
        break;
    }
    case 1: {
        char err[512];
        set_file(text, len);
        th_jwks *ks = th_jwks_load(memfd_path, err, sizeof err);
        if (!ks && !err[0])
            die("th_jwks_load refused a key set without saying why", data, size);
        th_jwks_free(ks);
        break;
    }
    case 2: {
        const char *nl = memchr(text, '\n', len);
        size_t hlen = nl ? (size_t)(nl - text) : 0;
        const char *claims = nl ? nl + 1 : text;
        size_t clen = len - (nl ? hlen + 1 : 0);
        char *tok = nl ? sign(text, hlen, claims, clen) : sign("{\"alg\":\"ES256\"}", 15, claims, clen);
        check(tok, strlen(tok));
        free(tok);
        break;
    }
    default: {
        size_t n = 0;
        unsigned char *raw = th_b64url_decode(text, len, &n);
        if (raw) {
            char *back = th_b64url_encode(raw, n);
            if (!back)
                abort();
            if (strlen(back) != len || memcmp(back, text, len) != 0)
                die("base64url text that does not encode back to itself was accepted", data, size);
            if (raw[n] != '\0')
                die("th_b64url_decode did not NUL-terminate", data, size);
            free(back);
            free(raw);
        }
        break;
    }
    }
    free(text);
    return 0;
}
