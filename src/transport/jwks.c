/* SPDX-License-Identifier: MIT */
/*
** The key set JWT bearer tokens are checked against: a JWKS file turned into
** public keys, each JWK (n, e or crv, x, y) an OpenSSL 3 EVP_PKEY built once
** with EVP_PKEY_fromdata (libjwt 1.10 has no JWK parser).
*/
#include "base/base64.h"
#include "base/jsontree.h"
#include "base/crypto.h"
#include "transport/jwt.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The curves JWS names (RFC 7518 section 6.2.1.1) and their OpenSSL names. */
static const struct {
    const char *crv, *group;
    size_t coord; /* bytes of x and of y */
} curves[] = {
    {"P-256", "prime256v1", 32},
    {"P-384", "secp384r1", 48},
    {"P-521", "secp521r1", 66},
};

/* A key set of a few dozen keys is a few tens of KB; past this it is not one. */
#define JWKS_MAX_BYTES (1u << 20)
#define JWKS_MAX_DEPTH 8

/* Below 2048 bits RS256 gives no real protection (RFC 7518 section 3.3). */
#define RSA_MIN_BITS 2048

typedef struct ctx {
    const char *path;
    size_t index;
    char *err;
    size_t errlen;
} ctx;

/* The member NAME of JWK as a decoded base64url string, or NULL with ERR set. */
static unsigned char *member_b64(const ctx *c, json_object *jwk, const char *name, size_t *len)
{
    json_object *v;
    if (!json_object_object_get_ex(jwk, name, &v) || !json_object_is_type(v, json_type_string)) {
        snprintf(c->err, c->errlen, "%s: keys[%zu].%s: missing (a base64url string)", c->path, c->index, name);
        return NULL;
    }
    /* JWKs are written by tools, some of which pad; the value is the same
     * with or without it, so a JWKS file may have it (a token may not). */
    const char *text = json_object_get_string(v);
    size_t n = (size_t)json_object_get_string_len(v);
    while (n && text[n - 1] == '=')
        n--;
    unsigned char *b = th_b64url_decode(text, n, len);
    if (!b || *len == 0) {
        free(b);
        snprintf(c->err, c->errlen, "%s: keys[%zu].%s: not base64url", c->path, c->index, name);
        return NULL;
    }
    return b;
}

/* Significant bits of the big-endian number B (LEN bytes): leading zero
 * bytes add nothing, so padding cannot make a short modulus look long. */
static size_t bits_of(const unsigned char *b, size_t len)
{
    while (len && *b == 0) {
        b++;
        len--;
    }
    size_t bits = len * 8;
    for (unsigned char top = len ? *b : 0x80; !(top & 0x80); top <<= 1)
        bits--;
    return len ? bits : 0;
}

/*
** The modulus has RSA_MIN_BITS significant bits; the exponent is odd and at
** least 65537 (F4). e = 1 makes every "signature" its own message, so
** anyone could sign; e = 3 is safe only with padding checks done exactly
** right, and no issuer of tokens needs it.
*/
static bool rsa_numbers_ok(const ctx *c, const unsigned char *n, size_t nlen, const unsigned char *e, size_t elen)
{
    if (bits_of(n, nlen) < RSA_MIN_BITS) {
        snprintf(c->err, c->errlen, "%s: keys[%zu].n: an RSA modulus of at least %d bits is required (it has %zu)",
                 c->path, c->index, RSA_MIN_BITS, bits_of(n, nlen));
        return false;
    }
    if (bits_of(e, elen) < 17 || !(e[elen - 1] & 1)) {
        snprintf(c->err, c->errlen, "%s: keys[%zu].e: the RSA exponent must be odd and at least 65537", c->path,
                 c->index);
        return false;
    }
    return true;
}

