/* SPDX-License-Identifier: MIT */
/*
** plugin/needs.c: a plugin's declared needs as a sorted set of canonical
** strings, and the rules a need's value follows; the operator writes the
** same values in grants (plugin/settings.c).
*/
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/needs.h"

struct th_needs {
    char **v; /* sorted, unique */
    size_t n, cap;
};

/* The kinds by their value in th_need, and the word each is written with. */
static const char *const kind_names[] = {NULL, "read", "write", "connect", "exec"};
#define NKINDS (sizeof kind_names / sizeof kind_names[0])

th_needs *th_needs_new(void)
{
    return calloc(1, sizeof(th_needs));
}

void th_needs_free(th_needs *n)
{
    for (size_t i = 0; n && i < n->n; i++)
        free(n->v[i]);
    if (n)
        free(n->v);
    free(n);
}

/* Whether VALUE is what KIND takes; if not, the rule. */
static const char *value_rule(th_need kind, const char *value)
{
    if (!value || !*value || strlen(value) > 4096)
        return "a value of 1 to 4096 bytes";
    if (kind != TH_NEED_CONNECT)
        return value[0] == '/' ? NULL : "an absolute path";
    const char *colon = strrchr(value, ':');
    char *end;
    unsigned long port = colon && colon > value && colon[1] ? strtoul(colon + 1, &end, 10) : 0;
    return port >= 1 && port <= 65535 && !*end ? NULL : "HOST:PORT, PORT 1 to 65535";
}

th_rc th_needs_add(th_needs *n, th_need kind, const char *value, th_err *err)
{
    if ((unsigned)kind == 0 || (unsigned)kind >= NKINDS)
        return th_err_set(err, TH_ERR_VALUE, "need kind %d is not TH_NEED_READ, _WRITE, _CONNECT or _EXEC", (int)kind);
    const char *rule = value_rule(kind, value);
    if (rule)
        return th_err_set(err, TH_ERR_VALUE, "%s need '%.200s' is not %s", kind_names[kind], value ? value : "(null)",
                          rule);
    if (!n)
        return TH_OK; /* checked, not kept */
    size_t len = strlen(kind_names[kind]) + strlen(value) + 2;
    char *text = malloc(len);
    if (!text)
        return th_err_set(err, TH_ERR_NOMEM, "out of memory");
    snprintf(text, len, "%s:%s", kind_names[kind], value);
    size_t at = 0;
    while (at < n->n && strcmp(n->v[at], text) < 0)
        at++;
    if (at < n->n && strcmp(n->v[at], text) == 0) {
        free(text); /* declared already */
        return TH_OK;
    }
    if (n->n == n->cap) {
        size_t cap = n->cap ? n->cap * 2 : 8;
        char **v = realloc(n->v, cap * sizeof *v);
        if (!v) {
            free(text);
            return th_err_set(err, TH_ERR_NOMEM, "out of memory");
        }
        n->v = v;
        n->cap = cap;
    }
    memmove(n->v + at + 1, n->v + at, (n->n - at) * sizeof *n->v);
    n->v[at] = text;
    n->n++;
    return TH_OK;
}

json_object *th_needs_json(const th_needs *n)
{
    json_object *a = json_object_new_array();
    for (size_t i = 0; a && n && i < n->n; i++)
        json_object_array_add(a, json_object_new_string(n->v[i]));
    return a;
}

const char *th_needs_beyond(const th_needs *n, json_object *given)
{
    for (size_t i = 0; n && i < n->n; i++) {
        size_t k = 0, len = given && json_object_is_type(given, json_type_array) ? json_object_array_length(given) : 0;
        while (k < len && strcmp(json_object_get_string(json_object_array_get_idx(given, k)), n->v[i]) != 0)
            k++;
        if (k == len)
            return n->v[i];
    }
    return NULL;
}

bool th_needs_valid(const char *text)
{
    const char *colon = text ? strchr(text, ':') : NULL;
    for (size_t k = 1; colon && k < NKINDS; k++)
        if (strlen(kind_names[k]) == (size_t)(colon - text) && strncmp(kind_names[k], text, (size_t)(colon - text)) == 0)
            return value_rule((th_need)k, colon + 1) == NULL;
    return false;
}
