/* SPDX-License-Identifier: MIT */
/*
** fuzz/fuzz_message.c: a libFuzzer harness for the MCP layer: each input is
** one session's messages, one per line; what the host sends must be UTF-8
** JSON-RPC 2.0 (a batch: an array of responses) and every call must finish.
*/

/*
** `make fuzz` builds it with the other harnesses into fuzz/build/ and gives
** it a short run on fuzz/corpus/message (doc/HACKING.md, Fuzzing, says how to
** run it longer). It loads the bundled plugins from the build tree
** (FUZZ_PLUGIN_DIR, set by make; TH_FUZZ_PLUGIN_DIR overrides it at run
** time), resolving th_* against the executable (-rdynamic).
**
** A crash, a sanitizer report, an abort() below (a malformed message sent,
** or a call that never finished) or a libFuzzer timeout is a bug; the input
** it saves replays with fuzz/build/fuzz_message crash-<hash>, and belongs,
** once understood, among the regressions of tests/test_mcp_fuzz.c.
*/
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "protocol/jsonrpc.h"
#include "plugin/loader.h"
#include "base/log.h"
#include "protocol/mcp.h"
#include "plugin/registry.h"
#include "base/util.h"

#ifndef FUZZ_PLUGIN_DIR
#define FUZZ_PLUGIN_DIR "plugins/.libs"
#endif

/* How long the calls of one input may take to finish: far more than echo,
 * add or text need, so only a call that never ends trips it. */
#define DRAIN_MS 10000

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static th_registry *reg;
static th_mcp *mcp;

static void quiet(th_log_level level, const char *line, void *ctx)
{
    (void)level;
    (void)line;
    (void)ctx;
}

static void die(const char *what, const char *text, size_t len)
{
    fprintf(stderr, "fuzz_message: %s: %.*s\n", what, (int)(len > 2000 ? 2000 : len), text ? text : "");
    abort();
}

/* One JSON-RPC message (not an array) as the host must send it. */
static void check_one(json_object *back, const char *text, size_t len)
{
    json_object *v, *id;
    if (!json_object_is_type(back, json_type_object))
        die("sent a message that is not an object", text, len);
    if (!json_object_object_get_ex(back, "jsonrpc", &v) || !json_object_is_type(v, json_type_string) ||
        strcmp(json_object_get_string(v), "2.0") != 0)
        die("sent a message without \"jsonrpc\": \"2.0\"", text, len);
    bool is_response = json_object_object_get_ex(back, "id", &id);
    bool has_result = json_object_object_get_ex(back, "result", NULL);
    if (is_response && has_result == json_object_object_get_ex(back, "error", NULL))
        die("sent a response without exactly one of result and error", text, len);
    if (!is_response && !json_object_object_get_ex(back, "method", NULL))
        die("sent a message that is neither a response nor a notification", text, len);
}

/* Runs on the reader and on pool threads alike; checks need no state. */
static void check_send(void *ctx, json_object *msg)
{
    (void)ctx;
    size_t len;
    const char *text = json_object_to_json_string_length(msg, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE,
                                                         &len);
    if (!th_utf8_valid(text, len))
        die("sent a message that is not valid UTF-8", text, len);
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)text[i] < 0x20)
            die("sent a control byte, which breaks line framing", text, len);
    json_tokener *tok = json_tokener_new_ex(TH_RPC_MAX_DEPTH);
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    json_object *back = json_tokener_parse_ex(tok, text, (int)len);
    if (!back || json_tokener_get_parse_end(tok) != len)
        die("sent a message that does not parse back", text, len);
    /* A 2025-03-26 batch is answered with one array of responses. */
    if (json_object_is_type(back, json_type_array)) {
        size_t n = json_object_array_length(back);
        if (n == 0)
            die("sent an empty batch response", text, len);
        for (size_t i = 0; i < n; i++) {
            json_object *one = json_object_array_get_idx(back, i);
            if (!json_object_object_get_ex(one, "id", NULL))
                die("sent a notification inside a batch response", text, len);
            check_one(one, text, len);
        }
    } else {
        check_one(back, text, len);
    }
    json_object_put(back);
    json_tokener_free(tok);
    json_object_put(msg);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    th_log_set_sink(quiet, NULL);
    const char *dir = getenv("TH_FUZZ_PLUGIN_DIR");
    if (!dir)
        dir = FUZZ_PLUGIN_DIR;
    reg = th_registry_new();
    th_load_stats stats = {0};
    if (!reg || th_loader_load_dir(reg, dir, NULL, &stats) != TH_OK || !th_registry_get(reg, "echo")) {
        fprintf(stderr, "fuzz_message: cannot load the plugins (echo at least) from %s\n", dir);
        exit(1);
    }
    th_registry_start(reg);
    th_mcp_config cfg;
    th_mcp_config_default(&cfg);
    cfg.page_size = 2;
    mcp = th_mcp_new(reg, &cfg);
    if (!mcp) {
        fprintf(stderr, "fuzz_message: out of memory\n");
        exit(1);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    th_mcp_session *s = th_mcp_session_new(mcp, check_send, NULL);
    if (!s)
        return 0;
    /* One read's worth, as the stdio transport brackets it. */
    th_mcp_batch_begin(mcp);
    const char *p = (const char *)data, *end = p + size;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = (size_t)((nl ? nl : end) - p);
        /* A copy of exactly LEN bytes, so that ASan catches a read past it. */
        char *msg = malloc(len ? len : 1);
        if (!msg)
            break;
        memcpy(msg, p, len);
        th_mcp_session_handle(s, msg, len);
        free(msg);
        p += len + (nl != NULL);
    }
    th_mcp_batch_end(mcp);
    if (!th_mcp_session_drain(s, th_now_ms() + DRAIN_MS))
        die("a tool call did not finish", (const char *)data, size);
    th_mcp_session_free(s);
    return 0;
}
