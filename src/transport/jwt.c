/*
** JWT bearer token verification: which key and algorithm may check a token,
** then the signature (libjwt) and the claims (iss, aud, exp, nbf, scope).
** The algorithm is chosen by the key, never by the token alone.
*/
#include "transport/jwt.h"

#include <json-c/json.h>
#include <jwt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The algorithms accepted, and the key each needs (RFC 7518 section 3.1).
 * "none" and HS* are absent on purpose: a JWKS holds public keys, and an
 * HMAC "verified" with a public key is a MAC anyone can compute. */
static const struct {
    const char *name;
    jwt_alg_t alg;
    th_jwk_type type;
    const char *curve; /* EC: the only curve the algorithm is defined on */
} algs[] = {
    {"RS256", JWT_ALG_RS256, TH_JWK_RSA, NULL}, {"RS384", JWT_ALG_RS384, TH_JWK_RSA, NULL},
    {"RS512", JWT_ALG_RS512, TH_JWK_RSA, NULL}, {"ES256", JWT_ALG_ES256, TH_JWK_EC, "P-256"},
    {"ES384", JWT_ALG_ES384, TH_JWK_EC, "P-384"}, {"ES512", JWT_ALG_ES512, TH_JWK_EC, "P-521"},
};

#define WHY(...) (why ? (void)snprintf(why, whylen, __VA_ARGS__) : (void)0)

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

/* A NumericDate claim (seconds, possibly fractional); false if absent or not a number. */
static bool numeric_date(json_object *claims, const char *name, double *out)
{
    json_object *v;
    if (!json_object_object_get_ex(claims, name, &v) ||
        !(json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)))
        return false;
    *out = json_object_get_double(v);
    return true;
}

/* The header's algorithm row and "kid", before the signature is checked: they
 * only choose which key to try, and the key then decides. */
static bool read_header(const char *token, size_t hlen, size_t *ai, char **kid, char *why, size_t whylen)
{
    size_t len;
    unsigned char *raw = th_b64url_decode(token, hlen, &len);
    json_object *h = raw ? json_tokener_parse((const char *)raw) : NULL;
    bool ok = false;
    const char *alg = opt_string(h, "alg"), *k = opt_string(h, "kid");
    json_object *crit;
    *kid = NULL;
    if (!json_object_is_type(h, json_type_object)) {
        WHY("the header is not base64url JSON");
        goto cleanup;
    }
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
    free(raw);
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

th_jwt_result th_jwt_check(const th_jwt_policy *p, const char *token, size_t len, const char *scope, time_t now,
                           char *why, size_t whylen)
{
    th_jwt_result res = TH_JWT_INVALID;
    char *copy = NULL, *kid = NULL, *claims_json = NULL;
    jwt_t *jwt = NULL;
    json_object *claims = NULL;
    const char *d1 = memchr(token, '.', len), *d2 = d1 ? memchr(d1 + 1, '.', len - (size_t)(d1 + 1 - token)) : NULL;
    size_t ai;
    if (!d2 || d1 == token || d2 == d1 + 1 || d2 + 1 == token + len ||
        memchr(d2 + 1, '.', len - (size_t)(d2 + 1 - token))) {
        WHY("not a compact JWS (header.payload.signature)");
        goto cleanup;
    }
    if (!read_header(token, (size_t)(d1 - token), &ai, &kid, why, whylen))
        goto cleanup;
    if (!(copy = strndup(token, len))) {
        WHY("out of memory");
        goto cleanup;
    }
    /* Without a kid every key of the right type is tried (small sets only). */
    bool tried = false;
    for (size_t i = 0; i < p->keys->n && !jwt; i++) {
        const th_jwk *k = &p->keys->keys[i];
        if (!key_fits(k, ai, kid))
            continue;
        tried = true;
        if (jwt_decode(&jwt, copy, (const unsigned char *)k->pem, (int)strlen(k->pem)) != 0)
            jwt = NULL;
        else if (jwt_get_alg(jwt) != algs[ai].alg) { /* libjwt read the same header; be sure */
            jwt_free(jwt);
            jwt = NULL;
        }
    }
    if (!jwt) {
        if (tried)
            WHY("the signature does not verify");
        else
            WHY("no key%s%s%s for %s", kid ? " with kid \"" : "", kid ? kid : "", kid ? "\"" : "", algs[ai].name);
        goto cleanup;
    }
    if (!(claims_json = jwt_get_grants_json(jwt, NULL)) || !(claims = json_tokener_parse(claims_json)) ||
        !json_object_is_type(claims, json_type_object)) {
        WHY("the claims are not a JSON object");
        goto cleanup;
    }
    const char *iss = opt_string(claims, "iss");
    double exp, nbf;
    if (!iss || strcmp(iss, p->issuer) != 0) {
        WHY("iss \"%s\" is not \"%s\"", iss ? iss : "(missing)", p->issuer);
    } else if (!audience_ok(claims, p->audience)) {
        WHY("aud does not name \"%s\"", p->audience);
    } else if (!numeric_date(claims, "exp", &exp)) {
        WHY("exp is missing: tokens must expire");
    } else if ((double)now > exp + (double)p->leeway_s) {
        WHY("expired");
    } else if (numeric_date(claims, "nbf", &nbf) && (double)now + (double)p->leeway_s < nbf) {
        WHY("not valid yet (nbf)");
    } else {
        /* "scope": space-separated (RFC 8693 section 4.2, RFC 9068). */
        const char *granted = opt_string(claims, "scope");
        res = !scope || !*scope || (granted && has_word(granted, scope)) ? TH_JWT_OK : TH_JWT_SCOPE;
    }
cleanup:
    json_object_put(claims);
    free(claims_json);
    jwt_free(jwt);
    free(copy);
    free(kid);
    return res;
}
