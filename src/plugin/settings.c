/* SPDX-License-Identifier: MIT */
/*
** plugin/settings.c: the per-plugin settings store: the three sources and
** their precedence, the configuration file's parser, the JSON form a child
** process receives over IPC, and the digest the registry cache keys on.
** Secret values are wiped from memory when the store is freed.
*/
#define _GNU_SOURCE /* explicit_bzero */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/log.h"
#include "plugin/settings.h"

typedef struct setting {
    char *plugin, *key, *value;
    bool secret;
    bool grant; /* an operator's sandbox grant: never a plugin's to read */
    th_config_source source;
} setting;

struct th_config {
    setting *v;
    size_t n, cap;
};

th_config *th_config_new(void)
{
    return calloc(1, sizeof(th_config));
}

static void wipe(char *s)
{
    if (s) {
        explicit_bzero(s, strlen(s));
        free(s);
    }
}

void th_config_free(th_config *cfg)
{
    if (!cfg)
        return;
    for (size_t i = 0; i < cfg->n; i++) {
        free(cfg->v[i].plugin);
        free(cfg->v[i].key);
        wipe(cfg->v[i].value);
    }
    free(cfg->v);
    free(cfg);
}

bool th_config_name_ok(const char *name)
{
    if (!name || !(*name >= 'a' && *name <= 'z'))
        return false;
    size_t n = 0;
    for (const char *p = name; *p; p++, n++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
            return false;
    return n <= 64;
}

static setting *find(const th_config *cfg, const char *plugin, const char *key)
{
    for (size_t i = 0; cfg && i < cfg->n; i++)
        if (!cfg->v[i].grant && strcmp(cfg->v[i].plugin, plugin) == 0 && strcmp(cfg->v[i].key, key) == 0)
            return &cfg->v[i];
    return NULL;
}

/* A copy of S (its strings too) at the end of CFG. */
static th_rc append(th_config *cfg, const setting *s, th_err *err)
{
    if (cfg->n == cfg->cap) {
        size_t cap = cfg->cap ? cfg->cap * 2 : 16;
        setting *v = realloc(cfg->v, cap * sizeof *v);
        if (!v)
            return th_err_set(err, TH_ERR_NOMEM, "out of memory");
        cfg->v = v;
        cfg->cap = cap;
    }
    setting n = *s;
    n.plugin = strdup(s->plugin);
    n.key = strdup(s->key);
    n.value = strdup(s->value);
    if (!n.plugin || !n.key || !n.value) {
        free(n.plugin);
        free(n.key);
        wipe(n.value);
        return th_err_set(err, TH_ERR_NOMEM, "out of memory");
    }
    cfg->v[cfg->n++] = n;
    return TH_OK;
}

th_rc th_config_set(th_config *cfg, const char *plugin, const char *key, const char *value, bool secret,
                    th_config_source source, th_err *err)
{
    if (!th_config_name_ok(plugin))
        return th_err_set(err, TH_ERR_VALUE, "plugin name '%.80s' must match ^[a-z][a-z0-9_]*$ (at most 64)", plugin);
    if (!th_config_name_ok(key))
        return th_err_set(err, TH_ERR_VALUE, "setting name '%.80s' must match ^[a-z][a-z0-9_]*$ (at most 64)", key);
    setting *s = find(cfg, plugin, key);
    if (s) {
        s->secret = s->secret || secret;
        if (source < s->source)
            return TH_OK; /* a source of higher precedence set it */
        char *v = strdup(value);
        if (!v)
            return th_err_set(err, TH_ERR_NOMEM, "out of memory");
        wipe(s->value);
        s->value = v;
        s->source = source;
        return TH_OK;
    }
    return append(cfg, &(setting){.plugin = (char *)plugin, .key = (char *)key, .value = (char *)value,
                                  .secret = secret, .source = source},
                  err);
}

th_rc th_config_set_arg(th_config *cfg, const char *arg, bool secret, th_err *err)
{
    const char *dot = strchr(arg, '.'), *eq = strchr(arg, '=');
    if (!dot || !eq || eq < dot)
        return th_err_set(err, TH_ERR_VALUE, "'%.80s%s' is not NAME.key=value", secret ? "NAME.key=..." : arg,
                          "");
    char plugin[80], key[80];
    if ((size_t)(dot - arg) >= sizeof plugin || (size_t)(eq - dot - 1) >= sizeof key)
        return th_err_set(err, TH_ERR_VALUE, "the plugin or setting name is longer than 64 characters");
    snprintf(plugin, sizeof plugin, "%.*s", (int)(dot - arg), arg);
    snprintf(key, sizeof key, "%.*s", (int)(eq - dot - 1), dot + 1);
    return th_config_set(cfg, plugin, key, eq + 1, secret, TH_CONF_ARG, err);
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
        s[--n] = '\0';
    return s;
}

static th_rc add_server_arg(char ***args, size_t *n, const char *key, const char *value, bool has_value)
{
    char **a = realloc(*args, (*n + 1) * sizeof *a);
    if (!a)
        return TH_ERR_NOMEM;
    *args = a;
    size_t len = strlen(key) + strlen(value) + 4;
    if (!(a[*n] = malloc(len)))
        return TH_ERR_NOMEM;
    snprintf(a[*n], len, has_value ? "--%s=%s" : "--%s", key, value);
    (*n)++;
    return TH_OK;
}

/*
** The keys of a plugin's section that are the host's exposure policy for
** that plugin, not settings it reads: each becomes the option that says the
** same for one plugin, placed with the [toolhost] ones. A plugin cannot
** have a setting of these names in a configuration file.
*/
static const struct {
    const char *key, *option;
    bool flag; /* true/false, given as the plugin's name when true */
} exposure_keys[] = {
    {"tools", "tools", false},
    {"exclude-tools", "exclude-tools", false},
    {"read-only", "read-only-plugin", true},
};

/* KEY = VALUE of SECTION as an exposure option, if KEY is one: *DONE tells. */
static th_rc exposure_key(const char *section, const char *key, const char *value, char ***args, size_t *n,
                          bool *done, const char *path, unsigned lineno, th_err *err)
{
    *done = false;
    for (size_t i = 0; i < sizeof exposure_keys / sizeof *exposure_keys; i++) {
        if (strcmp(key, exposure_keys[i].key) != 0)
            continue;
        *done = true;
        char buf[8300];
        if (!exposure_keys[i].flag)
            snprintf(buf, sizeof buf, "%s:%s", section, value);
        else if (strcmp(value, "true") == 0)
            snprintf(buf, sizeof buf, "%s", section);
        else if (strcmp(value, "false") == 0)
            return TH_OK;
        else
            return th_err_set(err, TH_ERR_VALUE, "%s:%u: [%s] %s is true or false, not '%.80s'", path, lineno,
                              section, key, value);
        if (add_server_arg(args, n, exposure_keys[i].option, buf, true) != TH_OK)
            return th_err_set(err, TH_ERR_NOMEM, "out of memory");
        return TH_OK;
    }
    return TH_OK;
}

th_rc th_config_load_file(th_config *cfg, const char *path, char ***server_args, size_t *nserver, th_err *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return th_err_set(err, TH_ERR_IO, "--config %s: cannot open: %s", path, strerror(errno));
    char line[8192], section[80] = "";
    unsigned lineno = 0;
    bool any_secret = false;
    th_rc rc = TH_OK;
    while (rc == TH_OK && fgets(line, sizeof line, f)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(f)) {
            rc = th_err_set(err, TH_ERR_VALUE, "%s:%u: line longer than %zu bytes", path, lineno, sizeof line - 2);
            break;
        }
        char *s = trim(line);
        if (!*s || *s == '#' || *s == ';')
            continue;
        if (*s == '[') {
            char *end = strchr(s, ']');
            if (!end || end[1]) {
                rc = th_err_set(err, TH_ERR_VALUE, "%s:%u: a section is [NAME] alone on its line", path, lineno);
                break;
            }
            *end = '\0';
            char *name = trim(s + 1);
            if (!th_config_name_ok(name)) {
                rc = th_err_set(err, TH_ERR_VALUE, "%s:%u: section '%.80s' is not a plugin name (^[a-z][a-z0-9_]*$)",
                                path, lineno, name);
                break;
            }
            snprintf(section, sizeof section, "%s", name);
            continue;
        }
        char *eq = strchr(s, '=');
        bool server = strcmp(section, TH_CONFIG_SERVER_SECTION) == 0;
        if (!*section) {
            rc = th_err_set(err, TH_ERR_VALUE, "%s:%u: a setting before any [section]", path, lineno);
            break;
        }
        if (!eq && !server) {
            rc = th_err_set(err, TH_ERR_VALUE, "%s:%u: expected key = value", path, lineno);
            break;
        }
        if (eq)
            *eq = '\0';
        char *key = trim(s), *value = eq ? trim(eq + 1) : "";
        size_t vlen = strlen(value);
        if (vlen >= 2 && value[0] == '"' && value[vlen - 1] == '"') {
            value[vlen - 1] = '\0';
            value++;
        }
        bool secret = false;
        if (strncmp(key, "secret", 6) == 0 && (key[6] == ' ' || key[6] == '\t')) {
            secret = any_secret = true;
            key = trim(key + 6);
        }
        if (server) {
            if (secret) {
                rc = th_err_set(err, TH_ERR_VALUE, "%s:%u: [%s] options cannot be secret", path, lineno,
                                TH_CONFIG_SERVER_SECTION);
                break;
            }
            if (add_server_arg(server_args, nserver, key, value, eq != NULL) != TH_OK)
                rc = th_err_set(err, TH_ERR_NOMEM, "out of memory");
            continue;
        }
        bool policy = false;
        if (!secret && (rc = exposure_key(section, key, value, server_args, nserver, &policy, path, lineno, err)) != TH_OK)
            break;
        if (policy)
            continue;
        th_err e;
        bool unused;
        bool grant = th_config_grant_member(key, &unused) != NULL; /* never a setting's name */
        if (grant && secret)
            rc = th_err_set(&e, TH_ERR_VALUE, "[%s] %s: a sandbox grant cannot be secret", section, key);
        else
            rc = grant ? th_config_grant(cfg, section, key, value, &e)
                       : th_config_set(cfg, section, key, value, secret, TH_CONF_FILE, &e);
        if (rc != TH_OK)
            th_err_set(err, rc, "%s:%u: %s", path, lineno, e.msg);
    }
    explicit_bzero(line, sizeof line);
    if (rc == TH_OK && ferror(f))
        rc = th_err_set(err, TH_ERR_IO, "--config %s: read error", path);
    /* Secrets in a file others can read are not secret: say so, once. */
    struct stat st;
    if (rc == TH_OK && any_secret && fstat(fileno(f), &st) == 0 && (st.st_mode & 077))
        th_log(TH_LOG_WARNING, "--config %s holds secret values but is readable by group or others (mode %03o); "
               "chmod 600 it", path, (unsigned)(st.st_mode & 0777));
    fclose(f);
    return rc;
}

