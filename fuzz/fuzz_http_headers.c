/* SPDX-License-Identifier: MIT */
/*
** fuzz/fuzz_http_headers.c: a libFuzzer harness for the request-header
** helpers of transport/http.c (header trimming, Host/Origin authorities,
** Accept matching, Content-Length, Mcp-Param Base64 and its check against
** the body).
*/

/*
** They are static, and libmicrohttpd cannot be driven without a socket, so
** this harness compiles http.c into itself (make fuzz leaves
** fuzz/build/obj/transport_http.o out of its link) with
** MHD_lookup_connection_value replaced by a lookup in the headers the
** input gives. The input is an HTTP head and body:
**     Name: value            one header a line (the last of a name wins)
**                            a blank line
**     {"jsonrpc":...}        the body, a tools/call or any message
** The registry serves one tool whose "region" argument is mirrored in the
** Mcp-Param-Region header (x-mcp-header), as the conformance fixture has.
** A crash, a sanitizer report or an abort() below is a bug.
*/
#define _GNU_SOURCE
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* transport/mhd.h first: it points every libmicrohttpd name at its table
 * of dlopen()ed functions, and its include guard keeps http.c's own include
 * from doing so again after the lookup is pointed at the fake below. */
#include "transport/mhd.h"

/* The fake connection: the headers of one input. */
typedef struct fz_conn {
    char *names[64], *values[64];
    size_t n;
} fz_conn;

static const char *fz_lookup(struct MHD_Connection *c, enum MHD_ValueKind kind, const char *key)
{
    const fz_conn *k = (const fz_conn *)(void *)c;
    (void)kind;
    for (size_t i = k->n; i-- > 0;)
        if (strcasecmp(k->names[i], key) == 0)
            return k->values[i];
    return NULL;
}

#undef MHD_lookup_connection_value
#define MHD_lookup_connection_value fz_lookup
#include "transport/http.c"
#undef MHD_lookup_connection_value

#include "plugin/registry.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static th_registry *reg;
static th_mcp *mcp; /* serves REG: the Mcp-Param checks read its tools */

static _Noreturn void die(const char *what, const uint8_t *data, size_t size)
{
    fprintf(stderr, "fuzz_http_headers: %s: %.*s\n", what, (int)(size > 2000 ? 2000 : size), (const char *)data);
    abort();
}

static void quiet(th_log_level level, const char *line, void *ctx)
{
    (void)level;
    (void)line;
    (void)ctx;
}

static th_rc region(th_call *call, json_object *args, void *user_data)
{
    (void)call;
    (void)args;
    (void)user_data;
    return TH_OK;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    th_log_set_sink(quiet, NULL);
    static const th_tool tool = {
        TH_TOOL_INIT,
        .name = "region",
        .description = "mirrors region in Mcp-Param-Region",
        .input_schema = "{\"type\":\"object\",\"properties\":{\"region\":{\"type\":\"string\","
                        "\"x-mcp-header\":\"Region\"},\"n\":{\"type\":\"integer\",\"x-mcp-header\":\"N\"}}}",
        .handler = region,
    };
    th_err err;
    reg = th_registry_new();
    if (!reg || th_registry_add(reg, &tool, "fuzz", &err) != TH_OK) {
        fprintf(stderr, "fuzz_http_headers: cannot register the tool\n");
        exit(1);
    }
    th_registry_start(reg);
    th_mcp_config cfg;
    th_mcp_config_default(&cfg);
    if (!(mcp = th_mcp_new(reg, &cfg))) {
        fprintf(stderr, "fuzz_http_headers: cannot start the protocol\n");
        exit(1);
    }
    return 0;
}

/* BUF (SIZE bytes) holds a C string that fits, without a byte of optional
 * white space at either end when TRIMMED. */
static void check_buf(const char *buf, size_t size, bool trimmed, const uint8_t *data, size_t dsize)
{
    size_t n = strnlen(buf, size);
    if (n == size)
        die("a helper left its buffer without a NUL", data, dsize);
    if (trimmed && n && strchr(" \t", buf[0]))
        die("header() kept leading white space", data, dsize);
    if (trimmed && n && strchr(" \t", buf[n - 1]))
        die("header() kept trailing white space", data, dsize);
}

