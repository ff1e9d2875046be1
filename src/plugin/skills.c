/* SPDX-License-Identifier: MIT */
/*
** plugin/skills.c: skill registration. Parses SKILL.md's frontmatter (a YAML
** subset: what it accepts is documented at th_server_add_skill), checks the
** skill rules, and registers each file as a resource the host reads itself.
*/
#include "config.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "plugin/skills.h"

/* Minimum struct_size: the first published layout, which ends at nfiles. */
#define TH_SKILL_MIN_SIZE (offsetof(th_skill, nfiles) + sizeof(size_t))

#define DESCRIPTION_MAX 1024  /* characters, Agent Skills specification */
#define COMPATIBILITY_MAX 500 /* likewise */
#define NAME_MAX_CHARS 64
#define RESERVED_PREFIX "io.modelcontextprotocol/"

/* ---- the frontmatter's YAML subset ------------------------------------ */

typedef struct fm {
    const char *file;
    int line;
    th_err *err;
    json_object *lines; /* top-level key -> line number, for later messages */
} fm;

static json_object *fm_fail(fm *p, const char *fmt, ...) TH_PRINTF(2, 3);
static json_object *fm_fail(fm *p, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    th_err_set(p->err, TH_ERR_VALUE, "Skill %s line %d: %s", p->file, p->line, msg);
    return NULL;
}

static bool key_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
           c == '.' || c == '/';
}

static bool all_of(const char *s, size_t n, const char *set)
{
    for (size_t i = 0; i < n; i++)
        if (!strchr(set, s[i]))
            return false;
    return n > 0;
}

/*
** A plain scalar typed as YAML 1.2's core schema does (what the suite's and
** most clients' parsers use), so that the frontmatter object matches what a
** client parsing the file gets. Numbers longer than 15 digits are refused:
** they would not survive a double exactly on both sides.
*/
static bool plain_value(fm *p, const char *s, size_t n, json_object **out)
{
    static const char *const nulls[] = {"", "~", "null", "Null", "NULL"};
    static const char *const trues[] = {"true", "True", "TRUE"};
    static const char *const falses[] = {"false", "False", "FALSE"};
    for (size_t i = 0; i < sizeof nulls / sizeof nulls[0]; i++)
        if (n == strlen(nulls[i]) && strncmp(s, nulls[i], n) == 0)
            return (*out = NULL), true; /* JSON null is json-c's NULL */
    for (size_t i = 0; i < 3; i++) {
        if (n == strlen(trues[i]) && strncmp(s, trues[i], n) == 0)
            return (*out = json_object_new_boolean(1)) != NULL;
        if (n == strlen(falses[i]) && strncmp(s, falses[i], n) == 0)
            return (*out = json_object_new_boolean(0)) != NULL;
    }
    const char *d = s;
    size_t dn = n;
    if (dn && (*d == '-' || *d == '+'))
        d++, dn--;
    bool is_int = all_of(d, dn, "0123456789");
    bool is_radix = n > 2 && s[0] == '0' && ((s[1] == 'x' && all_of(s + 2, n - 2, "0123456789abcdefABCDEF")) ||
                                             (s[1] == 'o' && all_of(s + 2, n - 2, "01234567")));
    /* [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
    size_t i = 0, digits = 0;
    bool is_float = false;
    if (dn) {
        while (i < dn && d[i] >= '0' && d[i] <= '9')
            i++, digits++;
        if (i < dn && d[i] == '.') {
            i++;
            while (i < dn && d[i] >= '0' && d[i] <= '9')
                i++, digits++;
        }
        if (digits && i < dn && (d[i] == 'e' || d[i] == 'E')) {
            size_t e = ++i;
            if (i < dn && (d[i] == '-' || d[i] == '+'))
                e = ++i;
            while (i < dn && d[i] >= '0' && d[i] <= '9')
                i++;
            if (i == e)
                digits = 0;
        }
        is_float = digits && i == dn;
    }
    bool special = (dn == 4 && (strncasecmp(d, ".inf", 4) == 0 || strncasecmp(d, ".nan", 4) == 0));
    if (special)
        return fm_fail(p, "'%.*s' is a YAML infinity or NaN, which JSON cannot carry; quote it", (int)n, s), false;
    if (is_int || is_radix || is_float) {
        if (dn > 15)
            return fm_fail(p, "the number '%.*s' has too many digits to be compared exactly; quote it", (int)n, s),
                   false;
        char buf[32];
        memcpy(buf, s, n);
        buf[n] = '\0';
        if (is_radix)
            *out = json_object_new_int64(strtoll(buf + 2, NULL, s[1] == 'x' ? 16 : 8));
        else if (is_int)
            *out = json_object_new_int64(strtoll(buf, NULL, 10));
        else
            *out = json_object_new_double(strtod(buf, NULL));
    } else {
        *out = json_object_new_string_len(s, (int)n);
    }
    return *out != NULL || (th_err_set(p->err, TH_ERR_NOMEM, "out of memory parsing skill frontmatter"), false);
}

/* Append code point CP as UTF-8 to B. */
static void put_utf8(th_buf *b, unsigned cp)
{
    char u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xc0 | cp >> 6);
        u[1] = (char)(0x80 | (cp & 0x3f));
        n = 2;
    } else {
        u[0] = (char)(0xe0 | cp >> 12);
        u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        u[2] = (char)(0x80 | (cp & 0x3f));
        n = 3;
    }
    th_buf_append(b, u, n);
}

