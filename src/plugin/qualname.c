/* SPDX-License-Identifier: MIT */
/*
** plugin/qualname.c: toolboxes and qualified tool names (doc/registry-rules.md,
** 7): the naming table of plugin directories, building and parsing
** `{toolbox}__{plugin}__{tool}`, and the rules' error texts word for word.
*/
#include "config.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plugin/qualname.h"

#define SEP "__"
#define SEP_LEN 2

bool th_qualname_parse(const char *name, th_qualname *out)
{
    if (!name)
        return false;
    /* Split at the first two '__', and the rest is kept whole: a tool
     * named my__special__tool survives the round trip. */
    const char *a = strstr(name, SEP);
    if (!a || a == name)
        return false;
    const char *server = a + SEP_LEN;
    const char *b = strstr(server, SEP);
    if (!b || b == server || !b[SEP_LEN])
        return false;
    out->toolbox = name;
    out->toolbox_len = (size_t)(a - name);
    out->server = server;
    out->server_len = (size_t)(b - server);
    out->tool = b + SEP_LEN;
    return true;
}

char *th_qualname_make(const char *toolbox, const char *server, const char *tool)
{
    if (!toolbox || !server || !tool || !*toolbox || !*server || !*tool)
        return NULL;
    size_t len = strlen(toolbox) + strlen(server) + strlen(tool) + 2 * SEP_LEN + 1;
    char *s = malloc(len);
    if (s)
        snprintf(s, len, "%s" SEP "%s" SEP "%s", toolbox, server, tool);
    return s;
}

const char *th_qualname_part_rule(const char *name)
{
    if (!name || !*name)
        return "must not be empty";
    for (const char *p = name; *p; p++) {
        char c = *p;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_'))
            return "must be letters, digits, '-' and '_'";
    }
    /* Parsing splits at the first "__": one inside, or a '_' just before
     * the separator, would move the split. */
    if (strstr(name, SEP))
        return "must not contain '__' (the separator of qualified names)";
    if (name[strlen(name) - 1] == '_')
        return "must not end with '_' (it would merge with the '__' after it)";
    return NULL;
}

void th_qualname_err_format(char *buf, size_t size, const char *name)
{
    th_qualname_err_format_as(buf, size, &th_qualname_tool_kind, name);
}

void th_qualname_err_format_as(char *buf, size_t size, const th_qualname_kind *kind, const char *name)
{
    snprintf(buf, size,
             "Invalid %s name format '%s'. Expected format: {toolbox}__{server}__{%s} "
             "(note: double underscores between all components)",
             kind->lower, name, kind->lower);
}

void th_qualname_err_toolbox(char *buf, size_t size, const char *toolbox, size_t len)
{
    snprintf(buf, size, "Toolbox '%.*s' not found", (int)len, toolbox);
}

void th_qualname_err_server(char *buf, size_t size, const char *toolbox, size_t tlen, const char *server, size_t slen)
{
    snprintf(buf, size, "Server '%.*s' not found in toolbox '%.*s'", (int)slen, server, (int)tlen, toolbox);
}

typedef struct toolbox_dir {
    char *name;
    char *dir; /* absolute, spelled as the loader spells it */
} toolbox_dir;

struct th_naming {
    atomic_int refs;
    bool qualified;
    toolbox_dir *dirs;
    size_t n;
};

th_naming *th_naming_new(bool qualified)
{
    th_naming *n = calloc(1, sizeof *n);
    if (!n)
        return NULL;
    atomic_init(&n->refs, 1);
    n->qualified = qualified;
    return n;
}

th_naming *th_naming_ref(th_naming *n)
{
    if (n)
        atomic_fetch_add(&n->refs, 1);
    return n;
}

void th_naming_unref(th_naming *n)
{
    if (!n || atomic_fetch_sub(&n->refs, 1) != 1)
        return;
    for (size_t i = 0; i < n->n; i++) {
        free(n->dirs[i].name);
        free(n->dirs[i].dir);
    }
    free(n->dirs);
    free(n);
}

