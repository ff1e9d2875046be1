/* SPDX-License-Identifier: MIT */
/*
** fuzz/fuzz_state.c: a libFuzzer harness for the opaque tokens clients hand
** back: the MRTR requestState of protocol/mrtr.c (forged, signed with the
** server's key, and round-tripped) and the list cursors of pagination.c.
*/

/*
** The first byte picks the mode (its value modulo 4), the rest is its input:
**   0  a requestState as a client sends it: th_mrtr_begin must refuse it
**      with a message (no input can carry a MAC of the key set here);
**   1  the JSON payload of a state, base64url-encoded and MACed with the
**      server's key as th_mrtr_result does, so what lies behind the
**      integrity check is parsed too (only the server writes it, but a
**      leaked key or a bug in the writer must not crash the host);
**   2  inputResponses (JSON): when th_mrtr_begin takes them, the state
**      th_mrtr_result issues must be taken back for the same call, carry
**      the answers used, and be refused for another tool or principal;
**   3  a list cursor (the second byte is the list's length): an accepted
**      cursor names an offset inside the list, and the cursor
**      th_page_next writes for that offset reads back as it.
** A crash, a sanitizer report or an abort() below is a bug.
*/
#define _GNU_SOURCE
#include "config.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <json-c/json.h>

#include "base/base64.h"
#include "fuzz_json.h"
#include "protocol/mrtr.h"
#include "protocol/pagination.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The server's key, given as --state-key-file would give it. */
static const char state_key[] = "fuzz-state-key-0123456789abcdef0123456789";
#define STATE_PREFIX "v1." /* as mrtr.c writes it */

static _Noreturn void die(const char *what, const uint8_t *data, size_t size)
{
    fprintf(stderr, "fuzz_state: %s: %.*s\n", what, (int)(size > 2000 ? 2000 : size), (const char *)data);
    abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    int fd = memfd_create("fuzz_state_key", MFD_CLOEXEC);
    char path[64];
    th_err err;
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    if (fd < 0 || write(fd, state_key, strlen(state_key)) != (ssize_t)strlen(state_key) ||
        th_mrtr_key_file(path, &err) != TH_OK) {
        fprintf(stderr, "fuzz_state: cannot set the state key\n");
        exit(1);
    }
    close(fd);
    return 0;
}

/* {"requestState": STATE (LEN bytes)}. */
static json_object *state_params(const char *state, size_t len)
{
    json_object *p = json_object_new_object();
    json_object_object_add(p, "requestState", json_object_new_string_len(state, (int)len));
    return p;
}

static th_mrtr *begin(const char *tool, json_object *args, const char *principal, json_object *params, char *msg,
                      size_t msgsize)
{
    msg[0] = '\0';
    return th_mrtr_begin(tool, args, principal, params, msg, msgsize);
}

static void forged(const uint8_t *data, size_t size, const char *text, size_t len, json_object *args)
{
    char msg[512];
    json_object *params = state_params(text, len);
    th_mrtr *m = begin("echo", args, NULL, params, msg, sizeof msg);
    if (m)
        die("a requestState the server did not issue was taken", data, size);
    if (!msg[0])
        die("a requestState refused without a message", data, size);
    json_object_put(params);
}

static void signed_payload(const char *text, size_t len, json_object *args)
{
    char *body = th_b64url_encode(text, len);
    if (!body)
        abort();
    unsigned char mac[32];
    unsigned maclen = 0;
    if (!HMAC(EVP_sha256(), state_key, (int)strlen(state_key), (const unsigned char *)body, strlen(body), mac,
              &maclen))
        abort();
    char *sig = th_b64url_encode(mac, maclen);
    if (!sig)
        abort();
    size_t slen = strlen(STATE_PREFIX) + strlen(body) + 1 + strlen(sig) + 1;
    char *state = malloc(slen);
    if (!state)
        abort();
    snprintf(state, slen, "%s%s.%s", STATE_PREFIX, body, sig);
    char msg[512];
    json_object *params = state_params(state, strlen(state));
    th_mrtr *m = begin("echo", args, "principal", params, msg, sizeof msg);
    if (m) {
        json_object *r = NULL;
        json_object_object_foreach(th_mrtr_answers(m), key, val)
        {
            (void)val;
            if (th_mrtr_ask(m, key, "elicitation/create", NULL, &r) == TH_OK)
                json_object_put(r);
        }
        th_mrtr_free(m);
    }
    json_object_put(params);
    free(state);
    free(sig);
    free(body);
}

