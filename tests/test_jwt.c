/*
** tests/test_jwt.c: JWT bearer tokens (transport/auth.c with jwt.c and
** jwks.c): signature against a JWKS, kid selection, issuer, audience,
** expiry and nbf, scopes, and the forgeries a JWKS must not admit.
*/
#include "config.h"

#include <jwt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check_main.h"
#include "jwt_keys.h"
#include "transport/auth.h"

#define ISS "https://as.example"
#define AUD "https://mcp.example/mcp"

static tk_key rsa, ec, other;
static char *jwks;

static void setup_keys(void)
{
    rsa = tk_key_new("rsa-1", "RS256");
    ec = tk_key_new("ec-1", "ES256");
    other = tk_key_new("rsa-1", "RS256"); /* same kid, not in the JWKS */
    tk_key ks[] = {rsa, ec};
    jwks = tk_jwks_file(ks, 2);
}

static void teardown_keys(void)
{
    unlink(jwks);
    free(jwks);
    tk_key_free(&rsa);
    tk_key_free(&ec);
    tk_key_free(&other);
}

static th_auth *load(void)
{
    th_auth *a = NULL;
    char err[256];
    ck_assert_msg(th_auth_add_jwks(&a, jwks, ISS, AUD, err, sizeof err), "%s", err);
    return a;
}

/* Claims with iss, aud, exp and scope; DEXP is exp relative to now. */
static char *claims(const char *iss, const char *aud_json, long dexp, const char *extra)
{
    char *c = malloc(512);
    ck_assert(c);
    snprintf(c, 512, "{\"iss\":\"%s\",\"aud\":%s,\"sub\":\"alice\",\"exp\":%ld%s%s}", iss, aud_json,
             (long)time(NULL) + dexp, extra ? "," : "", extra ? extra : "");
    return c;
}

/* th_auth_check of "Bearer TOK" with SCOPE, freeing TOK. */
static th_auth_result check_tok(th_auth *a, char *tok, const char *scope)
{
    size_t len = strlen(tok) + 8;
    char *h = malloc(len);
    ck_assert(h);
    snprintf(h, len, "Bearer %s", tok);
    th_auth_result r = th_auth_check(a, h, scope);
    free(h);
    free(tok);
    return r;
}

static th_auth_result check_claims(th_auth *a, const tk_key *k, const char *alg, int no_kid, char *cl,
                                   const char *scope)
{
    th_auth_result r = check_tok(a, tk_sign(k, alg, no_kid, cl), scope);
    free(cl);
    return r;
}

START_TEST(good_tokens_accepted)
{
    th_auth *a = load();
    ck_assert_int_eq(check_claims(a, &rsa, NULL, 0, claims(ISS, "\"" AUD "\"", 300, NULL), NULL), TH_AUTH_OK);
    ck_assert_int_eq(check_claims(a, &ec, NULL, 0, claims(ISS, "\"" AUD "\"", 300, NULL), NULL), TH_AUTH_OK);
    /* aud may be an array holding us among others. */
    ck_assert_int_eq(check_claims(a, &ec, NULL, 0, claims(ISS, "[\"https://x.example\",\"" AUD "\"]", 300, NULL), NULL),
                     TH_AUTH_OK);
    /* Within the leeway of exp and nbf. */
    ck_assert_int_eq(check_claims(a, &rsa, NULL, 0, claims(ISS, "\"" AUD "\"", -20, NULL), NULL), TH_AUTH_OK);
    char nbf[64];
    snprintf(nbf, sizeof nbf, "\"nbf\":%ld", (long)time(NULL) + 20);
    ck_assert_int_eq(check_claims(a, &rsa, NULL, 0, claims(ISS, "\"" AUD "\"", 300, nbf), NULL), TH_AUTH_OK);
    th_auth_free(a);
}
END_TEST

