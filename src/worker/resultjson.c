/*
** worker/resultjson.c: a worker's result as JSON text without json-c's
** printer, for the shape nearly every result has (text blocks, maybe
** isError); every other result is left to json-c.
*/
#include "config.h"

#include <string.h>

#include "worker/resultjson.h"

/* Bytes a JSON string carries as they are (json-c's set: it escapes the
 * controls, '"' and '\\'; '/' is not escaped, as with NOSLASHESCAPE). */
static bool plain_byte(unsigned char c)
{
    return c >= 0x20 && c != '"' && c != '\\';
}

/* Append the JSON string S (LEN bytes) to B, escaped as json-c does. */
static bool string(th_buf *b, const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    if (!th_buf_append(b, "\"", 1))
        return false;
    size_t i = 0;
    while (i < len) {
        size_t run = i;
        while (run < len && plain_byte((unsigned char)s[run]))
            run++;
        if (run > i && !th_buf_append(b, s + i, run - i))
            return false;
        if ((i = run) == len)
            break;
        unsigned char c = (unsigned char)s[i++];
        char esc[6] = {'\\', 0};
        size_t n = 2;
        switch (c) {
        case '"': esc[1] = '"'; break;
        case '\\': esc[1] = '\\'; break;
        case '\b': esc[1] = 'b'; break;
        case '\f': esc[1] = 'f'; break;
        case '\n': esc[1] = 'n'; break;
        case '\r': esc[1] = 'r'; break;
        case '\t': esc[1] = 't'; break;
        default:
            memcpy(esc + 1, "u00", 3);
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 15];
            n = 6;
        }
        if (!th_buf_append(b, esc, n))
            return false;
    }
    return th_buf_append(b, "\"", 1);
}

/* A content block {"type":"text","text":S} and nothing else, to B. */
static bool text_block(th_buf *b, json_object *block)
{
    json_object *type, *text;
    if (!json_object_is_type(block, json_type_object) || json_object_object_length(block) != 2 ||
        !json_object_object_get_ex(block, "type", &type) || !json_object_object_get_ex(block, "text", &text) ||
        !json_object_is_type(type, json_type_string) || !json_object_is_type(text, json_type_string) ||
        strcmp(json_object_get_string(type), "text") != 0)
        return false;
    /* In the order the block has (json-c keeps insertion order). */
    const char *first = NULL;
    json_object_object_foreach(block, key, val)
    {
        (void)val;
        if (!first)
            first = key;
    }
    bool ok;
    if (strcmp(first, "type") == 0)
        ok = th_buf_append(b, "{\"type\":\"text\",\"text\":", 22) &&
             string(b, json_object_get_string(text), (size_t)json_object_get_string_len(text)) &&
             th_buf_append(b, "}", 1);
    else
        ok = th_buf_append(b, "{\"text\":", 8) &&
             string(b, json_object_get_string(text), (size_t)json_object_get_string_len(text)) &&
             th_buf_append(b, ",\"type\":\"text\"}", 15);
    return ok;
}

bool th_result_json_plain(json_object *result, th_buf *b)
{
    b->len = 0;
    if (!json_object_is_type(result, json_type_object) || !th_buf_append(b, "{", 1))
        return false;
    bool first = true;
    json_object_object_foreach(result, key, val)
    {
        if (!first && !th_buf_append(b, ",", 1))
            return false;
        first = false;
        if (strcmp(key, "isError") == 0 && json_object_is_type(val, json_type_boolean)) {
            if (!th_buf_append(b, json_object_get_boolean(val) ? "\"isError\":true" : "\"isError\":false",
                               json_object_get_boolean(val) ? 14 : 15))
                return false;
            continue;
        }
        if (strcmp(key, "content") != 0 || !json_object_is_type(val, json_type_array) ||
            !th_buf_append(b, "\"content\":[", 11))
            return false;
        size_t n = json_object_array_length(val);
        for (size_t i = 0; i < n; i++)
            if ((i > 0 && !th_buf_append(b, ",", 1)) || !text_block(b, json_object_array_get_idx(val, i)))
                return false;
        if (!th_buf_append(b, "]", 1))
            return false;
    }
    return th_buf_append(b, "}", 1);
}
