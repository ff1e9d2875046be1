/* SPDX-License-Identifier: MIT */
/*
** schema/ecma_regex.c: ECMA-262 regular expressions on PCRE2. Owns the rewriting of
** the escapes whose meaning differs between the dialects and the options
** that make PCRE2 behave like ECMA (end-only $, empty classes, \u escapes).
*/
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema/ecma_regex.h"
#include "base/util.h"

/*
** ECMA's \s: ASCII white space plus the Unicode space separators, NBSP,
** the BOM and the line/paragraph separators. PCRE2 without UCP knows only
** the ASCII ones. Written without brackets so it fits inside a class too,
** and with \\u because PCRE2_ALT_BSUX (ECMA's escapes) disables \\x{...}.
*/
#define ECMA_SPACE "\\t\\n\\u000B\\f\\r \\u00A0\\u1680\\u2000-\\u200A" \
                   "\\u2028\\u2029\\u202F\\u205F\\u3000\\uFEFF"

/* ECMA's . outside a class: anything but a line terminator (JSON Schema
** patterns have no flags, so never dotAll). */
#define ECMA_DOT "[^\\n\\r\\u2028\\u2029]"

/* What each class escape becomes; inside [...] the brackets are dropped.
** \D, \W and \S inside a class keep PCRE2's (ASCII) meaning: a negated set
** cannot be spliced into an enclosing class. */
static const struct {
    char esc;
    const char *outside;
    const char *inside;
} escapes[] = {
    { 'd', "[0-9]", "0-9" },
    { 'D', "[^0-9]", NULL },
    { 'w', "[A-Za-z0-9_]", "A-Za-z0-9_" },
    { 'W', "[^A-Za-z0-9_]", NULL },
    { 's', "[" ECMA_SPACE "]", ECMA_SPACE },
    { 'S', "[^" ECMA_SPACE "]", NULL },
};

/* ECMA's long General_Category names; PCRE2 10.42 knows the short ones. */
static const struct {
    const char *ecma, *pcre;
} categories[] = {
    { "Letter", "L" },
    { "Cased_Letter", "L&" },
    { "Uppercase_Letter", "Lu" },
    { "Lowercase_Letter", "Ll" },
    { "Titlecase_Letter", "Lt" },
    { "Modifier_Letter", "Lm" },
    { "Other_Letter", "Lo" },
    { "Mark", "M" },
    { "Combining_Mark", "M" },
    { "Nonspacing_Mark", "Mn" },
    { "Spacing_Mark", "Mc" },
    { "Enclosing_Mark", "Me" },
    { "Number", "N" },
    { "Decimal_Number", "Nd" },
    { "digit", "Nd" },
    { "Letter_Number", "Nl" },
    { "Other_Number", "No" },
    { "Punctuation", "P" },
    { "punct", "P" },
    { "Connector_Punctuation", "Pc" },
    { "Dash_Punctuation", "Pd" },
    { "Open_Punctuation", "Ps" },
    { "Close_Punctuation", "Pe" },
    { "Initial_Punctuation", "Pi" },
    { "Final_Punctuation", "Pf" },
    { "Other_Punctuation", "Po" },
    { "Symbol", "S" },
    { "Math_Symbol", "Sm" },
    { "Currency_Symbol", "Sc" },
    { "Modifier_Symbol", "Sk" },
    { "Other_Symbol", "So" },
    { "Separator", "Z" },
    { "Space_Separator", "Zs" },
    { "Line_Separator", "Zl" },
    { "Paragraph_Separator", "Zp" },
    { "Other", "C" },
    { "Control", "Cc" },
    { "cntrl", "Cc" },
    { "Format", "Cf" },
    { "Surrogate", "Cs" },
    { "Private_Use", "Co" },
    { "Unassigned", "Cn" },
};

/*
** \p{...} or \P{...} at P (P[1] is 'p' or 'P'): append PCRE2's spelling of
** the property to B and return how many bytes were consumed, or 0 to copy
** the escape as it is. ECMA writes "Letter", "gc=Letter", "General_Category=
** Letter", "sc=Greek", "Script=Greek"; PCRE2 wants "L" and "Greek".
*/
static size_t property(const char *p, th_buf *b, bool *ok)
{
    if (p[2] != '{')
        return 0;
    const char *end = strchr(p + 3, '}');
    if (!end)
        return 0;
    char name[64];
    size_t n = (size_t)(end - (p + 3));
    if (n >= sizeof name)
        return 0;
    memcpy(name, p + 3, n);
    name[n] = '\0';
    const char *value = name;
    const char *eq = strchr(name, '=');
    if (eq) {
        size_t klen = (size_t)(eq - name);
        if ((klen == 2 && !strncmp(name, "gc", 2)) || (klen == 16 && !strncmp(name, "General_Category", 16)) ||
            (klen == 2 && !strncmp(name, "sc", 2)) || (klen == 6 && !strncmp(name, "Script", 6)))
            value = eq + 1;
        else
            return 0;
    }
    for (size_t i = 0; i < sizeof categories / sizeof categories[0]; i++)
        if (!strcmp(categories[i].ecma, value)) {
            value = categories[i].pcre;
            break;
        }
    *ok = th_buf_printf(b, "\\%c{%s}", p[1], value);
    return (size_t)(end - p) + 1;
}

