/* SPDX-License-Identifier: MIT */
/*
** JWT bearer token verification: which key and algorithm may check a token,
** then the signature (OpenSSL, with the key built at load) and the claims
** (iss, aud, exp, nbf, scope). The key decides the algorithm, never the
** token alone.
*/
#include "base/base64.h"
#include "base/jsontree.h"
#include "base/crypto.h"
#include "transport/jwt.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The algorithms accepted, and the key each needs (RFC 7518 section 3.1).
 * "none" and HS* are absent on purpose: a JWKS holds public keys, and an
 * HMAC "verified" with a public key is a MAC anyone can compute. */
static const struct {
    const char *name;
    const char *digest; /* OpenSSL's name */
    th_jwk_type type;
    const char *curve; /* EC: the only curve the algorithm is defined on */
    size_t half;       /* EC: bytes of R and of S in the JWS signature */
} algs[] = {
    {"RS256", "SHA256", TH_JWK_RSA, NULL, 0},     {"RS384", "SHA384", TH_JWK_RSA, NULL, 0},
    {"RS512", "SHA512", TH_JWK_RSA, NULL, 0},     {"ES256", "SHA256", TH_JWK_EC, "P-256", 32},
    {"ES384", "SHA384", TH_JWK_EC, "P-384", 48},  {"ES512", "SHA512", TH_JWK_EC, "P-521", 66},
};

#define WHY(...) (why ? (void)snprintf(why, whylen, __VA_ARGS__) : (void)0)

/* A JOSE header or a claims set nests no deeper than this in practice
 * (RFC 9396 authorization_details adds a few levels). */
#define JOSE_MAX_DEPTH 16

/* The base64url JSON object at TEXT (LEN bytes), parsed as strictly as a
 * request (base/jsontree.h), or NULL with WHY naming WHAT. */
static json_object *jose_object(const char *what, const char *text, size_t len, char *why, size_t whylen)
{
    size_t n;
    const char *bad = "not base64url";
    unsigned char *raw = th_b64url_decode(text, len, &n);
    json_object *o = raw ? th_json_parse_strict((const char *)raw, n, JOSE_MAX_DEPTH, &bad) : NULL;
    free(raw);
    if (o && !json_object_is_type(o, json_type_object)) {
        bad = "not a JSON object";
        json_object_put(o);
        o = NULL;
    }
    if (!o)
        WHY("the %s: %s", what, bad);
    return o;
}

static const char *opt_string(json_object *o, const char *name)
{
    json_object *v;
    return json_object_object_get_ex(o, name, &v) && json_object_is_type(v, json_type_string)
               ? json_object_get_string(v)
               : NULL;
}