/* After a quoted value: only spaces, then nothing or a comment. */
static bool rest_blank(const char *s, const char *end)
{
    while (s < end && *s == ' ')
        s++;
    return s == end || *s == '#';
}

/* Escapes of a double-quoted value: the ones JSON has, in a table. */
static const struct {
    char c, out;
} escapes[] = {{'"', '"'}, {'\\', '\\'}, {'/', '/'}, {'b', '\b'}, {'f', '\f'}, {'n', '\n'}, {'r', '\r'}, {'t', '\t'}};

static bool quoted_value(fm *p, const char *s, const char *end, json_object **out)
{
    char q = *s++;
    th_buf b = {0};
    bool ok = false;
    for (;;) {
        if (s >= end) {
            fm_fail(p, "a %s-quoted value must end on the same line (multi-line values are not supported)",
                    q == '"' ? "double" : "single");
            goto cleanup;
        }
        if (*s == q) {
            if (q == '\'' && s + 1 < end && s[1] == '\'') { /* '' is one ' */
                th_buf_append(&b, "'", 1);
                s += 2;
                continue;
            }
            s++;
            break;
        }
        if (q == '"' && *s == '\\') {
            char c = s + 1 < end ? s[1] : '\0';
            size_t k = 0;
            while (k < sizeof escapes / sizeof escapes[0] && escapes[k].c != c)
                k++;
            if (k < sizeof escapes / sizeof escapes[0]) {
                th_buf_append(&b, &escapes[k].out, 1);
                s += 2;
                continue;
            }
            unsigned cp = 0;
            bool hex = c == 'u' && end - s >= 6;
            for (int i = 2; hex && i < 6; i++) {
                int h = th_hex_digit((unsigned char)s[i]);
                hex = h >= 0;
                cp = cp * 16 + (unsigned)(hex ? h : 0);
            }
            if (!hex || cp == 0 || (cp >= 0xd800 && cp <= 0xdfff)) {
                fm_fail(p, "unsupported escape '\\%c' in a double-quoted value (accepted: \\\" \\\\ \\/ \\b \\f \\n "
                           "\\r \\t and \\uXXXX outside surrogates and NUL)",
                        c ? c : ' ');
                goto cleanup;
            }
            put_utf8(&b, cp);
            s += 6;
            continue;
        }
        th_buf_append(&b, s, 1);
        s++;
    }
    if (!rest_blank(s, end)) {
        fm_fail(p, "text after the closing quote");
        goto cleanup;
    }
    *out = json_object_new_string_len(b.data ? b.data : "", (int)b.len);
    ok = *out != NULL;
    if (!ok)
        th_err_set(p->err, TH_ERR_NOMEM, "out of memory parsing skill frontmatter");
cleanup:
    free(b.data);
    return ok;
}

