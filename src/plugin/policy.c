/* SPDX-License-Identifier: MIT */
/*
** plugin/policy.c: the exposure policy's rules and their matching. The
** rules are parsed and checked once; a lookup is a few fnmatch calls, done
** by the registry's one lookup so that listing and calling agree.
*/
#include "config.h"

#include <fnmatch.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/policy.h"
#include "plugin/settings.h"

/* One rule: KIND's GLOB (NULL for READ_ONLY), for PLUGIN alone or, NULL, all. */
typedef struct rule {
    th_policy_kind kind;
    char *plugin;
    char *glob;
} rule;

struct th_policy {
    atomic_int refs;
    rule *rules;
    size_t n;
    bool closed; /* th_policy_new_closed: a TOOLS glob must match, even with none */
};

th_policy *th_policy_new(void)
{
    th_policy *p = calloc(1, sizeof *p);
    if (p)
        atomic_init(&p->refs, 1);
    return p;
}

th_policy *th_policy_new_closed(void)
{
    th_policy *p = th_policy_new();
    if (p)
        p->closed = true;
    return p;
}

th_policy *th_policy_ref(th_policy *p)
{
    if (p)
        atomic_fetch_add(&p->refs, 1);
    return p;
}

void th_policy_unref(th_policy *p)
{
    if (!p || atomic_fetch_sub(&p->refs, 1) != 1)
        return;
    for (size_t i = 0; i < p->n; i++) {
        free(p->rules[i].plugin);
        free(p->rules[i].glob);
    }
    free(p->rules);
    free(p);
}

bool th_policy_active(const th_policy *p)
{
    return p && (p->n > 0 || p->closed);
}

static th_rc push(th_policy *p, th_policy_kind kind, const char *plugin, size_t plen, const char *glob, size_t glen,
                  th_err *err)
{
    rule *r = realloc(p->rules, (p->n + 1) * sizeof *r);
    if (!r)
        return th_err_set(err, TH_ERR_NOMEM, "out of memory");
    p->rules = r;
    r = &p->rules[p->n];
    *r = (rule){.kind = kind};
    if ((plugin && !(r->plugin = strndup(plugin, plen))) || (glob && !(r->glob = strndup(glob, glen)))) {
        free(r->plugin);
        free(r->glob);
        return th_err_set(err, TH_ERR_NOMEM, "out of memory");
    }
    p->n++;
    return TH_OK;
}

/* A PLUGIN: prefix must name a plugin as its config section would. */
static th_rc check_plugin(const char *opt, const char *name, size_t len, th_err *err)
{
    char buf[80];
    if (len >= sizeof buf)
        return th_err_set(err, TH_ERR_VALUE, "--%s: plugin name '%.*s...' is longer than 64 characters", opt, 64, name);
    snprintf(buf, sizeof buf, "%.*s", (int)len, name);
    if (!th_config_name_ok(buf))
        return th_err_set(err, TH_ERR_VALUE, "--%s: '%s' is not a plugin name (^[a-z][a-z0-9_]*$)", opt, buf);
    return TH_OK;
}

th_rc th_policy_add(th_policy *p, th_policy_kind kind, const char *opt, const char *spec, th_err *err)
{
    if (kind == TH_POLICY_READ_ONLY) {
        th_rc rc = spec ? check_plugin(opt, spec, strlen(spec), err) : TH_OK;
        return rc != TH_OK ? rc : push(p, kind, spec, spec ? strlen(spec) : 0, NULL, 0, err);
    }
    const char *colon = strchr(spec, ':'), *globs = colon ? colon + 1 : spec;
    size_t plen = colon ? (size_t)(colon - spec) : 0;
    th_rc rc = colon ? check_plugin(opt, spec, plen, err) : TH_OK;
    for (const char *g = globs; rc == TH_OK;) {
        size_t len = strcspn(g, ",");
        if (len == 0)
            return th_err_set(err, TH_ERR_VALUE, "--%s: '%s' has an empty glob (GLOB,GLOB... with no empty one)", opt,
                              spec);
        rc = push(p, kind, colon ? spec : NULL, plen, g, len, err);
        if (!g[len])
            break;
        g += len + 1;
    }
    return rc;
}

static bool matches(const char *glob, const char *s)
{
    return s && fnmatch(glob, s, 0) == 0;
}

/* Whether rule R matches the tool: a plugin's own glob sees the plugin's
 * name for it, a global one also "PLUGIN/LOCAL". */
static bool rule_matches(const rule *r, const char *name, const char *qualified_local, const char *local)
{
    if (r->plugin)
        return matches(r->glob, name) || matches(r->glob, local);
    return matches(r->glob, name) || matches(r->glob, qualified_local);
}

static bool read_only(json_object *annotations)
{
    json_object *hint;
    return annotations && json_object_object_get_ex(annotations, "readOnlyHint", &hint) &&
           json_object_is_type(hint, json_type_boolean) && json_object_get_boolean(hint);
}

bool th_policy_tool(const th_policy *p, const char *name, const char *plugin, const char *local,
                    json_object *annotations)
{
    if (!th_policy_active(p))
        return true;
    char ql[512];
    snprintf(ql, sizeof ql, "%s/%s", plugin ? plugin : "", local ? local : name);
    /* Per scope (all plugins, then this one): some TOOLS rule must match
     * when there is one, and no EXCLUDE rule may. */
    bool want[2] = {p->closed, false}, found[2] = {false, false};
    for (size_t i = 0; i < p->n; i++) {
        const rule *r = &p->rules[i];
        if (r->plugin && (!plugin || strcmp(r->plugin, plugin) != 0))
            continue;
        int scope = r->plugin != NULL;
        if (r->kind == TH_POLICY_READ_ONLY && !read_only(annotations))
            return false;
        if (r->kind == TH_POLICY_EXCLUDE && rule_matches(r, name, ql, local ? local : name))
            return false;
        if (r->kind == TH_POLICY_TOOLS) {
            want[scope] = true;
            found[scope] = found[scope] || rule_matches(r, name, ql, local ? local : name);
        }
    }
    return (!want[0] || found[0]) && (!want[1] || found[1]);
}

bool th_policy_plugin(const th_policy *p, const char *plugin)
{
    if (!th_policy_active(p) || !plugin)
        return true;
    char all[128];
    snprintf(all, sizeof all, "%s/*", plugin);
    for (size_t i = 0; i < p->n; i++) {
        const rule *r = &p->rules[i];
        if (r->kind != TH_POLICY_EXCLUDE || (r->plugin && strcmp(r->plugin, plugin) != 0))
            continue;
        if (matches(r->glob, r->plugin ? "*" : all))
            return false;
    }
    return true;
}
