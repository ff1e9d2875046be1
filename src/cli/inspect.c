/* SPDX-License-Identifier: MIT */
/*
** cli/inspect.c: `toolhost inspect [DIR|FILE.so]...`, a report on plugins for
** their authors: each plugin, its tools with their final schemas, and every
** refusal with its reason. Plugins are opened only by scanner processes.
*/
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "base/log.h"
#include "base/util.h"
#include "plugin/loader.h"
#include "plugin/qualname.h"
#include "plugin/settings.h"
#include "plugin/registry.h"
#include "plugin/resources.h"
#include "plugin/skills.h"
#include "plugin/prompts.h"
#include "worker/scanner.h"
#include "worker/spawn.h"
#include "worker/supervisor.h"

extern char **environ;

/* The plugin files to inspect, in load order; owned, freed with
 * th_loader_paths_free. */
typedef struct path_list {
    char **v;
    size_t n;
} path_list;

static bool push_path(path_list *l, const char *path)
{
    char **grown = realloc(l->v, (l->n + 1) * sizeof *grown);
    if (!grown)
        return false;
    l->v = grown;
    if (!(l->v[l->n] = strdup(path)))
        return false;
    l->n++;
    return true;
}

/* Directories are listed as the host lists them; a file is taken as named
 * (made absolute, as the loader wants). Each argument may be BOX=DIR (or
 * BOX=FILE.so), naming its toolbox in NAMING as --plugin-dir does. */
static bool collect(path_list *l, char *const *args, size_t nargs, const th_load_opts *opts, th_load_stats *stats,
                    th_naming *naming)
{
    for (size_t i = 0; i < nargs; i++) {
        struct stat st;
        char *box = NULL;
        const char *arg;
        th_err err;
        if (th_naming_split_spec(args[i], &box, &arg, &err) != TH_OK) {
            th_log(TH_LOG_ERROR, "%s", err.msg);
            stats->plugins_refused++;
            continue;
        }
        if (stat(arg, &st) == 0 && S_ISDIR(st.st_mode)) {
            char **found = NULL;
            size_t n = 0;
            const char *dir = arg;
            bool named = th_naming_add(naming, box, dir, &err) == TH_OK;
            free(box);
            if (!named)
                return false;
            th_loader_list_dirs(&dir, 1, opts, stats, &found, &n);
            bool ok = true;
            for (size_t j = 0; j < n && ok; j++)
                ok = push_path(l, found[j]);
            th_loader_paths_free(found, n);
            if (!ok)
                return false;
            continue;
        }
        char abs[PATH_MAX];
        if (!realpath(arg, abs)) {
            th_log(TH_LOG_ERROR, "cannot read %s: %s", arg, strerror(errno));
            stats->plugins_refused++;
            free(box);
            continue;
        }
        /* A file's toolbox is its directory's. */
        *strrchr(abs, '/') = '\0';
        bool named = th_naming_add(naming, box, abs[0] ? abs : "/", &err) == TH_OK;
        abs[strlen(abs)] = '/';
        free(box);
        if (!named || !push_path(l, abs))
            return false;
    }
    return true;
}

/* The reason in a captured log line: what follows "toolhost: LEVEL: ". */
static const char *reason_of(const char *line)
{
    static const char *const levels[] = {"error: ", "critical: ", "alert: ", "emergency: "};
    for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++) {
        const char *at = strstr(line, levels[i]);
        if (at)
            return at + strlen(levels[i]);
    }
    return NULL;
}

/* Where LINE names PATH (followed by ':' or ' ', not a longer name), or
** NULL. */
static const char *find_path(const char *line, const char *path)
{
    size_t len = strlen(path);
    for (const char *at = strstr(line, path); at; at = strstr(at + 1, path))
        if (at[len] == ':' || at[len] == ' ')
            return at;
    return NULL;
}

/* The listed plugin a reason is about: the one it names first (a duplicate
** refusal names its subject, then the first registrant). -1 for none. */
static long subject_of(const char *why, const path_list *l)
{
    const char *best = NULL;
    long who = -1;
    for (size_t i = 0; i < l->n; i++) {
        const char *at = find_path(why, l->v[i]);
        if (at && (!best || at < best || (at == best && strlen(l->v[i]) > strlen(l->v[who])))) {
            best = at;
            who = (long)i;
        }
    }
    return who;
}