bool th_naming_qualified(const th_naming *n)
{
    return n && n->qualified;
}

th_rc th_naming_split_spec(const char *spec, char **name, const char **dir, th_err *err)
{
    const char *eq = strchr(spec, '=');
    *name = NULL;
    *dir = spec;
    /* A '/' before the '=' makes it a path ("./a=b", "/srv/x=y"). */
    bool named = eq && memchr(spec, '/', (size_t)(eq - spec)) == NULL;
    char *n = named ? strndup(spec, (size_t)(eq - spec)) : strdup(TH_DEFAULT_TOOLBOX);
    if (!n)
        return th_err_set(err, TH_ERR_NOMEM, "--plugin-dir %s: out of memory", spec);
    const char *why = th_qualname_part_rule(n);
    if (why) {
        th_rc rc = th_err_set(err, TH_ERR_VALUE, "--plugin-dir %s: toolbox name '%s' %s", spec, n, why);
        free(n);
        return rc;
    }
    if (named && !eq[1]) {
        free(n);
        return th_err_set(err, TH_ERR_VALUE, "--plugin-dir %s: the directory after '=' is empty", spec);
    }
    *name = n;
    if (named)
        *dir = eq + 1;
    return TH_OK;
}

/* DIR made absolute against the working directory, as loader.c does. */
static char *absolute(const char *dir)
{
    if (dir[0] == '/')
        return strdup(dir);
    char *cwd = getcwd(NULL, 0);
    if (!cwd)
        return NULL;
    size_t len = strlen(cwd) + strlen(dir) + 2;
    char *abs = malloc(len);
    if (abs)
        snprintf(abs, len, "%s%s%s", cwd, strcmp(cwd, "/") == 0 ? "" : "/", dir);
    free(cwd);
    return abs;
}

th_rc th_naming_add(th_naming *n, const char *name, const char *dir, th_err *err)
{
    const char *why = th_qualname_part_rule(name);
    if (why)
        return th_err_set(err, TH_ERR_VALUE, "toolbox name '%s' %s", name, why);
    toolbox_dir *p = realloc(n->dirs, (n->n + 1) * sizeof *p);
    if (!p)
        return th_err_set(err, TH_ERR_NOMEM, "toolbox %s: out of memory", name);
    n->dirs = p;
    toolbox_dir *d = &n->dirs[n->n];
    d->name = strdup(name);
    d->dir = absolute(dir);
    /* "plugins/" and "plugins" are one directory; dir_of skips the '/'s. */
    for (size_t len = d->dir ? strlen(d->dir) : 0; len > 1 && d->dir[len - 1] == '/'; len--)
        d->dir[len - 1] = '\0';
    if (!d->name || !d->dir) {
        free(d->name);
        free(d->dir);
        return th_err_set(err, TH_ERR_NOMEM, "toolbox %s: out of memory", name);
    }
    /* A plugin is placed in its toolbox by its path alone: one directory
     * cannot be two toolboxes. */
    for (size_t i = 0; i < n->n; i++) {
        if (strcmp(n->dirs[i].dir, d->dir) == 0 && strcmp(n->dirs[i].name, name) != 0) {
            th_rc rc = th_err_set(err, TH_ERR_VALUE, "directory %s is already the toolbox '%s'; one directory "
                                  "cannot be two toolboxes", d->dir, n->dirs[i].name);
            free(d->name);
            free(d->dir);
            return rc;
        }
    }
    n->n++;
    return TH_OK;
}

size_t th_naming_count(const th_naming *n)
{
    return n ? n->n : 0;
}

const char *th_naming_toolbox_at(const th_naming *n, size_t i)
{
    return n && i < n->n ? n->dirs[i].name : NULL;
}