/* What a value may not start with, and why (the YAML a subset leaves out). */
static const struct {
    char c;
    const char *what;
} refused_starts[] = {
    {'[', "flow sequences ([...])"}, {'{', "flow mappings ({...})"},  {'|', "block scalars (|)"},
    {'>', "block scalars (>)"},      {'&', "anchors (&)"},            {'*', "aliases (*)"},
    {'!', "tags (!)"},               {'%', "directives (%)"},         {'@', "'@' (reserved in YAML)"},
    {'`', "'`' (reserved in YAML)"}, {',', "',' at a value's start"}, {']', "']' at a value's start"},
    {'}', "'}' at a value's start"},
};

/* The value in S..END (after "key:" and its spaces) into *OUT (NULL: JSON null). */
static bool scalar(fm *p, const char *s, const char *end, json_object **out)
{
    if (s < end && (*s == '"' || *s == '\''))
        return quoted_value(p, s, end, out);
    for (size_t i = 0; s < end && i < sizeof refused_starts / sizeof refused_starts[0]; i++)
        if (*s == refused_starts[i].c)
            return fm_fail(p, "%s are not supported in skill frontmatter; quote the value", refused_starts[i].what),
                   false;
    if (s < end && (*s == '-' || *s == '?' || *s == ':') && (s + 1 == end || s[1] == ' '))
        return fm_fail(p, "'%c ' starts a YAML %s, which skill frontmatter does not support; quote the value", *s,
                       *s == '-' ? "list" : "complex key"),
               false;
    /* A plain value ends at " #" (a comment); trailing spaces go. */
    const char *e = s;
    while (e < end && !(*e == '#' && e > s && e[-1] == ' ') && !(*e == '#' && e == s))
        e++;
    while (e > s && e[-1] == ' ')
        e--;
    for (const char *c = s; c < e; c++)
        if (*c == ':' && (c + 1 == e || c[1] == ' '))
            return fm_fail(p, "': ' inside a plain value would start a mapping; quote the value"), false;
    return plain_value(p, s, (size_t)(e - s), out);
}

/*
** One "key: value" line's key (S..END, no indentation); *VAL gets where the
** value starts (after ": " and spaces). NULL when the line is not one.
*/
static char *line_key(fm *p, const char *s, const char *end, const char **val)
{
    const char *k = s;
    while (k < end && key_char(*k))
        k++;
    if (k == s || k >= end || *k != ':' || (k + 1 < end && k[1] != ' ')) {
        if (s < end && *s == '-' && (s + 1 == end || s[1] == ' '))
            fm_fail(p, "lists are not supported in skill frontmatter");
        else if (s < end && (*s == '"' || *s == '\''))
            fm_fail(p, "quoted keys are not supported in skill frontmatter");
        else
            fm_fail(p, "expected 'key: value' (a key of letters, digits, '_', '-', '.' or '/')");
        return NULL;
    }
    const char *v = k + 1;
    while (v < end && *v == ' ')
        v++;
    *val = v;
    char *key = strndup(s, (size_t)(k - s));
    if (!key)
        th_err_set(p->err, TH_ERR_NOMEM, "out of memory parsing skill frontmatter");
    return key;
}