/* WHY without its leading "plugin PATH: " or "plugin PATH refused: ", which
** the report already says. */
static const char *without_subject(const char *why, const char *path)
{
    static const char *const tails[] = {": ", " refused: "};
    if (!path || strncmp(why, "plugin ", 7) != 0 || strncmp(why + 7, path, strlen(path)) != 0)
        return why;
    const char *rest = why + 7 + strlen(path);
    for (size_t i = 0; i < sizeof tails / sizeof tails[0]; i++)
        if (strncmp(rest, tails[i], strlen(tails[i])) == 0)
            return rest + strlen(tails[i]);
    return why;
}

/* Cut from WHY (in place) the " plugin=NAME" a worker's line carries in
 * text: the report names the plugin itself. */
static void without_tag(char *why)
{
    char *at = strstr(why, " plugin=");
    if (at) {
        size_t len = 8 + strcspn(at + 8, " ");
        memmove(at, at + len, strlen(at + len) + 1);
    }
}

/* Refusals about plugin WHICH (-1: those naming no listed plugin) from LOG,
** each once, into a new JSON array of strings. */
static json_object *refusals(char *log, const path_list *l, long which)
{
    json_object *out = json_object_new_array();
    for (char *line = log; line && *line;) {
        char *end = strchr(line, '\n');
        if (end)
            *end = '\0';
        const char *why = reason_of(line);
        if (why && subject_of(why, l) == which) {
            without_tag(line + (why - line));
            why = without_subject(why, which >= 0 ? l->v[which] : NULL);
            bool seen = false;
            for (size_t i = 0; i < json_object_array_length(out) && !seen; i++)
                seen = strcmp(json_object_get_string(json_object_array_get_idx(out, i)), why) == 0;
            if (!seen)
                json_object_array_add(out, json_object_new_string(why));
        }
        if (end)
            *end = '\n';
        line = end ? end + 1 : NULL;
    }
    return out;
}

static json_object *tool_json(const th_entry *e)
{
    json_object *t = json_object_new_object();
    json_object_object_add(t, "name", json_object_new_string(e->name));
    if (e->title)
        json_object_object_add(t, "title", json_object_new_string(e->title));
    json_object_object_add(t, "description", json_object_new_string(e->description));
    json_object_object_add(t, "inputSchema", json_object_get(e->input_schema));
    if (e->output_schema)
        json_object_object_add(t, "outputSchema", json_object_get(e->output_schema));
    if (e->annotations)
        json_object_object_add(t, "annotations", json_object_get(e->annotations));
    if (e->task_support) { /* as tools/list shows it (the tasks extension) */
        static const char *const support[] = {"forbidden", "optional", "required"};
        json_object *ex = json_object_new_object();
        json_object_object_add(ex, "taskSupport",
                               json_object_new_string(support[e->task_support & ~(uint32_t)TH_TASK_AFTER_INPUT]));
        if (e->task_support & TH_TASK_AFTER_INPUT)
            json_object_object_add(ex, "afterInput", json_object_new_boolean(1));
        json_object_object_add(t, "execution", ex);
    }
    if (e->qualified) {
        json_object *meta = json_object_new_object();
        json_object_object_add(meta, "source_server", json_object_new_string(e->plugin));
        json_object_object_add(meta, "toolbox_name", json_object_new_string(e->toolbox));
        json_object_object_add(meta, "original_name", json_object_new_string(e->original_name));
        json_object_object_add(t, "_meta", meta);
    }
    return t;
}

/* The warnings about PLUGIN's tools in REG, as a JSON array of lines that
** each name the file and the tool: so far, a description still new-plugin's
** placeholder, which the registry accepts but no model can choose by. */
static json_object *warnings_of(const th_registry *reg, const char *plugin)
{
    json_object *out = json_object_new_array();
    for (size_t i = 0; i < th_registry_count(reg); i++) {
        const th_entry *e = th_registry_at(reg, i);
        const char *d = e->description;
        if (e->qualified) /* past the "[toolbox/plugin] " the registry added */
            d += strlen(e->toolbox) + strlen(e->plugin) + 4;
        if (strcmp(e->origin, plugin) != 0 || !th_registry_placeholder(d))
            continue;
        char line[1024];
        snprintf(line, sizeof line, "%s: tool '%s' still has the placeholder description toolhost new-plugin wrote",
                 plugin, e->name);
        json_object_array_add(out, json_object_new_string(line));
    }
    return out;
}