bool th_config_plugin_name(const char *path, char *buf, size_t size)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    size_t n = strlen(b);
    if (n <= 3 || strcmp(b + n - 3, ".so") != 0 || n - 3 >= size)
        return false;
    memcpy(buf, b, n - 3);
    buf[n - 3] = '\0';
    return true;
}

void th_config_load_env(th_config *cfg, char *const *paths, size_t n, char *const *envp)
{
    for (size_t i = 0; i < n; i++) {
        char name[80], prefix[100];
        if (!th_config_plugin_name(paths[i], name, sizeof name) || !th_config_name_ok(name))
            continue;
        int len = snprintf(prefix, sizeof prefix, "TOOLHOST_%s_", name);
        for (int k = 0; k < len; k++)
            prefix[k] = (char)toupper((unsigned char)prefix[k]);
        for (char *const *e = envp; e && *e; e++) {
            const char *eq = strchr(*e, '=');
            if (strncmp(*e, prefix, (size_t)len) != 0 || !eq || eq - *e - len <= 0 || eq - *e - len >= 64)
                continue;
            char key[80];
            snprintf(key, sizeof key, "%.*s", (int)(eq - *e - len), *e + len);
            for (char *k = key; *k; k++)
                *k = (char)tolower((unsigned char)*k);
            th_err err;
            if (th_config_set(cfg, name, key, eq + 1, true, TH_CONF_ENV, &err) != TH_OK)
                th_log(TH_LOG_WARNING, "environment variable %.*s ignored: %s", (int)(eq - *e), *e, err.msg);
        }
    }
}