/* The parsed block: top-level keys, one level of nested mapping under a key with no value. */
static json_object *parse_block(fm *p, const char *s, const char *end)
{
    json_object *top = json_object_new_object(), *nested = NULL;
    char *open_key = NULL; /* the last top-level key with no value of its own */
    size_t nested_indent = 0;
    if (!top) {
        th_err_set(p->err, TH_ERR_NOMEM, "out of memory parsing skill frontmatter");
        return NULL;
    }
    for (;;) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        const char *le = nl ? nl : end;
        p->line++;
        if (le > s && le[-1] == '\r')
            le--;
        /* The closing "---", spaces allowed after it. */
        if (le - s >= 3 && strncmp(s, "---", 3) == 0 && rest_blank(s + 3, le) && memchr(s + 3, '#', (size_t)(le - s - 3)) == NULL)
            break;
        if (!nl) {
            p->line = 1;
            fm_fail(p, "the frontmatter opened by '---' is never closed by a '---' line");
            goto fail;
        }
        const char *c = s;
        while (c < le && *c == ' ')
            c++;
        size_t indent = (size_t)(c - s);
        if (c < le && *c == '\t') {
            fm_fail(p, "tabs are not allowed for indentation in YAML");
            goto fail;
        }
        if (c == le || *c == '#') { /* blank or comment */
            s = nl + 1;
            continue;
        }
        if (indent > 0 && !open_key) {
            fm_fail(p, "an indented line continues a value; multi-line values are not supported (quote the value "
                       "on one line)");
            goto fail;
        }
        const char *val;
        char *key = line_key(p, c, le, &val);
        if (!key)
            goto fail;
        json_object *target = top;
        if (indent == 0) {
            free(open_key);
            open_key = NULL;
            nested = NULL;
        } else {
            if (!nested) {
                nested_indent = indent;
                nested = json_object_new_object();
                json_object_object_add(top, open_key, nested);
            }
            if (indent != nested_indent) {
                free(key);
                fm_fail(p, "indentation differs from the line above (nested mappings are one level deep)");
                goto fail;
            }
            target = nested;
        }
        if (json_object_object_get_ex(target, key, NULL)) {
            fm_fail(p, "the key '%.100s' appears twice", key);
            free(key);
            goto fail;
        }
        json_object *v = NULL;
        if (val == le || *val == '#') {
            if (indent == 0) { /* a nested mapping may follow; null if not */
                open_key = strdup(key);
                json_object_object_add(top, key, NULL);
                json_object_object_add(p->lines, key, json_object_new_int(p->line));
                free(key);
                s = nl + 1;
                continue;
            }
        } else if (!scalar(p, val, le, &v)) {
            free(key);
            goto fail;
        }
        if (indent == 0)
            json_object_object_add(p->lines, key, json_object_new_int(p->line));
        json_object_object_add(target, key, v);
        free(key);
        s = nl + 1;
    }
    free(open_key);
    return top;
fail:
    free(open_key);
    json_object_put(top);
    return NULL;
}

/* The line of top-level KEY, for messages about its value. */
static int line_of(fm *p, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(p->lines, key, &v) ? json_object_get_int(v) : 1;
}