static void headers(fz_conn *k, const uint8_t *data, size_t size)
{
    static const char *const names[] = {"Host",      "Origin",         "Accept",          "Content-Type",
                                        H_VERSION,   "Mcp-Method",     "Mcp-Name",        H_SESSION,
                                        "Last-Event-ID", "Authorization", "Mcp-Param-Region", "Content-Length"};
    struct MHD_Connection *c = (struct MHD_Connection *)(void *)k;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        /* Each size the transport uses, and a tiny one for the cut. */
        static const size_t sizes[] = {1, 8, 64, 256, 1024, 4096};
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            char *buf = malloc(sizes[s]);
            if (!buf)
                return;
            /* A value cut to fit may end in white space: checked whole only. */
            if (header(c, names[i], buf, sizes[s]))
                check_buf(buf, sizes[s], strnlen(buf, sizes[s]) + 1 < sizes[s], data, size);
            free(buf);
        }
    }
    const char *host = fz_lookup(c, MHD_HEADER_KIND, "Host"), *origin = fz_lookup(c, MHD_HEADER_KIND, "Origin");
    char hb[16], ob[TH_HTTP_HOST_MAX];
    if (host && th_http_authority(host, hb, sizeof hb)) {
        check_buf(hb, sizeof hb, false, data, size);
        /* What passes is a host alone: no userinfo, nothing after a literal. */
        if (strpbrk(hb, "@/?#[]") && !(hb[0] == '[' && strchr(hb, ']') == hb + strlen(hb) - 1))
            die("th_http_authority passed more than a host", data, size);
        for (const char *p = hb; *p; p++)
            if (*p >= 'A' && *p <= 'Z')
                die("th_http_authority left an upper-case letter", data, size);
        (void)loopback_name(hb);
    }
    if (origin && th_http_origin_host(origin, ob, sizeof ob))
        check_buf(ob, sizeof ob, false, data, size);
    const char *cl = fz_lookup(c, MHD_HEADER_KIND, "Content-Length");
    size_t len;
    if (cl && th_http_length(cl, &len) && (size_t)snprintf(NULL, 0, "%zu", len) > strlen(cl))
        die("th_http_length read more digits than there are", data, size);
    const char *accept = fz_lookup(c, MHD_HEADER_KIND, "Accept");
    (void)accepts(accept, "application/json");
    (void)accepts(accept, "text/event-stream");
    /* Base64: at most 3 bytes per 4 characters, NUL-terminated (ASan
     * watches the buffer the decoder fills). */
    const char *pv = fz_lookup(c, MHD_HEADER_KIND, "Mcp-Param-Region");
    if (pv) {
        size_t n = strlen(pv), outlen = 0;
        unsigned char *out = th_base64_decode(pv, n, &outlen);
        if (out && (outlen > n / 4 * 3 || out[outlen] != '\0'))
            die("th_base64_decode gave more than 3 bytes per 4, or no NUL", data, size);
        free(out);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_conn k = {.n = 0};
    const char *p = (const char *)data, *end = p + size;
    /* The head: "Name: value" lines up to a blank one. A NUL ends a value,
     * as it ends one that libmicrohttpd hands over. */
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        if (le == p || (le == p + 1 && *p == '\r')) {
            p = le + (nl != NULL);
            break;
        }
        const char *colon = memchr(p, ':', (size_t)(le - p));
        if (colon && k.n < sizeof k.names / sizeof k.names[0]) {
            k.names[k.n] = strndup(p, (size_t)(colon - p));
            k.values[k.n] = strndup(colon + 1, (size_t)(le - colon - 1));
            if (k.names[k.n] && k.values[k.n])
                k.n++;
            else {
                free(k.names[k.n]);
                free(k.values[k.n]);
            }
        }
        p = le + (nl != NULL);
    }
    headers(&k, data, size);
    /* The body, parsed as serve_post parses it, then the checks of a
     * 2026-07-28 request's headers against it. */
    size_t blen = (size_t)(end - p);
    char *body = malloc(blen ? blen : 1);
    if (body) {
        memcpy(body, p, blen);
        th_rpc_msg m;
        th_rpc_parse(body, blen, &m);
        char why[256];
        if (m.kind != TH_RPC_BATCH && th_mcp_check_headers(mcp, NULL, &m, request_header, &k, why, sizeof why) &&
            !why[0])
            die("a refused request without a reason", data, size);
        th_rpc_msg_clear(&m);
        free(body);
    }
    for (size_t i = 0; i < k.n; i++) {
        free(k.names[i]);
        free(k.values[i]);
    }
    return 0;
}