static EVP_PKEY *rsa_key(const ctx *c, json_object *jwk)
{
    size_t nlen = 0, elen = 0;
    unsigned char *n = member_b64(c, jwk, "n", &nlen), *e = n ? member_b64(c, jwk, "e", &elen) : NULL;
    OSSL_PARAM_BLD *bld = NULL;
    OSSL_PARAM *params = NULL;
    EVP_PKEY_CTX *pc = NULL;
    EVP_PKEY *key = NULL;
    BIGNUM *bn = NULL, *be = NULL;
    if (!e || !rsa_numbers_ok(c, n, nlen, e, elen))
        goto cleanup;
    bn = BN_bin2bn(n, (int)nlen, NULL);
    be = BN_bin2bn(e, (int)elen, NULL);
    bld = OSSL_PARAM_BLD_new();
    if (!bn || !be || !bld || !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, bn) ||
        !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, be) || !(params = OSSL_PARAM_BLD_to_param(bld)) ||
        !(pc = EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL)) || EVP_PKEY_fromdata_init(pc) <= 0 ||
        EVP_PKEY_fromdata(pc, &key, EVP_PKEY_PUBLIC_KEY, params) <= 0) {
        snprintf(c->err, c->errlen, "%s: keys[%zu]: OpenSSL does not take n and e as an RSA key", c->path, c->index);
        key = NULL;
    }
cleanup:
    BN_free(bn);
    BN_free(be);
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(bld);
    EVP_PKEY_CTX_free(pc);
    free(n);
    free(e);
    return key;
}

static EVP_PKEY *ec_key(const ctx *c, json_object *jwk, const char **crv_out)
{
    json_object *crv;
    size_t ci = sizeof curves / sizeof *curves;
    if (json_object_object_get_ex(jwk, "crv", &crv) && json_object_is_type(crv, json_type_string))
        for (ci = 0; ci < sizeof curves / sizeof *curves; ci++)
            if (strcmp(curves[ci].crv, json_object_get_string(crv)) == 0)
                break;
    if (ci == sizeof curves / sizeof *curves) {
        snprintf(c->err, c->errlen, "%s: keys[%zu].crv: must be P-256, P-384 or P-521", c->path, c->index);
        return NULL;
    }
    *crv_out = curves[ci].crv;
    size_t xlen = 0, ylen = 0, cl = curves[ci].coord;
    unsigned char *x = member_b64(c, jwk, "x", &xlen), *y = x ? member_b64(c, jwk, "y", &ylen) : NULL;
    unsigned char *point = NULL;
    OSSL_PARAM_BLD *bld = NULL;
    OSSL_PARAM *params = NULL;
    EVP_PKEY_CTX *pc = NULL, *check = NULL;
    EVP_PKEY *key = NULL;
    if (!y)
        goto cleanup;
    if (xlen != cl || ylen != cl) {
        snprintf(c->err, c->errlen, "%s: keys[%zu]: x and y of %s must be %zu bytes each", c->path, c->index,
                 curves[ci].crv, cl);
        goto cleanup;
    }
    /* The uncompressed point encoding (SEC 1 section 2.3.3): 04 || x || y. */
    if (!(point = malloc(1 + 2 * cl)))
        goto cleanup;
    point[0] = 0x04;
    memcpy(point + 1, x, cl);
    memcpy(point + 1 + cl, y, cl);
    bld = OSSL_PARAM_BLD_new();
    if (!bld || !OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, curves[ci].group, 0) ||
        !OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, point, 1 + 2 * cl) ||
        !(params = OSSL_PARAM_BLD_to_param(bld)) || !(pc = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL)) ||
        EVP_PKEY_fromdata_init(pc) <= 0 || EVP_PKEY_fromdata(pc, &key, EVP_PKEY_PUBLIC_KEY, params) <= 0) {
        snprintf(c->err, c->errlen, "%s: keys[%zu]: x, y is not a point on %s (OpenSSL refused it)", c->path, c->index,
                 curves[ci].crv);
        key = NULL;
        goto cleanup;
    }
    /* A point off the curve opens invalid-curve attacks: refuse it here. */
    if (!(check = EVP_PKEY_CTX_new_from_pkey(NULL, key, NULL)) || EVP_PKEY_public_check(check) != 1) {
        snprintf(c->err, c->errlen, "%s: keys[%zu]: x, y is not a point on %s (public key check)", c->path, c->index, curves[ci].crv);
        EVP_PKEY_free(key);
        key = NULL;
    }
cleanup:
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(bld);
    EVP_PKEY_CTX_free(pc);
    EVP_PKEY_CTX_free(check);
    free(point);
    free(x);
    free(y);
    return key;
}

