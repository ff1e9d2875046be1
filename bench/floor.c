/*
** floor.c: the benchmark's floor, the least an MCP server over stdio can do.
** It reads request lines, finds the id and (for tools/call) the "text"
** argument by searching bytes, no JSON parsing, and writes a fixed answer of
** the right shape: the echo result carries the text copied back, so its
** answers are as long as toolhost's. One thread; the answers to everything
** one read() brought are written with one write().
*/
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct buf {
    char *p;
    size_t len, cap;
} buf;

static int put(buf *b, const char *s, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = (b->len + n) * 2;
        char *p = realloc(b->p, cap);
        if (!p)
            return -1;
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    return 0;
}

#define PUTS(b, lit) put(b, lit, sizeof lit - 1)

static const char init_result[] =
    "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"tools\":{}},"
    "\"serverInfo\":{\"name\":\"floor\",\"version\":\"1\"}}";
static const char list_result[] =
    "{\"tools\":[{\"name\":\"echo\",\"description\":\"Return the given text unchanged.\","
    "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}},"
    "\"required\":[\"text\"]}}]}";

/* The bytes of a JSON string value starting after KEY in [S, END), up to its
 * closing quote; NULL when KEY is not there. */
static const char *string_after(const char *s, const char *end, const char *key, size_t klen, const char **vend)
{
    const char *k = memmem(s, (size_t)(end - s), key, klen);
    if (!k)
        return NULL;
    const char *v = k + klen, *p = v;
    while (p < end && *p != '"')
        p += *p == '\\' ? 2 : 1;
    *vend = p < end ? p : end;
    return v;
}

/* Answer one request line; notifications get nothing. */
static int answer(buf *out, const char *line, const char *end)
{
    static const char id_key[] = "\"id\":";
    const char *id = memmem(line, (size_t)(end - line), id_key, sizeof id_key - 1);
    if (!id)
        return 0;
    id += sizeof id_key - 1;
    const char *id_end = id;
    while (id_end < end && *id_end != ',' && *id_end != '}')
        id_end++;
    if (PUTS(out, "{\"jsonrpc\":\"2.0\",\"id\":") || put(out, id, (size_t)(id_end - id)) ||
        PUTS(out, ",\"result\":"))
        return -1;
    const char *text_end, *text = NULL;
    if (memmem(line, (size_t)(end - line), "\"tools/call\"", 12))
        text = string_after(line, end, "\"text\":\"", 8, &text_end);
    int rc;
    if (text)
        rc = PUTS(out, "{\"content\":[{\"type\":\"text\",\"text\":\"") || put(out, text, (size_t)(text_end - text)) ||
             PUTS(out, "\"}]}");
    else if (memmem(line, (size_t)(end - line), "\"initialize\"", 12))
        rc = PUTS(out, init_result);
    else if (memmem(line, (size_t)(end - line), "\"tools/list\"", 12))
        rc = PUTS(out, list_result);
    else
        rc = PUTS(out, "{}"); /* ping and the rest */
    return rc || PUTS(out, "}\n") ? -1 : 0;
}

static int write_all(const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(1, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int main(void)
{
    buf in = {0}, out = {0};
    int rc = 1;
    for (;;) {
        if (in.cap - in.len < 65536) {
            in.cap = in.cap * 2 + 65536;
            char *p = realloc(in.p, in.cap);
            if (!p)
                goto cleanup;
            in.p = p;
        }
        ssize_t n = read(0, in.p + in.len, in.cap - in.len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            goto cleanup;
        if (n == 0)
            break;
        in.len += (size_t)n;
        const char *p = in.p, *end = in.p + in.len, *nl;
        while ((nl = memchr(p, '\n', (size_t)(end - p)))) {
            if (answer(&out, p, nl))
                goto cleanup;
            p = nl + 1;
        }
        memmove(in.p, p, (size_t)(end - p));
        in.len = (size_t)(end - p);
        if (out.len && write_all(out.p, out.len))
            goto cleanup;
        out.len = 0;
    }
    rc = 0;
cleanup:
    free(in.p);
    free(out.p);
    return rc;
}