START_TEST(bad_signature_refused)
{
    th_auth *a = load();
    /* Signed by a key outside the JWKS that claims a kid inside it. */
    ck_assert_int_eq(check_claims(a, &other, NULL, 0, claims(ISS, "\"" AUD "\"", 300, NULL), NULL), TH_AUTH_INVALID);
    /* A good token with one payload byte changed. */
    char *cl = claims(ISS, "\"" AUD "\"", 300, NULL), *tok = tk_sign(&rsa, NULL, 0, cl);
    free(cl);
    char *dot = strchr(tok, '.');
    dot[5] = dot[5] == 'A' ? 'B' : 'A';
    ck_assert_int_eq(check_tok(a, tok, NULL), TH_AUTH_INVALID);
    /* ES256: one signature byte changed, and the signature cut short. */
    cl = claims(ISS, "\"" AUD "\"", 300, NULL);
    tok = tk_sign(&ec, NULL, 0, cl);
    free(cl);
    char *sig = strrchr(tok, '.') + 1;
    ck_assert_uint_eq(strlen(sig), 86); /* 64 bytes: R || S */
    char *cut = strdup(tok), *odd = strdup(tok);
    cut[strlen(cut) - 4] = '\0';
    /* The last character carries 2 bits and 4 unused ones: setting one of
     * those spells the same signature differently, which is refused. */
    char *last = odd + strlen(odd) - 1;
    *last = (char)(*last == 'z' ? 'y' : *last == '9' ? '8' : *last == '_' ? '-' : *last + 1);
    ck_assert_int_eq(check_tok(a, odd, NULL), TH_AUTH_INVALID);
    /* A JWS's base64url has no padding (RFC 7515 section 2): with "=="
     * the signature is the same bytes spelled another way, refused too. */
    size_t toklen = strlen(tok);
    char *padded = malloc(toklen + 3);
    ck_assert_ptr_nonnull(padded);
    memcpy(padded, tok, toklen);
    memcpy(padded + toklen, "==", 3);
    ck_assert_int_eq(check_tok(a, padded, NULL), TH_AUTH_INVALID);
    sig[10] = sig[10] == 'A' ? 'B' : 'A';
    ck_assert_int_eq(check_tok(a, tok, NULL), TH_AUTH_INVALID);
    ck_assert_int_eq(check_tok(a, cut, NULL), TH_AUTH_INVALID);
    /* Garbage and truncations. */
    ck_assert_int_eq(check_tok(a, strdup("a.b"), NULL), TH_AUTH_INVALID);
    ck_assert_int_eq(check_tok(a, strdup("e30.e30."), NULL), TH_AUTH_INVALID);
    ck_assert_int_eq(check_tok(a, strdup("!!!.e30.AAAA"), NULL), TH_AUTH_INVALID);
    th_auth_free(a);
}
END_TEST

START_TEST(forged_algorithms_refused)
{
    th_auth *a = load();
    /* alg none: no signature at all. */
    ck_assert_int_eq(check_claims(a, &rsa, "none", 0, claims(ISS, "\"" AUD "\"", 300, NULL), NULL), TH_AUTH_INVALID);
    /* HS256 keyed with the public key's PEM, which anyone can read. */
    ck_assert_int_eq(check_claims(a, &rsa, "HS256", 0, claims(ISS, "\"" AUD "\"", 300, NULL), NULL), TH_AUTH_INVALID);
    ck_assert_int_eq(check_claims(a, &rsa, "HS256", 1, claims(ISS, "\"" AUD "\"", 300, NULL), NULL), TH_AUTH_INVALID);
    /* The forgery is real: libjwt 1.10, handed the public key's PEM to
     * verify with, accepts it, since the token names the algorithm. */
    char *cl = claims(ISS, "\"" AUD "\"", 300, NULL), *tok = tk_sign(&rsa, "HS256", 0, cl);
    jwt_t *j = NULL;
    ck_assert_int_eq(jwt_decode(&j, tok, (const unsigned char *)rsa.pub_pem, (int)strlen(rsa.pub_pem)), 0);
    jwt_free(j);
    free(tok);
    free(cl);
    th_auth_free(a);
}
END_TEST

