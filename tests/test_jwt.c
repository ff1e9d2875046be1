/* SPDX-License-Identifier: MIT */
/*
** tests/test_jwt.c: JWT bearer tokens (transport/auth.c with jwt.c and
** jwks.c): signature against a JWKS, kid selection, issuer, audience,
** expiry and nbf, scopes, and the forgeries a JWKS must not admit.
*/
#include "config.h"

#include <jwt.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/base64.h"
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
    /* ES384 is defined on P-384 only (RFC 7518 section 3.4): a P-256 key's
     * SHA-384 signature in ES384's 96-byte form verifies, and is refused. */
    char hdr[128], *cl384 = claims(ISS, "\"" AUD "\"", 300, NULL);
    snprintf(hdr, sizeof hdr, "{\"alg\":\"ES384\",\"kid\":\"%s\"}", ec.kid);
    ck_assert_int_eq(check_tok(a, tk_sign_ec384(&ec, hdr, cl384), NULL), TH_AUTH_INVALID);
    free(cl384);
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

/* TEXT as a JWKS file: the loaded checker, or NULL with ERR. */
static th_auth *load_text(const char *text, char *err, size_t errlen)
{
    char path[] = "/tmp/th-jwks-text-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
    th_auth *a = NULL;
    err[0] = '\0';
    if (!th_auth_add_jwks(&a, path, ISS, AUD, err, errlen))
        a = NULL;
    unlink(path);
    return a;
}

/* A token whose "signature" is the PKCS #1 v1.5 encoding of its own
 * RS256 digest: under e = 1 that is what a real signature decrypts to,
 * so it verifies without any private key. */
static char *forge_for_e1(const char *kid)
{
    static const unsigned char digest_info[] = {0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01,
                                                0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04, 0x20};
    char header[128], *cl = claims(ISS, "\"" AUD "\"", 300, NULL);
    snprintf(header, sizeof header, "{\"alg\":\"RS256\",\"kid\":\"%s\"}", kid);
    char *h = th_b64url_encode(header, strlen(header)), *c = th_b64url_encode(cl, strlen(cl));
    char input[1024];
    snprintf(input, sizeof input, "%s.%s", h, c);
    unsigned char em[256];
    size_t pad = sizeof em - 3 - sizeof digest_info - SHA256_DIGEST_LENGTH;
    em[0] = 0x00;
    em[1] = 0x01;
    memset(em + 2, 0xff, pad);
    em[2 + pad] = 0x00;
    memcpy(em + 3 + pad, digest_info, sizeof digest_info);
    SHA256((const unsigned char *)input, strlen(input), em + 3 + pad + sizeof digest_info);
    char *sig = th_b64url_encode(em, sizeof em), *tok = malloc(strlen(input) + strlen(sig) + 2);
    ck_assert(sig && tok);
    sprintf(tok, "%s.%s", input, sig);
    free(h);
    free(c);
    free(cl);
    free(sig);
    return tok;
}

/* An RSA key the host must not trust: e = 1 (anyone can sign), an even or
 * small e, and a 1024-bit modulus padded to 256 bytes with zeros. Each is
 * refused at load naming the member; had one loaded, the forgery is tried
 * and its verdict reported. */
