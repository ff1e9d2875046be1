/* SPDX-License-Identifier: MIT */
/*
** protocol/mrtr.c: the multi round-trip pattern of 2026-07-28 for one
** tools/call (see mrtr.h), and the key its requestState is signed with.
** requestState is "v1." base64url(payload JSON) "." base64url(HMAC-SHA256):
** the payload names the tool, digests of the arguments and of the
** authenticated principal (so a state cannot be replayed by another client
** of an authorizing transport), an expiry (wall
** clock, so any instance behind a load balancer can judge it) and the
** answers of earlier rounds. It is attacker-controlled input: nothing in it
** is used before its MAC has been checked in constant time.
*/
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/base64.h"
#include "base/compat.h"
#include "base/crypto.h"
#include "protocol/jsonrpc.h"
#include "protocol/mrtr.h"

#define KEY_MIN 32
#define KEY_MAX 4096
#define STATE_PREFIX "v1."

static _Atomic long long state_ttl_ms = TH_MRTR_STATE_TTL_MS;
static unsigned char state_key[KEY_MAX];
static size_t state_key_len;
static pthread_once_t random_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t key_lock = PTHREAD_MUTEX_INITIALIZER;

void th_mrtr_set_ttl_ms(long long ms)
{
    atomic_store(&state_ttl_ms, ms);
}

th_rc th_mrtr_key_file(const char *path, th_err *err)
{
    unsigned char buf[KEY_MAX + 1];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return th_err_set(err, TH_ERR_IO, "--state-key-file %s: %s", path, strerror(errno));
    size_t n = 0;
    ssize_t got;
    while (n < sizeof buf && (got = read(fd, buf + n, sizeof buf - n)) != 0) {
        if (got < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            close(fd);
            return th_err_set(err, TH_ERR_IO, "--state-key-file %s: %s", path, strerror(e));
        }
        n += (size_t)got;
    }
    close(fd);
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
        n--; /* "echo KEY > file" and "KEY" written by an editor are one key */
    if (n < KEY_MIN || n > KEY_MAX) {
        OPENSSL_cleanse(buf, sizeof buf);
        return th_err_set(err, TH_ERR_VALUE,
                          "--state-key-file %s: the key must be %d to %d bytes (e.g. `openssl rand -hex 32`), "
                          "it has %zu",
                          path, KEY_MIN, KEY_MAX, n);
    }
    pthread_mutex_lock(&key_lock);
    memcpy(state_key, buf, n);
    state_key_len = n;
    pthread_mutex_unlock(&key_lock);
    OPENSSL_cleanse(buf, sizeof buf);
    return TH_OK;
}

static void random_key(void)
{
    pthread_mutex_lock(&key_lock);
    if (state_key_len == 0 && th_random_bytes(state_key, KEY_MIN) == 0)
        state_key_len = KEY_MIN;
    pthread_mutex_unlock(&key_lock);
}

/* HMAC-SHA256 of LEN bytes at DATA into MAC; false without a key. */
static bool mac_of(const char *data, size_t len, unsigned char mac[SHA256_DIGEST_LENGTH])
{
    pthread_once(&random_once, random_key);
    unsigned int maclen = 0;
    pthread_mutex_lock(&key_lock);
    bool ok = state_key_len > 0 && HMAC(EVP_sha256(), state_key, (int)state_key_len, (const unsigned char *)data,
                                        len, mac, &maclen) != NULL;
    pthread_mutex_unlock(&key_lock);
    /* HMAC() leaves per-thread state (its error queue) on this thread, a
     * pool thread that may still be running at exit, where it shows as a
     * leak: MACs are rare (one per round), so it is released each time. */
    OPENSSL_thread_stop();
    return ok && maclen == SHA256_DIGEST_LENGTH;
}

/* ---- one call ------------------------------------------------------------- */

struct th_mrtr {
    char *tool;
    /* The digests bind a state to one call; they are taken only when a state
     * is checked or issued (see digests), so that a plain call pays nothing. */
    json_object *args;     /* a reference, or NULL */
    char *principal;       /* a copy, or NULL */
    bool digested;
    char digest[2 * SHA256_DIGEST_LENGTH + 1]; /* of the arguments' text */
    char sub[2 * SHA256_DIGEST_LENGTH + 1];    /* of the principal, or "" */
    /* Made on first use (lazy): nearly every call asks nothing, and three
     * objects per modern call were a tenth of its instructions. */
    json_object *answers;  /* key -> result: earlier rounds, then the retry's */
    json_object *used;     /* the answers this run asked for */
    json_object *requests; /* key -> {method, params}: this run's questions */
};