START_TEST(claims_checked)
{
    th_auth *a = load();
    /* Expired beyond the leeway. */
    ck_assert_int_eq(check_claims(a, &rsa, NULL, 0, claims(ISS, "\"" AUD "\"", -600, NULL), NULL), TH_AUTH_INVALID);
    /* Not valid for ten minutes. */
    char nbf[64];
    snprintf(nbf, sizeof nbf, "\"nbf\":%ld", (long)time(NULL) + 600);
    ck_assert_int_eq(check_claims(a, &rsa, NULL, 0, claims(ISS, "\"" AUD "\"", 900, nbf), NULL), TH_AUTH_INVALID);
    /* Wrong audience: another server's token, and one for no audience. */
    ck_assert_int_eq(check_claims(a, &rsa, NULL, 0, claims(ISS, "\"https://other.example/mcp\"", 300, NULL), NULL),
                     TH_AUTH_INVALID);
    ck_assert_int_eq(check_claims(a, &rsa, NULL, 0, claims(ISS, "[]", 300, NULL), NULL), TH_AUTH_INVALID);
    /* Wrong issuer. */
    ck_assert_int_eq(check_claims(a, &ec, NULL, 0, claims("https://evil.example", "\"" AUD "\"", 300, NULL), NULL),
                     TH_AUTH_INVALID);
    /* No exp: a token that never expires is refused. */
    char *tok = tk_sign(&rsa, NULL, 0, "{\"iss\":\"" ISS "\",\"aud\":\"" AUD "\"}");
    ck_assert_int_eq(check_tok(a, tok, NULL), TH_AUTH_INVALID);
    th_auth_free(a);
}
END_TEST

START_TEST(scope_claim)
{
    th_auth *a = load();
    const char *sc = "\"scope\":\"read tools:call\"";
    ck_assert_int_eq(check_claims(a, &ec, NULL, 0, claims(ISS, "\"" AUD "\"", 300, sc), "tools:call"), TH_AUTH_OK);
    ck_assert_int_eq(check_claims(a, &ec, NULL, 0, claims(ISS, "\"" AUD "\"", 300, sc), "read"), TH_AUTH_OK);
    /* Whole words only, and no scope claim at all. */
    ck_assert_int_eq(check_claims(a, &ec, NULL, 0, claims(ISS, "\"" AUD "\"", 300, sc), "tools"), TH_AUTH_SCOPE);
    ck_assert_int_eq(check_claims(a, &ec, NULL, 0, claims(ISS, "\"" AUD "\"", 300, NULL), "read"), TH_AUTH_SCOPE);
    /* A bad token with the scope is invalid, not merely short of scope. */
    ck_assert_int_eq(check_claims(a, &ec, NULL, 0, claims(ISS, "\"x\"", 300, sc), "read"), TH_AUTH_INVALID);
    th_auth_free(a);
}
END_TEST

START_TEST(kid_selects_key)
{
    th_auth *a = load();
    /* Without kid the keys of the algorithm's type are tried. */
    ck_assert_int_eq(check_claims(a, &rsa, NULL, 1, claims(ISS, "\"" AUD "\"", 300, NULL), NULL), TH_AUTH_OK);
    ck_assert_int_eq(check_claims(a, &ec, NULL, 1, claims(ISS, "\"" AUD "\"", 300, NULL), NULL), TH_AUTH_OK);
    /* A kid naming the other key, or no key, fails even with a good signature. */
    tk_key liar = rsa;
    liar.kid = "ec-1";
    ck_assert_int_eq(check_claims(a, &liar, NULL, 0, claims(ISS, "\"" AUD "\"", 300, NULL), NULL), TH_AUTH_INVALID);
    liar.kid = "unknown";
    ck_assert_int_eq(check_claims(a, &liar, NULL, 0, claims(ISS, "\"" AUD "\"", 300, NULL), NULL), TH_AUTH_INVALID);
    /* Two RSA keys, the token's is second: kid picks it, and without kid
     * both are tried. */
    tk_key zero = tk_key_new("rsa-0", "RS256");
    tk_key two[] = {zero, rsa};
    char *path = tk_jwks_file(two, 2), err[256];
    th_auth *b = NULL;
    ck_assert_msg(th_auth_add_jwks(&b, path, ISS, AUD, err, sizeof err), "%s", err);
    ck_assert_int_eq(check_claims(b, &rsa, NULL, 0, claims(ISS, "\"" AUD "\"", 300, NULL), NULL), TH_AUTH_OK);
    ck_assert_int_eq(check_claims(b, &rsa, NULL, 1, claims(ISS, "\"" AUD "\"", 300, NULL), NULL), TH_AUTH_OK);
    ck_assert_int_eq(check_claims(b, &other, NULL, 0, claims(ISS, "\"" AUD "\"", 300, NULL), NULL), TH_AUTH_INVALID);
    ck_assert_int_eq(check_claims(b, &zero, NULL, 0, claims(ISS, "\"" AUD "\"", 300, NULL), NULL), TH_AUTH_OK);
    tk_key_free(&zero);
    th_auth_free(b);
    unlink(path);
    free(path);
    th_auth_free(a);
}
END_TEST

