/* SPDX-License-Identifier: MIT */
/*
** fuzz/fuzz_http_auth.c: a libFuzzer harness for authorised POSTs through
** the real HTTP transport (transport/http.c behind libmicrohttpd, on a
** loopback port): bearer tokens from a token file and RS256 JWTs from a
** JWKS, per-tool scopes, and legacy sessions bound to their principal.
*/

/*
** The input is one POST: its first byte picks the credential (low three
** bits: a token-file token with the scope "tools", one without, a JWT of
** subject alice with it, one of bob without, no token, a token nobody
** issued) and how it is sent (bits 3-4: in its own legacy session, in
** another principal's, with the modern headers, or with no session); the
** rest is the body. The server runs in this process, so a crash in any of
** its threads ends the run. Besides that, these are bugs (abort()):
**   - no complete HTTP response, or none within the time limit;
**   - a request without a good token not answered 401;
**   - another principal's session answered as if it were the sender's;
**   - "echo" (scope "tools") running for a token without it.
*/
#define _GNU_SOURCE
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/base64.h"
#include "base/log.h"
#include "plugin/registry.h"
#include "protocol/mcp.h"
#include "transport/auth.h"
#include "transport/http.h"

#define ISSUER "https://as.example"
#define AUDIENCE "https://mcp.example/mcp"
/* Longer than any answer of an in-process echo on a loaded machine; libFuzzer's
 * -timeout catches a hang sooner. */
#define READ_TIMEOUT_S 20

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The credentials an input may send, and what each may do. */
enum { CRED_FILE_SCOPED, CRED_FILE_PLAIN, CRED_JWT_SCOPED, CRED_JWT_PLAIN, CRED_NONE, CRED_FORGED, CRED_COUNT };
enum { SEND_OWN, SEND_OTHERS, SEND_MODERN, SEND_NO_SESSION };

static struct {
    char *bearer;     /* the token, or NULL (CRED_NONE) */
    bool known;       /* the server takes it */
    bool scoped;      /* it carries "tools" */
    char sid[128];    /* its legacy session ("" until opened) */
} creds[CRED_COUNT];

static unsigned port;
/* Calls of echo so far: one input at a time, so a rise during an input is
 * that input's doing. */
static atomic_ulong echoes;

static _Noreturn void die(const char *what, const uint8_t *data, size_t size, const char *answer)
{
    fprintf(stderr, "fuzz_http_auth: %s\ninput: %.*s\nanswer: %.2000s\n", what, (int)(size > 2000 ? 2000 : size),
            (const char *)data, answer ? answer : "(none)");
    abort();
}

static void quiet(th_log_level level, const char *line, void *ctx)
{
    (void)level;
    (void)line;
    (void)ctx;
}

static th_rc echo(th_call *call, json_object *args, void *user_data)
{
    (void)user_data;
    json_object *t;
    atomic_fetch_add(&echoes, 1);
    return th_call_text(call, json_object_object_get_ex(args, "text", &t) ? json_object_get_string(t) : "");
}

static th_rc open_tool(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    return th_call_text(call, "open");
}

/* One HTTP exchange on a new connection: the whole answer (malloc'd,
 * NUL-terminated), or NULL when none came. */