/* A resource or template as resources/list shows it, plus nothing else. */
static json_object *resource_json(const th_res_entry *e)
{
    json_object *r = json_object_new_object();
    json_object_object_add(r, e->uri ? "uri" : "uriTemplate", json_object_new_string(e->uri ? e->uri : e->uri_template));
    json_object_object_add(r, "name", json_object_new_string(e->name));
    static const struct {
        const char *key;
        size_t off;
    } texts[] = {{"title", offsetof(th_res_entry, title)},
                 {"description", offsetof(th_res_entry, description)},
                 {"mimeType", offsetof(th_res_entry, mime_type)}};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        const char *v = *(char *const *)((const char *)e + texts[i].off);
        if (v)
            json_object_object_add(r, texts[i].key, json_object_new_string(v));
    }
    if (e->size)
        json_object_object_add(r, "size", json_object_new_int64((int64_t)e->size));
    if (e->annotations)
        json_object_object_add(r, "annotations", json_object_get(e->annotations));
    /* A skill file (skills extension): the digest skills/list publishes. */
    const th_skill_file_entry *f = th_skills_file_of(e);
    if (f)
        json_object_object_add(r, "digest", json_object_new_string(f->digest));
    return r;
}

/* PLUGIN's resources (TEMPLATES: its templates) in REG, as a JSON array. */
static json_object *resources_of(const th_registry *reg, const char *plugin, bool templates)
{
    const th_resources *rs = th_registry_resources(reg);
    size_t n = templates ? th_resources_template_count(rs) : th_resources_count(rs);
    json_object *out = json_object_new_array();
    for (size_t i = 0; i < n; i++) {
        const th_res_entry *e = templates ? th_resources_template_at(rs, i) : th_resources_at(rs, i);
        if (strcmp(e->origin, plugin) == 0)
            json_object_array_add(out, resource_json(e));
    }
    return out;
}

/* PLUGIN's prompts in REG as prompts/list shows them, each with
 * "completes": true when a completion of its arguments is registered. */
static json_object *prompts_of(const th_registry *reg, const char *plugin)
{
    const th_prompts *ps = th_registry_prompts(reg);
    json_object *out = json_object_new_array();
    for (size_t i = 0; i < th_prompts_count(ps); i++) {
        const th_prompt_entry *e = th_prompts_at(ps, i);
        if (strcmp(e->origin, plugin) != 0)
            continue;
        json_object *p = json_object_new_object();
        json_object_object_add(p, "name", json_object_new_string(e->name));
        if (e->title)
            json_object_object_add(p, "title", json_object_new_string(e->title));
        if (e->description)
            json_object_object_add(p, "description", json_object_new_string(e->description));
        json_object_object_add(p, "arguments", json_object_get(e->arguments));
        if (e->icons)
            json_object_object_add(p, "icons", json_object_get(e->icons));
        json_object_array_add(out, p);
    }
    return out;
}

/* PLUGIN's completions: {"prompt": NAME} or {"uriTemplate": TEXT} each. */
static json_object *completions_of(const th_registry *reg, const char *plugin)
{
    const th_prompts *ps = th_registry_prompts(reg);
    json_object *out = json_object_new_array();
    for (size_t i = 0; i < th_prompts_completion_count(ps); i++) {
        const th_completion_entry *e = th_prompts_completion_at(ps, i);
        if (strcmp(e->origin, plugin) != 0)
            continue;
        json_object *c = json_object_new_object();
        json_object_object_add(c, e->prompt ? "prompt" : "uriTemplate",
                               json_object_new_string(e->prompt ? e->prompt : e->uri_template));
        json_object_array_add(out, c);
    }
    return out;
}

/* Read the whole of FD from its start into a string (NULL if empty). */
static char *slurp(int fd)
{
    th_buf b = {0};
    char chunk[4096];
    ssize_t got;
    if (lseek(fd, 0, SEEK_SET) != 0)
        return NULL;
    while ((got = read(fd, chunk, sizeof chunk)) > 0)
        if (!th_buf_append(&b, chunk, (size_t)got))
            break;
    return b.data;
}