/* A JWKS text written to a file; returns the error of loading it, or "" */
static const char *load_error(const char *text)
{
    static char err[256];
    char path[] = "/tmp/th-jwks-bad-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
    th_auth *a = NULL;
    err[0] = '\0';
    if (th_auth_add_jwks(&a, path, ISS, AUD, err, sizeof err))
        th_auth_free(a);
    else
        ck_assert_ptr_null(a);
    unlink(path);
    return err;
}

START_TEST(bad_jwks_named)
{
    ck_assert_ptr_nonnull(strstr(load_error("{"), "cannot read it as JSON"));
    ck_assert_ptr_nonnull(strstr(load_error("{\"k\":[]}"), ": keys: missing"));
    ck_assert_ptr_nonnull(strstr(load_error("{\"keys\":[{\"kty\":\"oct\",\"k\":\"AA\"}]}"), "no RSA or EC signing key"));
    ck_assert_ptr_nonnull(strstr(load_error("{\"keys\":[{\"kty\":\"RSA\",\"e\":\"AQAB\"}]}"), "keys[0].n: missing"));
    ck_assert_ptr_nonnull(strstr(load_error("{\"keys\":[{\"kty\":\"RSA\",\"n\":\"AQAB\",\"e\":\"AQAB\"}]}"),
                                 "keys[0].n: an RSA modulus of at least 2048 bits"));
    ck_assert_ptr_nonnull(strstr(load_error("{\"keys\":[{},{\"kty\":\"EC\",\"crv\":\"P-256\",\"x\":\"A*\",\"y\":\"AA\"}]}"),
                                 "keys[0].kty: missing"));
    ck_assert_ptr_nonnull(strstr(load_error("{\"keys\":[{\"kty\":\"EC\",\"crv\":\"P-256\",\"x\":\"A*\",\"y\":\"AA\"}]}"),
                                 "keys[0].x: not base64url"));
    ck_assert_ptr_nonnull(
        strstr(load_error("{\"keys\":[{\"kty\":\"EC\",\"crv\":\"secp256k1\",\"x\":\"AA\",\"y\":\"AA\"}]}"),
               "keys[0].crv: must be P-256"));
    /* 32 bytes each, but (1, 1) is not on P-256. */
    ck_assert_ptr_nonnull(strstr(load_error("{\"keys\":[{\"kty\":\"EC\",\"crv\":\"P-256\","
                                            "\"x\":\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAE\","
                                            "\"y\":\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAE\"}]}"),
                                 "is not a point on P-256"));
    /* A JWKS member may be padded (tools write it so): the same point,
     * decoded, and refused for what it is rather than as base64url. */
    ck_assert_ptr_nonnull(strstr(load_error("{\"keys\":[{\"kty\":\"EC\",\"crv\":\"P-256\","
                                            "\"x\":\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAE=\","
                                            "\"y\":\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAE\"}]}"),
                                 "is not a point on P-256"));
}
END_TEST

static Suite *jwt_suite(void)
{
    Suite *s = suite_create("jwt");
    TCase *tc = tcase_create("jwt");
    tcase_set_timeout(tc, 60);
    tcase_add_unchecked_fixture(tc, setup_keys, teardown_keys);
    tcase_add_test(tc, good_tokens_accepted);
    tcase_add_test(tc, bad_signature_refused);
    tcase_add_test(tc, forged_algorithms_refused);
    tcase_add_test(tc, claims_checked);
    tcase_add_test(tc, scope_claim);
    tcase_add_test(tc, kid_selects_key);
    tcase_add_test(tc, bad_jwks_named);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN(jwt_suite)