static void round_trip(const uint8_t *data, size_t size, const char *text, size_t len, json_object *args)
{
    char msg[512];
    /* Parsed as a request's params are (strict, UTF-8 checked): json-c's
     * lenient mode keeps texts like "0E" for doubles, which it then writes
     * back verbatim and cannot read again, and no client can send them. */
    json_object *responses = NULL;
    fz_parse_args(text, len, &responses);
    json_object *params = json_object_new_object();
    json_object_object_add(params, "inputResponses", responses);
    th_mrtr *m = begin("echo", args, "alice", params, msg, sizeof msg);
    if (!m) {
        if (!msg[0])
            die("inputResponses refused without a message", data, size);
        json_object_put(params);
        return;
    }
    /* Ask for every answer given, and one more that nobody gave. */
    json_object *used = json_object_new_object(), *r;
    if (json_object_is_type(responses, json_type_object)) {
        json_object_object_foreach(responses, key, val)
        {
            (void)val;
            if (th_mrtr_ask(m, key, "elicitation/create", json_object_new_object(), &r) == TH_OK) {
                json_object_object_add(used, key, r);
            }
        }
    }
    th_rc rc = th_mrtr_ask(m, "\x01never-answered", "elicitation/create", json_object_new_object(), &r);
    if (rc == TH_OK)
        json_object_put(r);
    else if (!th_mrtr_pending(m))
        die("a question without an answer left nothing pending", data, size);
    json_object *res = th_mrtr_result(m);
    th_mrtr_free(m);
    json_object_put(params); /* and RESPONSES with it */
    json_object *st = NULL;
    if (!res || !json_object_object_get_ex(res, "requestState", &st))
        die("th_mrtr_result issued no requestState", data, size);
    const char *state = json_object_get_string(st);
    params = state_params(state, strlen(state));
    /* The same call takes it back, with every answer it used. */
    if (!(m = begin("echo", args, "alice", params, msg, sizeof msg)))
        die("the server refused its own requestState", data, size);
    json_object_object_foreach(used, key, val)
    {
        json_object *again = NULL;
        if (th_mrtr_ask(m, key, "elicitation/create", NULL, &again) != TH_OK || !json_object_equal(again, val))
            die("an answer was lost or changed through requestState", data, size);
        json_object_put(again);
    }
    th_mrtr_free(m);
    /* Another tool or another principal may not use it. */
    if ((m = begin("add", args, "alice", params, msg, sizeof msg)) ||
        (m = begin("echo", args, "mallory", params, msg, sizeof msg)))
        die("a requestState was taken for another call", data, size);
    json_object_put(params);
    json_object_put(res);
    json_object_put(used);
}

static void cursor(const uint8_t *data, size_t size, const char *text, size_t len)
{
    static const char prefix[] = "r:";
    if (len < 1)
        return;
    size_t count = (unsigned char)text[0], offset = 0, end = 0;
    json_object *params = json_object_new_object();
    json_object_object_add(params, "cursor", json_object_new_string_len(text + 1, (int)(len - 1)));
    if (th_page_window(params, prefix, count, 0, &offset, &end)) {
        if (offset == 0 || offset >= count || end != count)
            die("a cursor outside the list was taken, or the window is not the rest", data, size);
        json_object *res = json_object_new_object(), *next, *p2 = json_object_new_object();
        size_t again = 0, again_end = 0;
        th_page_next(res, prefix, offset, count);
        if (!json_object_object_get_ex(res, "nextCursor", &next))
            die("no nextCursor for an offset inside the list", data, size);
        json_object_object_add(p2, "cursor", json_object_get(next));
        if (!th_page_window(p2, prefix, count, 1, &again, &again_end) || again != offset || again_end != offset + 1)
            die("th_page_next wrote a cursor th_page_window reads otherwise", data, size);
        json_object_put(p2);
        json_object_put(res);
    }
    json_object_put(params);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    unsigned mode = data[0] % 4;
    size_t len = size - 1;
    /* An exact-size copy, so that ASan sees a read past the end. */
    char *text = malloc(len ? len : 1);
    if (!text)
        return 0;
    memcpy(text, data + 1, len);
    json_object *args = json_tokener_parse("{\"text\":\"fuzz\",\"n\":1}");
    switch (mode) {
    case 0:
        forged(data, size, text, len, args);
        break;
    case 1:
        signed_payload(text, len, args);
        break;
    case 2:
        round_trip(data, size, text, len, args);
        break;
    default:
        cursor(data, size, text, len);
        break;
    }
    json_object_put(args);
    free(text);
    return 0;
}