static long long wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void hex_digest(const char *data, size_t len, char out[2 * SHA256_DIGEST_LENGTH + 1])
{
    unsigned char d[SHA256_DIGEST_LENGTH];
    SHA256((const unsigned char *)data, len, d);
    OPENSSL_thread_stop(); /* as in mac_of: no per-thread state left behind */
    for (size_t i = 0; i < sizeof d; i++)
        snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static void args_digest(json_object *args, char out[2 * SHA256_DIGEST_LENGTH + 1])
{
    size_t len = 0;
    const char *text = args ? json_object_to_json_string_length(args, JSON_C_TO_STRING_PLAIN, &len) : "{}";
    if (!text) {
        text = "{}";
        len = 2;
    } else if (!args) {
        len = 2;
    }
    hex_digest(text, len, out);
}

/* M's digests of its arguments and principal, taken once. */
static void digests(th_mrtr *m)
{
    if (m->digested)
        return;
    args_digest(m->args, m->digest);
    if (m->principal)
        hex_digest(m->principal, strlen(m->principal), m->sub);
    m->digested = true;
}

/* O's member NAME when it is a string, else NULL. A state's payload is
 * MACed, so only this server wrote it; still a member of another type
 * (json-c gives NULL for null) must be a refusal, never a NULL strcmp. */
static const char *string_member(json_object *o, const char *name)
{
    json_object *v;
    return json_object_object_get_ex(o, name, &v) && json_object_is_type(v, json_type_string)
               ? json_object_get_string(v)
               : NULL;
}

/* *SLOT, an object made on first use; NULL when out of memory. */
static json_object *lazy(json_object **slot)
{
    if (!*slot)
        *slot = json_object_new_object();
    return *slot;
}

/* Add each member of FROM (an object) to *TO, made when needed; false when
 * out of memory. */
static bool add_all(json_object **to, json_object *from)
{
    if (json_object_object_length(from) == 0)
        return true;
    json_object *o = lazy(to);
    if (!o)
        return false;
    json_object_object_foreach(from, key, val) json_object_object_add(o, key, json_object_get(val));
    return true;
}

/* Verify STATE and take its answers into M; false with MSG on refusal. */
static bool take_state(th_mrtr *m, const char *state, char *msg, size_t msgsize)
{
    const char *body = state + strlen(STATE_PREFIX), *dot = strrchr(state, '.');
    unsigned char mac[SHA256_DIGEST_LENGTH], *given = NULL, *payload = NULL;
    size_t given_len = 0, payload_len = 0;
    json_object *o = NULL, *v;
    bool ok = false;
    if (strncmp(state, STATE_PREFIX, strlen(STATE_PREFIX)) != 0 || !dot || dot < body) {
        snprintf(msg, msgsize, "Invalid params: requestState is not one this server issued");
        goto done;
    }
    given = th_b64url_decode(dot + 1, strlen(dot + 1), &given_len);
    if (!given || given_len != sizeof mac || !mac_of(body, (size_t)(dot - body), mac) ||
        CRYPTO_memcmp(mac, given, sizeof mac) != 0) {
        snprintf(msg, msgsize, "Invalid params: requestState failed its integrity check (altered, or signed with "
                               "another key: give every instance the same --state-key-file)");
        goto done;
    }
    payload = th_b64url_decode(body, (size_t)(dot - body), &payload_len);
    if (payload) { /* our own text (MAC checked), read back as the answers were first read: numbers
                    * past 64 bits and lone surrogates stay as sent, nesting as deep as a request's */
        th_rpc_msg pm;
        th_rpc_parse((const char *)payload, payload_len, &pm);
        o = json_object_get(pm.msg);
        th_rpc_msg_clear(&pm);
    }
    if (!o || !json_object_is_type(o, json_type_object)) {
        snprintf(msg, msgsize, "Invalid params: requestState is not one this server issued");
        goto done;
    }
    if (!json_object_object_get_ex(o, "exp", &v) || json_object_get_int64(v) < wall_ms()) {
        snprintf(msg, msgsize, "Invalid params: requestState has expired (it is valid for %lld s); call the tool "
                               "again without it",
                 TH_MRTR_STATE_TTL_MS / 1000);
        goto done;
    }
    digests(m);
    const char *tool = string_member(o, "tool"), *args = string_member(o, "args"), *sub = string_member(o, "sub");
    if (!tool || strcmp(tool, m->tool) != 0 || !args || strcmp(args, m->digest) != 0) {
        snprintf(msg, msgsize, "Invalid params: requestState was issued for another tool call (tool or "
                               "arguments differ)");
        goto done;
    }
    if (!sub || strcmp(sub, m->sub) != 0) {
        snprintf(msg, msgsize, "Invalid params: requestState was issued to another client (its credentials "
                               "differ)");
        goto done;
    }
    if (json_object_object_get_ex(o, "answers", &v) && json_object_is_type(v, json_type_object) &&
        !add_all(&m->answers, v)) {
        snprintf(msg, msgsize, "Internal error: out of memory");
        goto done;
    }
    ok = true;
done:
    free(given);
    free(payload);
    json_object_put(o);
    return ok;
}

void th_mrtr_free(th_mrtr *m)
{
    if (!m)
        return;
    free(m->tool);
    json_object_put(m->args);
    free(m->principal);
    json_object_put(m->answers);
    json_object_put(m->used);
    json_object_put(m->requests);
    free(m);
}

th_mrtr *th_mrtr_begin(const char *tool, json_object *args, const char *principal, json_object *params, char *msg,
                       size_t msgsize)
{
    json_object *responses = NULL, *state = NULL;
    th_mrtr *m = calloc(1, sizeof *m);
    if (!m || !(m->tool = strdup(tool))) {
        snprintf(msg, msgsize, "Internal error: out of memory");
        th_mrtr_free(m);
        return NULL;
    }
    m->args = args ? json_object_get(args) : NULL;
    if (principal && !(m->principal = strdup(principal))) {
        snprintf(msg, msgsize, "Internal error: out of memory");
        th_mrtr_free(m);
        return NULL;
    }
    if (params && json_object_object_get_ex(params, "inputResponses", &responses) &&
        !json_object_is_type(responses, json_type_object)) {
        snprintf(msg, msgsize, "Invalid params: inputResponses must be an object mapping request keys to results");
        goto refuse;
    }
    if (responses) {
        json_object_object_foreach(responses, key, val)
        {
            if (!json_object_is_type(val, json_type_object)) {
                snprintf(msg, msgsize, "Invalid params: inputResponses[\"%.64s\"] must be a result object", key);
                goto refuse;
            }
        }
    }
    if (params && json_object_object_get_ex(params, "requestState", &state)) {
        if (!json_object_is_type(state, json_type_string)) {
            snprintf(msg, msgsize, "Invalid params: requestState must be the string the server sent");
            goto refuse;
        }
        if (!take_state(m, json_object_get_string(state), msg, msgsize))
            goto refuse;
    }
    /* The retry's answers win over older ones of the same key. */
    if (responses && !add_all(&m->answers, responses)) {
        snprintf(msg, msgsize, "Internal error: out of memory");
        goto refuse;
    }
    return m;
refuse:
    th_mrtr_free(m);
    return NULL;
}

th_rc th_mrtr_ask(th_mrtr *m, const char *key, const char *method, json_object *params, json_object **result)
{
    json_object *answer;
    if (json_object_object_get_ex(m->used, key, NULL) || json_object_object_get_ex(m->requests, key, NULL)) {
        json_object_put(params);
        return TH_ERR_VALUE;
    }
    if (json_object_object_get_ex(m->answers, key, &answer)) {
        json_object_put(params);
        if (!lazy(&m->used))
            return TH_ERR_NOMEM;
        json_object_object_add(m->used, key, json_object_get(answer));
        *result = json_object_get(answer);
        return TH_OK;
    }
    json_object *req = lazy(&m->requests) ? json_object_new_object() : NULL;
    if (!req) {
        json_object_put(params);
        return TH_ERR_NOMEM;
    }
    json_object_object_add(req, "method", json_object_new_string(method));
    json_object_object_add(req, "params", params);
    json_object_object_add(m->requests, key, req);
    return TH_ERR_INPUT_REQUIRED;
}

json_object *th_mrtr_answers(th_mrtr *m)
{
    return m ? lazy(&m->answers) : NULL;
}

bool th_mrtr_pending(const th_mrtr *m)
{
    return m && m->requests && json_object_object_length(m->requests) > 0;
}

json_object *th_mrtr_result(th_mrtr *m)
{
    json_object *payload = json_object_new_object(), *r = json_object_new_object();
    char *state = NULL, *body = NULL, *sig = NULL;
    unsigned char mac[SHA256_DIGEST_LENGTH], nonce[12];
    if (!payload || !r || !lazy(&m->used) || !lazy(&m->requests))
        goto fail;
    /* A nonce makes every round's state differ, even for equal answers. */
    if (th_random_bytes(nonce, sizeof nonce) != 0)
        goto fail;
    char *n = th_b64url_encode(nonce, sizeof nonce);
    if (!n)
        goto fail;
    digests(m);
    json_object_object_add(payload, "tool", json_object_new_string(m->tool));
    json_object_object_add(payload, "args", json_object_new_string(m->digest));
    json_object_object_add(payload, "sub", json_object_new_string(m->sub));
    json_object_object_add(payload, "exp", json_object_new_int64(wall_ms() + atomic_load(&state_ttl_ms)));
    json_object_object_add(payload, "nonce", json_object_new_string(n));
    free(n);
    json_object_object_add(payload, "answers", json_object_get(m->used));
    size_t len;
    const char *text = json_object_to_json_string_length(payload, JSON_C_TO_STRING_PLAIN, &len);
    if (!text || !(body = th_b64url_encode((const unsigned char *)text, len)) || !mac_of(body, strlen(body), mac) ||
        !(sig = th_b64url_encode(mac, sizeof mac)))
        goto fail;
    size_t slen = strlen(STATE_PREFIX) + strlen(body) + 1 + strlen(sig) + 1;
    if (!(state = malloc(slen)))
        goto fail;
    snprintf(state, slen, "%s%s.%s", STATE_PREFIX, body, sig);
    json_object_object_add(r, "resultType", json_object_new_string("input_required"));
    json_object_object_add(r, "inputRequests", json_object_get(m->requests));
    json_object_object_add(r, "requestState", json_object_new_string(state));
    free(state);
    free(body);
    free(sig);
    json_object_put(payload);
    return r;
fail:
    free(body);
    free(sig);
    json_object_put(payload);
    json_object_put(r);
    return NULL;
}