static char *exchange(const char *head, const char *body, size_t blen)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct timeval tv = {.tv_sec = READ_TIMEOUT_S};
    char *out = NULL;
    size_t len = 0, cap = 0;
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0)
        goto cleanup;
    /* The server may refuse on the head and close before reading the body:
     * a failed body write is its answer, read below. */
    if (write(fd, head, strlen(head)) != (ssize_t)strlen(head))
        goto cleanup;
    if (blen)
        (void)!write(fd, body, blen);
    for (;;) {
        if (len + 4096 + 1 > cap) {
            char *grown = realloc(out, cap = cap ? cap * 2 : 8192);
            if (!grown)
                goto cleanup;
            out = grown;
        }
        ssize_t n = read(fd, out + len, cap - len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) { /* the time limit, or a reset: no whole answer */
            free(out);
            out = NULL;
            goto cleanup;
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    if (out)
        out[len] = '\0';
cleanup:
    if (fd >= 0)
        close(fd);
    return out;
}

static int status_of(const char *answer)
{
    int status = 0;
    return answer && sscanf(answer, "HTTP/1.1 %d", &status) == 1 ? status : 0;
}

/* Appends the header line NAME: VALUE to HEAD (of SIZE) when VALUE is
 * not NULL; false when it does not fit. */
static bool add_header(char *head, size_t size, const char *name, const char *value)
{
    size_t used = strlen(head);
    return !value || (size_t)snprintf(head + used, size - used, "%s: %s\r\n", name, value) < size - used;
}

/* POST BODY with credential C, in session SID (NULL: none), with the
 * modern headers when MODERN (Mcp-Method and Mcp-Name: METHOD and NAME,
 * each NULL when the body has none). */
static char *post(int c, const char *sid, bool modern, const char *method, const char *name, const char *body,
                  size_t blen)
{
    char head[8192], len[32], bearer[2048] = "";
    snprintf(head, sizeof head,
             "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nConnection: close\r\n"
             "Content-Type: application/json\r\nAccept: application/json\r\n",
             port);
    snprintf(len, sizeof len, "%zu", blen);
    if (creds[c].bearer)
        snprintf(bearer, sizeof bearer, "Bearer %s", creds[c].bearer);
    if (!add_header(head, sizeof head, "Content-Length", len) ||
        !add_header(head, sizeof head, "Authorization", creds[c].bearer ? bearer : NULL) ||
        !add_header(head, sizeof head, "Mcp-Session-Id", sid) ||
        !add_header(head, sizeof head, "MCP-Protocol-Version", modern ? TH_MCP_MODERN_VERSION : NULL) ||
        !add_header(head, sizeof head, "Mcp-Method", modern ? method : NULL) ||
        !add_header(head, sizeof head, "Mcp-Name", modern ? name : NULL) ||
        strlen(head) + 3 > sizeof head)
        return NULL;
    strcat(head, "\r\n");
    return exchange(head, body, blen);
}

static const char init_body[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                                "\"2025-03-26\",\"capabilities\":{},\"clientInfo\":{\"name\":\"f\",\"version\":\"1\"}}}";
static const char initialized[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";

/* Open C's legacy session (again, when the table's eviction ended it). */
static void open_session(int c)
{
    creds[c].sid[0] = '\0';
    char *a = post(c, NULL, false, NULL, NULL, init_body, sizeof init_body - 1);
    const char *h = a ? strcasestr(a, "\r\nMcp-Session-Id: ") : NULL;
    if (h) {
        h += strlen("\r\nMcp-Session-Id: ");
        snprintf(creds[c].sid, sizeof creds[c].sid, "%.*s", (int)strcspn(h, "\r\n"), h);
        free(post(c, creds[c].sid, false, NULL, NULL, initialized, sizeof initialized - 1));
    }
    free(a);
    if (!creds[c].sid[0]) {
        fprintf(stderr, "fuzz_http_auth: cannot open a session for credential %d\n", c);
        exit(1);
    }
}

/* A JWT signed by KEY (RS256) over CLAIMS, malloc'd. */
static char *sign(EVP_PKEY *key, const char *claims)
{
    static const char header[] = "{\"alg\":\"RS256\",\"kid\":\"k1\"}";
    char *h = th_b64url_encode(header, sizeof header - 1), *c = th_b64url_encode(claims, strlen(claims));
    size_t inlen = strlen(h) + 1 + strlen(c);
    char *input = malloc(inlen + 1), *sig64 = NULL, *tok = NULL;
    unsigned char sig[512];
    size_t siglen = sizeof sig;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    snprintf(input, inlen + 1, "%s.%s", h, c);
    if (ctx && EVP_DigestSignInit(ctx, NULL, EVP_sha256(), NULL, key) == 1 &&
        EVP_DigestSign(ctx, sig, &siglen, (const unsigned char *)input, inlen) == 1 &&
        (sig64 = th_b64url_encode(sig, siglen)) && (tok = malloc(inlen + 2 + strlen(sig64))))
        sprintf(tok, "%s.%s", input, sig64);
    EVP_MD_CTX_free(ctx);
    free(h);
    free(c);
    free(input);
    free(sig64);
    if (!tok) {
        fprintf(stderr, "fuzz_http_auth: cannot sign a token\n");
        exit(1);
    }
    return tok;
}

/* Writes TEXT to a new temporary file; returns its path. */
static char *temp_file(const char *text)
{
    char *path = strdup("/tmp/fuzz-http-auth-XXXXXX");
    int fd = path ? mkstemp(path) : -1;
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text) || close(fd) != 0) {
        fprintf(stderr, "fuzz_http_auth: cannot write a temporary file\n");
        exit(1);
    }
    return path;
}

/* The JWKS of KEY, and the JWTs of alice (scope "tools") and bob (none). */
static char *make_jwks(EVP_PKEY *key)
{
    BIGNUM *n = NULL, *e = NULL;
    unsigned char nb[512], eb[8];
    if (EVP_PKEY_get_bn_param(key, "n", &n) != 1 || EVP_PKEY_get_bn_param(key, "e", &e) != 1) {
        fprintf(stderr, "fuzz_http_auth: cannot read the RSA key\n");
        exit(1);
    }
    int nl = BN_bn2bin(n, nb), el = BN_bn2bin(e, eb);
    char *n64 = th_b64url_encode(nb, (size_t)nl), *e64 = th_b64url_encode(eb, (size_t)el), text[1024];
    snprintf(text, sizeof text, "{\"keys\":[{\"kty\":\"RSA\",\"kid\":\"k1\",\"alg\":\"RS256\",\"n\":\"%s\",\"e\":\"%s\"}]}",
             n64, e64);
    free(n64);
    free(e64);
    BN_free(n);
    BN_free(e);
    return temp_file(text);
}

static char *jwt_of(EVP_PKEY *key, const char *sub, const char *scope)
{
    char claims[512];
    snprintf(claims, sizeof claims,
             "{\"iss\":\"" ISSUER "\",\"aud\":\"" AUDIENCE "\",\"sub\":\"%s\",\"exp\":%ld%s%s%s}", sub,
             (long)time(NULL) + 30 * 24 * 3600, scope ? ",\"scope\":\"" : "", scope ? scope : "", scope ? "\"" : "");
    return sign(key, claims);
}

static void start_server(void)
{
    static const th_tool tools[] = {
        {TH_TOOL_INIT, .name = "echo", .description = "echoes text (scope tools)",
         .input_schema = "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}}}", .handler = echo},
        {TH_TOOL_INIT, .name = "open", .description = "needs no scope", .input_schema = "{\"type\":\"object\",\"properties\":{}}",
         .handler = open_tool},
    };
    static const char *const scopes[] = {"echo=tools"};
    char *tokens = temp_file("scoped-token tools\nplain-token\n"), err[256] = "";
    EVP_PKEY *key = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
    char *jwks = key ? make_jwks(key) : NULL;
    th_registry *reg = th_registry_new();
    th_err terr;
    th_auth *auth = th_auth_load(tokens, err, sizeof err);
    for (size_t i = 0; reg && i < sizeof tools / sizeof *tools; i++)
        if (th_registry_add(reg, &tools[i], "fuzz", &terr) != TH_OK) {
            snprintf(err, sizeof err, "%s", terr.msg);
            th_registry_unref(reg);
            reg = NULL;
        }
    if (!reg || !auth || !jwks || !th_auth_add_jwks(&auth, jwks, ISSUER, AUDIENCE, err, sizeof err) ||
        !th_auth_note_scopes(auth, "tools")) {
        fprintf(stderr, "fuzz_http_auth: cannot set up: %s\n", err);
        exit(1);
    }
    th_registry_start(reg);
    th_mcp_config cfg;
    th_mcp_config_default(&cfg);
    th_mcp *mcp = th_mcp_new(reg, &cfg);
    th_http_opts o = {.auth = auth, .tool_scopes = scopes, .ntool_scopes = 1, .reg = reg,
                      .resource_url = AUDIENCE, .auth_issuer = ISSUER, .max_body_bytes = 1 << 20,
                      .request_timeout_ms = 10000,
                      /* One client, one connection at a time; but the server
                       * frees a closed connection's slot later, in its accept
                       * thread, and a starved one lags: room for that lag, so
                       * that a refused connection means a refused request. */
                      .max_connections = 1024, .max_client_connections = 1024};
    th_http *h = mcp ? th_http_start(mcp, &o, err, sizeof err) : NULL;
    if (!h) {
        fprintf(stderr, "fuzz_http_auth: cannot serve: %s\n", mcp ? err : "out of memory");
        exit(1);
    }
    port = th_http_port(h);
    creds[CRED_FILE_SCOPED] = (typeof(creds[0])){strdup("scoped-token"), true, true, ""};
    creds[CRED_FILE_PLAIN] = (typeof(creds[0])){strdup("plain-token"), true, false, ""};
    creds[CRED_JWT_SCOPED] = (typeof(creds[0])){jwt_of(key, "alice", "tools"), true, true, ""};
    creds[CRED_JWT_PLAIN] = (typeof(creds[0])){jwt_of(key, "bob", NULL), true, false, ""};
    creds[CRED_NONE] = (typeof(creds[0])){NULL, false, false, ""};
    creds[CRED_FORGED] = (typeof(creds[0])){jwt_of(key, "alice", "tools"), false, false, ""};
    creds[CRED_FORGED].bearer[strlen(creds[CRED_FORGED].bearer) - 3] ^= 1; /* a signature byte */
    EVP_PKEY_free(key);
    unlink(tokens);
    unlink(jwks);
    free(tokens);
    free(jwks);
    /* The server, registry and keys live as long as the process. */
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    th_log_set_sink(quiet, NULL);
    start_server();
    for (int c = 0; c < CRED_COUNT; c++)
        if (creds[c].known)
            open_session(c);
    return 0;
}

/* The body's method and tool name, for the modern headers (NULL: none). */
static void envelope(const char *body, size_t len, char *method, char *name, size_t size)
{
    method[0] = name[0] = '\0';
    json_tokener *tok = json_tokener_new();
    json_object *o = tok ? json_tokener_parse_ex(tok, body, (int)len) : NULL, *m, *p, *n;
    if (json_object_object_get_ex(o, "method", &m) && json_object_is_type(m, json_type_string))
        snprintf(method, size, "%s", json_object_get_string(m));
    if (json_object_object_get_ex(o, "params", &p) && json_object_object_get_ex(p, "name", &n) &&
        json_object_is_type(n, json_type_string))
        snprintf(name, size, "%s", json_object_get_string(n));
    json_object_put(o);
    json_tokener_free(tok);
    /* A header cannot carry a line break: leave such a one out. */
    if (strpbrk(method, "\r\n"))
        method[0] = '\0';
    if (strpbrk(name, "\r\n"))
        name[0] = '\0';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > (1 << 20))
        return 0;
    int c = data[0] % CRED_COUNT, how = (data[0] >> 3) & 3;
    int other = (c + 1) % CRED_COUNT;
    while (!creds[other].known || other == c)
        other = (other + 1) % CRED_COUNT;
    const char *body = (const char *)data + 1;
    size_t blen = size - 1;
    char method[256], name[256];
    envelope(body, blen, method, name, sizeof method);
    const char *sid = how == SEND_OWN && creds[c].known ? creds[c].sid : how == SEND_OTHERS ? creds[other].sid : NULL;
    unsigned long echoes_before = atomic_load(&echoes);
    char *a = post(c, sid, how == SEND_MODERN, method[0] ? method : NULL, name[0] ? name : NULL, body, blen);
    int status = status_of(a);
    if (!status)
        die("no complete HTTP answer", data, size, a);
    if (!creds[c].known && status != 401)
        die("a request without a good token was not answered 401", data, size, a);
    /* Another principal's session is unknown to this one: 404, unless the
     * request was refused before any session was looked at. */
    if (how == SEND_OTHERS && creds[c].known && (status == 200 || status == 202))
        die("another principal's session answered", data, size, a);
    if (!creds[c].scoped && atomic_load(&echoes) != echoes_before)
        die("echo ran for a token without its scope", data, size, a);
    free(a);
    /* The session table evicts the idlest when full (initialize without a
     * session opens one each): reopen this one's if it is gone. */
    if (how == SEND_OWN && creds[c].known && status == 404)
        open_session(c);
    return 0;
}