bool th_naming_has_toolbox(const th_naming *n, const char *name, size_t len)
{
    for (size_t i = 0; n && i < n->n; i++)
        if (strlen(n->dirs[i].name) == len && memcmp(n->dirs[i].name, name, len) == 0)
            return true;
    return false;
}

/* The directory entry PATH is a file of: PATH is DIR, '/'s, then a base
 * name (the loader writes DIR as given, so "plugins/" gives "//"). */
static const toolbox_dir *dir_of(const th_naming *n, const char *path)
{
    for (size_t i = 0; n && path && i < n->n; i++) {
        size_t len = strlen(n->dirs[i].dir);
        if (len == 1) /* the root */
            len = 0;
        if (strncmp(path, n->dirs[i].dir, len) != 0 || path[len] != '/')
            continue;
        const char *base = path + len;
        while (*base == '/')
            base++;
        if (*base && !strchr(base, '/'))
            return &n->dirs[i];
    }
    return NULL;
}

const char *th_naming_toolbox_of(const th_naming *n, const char *path)
{
    const toolbox_dir *d = dir_of(n, path);
    return d ? d->name : NULL;
}

th_rc th_naming_expose(const th_naming *n, const char *path, const char *tool, char **toolbox, char **plugin,
                       char **exposed, th_err *err)
{
    return th_naming_expose_as(n, path, tool, &th_qualname_tool_kind, toolbox, plugin, exposed, err);
}

const th_qualname_kind th_qualname_tool_kind = {"Tool", "tool", TH_QUALNAME_MAX, "the %d MCP allows"};
const th_qualname_kind th_qualname_prompt_kind = {"Prompt", "prompt", TH_PROMPT_QUALNAME_MAX,
                                                  "the %d a prompt name may have"};

th_rc th_naming_expose_as(const th_naming *n, const char *path, const char *tool, const th_qualname_kind *kind,
                          char **toolbox, char **plugin, char **exposed, th_err *err)
{
    th_rc rc;
    *toolbox = *plugin = *exposed = NULL;
    const toolbox_dir *d = dir_of(n, path);
    if (d) {
        const char *base = strrchr(path, '/') + 1;
        size_t blen = strlen(base);
        if (blen > 3 && strcmp(base + blen - 3, ".so") == 0)
            blen -= 3;
        *toolbox = strdup(d->name);
        *plugin = strndup(base, blen);
        if (!*toolbox || !*plugin)
            goto nomem;
    }
    if (!th_naming_qualified(n) || !d) {
        /* A host-added tool, or one from outside every toolbox, keeps its
         * own name even in qualified mode: there is nothing to qualify with. */
        if (!(*exposed = strdup(tool)))
            goto nomem;
        return TH_OK;
    }
    const char *why = th_qualname_part_rule(*plugin);
    if (why) {
        rc = th_err_set(err, TH_ERR_VALUE, "plugin name '%s' cannot be part of a qualified %s name: it %s",
                        *plugin, kind->lower, why);
        goto fail;
    }
    if (!(*exposed = th_qualname_make(*toolbox, *plugin, tool)))
        goto nomem;
    size_t len = strlen(*exposed);
    if (len > (size_t)kind->max) {
        char limit[64];
        snprintf(limit, sizeof limit, kind->limit, kind->max);
        rc = th_err_set(err, TH_ERR_VALUE,
                        "%s qualified name '%s' is %zu chars, longer than %s "
                        "(toolbox '%s' + plugin '%s' + %s '%s'; shorten the toolbox name)",
                        kind->upper, *exposed, len, limit, *toolbox, *plugin, kind->lower, tool);
        goto fail;
    }
    return TH_OK;

nomem:
    rc = th_err_set(err, TH_ERR_NOMEM, "out of memory naming %s '%s'", kind->lower, tool);
fail:
    free(*toolbox);
    free(*plugin);
    free(*exposed);
    *toolbox = *plugin = *exposed = NULL;
    return rc;
}
