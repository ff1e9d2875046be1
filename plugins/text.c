/* SPDX-License-Identifier: MIT */
/*
** text.c: a typed tool over a string: word, character (code point) and line
** counts, and case conversion, chosen by an enum with a default. Case
** mapping covers ASCII, Latin-1, basic Greek and Cyrillic letters.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <toolhost/plugin.h>

static bool is_space(unsigned char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

/* Lower-case letters FIRST..LAST whose capitals are DELTA code points below.
** Every pair has the same UTF-8 length, so mapping never resizes the text. */
static const struct {
    unsigned first, last, delta;
} case_pairs[] = {
    {0x61, 0x7A, 0x20},   /* a-z */
    {0xE0, 0xF6, 0x20},   /* a-grave .. o-diaeresis */
    {0xF8, 0xFE, 0x20},   /* o-stroke .. thorn */
    {0x3B1, 0x3C1, 0x20}, /* alpha .. rho */
    {0x3C3, 0x3C9, 0x20}, /* sigma .. omega */
    {0x430, 0x44F, 0x20}, /* Cyrillic a .. ya */
    {0x450, 0x45F, 0x50}, /* Cyrillic ie-grave .. dzhe */
};

static unsigned map_case(unsigned cp, bool upper)
{
    for (size_t i = 0; i < sizeof case_pairs / sizeof case_pairs[0]; i++) {
        unsigned lo = case_pairs[i].first, hi = case_pairs[i].last, d = case_pairs[i].delta;
        if (upper && cp >= lo && cp <= hi)
            return cp - d;
        if (!upper && cp >= lo - d && cp <= hi - d)
            return cp + d;
    }
    return cp;
}

/* Rewrite S in place: every letter upper- or lower-cased, or (TITLE) upper
** after whitespace and lower elsewhere. Bytes that are not one- or two-byte
** UTF-8 sequences are left alone. */
static void change_case(char *s, size_t len, bool upper, bool title)
{
    bool word_start = true;
    for (size_t i = 0; i < len;) {
        unsigned char c = (unsigned char)s[i];
        bool up = title ? word_start : upper;
        word_start = is_space(c);
        if (c < 0x80) {
            s[i++] = (char)map_case(c, up);
        } else if ((c & 0xE0) == 0xC0 && i + 1 < len && ((unsigned char)s[i + 1] & 0xC0) == 0x80) {
            unsigned cp = map_case(((c & 0x1Fu) << 6) | ((unsigned char)s[i + 1] & 0x3Fu), up);
            s[i] = (char)(0xC0 | (cp >> 6));
            s[i + 1] = (char)(0x80 | (cp & 0x3F));
            i += 2;
        } else {
            i++;
        }
    }
}

static size_t word_count(const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        if (!is_space((unsigned char)s[i]) && (i == 0 || is_space((unsigned char)s[i - 1])))
            n++;
    return n;
}

static size_t char_count(const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80)
            n++;
    return n;
}

/* "a" and "a\n" are one line, "a\nb" two, "" none. */
static size_t line_count(const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        if (s[i] == '\n')
            n++;
    return n + (len > 0 && s[len - 1] != '\n');
}

/* Returns a malloc()ed string (the host frees it: TH_FN_FREE_RESULT). */
static char *text(th_call *call, const char *input, const char *operation, bool trim)
{
    size_t len = strlen(input);
    if (trim) {
        while (len > 0 && is_space((unsigned char)*input)) {
            input++;
            len--;
        }
        while (len > 0 && is_space((unsigned char)input[len - 1]))
            len--;
    }
    char *out = NULL;
    if (strcmp(operation, "word_count") == 0 || strcmp(operation, "char_count") == 0 ||
        strcmp(operation, "line_count") == 0) {
        size_t n = operation[0] == 'w' ? word_count(input, len)
                 : operation[0] == 'c' ? char_count(input, len) : line_count(input, len);
        out = malloc(24);
        if (out)
            snprintf(out, 24, "%zu", n);
    } else if ((out = malloc(len + 1))) {
        memcpy(out, input, len);
        out[len] = '\0';
        change_case(out, len, operation[0] == 'u', operation[0] == 't');
    }
    if (!out)
        th_call_error(call, "out of memory");
    return out;
}

static const char *const operations[] = {"word_count", "char_count", "line_count",
                                         "upper",      "lower",      "title",      NULL};

static const th_param text_params[] = {
    {.name = "text", .type = TH_T_STRING, .description = "The text to work on"},
    {.name = "operation",
     .type = TH_T_STRING,
     .description = "word_count, char_count (Unicode code points) and line_count return a number; "
                    "upper, lower and title return the converted text",
     .optional = true,
     .default_json = "\"word_count\"",
     .enum_values = operations},
    {.name = "trim",
     .type = TH_T_BOOL,
     .description = "Remove leading and trailing whitespace first",
     .optional = true,
     .default_json = "false"},
};

static const th_function text_fn = {
    .fn = (void (*)(void))text,
    .result = TH_T_STRING,
    .flags = TH_FN_WANTS_CALL | TH_FN_FREE_RESULT,
    .n_params = 3,
    .params = text_params,
    .result_description = "The count as decimal digits, or the converted text",
};

static const th_tool text_tool = {
    TH_TOOL_INIT,
    .name = "text",
    .title = "Text utilities",
    .description = "Count the words, characters or lines of a text, or convert it to upper, lower or title case",
    .annotations = "{\"readOnlyHint\":true,\"idempotentHint\":true,\"openWorldHint\":false}",
    .function = &text_fn,
};

TH_REGISTER(text)
{
    (void)server;
    return &text_tool;
}