static bool name_ok(const char *n)
{
    size_t len = strlen(n);
    if (len < 1 || len > NAME_MAX_CHARS || n[0] == '-' || n[len - 1] == '-' || strstr(n, "--"))
        return false;
    for (const char *c = n; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-'))
            return false;
    return true;
}

/* A string member KEY of FMO (may be absent unless REQUIRED), at most MAX characters. */
static bool check_string(fm *p, json_object *fmo, const char *key, bool required, size_t max)
{
    json_object *v;
    p->line = line_of(p, key);
    if (!json_object_object_get_ex(fmo, key, &v)) {
        if (required) {
            p->line = 1;
            fm_fail(p, "the frontmatter has no %s (required)", key);
        }
        return !required;
    }
    if (!json_object_is_type(v, json_type_string)) {
        fm_fail(p, "%s must be a string", key);
        return false;
    }
    size_t n = th_utf8_length(json_object_get_string(v));
    if (n < 1 || n > max) {
        fm_fail(p, "%s must be 1-%zu characters (it has %zu)", key, max, n);
        return false;
    }
    return true;
}

/* The Agent Skills specification's fields, and the extension's reserved prefix. */
static bool check_fields(fm *p, json_object *fmo)
{
    if (!check_string(p, fmo, "name", true, NAME_MAX_CHARS) ||
        !check_string(p, fmo, "description", true, DESCRIPTION_MAX) ||
        !check_string(p, fmo, "compatibility", false, COMPATIBILITY_MAX) ||
        !check_string(p, fmo, "license", false, SIZE_MAX) || !check_string(p, fmo, "allowed-tools", false, SIZE_MAX))
        return false;
    json_object *v;
    json_object_object_get_ex(fmo, "name", &v);
    if (!name_ok(json_object_get_string(v))) {
        p->line = line_of(p, "name");
        fm_fail(p, "name '%.64s' must be 1-64 characters of a-z, 0-9 and '-', without a leading, trailing or "
                   "double '-'",
                json_object_get_string(v));
        return false;
    }
    if (!json_object_object_get_ex(fmo, "metadata", &v))
        return true;
    p->line = line_of(p, "metadata");
    if (!json_object_is_type(v, json_type_object)) {
        fm_fail(p, "metadata must be a mapping of string keys to string values");
        return false;
    }
    json_object_object_foreach(v, k, mv)
    {
        if (strncmp(k, RESERVED_PREFIX, strlen(RESERVED_PREFIX)) == 0) {
            fm_fail(p, "metadata key '%.100s': keys starting with '" RESERVED_PREFIX
                       "' are reserved for MCP extensions",
                    k);
            return false;
        }
        if (!json_object_is_type(mv, json_type_string)) {
            fm_fail(p, "metadata.%.100s must be a string (quote it)", k);
            return false;
        }
    }
    return true;
}

json_object *th_skills_parse_frontmatter(const char *text, size_t len, const char *file, th_err *err)
{
    fm p = {.file = file, .line = 1, .err = err, .lines = json_object_new_object()};
    json_object *out = NULL;
    if (!p.lines) {
        th_err_set(err, TH_ERR_NOMEM, "out of memory parsing skill frontmatter");
        return NULL;
    }
    if (!th_utf8_valid(text, len) || memchr(text, '\0', len)) {
        th_err_set(err, TH_ERR_VALUE, "Skill %s is not UTF-8 text", file);
        goto cleanup;
    }
    const char *s = text, *end = text + len;
    if (len >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0) /* a byte order mark, as YAML allows */
        s += 3;
    if (!(end - s >= 4 && memcmp(s, "---\n", 4) == 0) && !(end - s >= 5 && memcmp(s, "---\r\n", 5) == 0)) {
        fm_fail(&p, "must begin with a '---' line opening the YAML frontmatter");
        goto cleanup;
    }
    s = (const char *)memchr(s, '\n', (size_t)(end - s)) + 1;
    out = parse_block(&p, s, end);
    if (out && !check_fields(&p, out)) {
        json_object_put(out);
        out = NULL;
    }
cleanup:
    json_object_put(p.lines);
    return out;
}

/* ---- files and registration ------------------------------------------ */

/* MIME types by extension: a table, so adding one is one line. */
static const struct {
    const char *ext, *mime;
} mimes[] = {
    {".md", "text/markdown"},     {".txt", "text/plain"},          {".json", "application/json"},
    {".py", "text/x-python"},     {".sh", "text/x-shellscript"},   {".js", "text/javascript"},
    {".ts", "text/x-typescript"}, {".yaml", "application/yaml"},   {".yml", "application/yaml"},
    {".html", "text/html"},       {".css", "text/css"},            {".csv", "text/csv"},
    {".xml", "application/xml"},  {".png", "image/png"},           {".jpg", "image/jpeg"},
    {".jpeg", "image/jpeg"},      {".gif", "image/gif"},           {".svg", "image/svg+xml"},
    {".pdf", "application/pdf"},  {".c", "text/x-c"},              {".h", "text/x-c"},
};

static const char *mime_of(const char *path, bool text)
{
    const char *slash = strrchr(path, '/'), *dot = strrchr(slash ? slash : path, '.');
    for (size_t i = 0; dot && i < sizeof mimes / sizeof mimes[0]; i++)
        if (strcasecmp(dot, mimes[i].ext) == 0)
            return mimes[i].mime;
    return text ? "text/plain" : "application/octet-stream";
}

static bool mime_ok(const char *m)
{
    const char *slash = strchr(m, '/');
    if (!slash || slash == m || !slash[1] || strchr(slash + 1, '/'))
        return false;
    for (const unsigned char *c = (const unsigned char *)m; *c; c++)
        if (*c <= 0x20 || *c >= 0x7f)
            return false;
    return true;
}

/* Segments of RFC 3986 unreserved characters, so skill:// URIs need no escaping. */
static const char *path_problem(const char *path)
{
    size_t len = strlen(path);
    if (len == 0 || len > TH_SKILL_PATH_MAX)
        return "must be 1-128 bytes";
    const char *seg = path;
    for (const char *c = path;; c++) {
        if (*c == '/' || !*c) {
            size_t n = (size_t)(c - seg);
            if (n == 0)
                return "has an empty segment (a leading, trailing or double '/')";
            if ((n == 1 && seg[0] == '.') || (n == 2 && seg[0] == '.' && seg[1] == '.'))
                return "has a '.' or '..' segment";
            if (!*c)
                return NULL;
            seg = c + 1;
            continue;
        }
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '.' ||
              *c == '_' || *c == '-' || *c == '~'))
            return "has a character other than A-Z, a-z, 0-9, '.', '_', '-', '~' and '/'";
    }
}

