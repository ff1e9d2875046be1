/* SPDX-License-Identifier: MIT */
/*
** Bearer token checks: against a token file (tokens compared as SHA-256
** hashes in constant time, so the file may hold hashes instead of tokens),
** and/or as JWTs against a JWKS file (transport/jwt.c does the checking),
** whose key set th_auth_reload_jwks swaps for the file's current one.
*/
#include "base/crypto.h"
#include "base/log.h"
#include "base/util.h"
#include "transport/auth.h"
#include "transport/jwt.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* Clock skew allowed on a JWT's exp and nbf (RFC 7519 suggests "a few
 * minutes" at most; one is enough between hosts that run NTP). */
#define JWT_LEEWAY_S 60

typedef struct entry {
    unsigned char hash[SHA256_DIGEST_LENGTH];
    char *scopes; /* " a b c " with spaces around each, for whole-word search */
} entry;

struct th_auth {
    entry *v;
    size_t n;
    char *all_scopes; /* union, space-separated */
    th_jwks *jwks;    /* JWT keys, or NULL: no JWTs; replaced under jwks_lock */
    char *jwks_path;  /* where they came from (for th_auth_reload_jwks) */
    pthread_rwlock_t jwks_lock; /* initialised with jwks_path: checks read, a reload writes */
    char *issuer, *audience;
    char *grants_claim; /* th_auth_set_grants_claim, or NULL */
};