/* Indent every line of TEXT by PAD on OUT. */
static void indented(FILE *out, const char *pad, const char *text)
{
    while (*text) {
        const char *end = strchr(text, '\n');
        size_t len = end ? (size_t)(end - text) : strlen(text);
        fprintf(out, "%s%.*s\n", pad, (int)len, text);
        text += len + (end != NULL);
    }
}

/* Each of LIST (resources or templates) as a section titled WHAT KEY. */
static void print_resources(FILE *out, json_object *list, const char *what, const char *key)
{
    static const char *const fields[][2] = {{"name", "Name:       "},        {"title", "Title:      "},
                                            {"description", "Description:"}, {"mimeType", "MIME type:  "},
                                            {"size", "Size:       "},        {"annotations", "Annotations:"},
                                            {"arguments", "Arguments:  "},   {"icons", "Icons:      "},
                                            {"digest", "Digest:     "}};
    for (size_t j = 0; j < json_object_array_length(list); j++) {
        json_object *r = json_object_array_get_idx(list, j), *v;
        fprintf(out, "\n  %s %s\n", what, json_object_get_string(json_object_object_get(r, key)));
        for (size_t k = 0; k < sizeof fields / sizeof fields[0]; k++)
            if (json_object_object_get_ex(r, fields[k][0], &v))
                fprintf(out, "    %s %s\n", fields[k][1],
                        json_object_is_type(v, json_type_string)
                            ? json_object_get_string(v)
                            : json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    }
}

static bool parse_mode(const char *arg, th_sandbox_mode *mode)
{
    for (th_sandbox_mode m = TH_SANDBOX_OFF; m <= TH_SANDBOX_STRICT; m++)
        if (strcmp(arg, th_sandbox_mode_name(m)) == 0) {
            *mode = m;
            return true;
        }
    return false;
}

/*
** PLUGIN's sandbox as its worker would get it: what it declared (NEEDS),
** what the operator granted, and what its worker is let do, with what this
** kernel cannot enforce of it.
*/
static json_object *sandbox_json(const th_sandbox_opts *o, const char *plugin, json_object *needs)
{
    json_object *s = json_object_new_object(), *grants = json_object_new_array();
    for (size_t k = 0; k < th_config_grant_count(o->grants, plugin); k++) {
        const char *key, *value;
        char line[4200];
        th_config_grant_at(o->grants, plugin, k, &key, &value);
        snprintf(line, sizeof line, "%s=%s", key, value);
        json_object_array_add(grants, json_object_new_string(line));
    }
    char missing[256];
    int abi = th_sandbox_probe(missing, sizeof missing);
    json_object *effective = th_sandbox_hello(o, plugin, needs);
    json_object_object_del(effective, "needs"); /* shown above it */
    json_object_object_del(effective, "require");
    json_object_object_add(s, "needs", needs ? json_object_get(needs) : json_object_new_array());
    json_object_object_add(s, "grants", grants);
    json_object_object_add(s, "effective", effective);
    json_object_object_add(s, "landlockAbi", json_object_new_int(abi));
    json_object_object_add(s, "notEnforced", json_object_new_string(o->mode == TH_SANDBOX_OFF ? "everything" : missing));
    return s;
}

static void print_list(FILE *out, const char *label, json_object *a, const char *none)
{
    size_t n = json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
    fprintf(out, "    %-9s ", label);
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%s%s", i ? ", " : "", json_object_get_string(json_object_array_get_idx(a, i)));
    fprintf(out, "%s\n", n ? "" : none);
}

static void print_sandbox(FILE *out, json_object *s)
{
    if (!s)
        return;
    json_object *eff = json_object_object_get(s, "effective");
    const char *missing = json_object_get_string(json_object_object_get(s, "notEnforced"));
    fprintf(out, "  Sandbox: %s (Landlock ABI %d; %s%s)\n", json_object_get_string(json_object_object_get(eff, "mode")),
            json_object_get_int(json_object_object_get(s, "landlockAbi")), *missing ? "not enforced: " : "all enforced",
            missing);
    print_list(out, "Needs:", json_object_object_get(s, "needs"), "nothing");
    print_list(out, "Granted:", json_object_object_get(s, "grants"), "nothing");
    static const char *const lists[][3] = {
        {"read", "Reads:", "its plugin file and the system's libraries only"},
        {"write", "Writes:", "nothing"},
        {"connect", "Connects:", "nowhere"},
        {"exec", "Executes:", "nothing"},
    };
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++)
        print_list(out, lists[i][1], json_object_object_get(eff, lists[i][0]), lists[i][2]);
}