static void file_free(void *ud)
{
    th_skill_file_entry *f = ud;
    if (!f)
        return;
    free(f->skill);
    free(f->path);
    free(f->mime_type);
    free(f->data);
    json_object_put(f->frontmatter);
    free(f);
}

/* The read function of every skill file: the host's copy, as text or a blob. */
static th_rc skill_read(th_call *call, const char *uri, json_object *vars, void *user_data)
{
    (void)vars;
    const th_skill_file_entry *f = user_data;
    if (f->text)
        return th_call_resource_text(call, uri, f->mime_type, (const char *)f->data);
    char *b64 = th_base64_encode(f->data, f->size);
    if (!b64)
        return TH_ERR_NOMEM;
    th_rc rc = th_call_resource_blob(call, uri, f->mime_type, b64);
    free(b64);
    return rc;
}

const th_skill_file_entry *th_skills_file_of(const th_res_entry *e)
{
    return e && e->read == skill_read ? e->user_data : NULL;
}

/* Register one file; FRONTMATTER (taken) for SKILL.md. */
static th_rc add_file(th_resources *rs, const char *skill, const char *path, const void *data, size_t size,
                      const char *mime_type, json_object *frontmatter, bool started, const char *origin, th_err *err)
{
    th_skill_file_entry *f = calloc(1, sizeof *f);
    char uri[sizeof TH_SKILL_SCHEME + NAME_MAX_CHARS + 1 + TH_SKILL_PATH_MAX + 1];
    if (!f || !(f->skill = strdup(skill)) || !(f->path = strdup(path)) || !(f->data = malloc(size + 1))) {
        json_object_put(frontmatter);
        file_free(f);
        return th_err_set(err, TH_ERR_NOMEM, "out of memory copying skill '%s' file %s", skill, path);
    }
    if (size)
        memcpy(f->data, data, size);
    f->data[size] = '\0';
    f->size = size;
    f->frontmatter = frontmatter;
    f->text = th_utf8_valid((const char *)f->data, size) && !memchr(f->data, '\0', size);
    th_sha256_digest(f->data, size, f->digest);
    bool manifest = strcmp(path, TH_SKILL_MANIFEST) == 0;
    if (!(f->mime_type = strdup(manifest ? "text/markdown" : mime_type ? mime_type : mime_of(path, f->text)))) {
        file_free(f);
        return th_err_set(err, TH_ERR_NOMEM, "out of memory copying skill '%s' file %s", skill, path);
    }
    snprintf(uri, sizeof uri, TH_SKILL_SCHEME "%s/%s", skill, path);
    json_object *d = NULL;
    if (frontmatter)
        json_object_object_get_ex(frontmatter, "description", &d);
    th_resource r = {
        TH_RESOURCE_INIT,
        .uri = uri,
        /* The SEP: SKILL.md's resource is named and described as its frontmatter. */
        .name = manifest ? skill : path,
        .description = d ? json_object_get_string(d) : NULL,
        .mime_type = f->mime_type,
        .size = size,
        .read = skill_read,
        .user_data = f,
        .destroy = file_free,
    };
    th_rc rc = th_resources_add(rs, &r, false, started, origin, err);
    if (rc != TH_OK)
        file_free(f);
    return rc;
}