static bool has_word(const char *list, const char *w)
{
    size_t n = strlen(w);
    for (const char *p = list; (p = strstr(p, w)); p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return true;
    return false;
}

/* "aud" is a string or an array of strings (RFC 7519 section 4.1.3). */
static bool audience_ok(json_object *claims, const char *audience)
{
    json_object *aud;
    if (!json_object_object_get_ex(claims, "aud", &aud))
        return false;
    if (json_object_is_type(aud, json_type_string))
        return strcmp(json_object_get_string(aud), audience) == 0;
    if (!json_object_is_type(aud, json_type_array))
        return false;
    for (size_t i = 0; i < json_object_array_length(aud); i++) {
        json_object *a = json_object_array_get_idx(aud, i);
        if (json_object_is_type(a, json_type_string) && strcmp(json_object_get_string(a), audience) == 0)
            return true;
    }
    return false;
}

/* What a NumericDate claim holds (RFC 7519 section 2: a JSON number). */
typedef enum date_claim { DATE_ABSENT, DATE_SET, DATE_BAD } date_claim;

/* The NumericDate claim NAME (seconds, possibly fractional) into *OUT.
 * Anything but a number is DATE_BAD: a string "exp" must not read as
 * "no expiry", nor a string "nbf" as "valid now". */
static date_claim numeric_date(json_object *claims, const char *name, double *out)
{
    json_object *v;
    if (!json_object_object_get_ex(claims, name, &v))
        return DATE_ABSENT;
    if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
        return DATE_BAD;
    *out = json_object_get_double(v);
    return DATE_SET;
}

/* The header's algorithm row and "kid", before the signature is checked: they
 * only choose which key to try, and the key then decides. */
static bool read_header(const char *token, size_t hlen, size_t *ai, char **kid, char *why, size_t whylen)
{
    json_object *h = jose_object("header", token, hlen, why, whylen), *crit;
    bool ok = false;
    const char *alg = opt_string(h, "alg"), *k = opt_string(h, "kid");
    *kid = NULL;
    if (!h)
        goto cleanup;
    /* RFC 7515 section 4.1.11: extensions we do not know must be refused. */
    if (json_object_object_get_ex(h, "crit", &crit)) {
        WHY("the header has \"crit\" extensions");
        goto cleanup;
    }
    for (*ai = 0; alg && *ai < sizeof algs / sizeof *algs; (*ai)++)
        if (strcmp(algs[*ai].name, alg) == 0)
            break;
    if (!alg || *ai == sizeof algs / sizeof *algs) {
        WHY("alg \"%s\" is not accepted (RS256/384/512, ES256/384/512)", alg ? alg : "(missing)");
        goto cleanup;
    }
    if (k && !(*kid = strdup(k))) {
        WHY("out of memory");
        goto cleanup;
    }
    ok = true;
cleanup:
    json_object_put(h);
    return ok;
}

/* Whether key K may verify a token signed with algs[AI] and kid KID. */
static bool key_fits(const th_jwk *k, size_t ai, const char *kid)
{
    if (kid && (!k->kid || strcmp(k->kid, kid) != 0))
        return false;
    if (k->type != algs[ai].type || (algs[ai].curve && strcmp(algs[ai].curve, k->curve) != 0))
        return false;
    return !k->alg || strcmp(k->alg, algs[ai].name) == 0;
}

/* Whether SIG (LEN bytes) signs INPUT with algs[AI] under key K. A JWS
 * ECDSA signature is R || S, fixed width (RFC 7518 section 3.4); OpenSSL
 * verifies the DER form, so it is re-encoded first. */
static bool signature_ok(const th_jwk *k, size_t ai, const char *input, size_t inlen, const unsigned char *sig,
                         size_t len)
{
    unsigned char *der = NULL;
    EVP_MD_CTX *ctx = NULL;
    bool ok = false;
    if (k->type == TH_JWK_EC) {
        size_t h = algs[ai].half;
        ECDSA_SIG *es = len == 2 * h ? ECDSA_SIG_new() : NULL;
        BIGNUM *r = es ? BN_bin2bn(sig, (int)h, NULL) : NULL, *s = es ? BN_bin2bn(sig + h, (int)h, NULL) : NULL;
        int n = -1;
        if (r && s && ECDSA_SIG_set0(es, r, s) == 1) {
            r = s = NULL; /* owned by es now */
            n = i2d_ECDSA_SIG(es, &der);
        }
        BN_free(r);
        BN_free(s);
        ECDSA_SIG_free(es);
        if (n <= 0)
            goto cleanup;
        sig = der;
        len = (size_t)n;
    }
    ctx = EVP_MD_CTX_new();
    ok = ctx && EVP_DigestVerifyInit_ex(ctx, NULL, algs[ai].digest, NULL, NULL, k->key, NULL) == 1 &&
         EVP_DigestVerify(ctx, sig, len, (const unsigned char *)input, inlen) == 1;
cleanup:
    EVP_MD_CTX_free(ctx);
    OPENSSL_free(der);
    return ok;
}

/* Whether CLAIMS admit the token at NOW under P; false with WHY set. */
static bool claims_ok(const th_jwt_policy *p, json_object *claims, time_t now, char *why, size_t whylen)
{
    const char *iss = opt_string(claims, "iss");
    double exp = 0, nbf = 0, iat = 0;
    date_claim e = numeric_date(claims, "exp", &exp), n = numeric_date(claims, "nbf", &nbf),
               i = numeric_date(claims, "iat", &iat);
    json_object *sub;
    if (!iss || strcmp(iss, p->issuer) != 0)
        WHY("iss \"%s\" is not \"%s\"", iss ? iss : "(missing)", p->issuer);
    else if (!audience_ok(claims, p->audience))
        WHY("aud does not name \"%s\"", p->audience);
    else if (e == DATE_ABSENT)
        WHY("exp is missing: tokens must expire");
    else if (e == DATE_BAD || n == DATE_BAD || i == DATE_BAD)
        WHY("exp, nbf and iat must be numbers (RFC 7519 section 4.1)");
    else if ((double)now > exp + (double)p->leeway_s)
        WHY("expired");
    else if (n == DATE_SET && (double)now + (double)p->leeway_s < nbf)
        WHY("not valid yet (nbf)");
    else if (json_object_object_get_ex(claims, "sub", &sub) && !json_object_is_type(sub, json_type_string))
        WHY("sub is not a string");
    else
        return true;
    return false;
}

/* Who the token speaks for: its subject, or the token itself when it
 * names none. The NUL keeps a subject from ever hashing as a token-file
 * token does (a header value holds no NUL). */
static void principal_of(json_object *claims, const char *token, size_t len, unsigned char *who)
{
    static const char head[] = "jwt sub";
    json_object *sub;
    if (!json_object_object_get_ex(claims, "sub", &sub)) {
        SHA256((const unsigned char *)token, len, who);
        return;
    }
    size_t n = (size_t)json_object_get_string_len(sub);
    unsigned char *buf = malloc(sizeof head + n);
    if (!buf) { /* the token itself still names one principal */
        SHA256((const unsigned char *)token, len, who);
        return;
    }
    memcpy(buf, head, sizeof head); /* with its NUL */
    memcpy(buf + sizeof head, json_object_get_string(sub), n);
    SHA256(buf, sizeof head + n, who);
    free(buf);
}

/* Appends the words W (LEN bytes) to OUT (SIZE bytes, *AT used); false
 * when they do not fit. */
static bool put_words(char *out, size_t size, size_t *at, const char *w, size_t len)
{
    if (!len)
        return true;
    size_t sep = *at ? 1 : 0;
    if (*at + sep + len >= size)
        return false;
    if (sep)
        out[(*at)++] = ' ';
    memcpy(out + *at, w, len);
    *at += len;
    out[*at] = '\0';
    return true;
}

/* What CLAIMS grant a caller, as words: the scope claim's, then those of
 * CLAIM (NULL: none), a string or an array of one-word strings (a word
 * holding a space would read as two). "" when they do not fit in SIZE. */
static void granted_words(json_object *claims, const char *claim, char *out, size_t size)
{
    size_t at = 0;
    const char *scope = opt_string(claims, "scope");
    json_object *c = NULL;
    out[0] = '\0';
    bool ok = !scope || put_words(out, size, &at, scope, strlen(scope));
    if (ok && claim && json_object_object_get_ex(claims, claim, &c) && json_object_is_type(c, json_type_string))
        ok = put_words(out, size, &at, json_object_get_string(c), (size_t)json_object_get_string_len(c));
    for (size_t i = 0; ok && json_object_is_type(c, json_type_array) && i < json_object_array_length(c); i++) {
        json_object *v = json_object_array_get_idx(c, i);
        const char *w = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
        if (!strchr(w, ' '))
            ok = put_words(out, size, &at, w, strlen(w));
    }
    if (!ok)
        out[0] = '\0';
}

th_jwt_result th_jwt_check(const th_jwt_policy *p, const char *token, size_t len, const char *scope, time_t now,
                           unsigned char *who, char *granted_out, size_t size, char *why, size_t whylen)
{
    th_jwt_result res = TH_JWT_INVALID;
    char *kid = NULL;
    unsigned char *sig = NULL;
    json_object *claims = NULL;
    const char *d1 = memchr(token, '.', len), *d2 = d1 ? memchr(d1 + 1, '.', len - (size_t)(d1 + 1 - token)) : NULL;
    size_t ai, siglen = 0;
    if (!d2 || d1 == token || d2 == d1 + 1 || d2 + 1 == token + len ||
        memchr(d2 + 1, '.', len - (size_t)(d2 + 1 - token))) {
        WHY("not a compact JWS (header.payload.signature)");
        goto cleanup;
    }
    if (!read_header(token, (size_t)(d1 - token), &ai, &kid, why, whylen))
        goto cleanup;
    if (!(sig = th_b64url_decode(d2 + 1, len - (size_t)(d2 + 1 - token), &siglen))) {
        WHY("the signature is not base64url");
        goto cleanup;
    }
    /* Without a kid every key of the right type is tried (small sets only).
     * The signing input is the header and payload as sent. */
    bool tried = false, verified = false;
    for (size_t i = 0; i < p->keys->n && !verified; i++) {
        const th_jwk *k = &p->keys->keys[i];
        if (!key_fits(k, ai, kid))
            continue;
        tried = true;
        verified = signature_ok(k, ai, token, (size_t)(d2 - token), sig, siglen);
    }
    if (!verified) {
        if (tried)
            WHY("the signature does not verify");
        else
            WHY("no key%s%s%s for %s", kid ? " with kid \"" : "", kid ? kid : "", kid ? "\"" : "", algs[ai].name);
        goto cleanup;
    }
    if (!(claims = jose_object("claims", d1 + 1, (size_t)(d2 - d1 - 1), why, whylen)) ||
        !claims_ok(p, claims, now, why, whylen))
        goto cleanup;
    if (who)
        principal_of(claims, token, len, who);
    /* "scope": space-separated (RFC 8693 section 4.2, RFC 9068). */
    const char *granted = opt_string(claims, "scope");
    if (size)
        granted_words(claims, p->set_claim, granted_out, size);
    res = !scope || !*scope || (granted && has_word(granted, scope)) ? TH_JWT_OK : TH_JWT_SCOPE;
cleanup:
    json_object_put(claims);
    free(sig);
    free(kid);
    return res;
}