/* Rewrite PATTERN into B; false on allocation failure. */
static bool translate(const char *pattern, th_buf *b)
{
    bool in_class = false;
    for (const char *p = pattern; *p; p++) {
        if (*p == '\\' && (p[1] == 'p' || p[1] == 'P')) {
            bool ok = true;
            size_t used = property(p, b, &ok);
            if (!ok)
                return false;
            if (used) {
                p += used - 1;
                continue;
            }
        }
        if (*p == '\\' && p[1]) {
            const char *rep = NULL;
            for (size_t i = 0; i < sizeof escapes / sizeof escapes[0]; i++)
                if (escapes[i].esc == p[1])
                    rep = in_class ? escapes[i].inside : escapes[i].outside;
            if (rep) {
                if (!th_buf_append(b, rep, strlen(rep)))
                    return false;
            } else if (!th_buf_append(b, p, 2)) {
                return false;
            }
            p++;
            continue;
        }
        if (*p == '.' && !in_class) {
            /* ECMA's . excludes all four line terminators; PCRE2's only \n. */
            if (!th_buf_append(b, ECMA_DOT, strlen(ECMA_DOT)))
                return false;
            continue;
        }
        if (*p == '[' && !in_class)
            in_class = true;
        else if (*p == ']' && in_class)
            in_class = false;
        if (!th_buf_append(b, p, 1))
            return false;
    }
    return th_buf_append(b, "", 0);
}

pcre2_code *th_ecma_regex_compile(const char *pattern, char *err, size_t errlen)
{
    th_buf b = { 0 };
    if (!translate(pattern, &b)) {
        free(b.data);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    int ec = 0;
    PCRE2_SIZE off = 0;
    pcre2_code *code = pcre2_compile((PCRE2_SPTR)b.data, b.len,
                                     PCRE2_UTF | PCRE2_DOLLAR_ENDONLY | PCRE2_ALLOW_EMPTY_CLASS | PCRE2_ALT_BSUX,
                                     &ec, &off, NULL);
    free(b.data);
    if (!code) {
        PCRE2_UCHAR msg[256];
        if (pcre2_get_error_message(ec, msg, sizeof msg) < 0)
            snprintf((char *)msg, sizeof msg, "error %d", ec);
        snprintf(err, errlen, "%s", (const char *)msg);
        return NULL;
    }
    /* No JIT: for the short patterns of tool schemas bench_validate shows no
    ** gain, it costs ~0.3 ms per pattern at registration, its generated
    ** code makes valgrind report false errors, and it needs a JIT stack per
    ** thread. The interpreter's match/depth/heap limits bound the worst case
    ** (th_ecma_regex_search). */
    return code;
}

/* PCRE2 counts backtracking work ("units"), not time; about 12 ns each.
** Every honest pattern measured needs under 3 units per subject byte
** (^(a|b)*$ needs 2.5, typical tool patterns under 1), so QUICK has room to
** spare, while a short hostile string ("aaaa...a!" against ^(a+)+$) stops
** after a few hundred units instead of PCRE2's default ten million. */
enum {
    QUICK_BASE = 100,
    QUICK_PER_BYTE = 4,
    FULL_BASE = 10000,
    FULL_PER_BYTE = 8,
    FULL_MAX = 10000000, /* PCRE2's own default */
    DEPTH_BASE = 1000,
    DEPTH_PER_BYTE = 4, /* ^(a|b)*$ nests two levels per character */
    /* Backtracking frames live on the heap: 16 MiB plus 32 bytes per byte
    ** of subject, so memory grows with the request as its parse does. */
    HEAP_BASE_KIB = 16384,
    HEAP_BYTES_PER_KIB = 32, /* subject bytes per extra KiB */
};

/* BASE + PER * LEN, at most MAX. */
static uint32_t scaled(size_t len, uint32_t base, uint32_t per, uint32_t max)
{
    return len < (max - base) / per ? (uint32_t)(base + per * len) : max;
}

void th_ecma_regex_limits(size_t len, uint32_t *quick, uint32_t *full)
{
    *quick = scaled(len, QUICK_BASE, QUICK_PER_BYTE, FULL_MAX);
    *full = scaled(len, FULL_BASE, FULL_PER_BYTE, FULL_MAX);
}

int th_ecma_regex_search(const pcre2_code *code, const char *subject, size_t len, pcre2_match_data *md,
                         pcre2_match_context *mctx, uint32_t match_limit)
{
    if (mctx) {
        uint32_t depth = scaled(len, DEPTH_BASE, DEPTH_PER_BYTE, UINT32_MAX / 2);
        pcre2_set_match_limit(mctx, match_limit);
        pcre2_set_depth_limit(mctx, depth < match_limit ? depth : match_limit);
        pcre2_set_heap_limit(mctx, scaled(len / HEAP_BYTES_PER_KIB, HEAP_BASE_KIB, 1, UINT32_MAX / 2));
    }
    int rc = pcre2_match(code, (PCRE2_SPTR)subject, len, 0, 0, md, mctx);
    if (rc >= 0)
        return 1;
    return rc == PCRE2_ERROR_NOMATCH ? 0 : rc;
}

void th_ecma_regex_why(int rc, char *buf, size_t len)
{
    static const struct {
        int rc;
        const char *why;
    } limits[] = {
        { PCRE2_ERROR_MATCHLIMIT, "within the match limit" },
        { PCRE2_ERROR_DEPTHLIMIT, "within the depth limit" },
        { PCRE2_ERROR_HEAPLIMIT, "within the memory limit" },
    };
    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++)
        if (limits[i].rc == rc) {
            snprintf(buf, len, "%s", limits[i].why);
            return;
        }
    PCRE2_UCHAR msg[200];
    if (pcre2_get_error_message(rc, msg, sizeof msg) < 0)
        snprintf((char *)msg, sizeof msg, "error %d", rc);
    snprintf(buf, len, "(%s)", (const char *)msg);
}