const char *th_config_get(const th_config *cfg, const char *plugin, const char *key, bool *secret)
{
    const setting *s = plugin && key ? find(cfg, plugin, key) : NULL;
    if (secret)
        *secret = s && s->secret;
    return s ? s->value : NULL;
}

json_object *th_config_to_json(const th_config *cfg, const char *plugin)
{
    json_object *all = NULL;
    for (size_t i = 0; cfg && i < cfg->n; i++) {
        const setting *s = &cfg->v[i];
        if (s->grant || (plugin && strcmp(plugin, s->plugin) != 0))
            continue;
        json_object *p = NULL, *e = json_object_new_object();
        if (!all && !(all = json_object_new_object()))
            break;
        if (!json_object_object_get_ex(all, s->plugin, &p)) {
            p = json_object_new_object();
            json_object_object_add(all, s->plugin, p);
        }
        json_object_object_add(e, "value", json_object_new_string(s->value));
        json_object_object_add(e, "secret", json_object_new_boolean(s->secret));
        json_object_object_add(p, s->key, e);
    }
    return all;
}

th_config *th_config_from_json(json_object *o)
{
    th_config *cfg = th_config_new();
    if (!cfg || !o || !json_object_is_type(o, json_type_object))
        return cfg;
    json_object_object_foreach(o, plugin, keys)
    {
        if (!json_object_is_type(keys, json_type_object))
            continue;
        json_object_object_foreach(keys, key, e)
        {
            json_object *v, *sec;
            th_err err;
            if (json_object_object_get_ex(e, "value", &v) && json_object_is_type(v, json_type_string))
                th_config_set(cfg, plugin, key, json_object_get_string(v),
                              json_object_object_get_ex(e, "secret", &sec) && json_object_get_boolean(sec),
                              TH_CONF_ARG, &err);
        }
    }
    return cfg;
}

