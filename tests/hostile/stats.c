/* SPDX-License-Identifier: MIT */
/*
** stats.c: hostile test plugin stats.so, a careless plugin whose one tool
** "stats" hands back, as argument "kind" selects, a value the wire cannot
** carry: text not in UTF-8, NaN, a number with a comma, a block the MCP
** schema refuses, a tree 200,000 levels deep, or "bytes" bytes of text.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <toolhost/plugin.h>

/* A value nested DEPTH arrays deep, built without recursion. */
static json_object *deep(int depth)
{
    json_object *v = json_object_new_int(1);
    for (int i = 0; i < depth; i++) {
        json_object *a = json_object_new_array();
        json_object_array_add(a, v);
        v = a;
    }
    return v;
}

static json_object *with(const char *key, json_object *value)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, key, value);
    return o;
}

static th_rc stats(th_call *call, json_object *args, void *user_data)
{
    (void)user_data;
    json_object *v;
    const char *kind = json_object_object_get_ex(args, "kind", &v) ? json_object_get_string(v) : "";
    double rows = 0, total = 0;

    if (!strcmp(kind, "latin1_error"))
        return th_call_error(call, "cannot open caf\xe9.csv") == TH_OK ? TH_OK : TH_ERR_RUNTIME;
    if (!strcmp(kind, "latin1_all")) {
        th_call_log(call, TH_LOG_WARNING, "reading caf\xe9.csv");
        th_call_progress(call, 1, 2, "caf\xe9");
        th_call_text(call, "caf\xe9 \xff\xfe");
        th_call_resource_link(call, "file:///caf\xe9.csv", "caf\xe9.csv", "d\xe9j\xe0", "text/csv\x80");
        th_call_resource_text(call, "file:///caf\xe9", NULL, "x\xc3");
        return TH_OK;
    }
    if (!strcmp(kind, "progress_nan")) {
        /* done/total*100 with total == 0, as a careless plugin computes it. */
        th_rc rc = th_call_progress(call, rows / total * 100, 100, NULL);
        th_rc rc2 = th_call_progress(call, 1, INFINITY, NULL);
        th_call_textf(call, "progress returned %d and %d", (int)rc, (int)rc2);
        return TH_OK;
    }
    if (!strcmp(kind, "nan"))
        return th_call_structured(call, with("avg", json_object_new_double(rows / total)));
    if (!strcmp(kind, "comma"))
        return th_call_structured(call, with("avg", json_object_new_double_s(1.5, "1,5")));
    if (!strcmp(kind, "bad_key"))
        return th_call_structured(call, with("caf\xe9", json_object_new_int(1)));
    if (!strcmp(kind, "sc_string"))
        return th_call_structured(call, json_object_new_string("ok"));
    if (!strcmp(kind, "sc_array"))
        return th_call_structured(call, json_object_new_array());
    if (!strcmp(kind, "sc_number"))
        return th_call_structured(call, json_object_new_int(7));
    if (!strcmp(kind, "deep"))
        return th_call_structured(call, with("tree", deep(200000)));
    if (!strcmp(kind, "deep_block")) {
        json_object *b = with("type", json_object_new_string("text"));
        json_object_object_add(b, "text", json_object_new_string("x"));
        json_object_object_add(b, "_meta", deep(200000));
        return th_call_content(call, b);
    }
    if (!strcmp(kind, "big")) {
        size_t n = json_object_object_get_ex(args, "bytes", &v) ? (size_t)json_object_get_int64(v) : 0;
        char *text = malloc(n + 1);
        if (!text)
            return TH_ERR_NOMEM;
        memset(text, 'x', n);
        text[n] = '\0';
        th_rc rc = th_call_text(call, text);
        free(text);
        return rc;
    }
    /* The remaining kinds are content blocks given as JSON text. */
    static const struct {
        const char *kind;
        const char *block;
    } blocks[] = {
        {"no_text", "{\"type\":\"text\"}"},
        {"text_42", "{\"type\":\"text\",\"text\":42}"},
        {"unknown", "{\"type\":\"video\",\"data\":\"AAAA\"}"},
        {"image_no_data", "{\"type\":\"image\",\"mimeType\":\"image/png\"}"},
        {"audio_no_mime", "{\"type\":\"audio\",\"data\":\"AAAA\"}"},
        {"resource_no_uri", "{\"type\":\"resource\",\"resource\":{\"text\":\"x\"}}"},
    };
    for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++)
        if (!strcmp(kind, blocks[i].kind))
            return th_call_content(call, json_tokener_parse(blocks[i].block));
    return th_call_textf(call, "fine: %s", kind);
}

static const th_tool stats_tool = {
    TH_TOOL_INIT,
    .name = "stats",
    .description = "Return a result the wire cannot carry, as \"kind\" says.",
    .input_schema = "{\"type\":\"object\",\"properties\":{\"kind\":{\"type\":\"string\"},"
                    "\"bytes\":{\"type\":\"integer\"}}}",
    .handler = stats,
};

TH_REGISTER(stats)
{
    (void)server;
    return &stats_tool;
}