th_rc th_skills_add_file(th_resources *rs, const char *skill, const char *path, const void *data, size_t size,
                         const char *mime_type, const char *origin, th_err *err)
{
    const char *why = path_problem(path);
    if (!name_ok(skill) || why)
        return th_err_set(err, TH_ERR_VALUE, "Skill '%.64s' file path '%.200s' %s", skill, path,
                          why ? why : "belongs to no valid skill name");
    /* Scanned one plugin at a time, two plugins' skills meet only here:
     * the name goes to the first, and the second's files, whose SKILL.md
     * is then missing, must not join the first's skill. */
    char uri[sizeof TH_SKILL_SCHEME + NAME_MAX_CHARS + sizeof TH_SKILL_MANIFEST + 1];
    snprintf(uri, sizeof uri, TH_SKILL_SCHEME "%s/" TH_SKILL_MANIFEST, skill);
    const th_res_entry *m = th_resources_find(rs, uri, NULL);
    bool manifest = strcmp(path, TH_SKILL_MANIFEST) == 0;
    if (manifest && m)
        return th_err_set(err, TH_ERR_VALUE, "Skill name '%s' is already served by plugin %s", skill,
                          m->origin && *m->origin ? m->origin : "(built in)");
    if (!manifest && (!th_skills_file_of(m) || strcmp(m->origin ? m->origin : "", origin ? origin : "") != 0))
        return th_err_set(err, TH_ERR_VALUE, "Skill '%s' file %s: the skill's SKILL.md is not this plugin's", skill,
                          path);
    json_object *frontmatter = NULL;
    if (manifest) {
        if (!(frontmatter = th_skills_parse_frontmatter(data, size, TH_SKILL_MANIFEST, err)))
            return err->code;
        json_object *n;
        json_object_object_get_ex(frontmatter, "name", &n);
        if (strcmp(json_object_get_string(n), skill) != 0) {
            json_object_put(frontmatter);
            return th_err_set(err, TH_ERR_VALUE, "Skill '%.64s': its SKILL.md names it '%.64s'", skill,
                              json_object_get_string(n));
        }
    }
    return add_file(rs, skill, path, data, size, mime_type, frontmatter, false, origin, err);
}

/* Check the files of S as a set: count, total size, paths, mime types, one SKILL.md. */
static th_rc check_files(const th_skill *s, const th_skill_file **manifest, th_err *err)
{
    if (s->nfiles > TH_SKILL_FILES_MAX)
        return th_err_set(err, TH_ERR_VALUE, "Skill files: %zu files, more than the %d a skill may have", s->nfiles,
                          TH_SKILL_FILES_MAX);
    size_t total = 0;
    *manifest = NULL;
    for (size_t i = 0; i < s->nfiles; i++) {
        const th_skill_file *f = &s->files[i];
        if (!f->path)
            return th_err_set(err, TH_ERR_VALUE, "Skill files[%zu].path is required", i);
        const char *why = path_problem(f->path);
        if (why)
            return th_err_set(err, TH_ERR_VALUE, "Skill file path '%.200s' %s", f->path, why);
        if (!f->data && f->size)
            return th_err_set(err, TH_ERR_VALUE, "Skill file %s: data is NULL with size %zu", f->path, f->size);
        if (f->mime_type && !mime_ok(f->mime_type))
            return th_err_set(err, TH_ERR_VALUE, "Skill file %s: mime_type '%.100s' is not type/subtype", f->path,
                              f->mime_type);
        /* Compared before adding, so a hostile size cannot wrap the sum. */
        if (f->size > TH_SKILL_BYTES_MAX - total)
            return th_err_set(err, TH_ERR_VALUE, "Skill files: more than %u bytes in all (16 MiB, the limit per skill)",
                              TH_SKILL_BYTES_MAX);
        total += f->size;
        if (strcmp(f->path, TH_SKILL_MANIFEST) == 0)
            *manifest = f;
        size_t n = strlen(f->path);
        for (size_t j = 0; j < i; j++) {
            const char *o = s->files[j].path;
            size_t on = strlen(o);
            if (strcmp(o, f->path) == 0)
                return th_err_set(err, TH_ERR_VALUE, "Skill file path '%s' is given twice", f->path);
            /* "a" and "a/b": a file cannot also be a folder. */
            if ((on < n && strncmp(o, f->path, on) == 0 && f->path[on] == '/') ||
                (n < on && strncmp(o, f->path, n) == 0 && o[n] == '/'))
                return th_err_set(err, TH_ERR_VALUE, "Skill file path '%s' is both a file and a folder",
                                  on < n ? o : f->path);
        }
    }
    if (!*manifest)
        return th_err_set(err, TH_ERR_VALUE, "Skill has no SKILL.md at its root (files[].path \"SKILL.md\")");
    return TH_OK;
}