static void print_text(FILE *out, json_object *report)
{
    json_object *plugins = json_object_object_get(report, "plugins");
    for (size_t i = 0; i < json_object_array_length(plugins); i++) {
        json_object *p = json_object_array_get_idx(plugins, i);
        json_object *tools = json_object_object_get(p, "tools");
        json_object *why = json_object_object_get(p, "refusals");
        bool ok = json_object_get_boolean(json_object_object_get(p, "accepted"));
        fprintf(out, "%sPlugin %s\n", i ? "\n" : "", json_object_get_string(json_object_object_get(p, "path")));
        fprintf(out, "  Status: %s\n", ok ? "accepted" : "REFUSED");
        for (size_t j = 0; j < json_object_array_length(why); j++)
            fprintf(out, "  Refused: %s\n", json_object_get_string(json_object_array_get_idx(why, j)));
        json_object *warn = json_object_object_get(p, "warnings");
        for (size_t j = 0; j < json_object_array_length(warn); j++)
            fprintf(out, "  Warning: %s\n", json_object_get_string(json_object_array_get_idx(warn, j)));
        print_sandbox(out, json_object_object_get(p, "sandbox"));
        json_object *settings = json_object_object_get(p, "settings");
        if (settings) {
            json_object_object_foreach(settings, key, val)
            {
                fprintf(out, "  Setting: %s = %s\n", key, json_object_get_string(val));
            }
        }
        for (size_t j = 0; j < json_object_array_length(tools); j++) {
            json_object *t = json_object_array_get_idx(tools, j), *v;
            fprintf(out, "\n  Tool %s\n", json_object_get_string(json_object_object_get(t, "name")));
            if (json_object_object_get_ex(t, "title", &v))
                fprintf(out, "    Title:       %s\n", json_object_get_string(v));
            fprintf(out, "    Description: %s\n", json_object_get_string(json_object_object_get(t, "description")));
            if (json_object_object_get_ex(t, "execution", &v))
                fprintf(out, "    Task:        %s%s\n", json_object_get_string(json_object_object_get(v, "taskSupport")),
                        json_object_object_get_ex(v, "afterInput", NULL) ? ", after its input" : "");
            static const char *const schemas[][2] = {
                {"inputSchema", "Input schema"}, {"outputSchema", "Output schema"}, {"annotations", "Annotations"}};
            for (size_t k = 0; k < sizeof schemas / sizeof schemas[0]; k++) {
                if (!json_object_object_get_ex(t, schemas[k][0], &v))
                    continue;
                fprintf(out, "    %s:\n", schemas[k][1]);
                indented(out, "      ", json_object_to_json_string_ext(v, JSON_C_TO_STRING_PRETTY |
                                                                              JSON_C_TO_STRING_SPACED |
                                                                              JSON_C_TO_STRING_NOSLASHESCAPE));
            }
        }
        print_resources(out, json_object_object_get(p, "resources"), "Resource", "uri");
        print_resources(out, json_object_object_get(p, "resourceTemplates"), "Resource template", "uriTemplate");
        print_resources(out, json_object_object_get(p, "prompts"), "Prompt", "name");
        json_object *comps = json_object_object_get(p, "completions");
        for (size_t j = 0; j < json_object_array_length(comps); j++) {
            json_object *c = json_object_array_get_idx(comps, j), *v;
            bool of_prompt = json_object_object_get_ex(c, "prompt", &v);
            if (!of_prompt)
                v = json_object_object_get(c, "uriTemplate");
            fprintf(out, "\n  Completion of %s %s\n", of_prompt ? "prompt" : "resource template",
                    json_object_get_string(v));
        }
    }
    json_object *other = json_object_object_get(report, "otherRefusals");
    for (size_t j = 0; j < json_object_array_length(other); j++)
        fprintf(out, "\nRefused: %s\n", json_object_get_string(json_object_array_get_idx(other, j)));
    json_object *sum = json_object_object_get(report, "summary");
    int nres = json_object_get_int(json_object_object_get(sum, "resources"));
    int ntpl = json_object_get_int(json_object_object_get(sum, "resourceTemplates"));
    char resources[128] = "";
    int nprompts = json_object_get_int(json_object_object_get(sum, "prompts"));
    if (nres || ntpl) /* the line stays as it was for tools-only plugins */
        snprintf(resources, sizeof resources, "; %d resource%s, %d resource template%s", nres, nres == 1 ? "" : "s",
                 ntpl, ntpl == 1 ? "" : "s");
    if (nprompts) {
        size_t used = strlen(resources);
        snprintf(resources + used, sizeof resources - used, "; %d prompt%s", nprompts, nprompts == 1 ? "" : "s");
    }
    int nwarn = json_object_get_int(json_object_object_get(sum, "warnings"));
    char warnings[64] = ""; /* like resources: absent when there are none */
    if (nwarn)
        snprintf(warnings, sizeof warnings, "; %d warning%s", nwarn, nwarn == 1 ? "" : "s");
    fprintf(out, "\n%d plugin%s accepted, %d refused; %d tool%s%s; %d refusal%s%s\n",
            json_object_get_int(json_object_object_get(sum, "pluginsAccepted")),
            json_object_get_int(json_object_object_get(sum, "pluginsAccepted")) == 1 ? "" : "s",
            json_object_get_int(json_object_object_get(sum, "pluginsRefused")),
            json_object_get_int(json_object_object_get(sum, "tools")),
            json_object_get_int(json_object_object_get(sum, "tools")) == 1 ? "" : "s", resources,
            json_object_get_int(json_object_object_get(sum, "refusals")),
            json_object_get_int(json_object_object_get(sum, "refusals")) == 1 ? "" : "s", warnings);
}