/* FNV-1a, 64 bits, as the cache's own: over non-secret values only. */
static uint64_t fnv(uint64_t h, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return h;
}

static int by_key(const void *a, const void *b)
{
    return strcmp((*(const setting *const *)a)->key, (*(const setting *const *)b)->key);
}

uint64_t th_config_digest(const th_config *cfg, const char *plugin, bool *uncacheable)
{
    uint64_t h = 14695981039346656037ULL;
    *uncacheable = false;
    size_t n = 0;
    const setting **mine = cfg && cfg->n ? calloc(cfg->n, sizeof *mine) : NULL;
    for (size_t i = 0; mine && i < cfg->n; i++)
        if (!cfg->v[i].grant && strcmp(cfg->v[i].plugin, plugin) == 0)
            mine[n++] = &cfg->v[i];
    if (cfg && cfg->n && !mine) {
        *uncacheable = true; /* out of memory: do not trust a digest */
        return h;
    }
    /* In key order: the order they were given in does not change the outcome. */
    if (n > 1) /* qsort's base must not be NULL, even for 0 items */
        qsort(mine, n, sizeof *mine, by_key);
    for (size_t i = 0; i < n; i++) {
        if (mine[i]->secret) {
            *uncacheable = true;
            continue;
        }
        h = fnv(h, mine[i]->key, strlen(mine[i]->key) + 1);
        h = fnv(h, mine[i]->value, strlen(mine[i]->value) + 1);
    }
    free(mine);
    return h;
}

json_object *th_config_describe(const th_config *cfg, const char *plugin)
{
    json_object *o = NULL;
    for (size_t i = 0; cfg && i < cfg->n; i++) {
        const setting *s = &cfg->v[i];
        if (s->grant || strcmp(s->plugin, plugin) != 0)
            continue;
        if (!o && !(o = json_object_new_object()))
            return NULL;
        json_object_object_add(o, s->key, json_object_new_string(s->secret ? "(secret)" : s->value));
    }
    return o;
}

/* ---- the operator's sandbox grants --------------------------------------- */

typedef enum grant_kind { G_PATH, G_HOSTPORT, G_NUMBER } grant_kind;

/* Hyphenated, so that no plugin setting (^[a-z][a-z0-9_]*$) can be one. */
static const struct {
    const char *key, *member;
    grant_kind kind;
} grant_keys[] = {
    {"allow-read", "read", G_PATH},          {"allow-write", "write", G_PATH},
    {"allow-connect", "connect", G_HOSTPORT}, {"allow-exec", "exec", G_PATH},
    {"max-memory", "memory", G_NUMBER},      {"cpu-seconds", "cpu_seconds", G_NUMBER},
    {"max-files", "max_files", G_NUMBER},    {"max-procs", "max_procs", G_NUMBER},
};
#define NGRANT_KEYS (sizeof grant_keys / sizeof grant_keys[0])