START_TEST(weak_rsa_keys_refused)
{
    char *n2048 = tk_rsa_modulus(2048, 0), *n1024 = tk_rsa_modulus(1024, 200), text[2048], err[256];
    static const struct {
        int which; /* 0: n2048, 1: n1024 */
        const char *e, *want;
    } cases[] = {
        {0, "AQ", "keys[0].e: the RSA exponent must be odd and at least 65537"},   /* 1 */
        {0, "Aw", "keys[0].e: the RSA exponent must be odd and at least 65537"},   /* 3 */
        {0, "AQAC", "keys[0].e: the RSA exponent must be odd and at least 65537"}, /* 65538 */
        {0, "AAAAAQ", "keys[0].e: the RSA exponent must be odd and at least 65537"}, /* 1, zero-padded */
        {1, "AQAB", "keys[0].n: an RSA modulus of at least 2048 bits is required (it has 1024)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        snprintf(text, sizeof text, "{\"keys\":[{\"kty\":\"RSA\",\"kid\":\"weak\",\"n\":\"%s\",\"e\":\"%s\"}]}",
                 cases[i].which ? n1024 : n2048, cases[i].e);
        th_auth *a = load_text(text, err, sizeof err);
        if (a) {
            char *forged = forge_for_e1("weak");
            th_auth_result r = check_tok(a, forged, NULL);
            th_auth_free(a);
            ck_abort_msg("e=%s: the key loaded; a token forged without its private key got %s", cases[i].e,
                         r == TH_AUTH_OK ? "TH_AUTH_OK (accepted)" : "refused");
        }
        ck_assert_msg(strstr(err, cases[i].want), "e=%s: %s", cases[i].e, err);
    }
    /* The usual key still loads: 2048 bits, e = 65537. */
    snprintf(text, sizeof text, "{\"keys\":[{\"kty\":\"RSA\",\"n\":\"%s\",\"e\":\"AQAB\"}]}", n2048);
    th_auth *a = load_text(text, err, sizeof err);
    ck_assert_msg(a, "%s", err);
    th_auth_free(a);
    free(n2048);
    free(n1024);
}
END_TEST

/* exp, nbf and iat are numbers (RFC 7519 section 4.1): a signed token with
 * one as a string, NaN or Infinity is refused, not read as "no limit". */
START_TEST(dates_must_be_numbers)
{
    th_auth *a = load();
    long later = (long)time(NULL) + 300;
    char good[256], text[256];
    snprintf(good, sizeof good, "{\"iss\":\"" ISS "\",\"aud\":\"" AUD "\",\"sub\":\"alice\",\"exp\":%ld}", later);
    ck_assert_int_eq(check_tok(a, tk_sign_raw(&rsa, "{\"alg\":\"RS256\",\"kid\":\"rsa-1\"}", good), NULL), TH_AUTH_OK);
    const char *bad[] = {"\"exp\":\"%ld\"", "\"exp\":%ld,\"nbf\":\"0\"", "\"exp\":%ld,\"iat\":\"now\"",
                         "\"exp\":%ld,\"nbf\":null", "\"exp\":NaN,\"x\":%ld", "\"exp\":Infinity,\"x\":%ld",
                         "\"exp\":1e999,\"x\":%ld", "\"exp\":%ld,\"iat\":[1]"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char dates[64];
        snprintf(dates, sizeof dates, bad[i], later);
        snprintf(text, sizeof text, "{\"iss\":\"" ISS "\",\"aud\":\"" AUD "\",%s}", dates);
        th_auth_result r = check_tok(a, tk_sign_raw(&rsa, "{\"alg\":\"RS256\",\"kid\":\"rsa-1\"}", text), NULL);
        ck_assert_msg(r == TH_AUTH_INVALID, "%s: got %d, not TH_AUTH_INVALID", text, r);
    }
    th_auth_free(a);
}
END_TEST

/* The header and the claims are parsed as strictly as a request: a name
 * twice (json-c would keep the last), trailing bytes or bad UTF-8 refuse
 * the token even with a good signature; so does a JWKS file with a name
 * twice. */
START_TEST(jose_parsed_strictly)
{
    th_auth *a = load();
    long later = (long)time(NULL) + 300;
    char text[256];
    static const struct {
        const char *header, *claims; /* claims: a format taking exp */
    } bad[] = {
        {"{\"alg\":\"RS256\",\"kid\":\"rsa-1\",\"kid\":\"rsa-1\"}", "{\"iss\":\"" ISS "\",\"aud\":\"" AUD "\",\"exp\":%ld}"},
        {"{\"alg\":\"RS256\",\"kid\":\"rsa-1\"}", "{\"iss\":\"https://evil.example\",\"iss\":\"" ISS "\",\"aud\":\"" AUD "\",\"exp\":%ld}"},
        {"{\"alg\":\"RS256\",\"kid\":\"rsa-1\"}", "{\"iss\":\"" ISS "\",\"aud\":\"" AUD "\",\"exp\":%ld,\"exp\":1}"},
        {"{\"alg\":\"RS256\",\"kid\":\"rsa-1\"} x", "{\"iss\":\"" ISS "\",\"aud\":\"" AUD "\",\"exp\":%ld}"},
        {"{\"alg\":\"RS256\",\"kid\":\"rsa-1\"}", "{\"iss\":\"" ISS "\",\"aud\":\"" AUD "\",\"exp\":%ld,\"n\":\"\xed\xa0\x80\"}"},
        {"{\"alg\":\"RS256\",\"kid\":\"rsa-1\"}", "{\"iss\":\"" ISS "\",\"aud\":\"" AUD "\",\"exp\":%ld,\"sub\":7}"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(text, sizeof text, bad[i].claims, later);
        th_auth_result r = check_tok(a, tk_sign_raw(&rsa, bad[i].header, text), NULL);
        ck_assert_msg(r == TH_AUTH_INVALID, "%s . %s: got %d, not TH_AUTH_INVALID", bad[i].header, text, r);
    }
    th_auth_free(a);
    char err[256];
    ck_assert_ptr_null(load_text("{\"keys\":[],\"keys\":[{\"kty\":\"EC\"}]}", err, sizeof err));
    ck_assert_msg(strstr(err, "a member name appears twice"), "%s", err);
}
END_TEST

/* A JWK's "alg" restricts the tokens it verifies: the same key's RS384
 * signature is good, but the key says RS256. */
START_TEST(jwk_alg_restricts_the_token)
{
    tk_key k = tk_key_new("pinned", "RS256");
    char *jwk = malloc(strlen(k.jwk) + 32);
    ck_assert(jwk);
    sprintf(jwk, "{\"alg\":\"RS256\",%s", k.jwk + 1);
    free(k.jwk);
    k.jwk = jwk;
    char *path = tk_jwks_file(&k, 1), err[256];
    th_auth *a = NULL;
    ck_assert_msg(th_auth_add_jwks(&a, path, ISS, AUD, err, sizeof err), "%s", err);
    ck_assert_int_eq(check_claims(a, &k, NULL, 0, claims(ISS, "\"" AUD "\"", 300, NULL), NULL), TH_AUTH_OK);
    ck_assert_int_eq(check_claims(a, &k, "RS384", 0, claims(ISS, "\"" AUD "\"", 300, NULL), NULL), TH_AUTH_INVALID);
    ck_assert_int_eq(check_claims(a, &k, "RS512", 1, claims(ISS, "\"" AUD "\"", 300, NULL), NULL), TH_AUTH_INVALID);
    th_auth_free(a);
    /* Without "alg" the key's type decides: RS384 by the same kind of key passes. */
    a = load();
    ck_assert_int_eq(check_claims(a, &rsa, "RS384", 0, claims(ISS, "\"" AUD "\"", 300, NULL), NULL), TH_AUTH_OK);
    th_auth_free(a);
    unlink(path);
    free(path);
    tk_key_free(&k);
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
    tcase_add_test(tc, weak_rsa_keys_refused);
    tcase_add_test(tc, dates_must_be_numbers);
    tcase_add_test(tc, jose_parsed_strictly);
    tcase_add_test(tc, jwk_alg_restricts_the_token);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN(jwt_suite)