static bool parse_hex(const char *s, size_t len, unsigned char *out)
{
    if (len != 2 * SHA256_DIGEST_LENGTH)
        return false;
    for (size_t i = 0; i < SHA256_DIGEST_LENGTH; i++) {
        int hi = th_hex_digit(s[2 * i]), lo = th_hex_digit(s[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return false;
        out[i] = (unsigned char)(hi << 4 | lo);
    }
    return true;
}

static bool has_word(const char *list, const char *w)
{
    size_t n = strlen(w);
    for (const char *p = list; (p = strstr(p, w)); p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return true;
    return false;
}

/* Adds the words of SCOPES (" a b ") to A's union. */
static bool add_scopes(th_auth *a, const char *scopes)
{
    char *copy = strdup(scopes), *save = NULL;
    if (!copy)
        return false;
    bool ok = true;
    for (char *w = strtok_r(copy, " ", &save); w && ok; w = strtok_r(NULL, " ", &save)) {
        if (a->all_scopes && has_word(a->all_scopes, w))
            continue;
        size_t old = a->all_scopes ? strlen(a->all_scopes) : 0;
        char *n = realloc(a->all_scopes, old + strlen(w) + 2);
        if (!n) {
            ok = false;
            break;
        }
        if (old)
            n[old++] = ' ';
        strcpy(n + old, w);
        a->all_scopes = n;
    }
    free(copy);
    return ok;
}

th_auth *th_auth_load(const char *path, char *err, size_t errlen)
{
    /* libcrypto is opened on first use (base/crypto.h): here, so that a
     * missing one is this option's clean error rather than an abort. */
    if (!th_crypto_open(err, errlen))
        return NULL;
    th_auth *a = calloc(1, sizeof *a);
    char *line = NULL;
    size_t cap = 0;
    unsigned lineno = 0;
    FILE *f = a ? fopen(path, "r") : NULL;
    if (!a)
        goto oom;
    if (!f) {
        snprintf(err, errlen, "%s: cannot open the token file", path);
        goto fail;
    }
    while (getline(&line, &cap, f) >= 0) {
        lineno++;
        line[strcspn(line, "\r\n")] = '\0';
        char *tok = line + strspn(line, " \t");
        if (*tok == '\0' || *tok == '#')
            continue;
        size_t tlen = strcspn(tok, " \t");
        char *rest = tok + tlen;
        rest += strspn(rest, " \t");
        entry e = {0};
        if (tlen > 7 && strncasecmp(tok, "sha256:", 7) == 0) {
            if (!parse_hex(tok + 7, tlen - 7, e.hash)) {
                snprintf(err, errlen, "%s:%u: sha256: needs 64 hex digits", path, lineno);
                goto fail;
            }
        } else {
            SHA256((const unsigned char *)tok, tlen, e.hash);
        }
        for (char *p = rest; *p; p++)
            if (*p == '\t')
                *p = ' ';
        size_t slen = strlen(rest);
        entry *v = realloc(a->v, (a->n + 1) * sizeof *v);
        if (!v || !(e.scopes = malloc(slen + 3))) {
            if (v)
                a->v = v;
            goto oom;
        }
        a->v = v;
        snprintf(e.scopes, slen + 3, " %s ", rest);
        a->v[a->n++] = e;
        if (!add_scopes(a, rest))
            goto oom;
    }
    if (a->n == 0) {
        snprintf(err, errlen, "%s: the token file holds no token", path);
        goto fail;
    }
    free(line);
    fclose(f);
    return a;
oom:
    snprintf(err, errlen, "%s: out of memory", path);
fail:
    free(line);
    if (f)
        fclose(f);
    th_auth_free(a);
    return NULL;
}

bool th_auth_add_jwks(th_auth **ap, const char *path, const char *issuer, const char *audience, char *err,
                      size_t errlen)
{
    if (!th_crypto_open(err, errlen)) /* as in th_auth_load */
        return false;
    th_auth *a = *ap ? *ap : calloc(1, sizeof *a);
    if (!a) {
        snprintf(err, errlen, "%s: out of memory", path);
        return false;
    }
    if (a->jwks) {
        snprintf(err, errlen, "%s: a JWKS file was given already", path);
        goto fail;
    }
    if (!(a->jwks = th_jwks_load(path, err, errlen)))
        goto fail;
    if (!(a->issuer = strdup(issuer)) || !(a->audience = strdup(audience)) || !(a->jwks_path = strdup(path))) {
        snprintf(err, errlen, "%s: out of memory", path);
        goto fail;
    }
    pthread_rwlock_init(&a->jwks_lock, NULL);
    *ap = a;
    return true;
fail:
    if (!*ap)
        th_auth_free(a);
    return false;
}

bool th_auth_set_grants_claim(th_auth *a, const char *claim)
{
    char *c = strdup(claim);
    if (!c)
        return false;
    free(a->grants_claim);
    a->grants_claim = c;
    return true;
}

bool th_auth_reload_jwks(th_auth *a, char *err, size_t errlen)
{
    if (!a || !a->jwks_path)
        return true;
    /* Loaded whole before the swap: a bad file changes nothing, and no
     * check ever sees half a key set. */
    th_jwks *fresh = th_jwks_load(a->jwks_path, err, errlen);
    if (!fresh)
        return false;
    pthread_rwlock_wrlock(&a->jwks_lock);
    th_jwks *old = a->jwks;
    a->jwks = fresh;
    pthread_rwlock_unlock(&a->jwks_lock);
    th_jwks_free(old); /* no check holds it: they hold the read lock while they use it */
    return true;
}

bool th_auth_note_scopes(th_auth *a, const char *scopes)
{
    return add_scopes(a, scopes);
}

th_auth_result th_auth_check(const th_auth *a, const char *authorization, const char *scope)
{
    return th_auth_check_grants(a, authorization, scope, NULL, NULL, 0);
}

/* A token-file entry's scopes (" a b ", spaces around each) as "a b", or
 * "" when they do not fit in SIZE. */
static void copy_scopes(const char *scopes, char *out, size_t size)
{
    const char *s = scopes + strspn(scopes, " ");
    size_t n = strlen(s);
    while (n && s[n - 1] == ' ')
        n--;
    if (n >= size)
        n = 0;
    memcpy(out, s, n);
    out[n] = '\0';
}

th_auth_result th_auth_check_grants(const th_auth *a, const char *authorization, const char *scope,
                                    th_auth_principal *who, char *granted, size_t size)
{
    th_auth_principal none = {{0}}, *out = who ? who : &none;
    *out = none;
    if (size)
        *granted = '\0';
    if (!authorization || strncasecmp(authorization, "Bearer ", 7) != 0)
        return TH_AUTH_MISSING;
    const char *tok = authorization + 7;
    tok += strspn(tok, " ");
    /* RFC 6750 2.1: b64token, then nothing (the caller trimmed the value).
     * A token followed by more words is not that token. */
    size_t tlen = strspn(tok, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/");
    tlen += strspn(tok + tlen, "=");
    if (tok[0] == '\0')
        return TH_AUTH_MISSING;
    if (tlen == 0 || tok[tlen] != '\0')
        return TH_AUTH_INVALID;
    unsigned char h[SHA256_DIGEST_LENGTH];
    SHA256((const unsigned char *)tok, tlen, h);
    /* Every entry is compared, so the time taken does not say which matched. */
    const entry *hit = NULL;
    for (size_t i = 0; i < a->n; i++)
        if (CRYPTO_memcmp(h, a->v[i].hash, sizeof h) == 0)
            hit = &a->v[i];
    if (!hit && a->jwks) {
        /* The lock is the key set's, not the rest of A's: const stays true
         * of everything a check reads. */
        pthread_rwlock_t *lock = (pthread_rwlock_t *)&a->jwks_lock;
        char why[160];
        pthread_rwlock_rdlock(lock);
        th_jwt_policy p = {a->jwks, a->issuer, a->audience, JWT_LEEWAY_S, a->grants_claim};
        th_jwt_result r = th_jwt_check(&p, tok, tlen, scope, time(NULL), out->id, granted, size, why, sizeof why);
        pthread_rwlock_unlock(lock);
        if (r == TH_JWT_INVALID)
            th_log(TH_LOG_DEBUG, "bearer JWT refused: %s", why);
        return r == TH_JWT_OK ? TH_AUTH_OK : r == TH_JWT_SCOPE ? TH_AUTH_SCOPE : TH_AUTH_INVALID;
    }
    if (!hit)
        return TH_AUTH_INVALID;
    _Static_assert(sizeof out->id == sizeof h, "a principal is a SHA-256");
    memcpy(out->id, h, sizeof h);
    if (size)
        copy_scopes(hit->scopes, granted, size);
    if (scope && *scope && !has_word(hit->scopes, scope))
        return TH_AUTH_SCOPE;
    return TH_AUTH_OK;
}

const char *th_auth_scopes(const th_auth *a)
{
    return a->all_scopes ? a->all_scopes : "";
}

void th_auth_free(th_auth *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->n; i++)
        free(a->v[i].scopes);
    free(a->v);
    free(a->all_scopes);
    th_jwks_free(a->jwks);
    if (a->jwks_path)
        pthread_rwlock_destroy(&a->jwks_lock);
    free(a->jwks_path);
    free(a->issuer);
    free(a->audience);
    free(a->grants_claim);
    free(a);
}