static const char inspect_usage[] =
    "Usage: toolhost inspect [--json] [--follow-symlinks] [--allow-insecure-plugins]\n"
    "                        [--qualified-names] [--set=NAME.KEY=VALUE]\n"
    "                        [--set-secret=NAME.KEY=VALUE] [--config=FILE]\n"
    "                        [--sandbox=MODE] [--grant=NAME.KEY=VALUE]...\n"
    "                        [[BOX=]DIR|[BOX=]FILE.so]...\n"
    "Report what toolhost would serve from the plugin directories and files given\n"
    "(default: the plugin directory): each plugin, its tools with their final\n"
    "input and output schemas, its resources and resource templates, its prompts\n"
    "and completions, and every refusal with its reason. Plugins are opened in\n"
    "scanner processes, so one that crashes is reported, not fatal.\n"
    "BOX= names a toolbox as --plugin-dir does; --qualified-names shows tools\n"
    "as BOX__PLUGIN__TOOL, as the server would expose them.\n"
    "Plugins see the settings given as to toolhost (--set, --set-secret, --config,\n"
    "TOOLHOST_NAME_KEY); each plugin's are listed, secret values as (secret).\n"
    "Each plugin's sandbox is shown: what it declared it needs, what --grant (or\n"
    "its [NAME] section) grants, and what its worker may reach under --sandbox\n"
    "(default declared), with what this kernel cannot enforce.\n"
    "A tool whose description is still new-plugin's placeholder gets a warning.\n"
    "Exit status: 0 when nothing was refused (warnings or not), 1 when something\n"
    "was, 2 on a usage error.\n";

enum { I_JSON = 256, I_FOLLOW, I_INSECURE, I_QUALIFIED, I_SET, I_SET_SECRET, I_CONFIG, I_SANDBOX, I_GRANT };