th_rc th_skills_add(th_resources *rs, const th_skill *skill, bool started, const char *origin, th_err *err)
{
    if (!skill)
        return th_err_set(err, TH_ERR_TYPE, "Skill is NULL");
    if (skill->abi_version != TH_ABI_VERSION)
        return th_err_set(err, TH_ERR_ABI, "Skill abi_version %u is not %d", skill->abi_version, TH_ABI_VERSION);
    if (skill->struct_size < TH_SKILL_MIN_SIZE)
        return th_err_set(err, TH_ERR_ABI, "Skill struct_size %u is smaller than the first th_skill (%zu)",
                          skill->struct_size, (size_t)TH_SKILL_MIN_SIZE);
    if (!skill->files || skill->nfiles == 0)
        return th_err_set(err, TH_ERR_ATTRIBUTE, "Skill files is required (at least SKILL.md)");
    if (started)
        return th_err_set(err, TH_ERR_RUNTIME, "Skill registered after the host started serving");
    const th_skill_file *manifest = NULL;
    th_rc rc = check_files(skill, &manifest, err);
    if (rc != TH_OK)
        return rc;
    json_object *frontmatter = th_skills_parse_frontmatter(manifest->data ? manifest->data : "", manifest->size,
                                                           TH_SKILL_MANIFEST, err);
    if (!frontmatter)
        return err->code;
    json_object *n;
    json_object_object_get_ex(frontmatter, "name", &n);
    char name[NAME_MAX_CHARS + 1], uri[sizeof TH_SKILL_SCHEME + NAME_MAX_CHARS + sizeof TH_SKILL_MANIFEST + 1];
    snprintf(name, sizeof name, "%s", json_object_get_string(n));
    snprintf(uri, sizeof uri, TH_SKILL_SCHEME "%s/" TH_SKILL_MANIFEST, name);
    const th_res_entry *first = th_resources_find(rs, uri, NULL);
    if (first) {
        json_object_put(frontmatter);
        return th_err_set(err, TH_ERR_VALUE, "Skill name '%s' is already served by plugin %s", name,
                          first->origin && *first->origin ? first->origin : "(built in)");
    }
    /* All or none: SKILL.md first, then the rest in the plugin's order. */
    size_t base = th_resources_count(rs), tbase = th_resources_template_count(rs);
    rc = add_file(rs, name, TH_SKILL_MANIFEST, manifest->data, manifest->size, manifest->mime_type, frontmatter,
                  started, origin, err);
    for (size_t i = 0; rc == TH_OK && i < skill->nfiles; i++)
        if (&skill->files[i] != manifest)
            rc = add_file(rs, name, skill->files[i].path, skill->files[i].data, skill->files[i].size,
                          skill->files[i].mime_type, NULL, started, origin, err);
    if (rc != TH_OK)
        th_resources_truncate(rs, base, tbase);
    return rc;
}