static const char *opt_string(json_object *o, const char *name)
{
    json_object *v;
    return json_object_object_get_ex(o, name, &v) && json_object_is_type(v, json_type_string)
               ? json_object_get_string(v)
               : NULL;
}

void th_jwks_free(th_jwks *ks)
{
    if (!ks)
        return;
    for (size_t i = 0; i < ks->n; i++) {
        free(ks->keys[i].kid);
        free(ks->keys[i].alg);
        EVP_PKEY_free(ks->keys[i].key);
    }
    free(ks->keys);
    free(ks);
}

/* PATH parsed as strictly as a request (base/jsontree.h); NULL with ERR. */
static json_object *read_json(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    char *text = malloc(JWKS_MAX_BYTES + 1);
    size_t len = 0;
    json_object *o = NULL;
    const char *why = NULL;
    if (!f || !text) {
        snprintf(err, errlen, "%s: cannot read it (%s)", path, f ? "out of memory" : strerror(errno));
        goto cleanup;
    }
    len = fread(text, 1, JWKS_MAX_BYTES + 1, f);
    if (ferror(f) || len > JWKS_MAX_BYTES) {
        snprintf(err, errlen, "%s: cannot read it (%s)", path, ferror(f) ? "read error" : "larger than 1 MiB");
        goto cleanup;
    }
    if (!(o = th_json_parse_strict(text, len, JWKS_MAX_DEPTH, &why)))
        snprintf(err, errlen, "%s: cannot read it as JSON (%s)", path, why);
cleanup:
    if (f)
        fclose(f);
    free(text);
    return o;
}

th_jwks *th_jwks_load(const char *path, char *err, size_t errlen)
{
    json_object *root = read_json(path, err, errlen), *keys;
    th_jwks *ks = calloc(1, sizeof *ks);
    ctx c = {path, 0, err, errlen};
    if (!root)
        goto fail;
    if (!ks) {
        snprintf(err, errlen, "%s: out of memory", path);
        goto fail;
    }
    if (!json_object_object_get_ex(root, "keys", &keys) || !json_object_is_type(keys, json_type_array)) {
        snprintf(err, errlen, "%s: keys: missing (a JWKS is {\"keys\": [...]})", path);
        goto fail;
    }
    size_t n = json_object_array_length(keys);
    if (!(ks->keys = calloc(n ? n : 1, sizeof *ks->keys))) {
        snprintf(err, errlen, "%s: out of memory", path);
        goto fail;
    }
    for (c.index = 0; c.index < n; c.index++) {
        json_object *jwk = json_object_array_get_idx(keys, c.index);
        const char *kty = opt_string(jwk, "kty"), *use = opt_string(jwk, "use"), *kid = opt_string(jwk, "kid");
        const char *alg = opt_string(jwk, "alg"), *crv = NULL;
        if (!json_object_is_type(jwk, json_type_object) || !kty) {
            snprintf(err, errlen, "%s: keys[%zu].kty: missing", path, c.index);
            goto fail;
        }
        /* Encryption keys and other key types (oct is never acceptable for
         * a public key set; OKP is not supported yet) may share the file
         * with ours: skip them, do not fail. */
        if ((use && strcmp(use, "sig") != 0) || (strcmp(kty, "RSA") != 0 && strcmp(kty, "EC") != 0))
            continue;
        th_jwk_type type = strcmp(kty, "RSA") == 0 ? TH_JWK_RSA : TH_JWK_EC;
        EVP_PKEY *key = type == TH_JWK_RSA ? rsa_key(&c, jwk) : ec_key(&c, jwk, &crv);
        if (!key)
            goto fail;
        th_jwk *k = &ks->keys[ks->n];
        k->type = type;
        k->curve = crv; /* points into the static table */
        k->key = key;
        k->kid = kid ? strdup(kid) : NULL;
        k->alg = alg ? strdup(alg) : NULL;
        ks->n++;
        if ((kid && !k->kid) || (alg && !k->alg)) {
            snprintf(err, errlen, "%s: keys[%zu]: out of memory", path, c.index);
            goto fail;
        }
    }
    if (ks->n == 0) {
        snprintf(err, errlen, "%s: keys: no RSA or EC signing key", path);
        goto fail;
    }
    json_object_put(root);
    return ks;
fail:
    json_object_put(root);
    th_jwks_free(ks);
    return NULL;
}