int th_cli_inspect(int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, I_JSON},
        {"follow-symlinks", no_argument, NULL, I_FOLLOW},
        {"allow-insecure-plugins", no_argument, NULL, I_INSECURE},
        {"qualified-names", no_argument, NULL, I_QUALIFIED},
        {"set", required_argument, NULL, I_SET},
        {"set-secret", required_argument, NULL, I_SET_SECRET},
        {"config", required_argument, NULL, I_CONFIG},
        {"sandbox", required_argument, NULL, I_SANDBOX},
        {"grant", required_argument, NULL, I_GRANT},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    bool json = false;
    th_scan_opts scan_opts = {.load_timeout_ms = 10000, .sandbox = {.mode = TH_SANDBOX_DECLARED}};
    th_supervisor_opts sup_opts = {.cancel_grace_ms = 5000, .start_timeout_ms = 10000};
    th_load_stats stats = {0};
    path_list l = {0};
    th_scanned *scanned = NULL;
    th_registry *reg = NULL;
    th_supervisor *sup = NULL;
    json_object *report = NULL;
    char *log = NULL;
    int status = 1, c, saved_err = -1, capture = -1;
    bool qualified = false;
    th_naming *naming = NULL;
    th_config *settings = th_config_new();
    char **ignored = NULL; /* a --config file's [toolhost] options */
    size_t nignored = 0;
    th_err err;

    optind = 1;
    while (settings && (c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case I_JSON: json = true; break;
        case I_FOLLOW: scan_opts.load.follow_symlinks = true; break;
        case I_INSECURE: scan_opts.load.allow_insecure = true; break;
        case I_QUALIFIED: qualified = true; break;
        case I_SET:
        case I_SET_SECRET:
            if (th_config_set_arg(settings, optarg, c == I_SET_SECRET, &err) == TH_OK)
                break;
            fprintf(stderr, "toolhost inspect: --%s: %s\n", c == I_SET ? "set" : "set-secret", err.msg);
            goto usage;
        case I_CONFIG:
            if (th_config_load_file(settings, optarg, &ignored, &nignored, &err) == TH_OK)
                break;
            fprintf(stderr, "toolhost inspect: %s\n", err.msg);
            goto usage;
        case I_SANDBOX:
            if (parse_mode(optarg, &scan_opts.sandbox.mode))
                break;
            fprintf(stderr, "toolhost inspect: --sandbox: '%s' is not declared, strict or off\n", optarg);
            goto usage;
        case I_GRANT:
            if (th_config_grant_arg(settings, optarg, &err) == TH_OK)
                break;
            fprintf(stderr, "toolhost inspect: --grant: %s\n", err.msg);
            goto usage;
        case 'h': fputs(inspect_usage, stdout); th_config_free(settings); return 0;
        default: goto usage;
        }
    }
    if (!settings) {
        fprintf(stderr, "toolhost inspect: out of memory\n");
        return 1;
    }
    scan_opts.load.config = settings;
    scan_opts.sandbox.grants = settings;
    sup_opts.sandbox = scan_opts.sandbox;
    char *default_dir[] = {(char *)TH_PLUGINDIR};
    char *const *args = optind < argc ? argv + optind : default_dir;
    size_t nargs = optind < argc ? (size_t)(argc - optind) : 1;
    scan_opts.load.dirs_required = true;
    sup_opts.load = scan_opts.load;

    /* Everything said while plugins are listed and scanned (the host's lines
     * and the scanners' relayed stderr) goes to a file, to be sorted by
     * plugin into the report instead of onto the terminal. */
    char tmpl[] = "/tmp/toolhost-inspect-XXXXXX";
    if ((capture = mkstemp(tmpl)) < 0 || unlink(tmpl) != 0 || (saved_err = dup(2)) < 0 ||
        !th_spawn_init()) {
        fprintf(stderr, "toolhost inspect: cannot set up: %s\n", strerror(errno));
        goto cleanup;
    }
    fflush(stderr);
    dup2(capture, 2);
    th_log_set_threshold(TH_LOG_WARNING);
    bool ok = (naming = th_naming_new(qualified)) && collect(&l, args, nargs, &scan_opts.load, &stats, naming) &&
              (th_config_load_env(settings, l.v, l.n, environ), true) &&
              (scanned = calloc(l.n + 1, sizeof *scanned)) &&
              th_scan_plugins_cached(l.v, l.n, &scan_opts, NULL, scanned, &stats) == TH_OK && (reg = th_registry_new()) &&
              th_registry_set_naming(reg, naming) == TH_OK && (sup = th_supervisor_new(l.v, l.n, &sup_opts));
    if (ok)
        th_supervisor_register(sup, reg, scanned, &stats);
    fflush(stderr);
    dup2(saved_err, 2);
    log = slurp(capture);
    if (!ok) {
        fprintf(stderr, "toolhost inspect: cannot scan the plugins%s%s\n", log ? ":\n" : "", log ? log : "");
        goto cleanup;
    }

    report = json_object_new_object();
    json_object *plugins = json_object_new_array();
    size_t refused = 0, accepted = 0, n_refusals = 0, n_warnings = 0;
    for (size_t i = 0; i < l.n; i++) {
        json_object *p = json_object_new_object(), *tools = json_object_new_array();
        for (size_t j = 0; j < th_registry_count(reg); j++) {
            const th_entry *e = th_registry_at(reg, j);
            if (e->origin && strcmp(e->origin, l.v[i]) == 0)
                json_object_array_add(tools, tool_json(e));
        }
        json_object *res = resources_of(reg, l.v[i], false), *tpl = resources_of(reg, l.v[i], true);
        json_object *prompts = prompts_of(reg, l.v[i]), *comps = completions_of(reg, l.v[i]);
        json_object *why = refusals(log, &l, (long)i);
        bool is_ok = scanned[i].accepted && json_object_array_length(tools) + json_object_array_length(res) +
                                                    json_object_array_length(tpl) + json_object_array_length(prompts) +
                                                    json_object_array_length(comps) > 0;
        /* A refusal the log did not explain still gets a line. */
        if (!is_ok && json_object_array_length(why) == 0)
            json_object_array_add(why, json_object_new_string("refused (no reason was logged)"));
        accepted += is_ok;
        refused += !is_ok;
        n_refusals += json_object_array_length(why);
        json_object_object_add(p, "path", json_object_new_string(l.v[i]));
        json_object_object_add(p, "accepted", json_object_new_boolean(is_ok));
        json_object_object_add(p, "tools", tools);
        json_object_object_add(p, "resources", res);
        json_object_object_add(p, "resourceTemplates", tpl);
        json_object_object_add(p, "prompts", prompts);
        json_object_object_add(p, "completions", comps);
        json_object_object_add(p, "refusals", why);
        json_object *warn = warnings_of(reg, l.v[i]);
        n_warnings += json_object_array_length(warn);
        json_object_object_add(p, "warnings", warn);
        char name[256];
        json_object *set = th_config_plugin_name(l.v[i], name, sizeof name) ? th_config_describe(settings, name) : NULL;
        if (set)
            json_object_object_add(p, "settings", set);
        if (scanned[i].accepted && th_config_plugin_name(l.v[i], name, sizeof name))
            json_object_object_add(p, "sandbox", sandbox_json(&scan_opts.sandbox, name, scanned[i].needs));
        json_object_array_add(plugins, p);
    }
    json_object *other = refusals(log, &l, -1);
    n_refusals += json_object_array_length(other);
    json_object *sum = json_object_new_object();
    json_object_object_add(sum, "pluginsAccepted", json_object_new_int((int)accepted));
    json_object_object_add(sum, "pluginsRefused", json_object_new_int((int)refused));
    json_object_object_add(sum, "tools", json_object_new_int((int)th_registry_count(reg)));
    json_object_object_add(sum, "resources", json_object_new_int((int)th_resources_count(th_registry_resources(reg))));
    json_object_object_add(sum, "resourceTemplates",
                           json_object_new_int((int)th_resources_template_count(th_registry_resources(reg))));
    json_object_object_add(sum, "prompts", json_object_new_int((int)th_prompts_count(th_registry_prompts(reg))));
    json_object_object_add(sum, "refusals", json_object_new_int((int)n_refusals));
    json_object_object_add(sum, "warnings", json_object_new_int((int)n_warnings));
    json_object_object_add(report, "plugins", plugins);
    json_object_object_add(report, "otherRefusals", other);
    json_object_object_add(report, "summary", sum);

    if (json)
        printf("%s\n", json_object_to_json_string_ext(report, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                                  JSON_C_TO_STRING_NOSLASHESCAPE));
    else
        print_text(stdout, report);
    fflush(stdout);
    status = n_refusals > 0 || th_load_stats_refusals(&stats) > 0 ? 1 : 0;

cleanup:
    json_object_put(report);
    free(log);
    th_registry_unref(reg);
    th_naming_unref(naming);
    th_supervisor_free(sup);
    if (scanned)
        th_scan_free(scanned, l.n);
    free(scanned);
    th_loader_paths_free(l.v, l.n);
    if (capture >= 0)
        close(capture);
    if (saved_err >= 0)
        close(saved_err);
    for (size_t k = 0; k < nignored; k++)
        free(ignored[k]);
    free(ignored);
    th_config_free(settings);
    return status;

usage:
    fputs("Try 'toolhost inspect --help' for more information.\n", stderr);
    for (size_t k = 0; k < nignored; k++)
        free(ignored[k]);
    free(ignored);
    th_config_free(settings);
    return 2;
}