const char *th_config_grant_member(const char *key, bool *list)
{
    for (size_t i = 0; i < NGRANT_KEYS; i++)
        if (strcmp(grant_keys[i].key, key) == 0) {
            *list = grant_keys[i].kind != G_NUMBER;
            return grant_keys[i].member;
        }
    return NULL;
}

/* Whether VALUE is what KIND takes; if not, the rule it breaks. */
static const char *grant_value_rule(grant_kind kind, const char *value)
{
    char *end;
    errno = 0;
    switch (kind) {
    case G_PATH: return value[0] == '/' ? NULL : "an absolute path";
    case G_HOSTPORT: {
        const char *colon = strrchr(value, ':');
        unsigned long port = colon && colon > value ? strtoul(colon + 1, &end, 10) : 0;
        return colon && colon > value && colon[1] && !*end && port >= 1 && port <= 65535 ? NULL
                                                                                        : "HOST:PORT, PORT 1 to 65535";
    }
    case G_NUMBER: {
        unsigned long long v = strtoull(value, &end, 10);
        return *value >= '0' && *value <= '9' && !*end && !errno && v > 0 ? NULL : "a positive whole number";
    }
    }
    return "unknown";
}

th_rc th_config_grant(th_config *cfg, const char *plugin, const char *key, const char *value, th_err *err)
{
    if (!th_config_name_ok(plugin))
        return th_err_set(err, TH_ERR_VALUE, "plugin name '%.80s' must match ^[a-z][a-z0-9_]*$ (at most 64)", plugin);
    size_t i = 0;
    while (i < NGRANT_KEYS && strcmp(grant_keys[i].key, key) != 0)
        i++;
    if (i == NGRANT_KEYS)
        return th_err_set(err, TH_ERR_VALUE,
                          "plugin %s: '%.80s' is not a grant (allow-read, allow-write, allow-connect, allow-exec, "
                          "max-memory, cpu-seconds, max-files, max-procs)",
                          plugin, key);
    const char *rule = grant_value_rule(grant_keys[i].kind, value);
    if (rule)
        return th_err_set(err, TH_ERR_VALUE, "plugin %s: %s: '%.200s' is not %s", plugin, key, value, rule);
    return append(cfg, &(setting){.plugin = (char *)plugin, .key = (char *)key, .value = (char *)value,
                                  .grant = true, .source = TH_CONF_ARG},
                  err);
}

th_rc th_config_grant_arg(th_config *cfg, const char *arg, th_err *err)
{
    const char *dot = strchr(arg, '.'), *eq = dot ? strchr(dot, '=') : NULL;
    char plugin[80], key[80];
    if (!dot || !eq)
        return th_err_set(err, TH_ERR_VALUE, "'%.200s' is not NAME.KEY=VALUE", arg);
    if ((size_t)(dot - arg) >= sizeof plugin || (size_t)(eq - dot - 1) >= sizeof key)
        return th_err_set(err, TH_ERR_VALUE, "'%.200s': the plugin or grant name is too long", arg);
    snprintf(plugin, sizeof plugin, "%.*s", (int)(dot - arg), arg);
    snprintf(key, sizeof key, "%.*s", (int)(eq - dot - 1), dot + 1);
    return th_config_grant(cfg, plugin, key, eq + 1, err);
}

/* The grants of PLUGIN, in the order given (a later number wins). */
size_t th_config_grant_count(const th_config *cfg, const char *plugin)
{
    size_t n = 0;
    for (size_t i = 0; cfg && i < cfg->n; i++)
        n += cfg->v[i].grant && strcmp(cfg->v[i].plugin, plugin) == 0;
    return n;
}

void th_config_grant_at(const th_config *cfg, const char *plugin, size_t k, const char **key, const char **value)
{
    for (size_t i = 0; cfg && i < cfg->n; i++)
        if (cfg->v[i].grant && strcmp(cfg->v[i].plugin, plugin) == 0 && k-- == 0) {
            *key = cfg->v[i].key;
            *value = cfg->v[i].value;
            return;
        }
    *key = *value = NULL;
}

const char *th_config_grant_plugin_at(const th_config *cfg, size_t k)
{
    for (size_t i = 0; cfg && i < cfg->n; i++)
        if (cfg->v[i].grant && k-- == 0)
            return cfg->v[i].plugin;
    return NULL;
}
