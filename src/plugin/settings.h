/* SPDX-License-Identifier: MIT */
/*
** plugin/settings.h: per-plugin settings: from the command line
** (--set NAME.key=value, --set-secret), the environment (TOOLHOST_NAME_KEY)
** and a configuration file (--config FILE, INI-like). Precedence: command
** line over environment over file; within one source the last one wins.
** Plugins read them with th_server_config(). Secret values never reach a
** log line, `toolhost inspect`, the registry cache or a child's command line.
*/
#ifndef TH_PLUGIN_SETTINGS_H
#define TH_PLUGIN_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "base/util.h"

typedef struct th_config th_config;

/* Where a value came from, lowest precedence first. */
typedef enum th_config_source {
    TH_CONF_FILE = 1,
    TH_CONF_ENV,
    TH_CONF_ARG,
} th_config_source;

/* The section of a configuration file that holds toolhost's own options. */
#define TH_CONFIG_SERVER_SECTION "toolhost"

th_config *th_config_new(void);
void th_config_free(th_config *cfg);

/* True when NAME is a valid plugin or key name: ^[a-z][a-z0-9_]{0,63}$. */
bool th_config_name_ok(const char *name);

/*
** Set PLUGIN's KEY to VALUE (all copied) from SOURCE. A value from a source
** of higher precedence than the one already set wins; from the same
** source, the later one. SECRET sticks: a key once marked secret stays
** secret whatever source overrides it. TH_OK, TH_ERR_VALUE (ERR names the
** rule) for a bad name, TH_ERR_NOMEM.
*/
th_rc th_config_set(th_config *cfg, const char *plugin, const char *key, const char *value, bool secret,
                    th_config_source source, th_err *err);

/* --set / --set-secret: "NAME.key=value". */
th_rc th_config_set_arg(th_config *cfg, const char *arg, bool secret, th_err *err);

/*
** Read a configuration file:
**     # comment (also ;)
**     [weather]                 a plugin's section (NAME of NAME.so)
**     units = metric
**     secret api_key = abc123   a value never shown
**     [toolhost]                toolhost's own options, as on the command line
**     log-level = debug
** Blank lines and surrounding spaces are ignored; a value may be put in
** double quotes to keep its spaces. A plugin section's keys tools,
** exclude-tools and read-only are the host's exposure policy for that
** plugin, not settings: they join the [toolhost] options as --tools=NAME:...,
** --exclude-tools=NAME:... and --read-only-plugin=NAME. Options of the [toolhost] section are
** appended to *SERVER_ARGS (malloc'd "--name=value" strings; *NSERVER
** counts them; free each and the array) for the caller to parse before the
** command line. Errors name FILE:LINE and the rule.
*/
th_rc th_config_load_file(th_config *cfg, const char *path, char ***server_args, size_t *nserver, th_err *err);

/*
** Take TOOLHOST_<NAME>_<KEY> from ENVP for each plugin file in PATHS (NAME
** upper-cased, KEY lower-cased). Values from the environment are treated as
** secret: it is where MCP clients put credentials, and a variable cannot be
** marked.
*/
void th_config_load_env(th_config *cfg, char *const *paths, size_t n, char *const *envp);

/* PLUGIN's value for KEY, or NULL; *SECRET (may be NULL) says whether it
 * is secret. Borrowed from CFG: valid until th_config_free. */
const char *th_config_get(const th_config *cfg, const char *plugin, const char *key, bool *secret);

/*
** The settings a child needs: {"NAME":{"key":{"value":..,"secret":bool}}}
** for PLUGIN only, or for every plugin when PLUGIN is NULL (the scanner
** opens them all). NULL when there are none. Sent over the IPC socket,
** never on a command line.
*/
json_object *th_config_to_json(const th_config *cfg, const char *plugin);
th_config *th_config_from_json(json_object *o);

/*
** What the registry cache keys PLUGIN's entry with: a digest of its
** non-secret settings. *UNCACHEABLE is set when it has a secret one: such
** a plugin is scanned on every start and never written to the cache, so
** neither a secret nor its digest reaches the file.
*/
uint64_t th_config_digest(const th_config *cfg, const char *plugin, bool *uncacheable);

/* For `inspect` and the debug log: {"key":"value"|"(secret)"} of PLUGIN,
 * or NULL when it has no settings. */
json_object *th_config_describe(const th_config *cfg, const char *plugin);

/*
** The operator's sandbox grants, kept apart from settings: a plugin never
** reads them, and their keys are hyphenated, which no setting's name can
** be: allow-read, allow-write, allow-exec (absolute paths), allow-connect
** (HOST:PORT), max-memory, cpu-seconds, max-files, max-procs (positive
** numbers). They come from --grant NAME.KEY=VALUE and from hyphenated keys
** in a configuration file's [NAME] section; each is kept, in the order
** given (a later number wins). TH_ERR_VALUE (ERR names the plugin, the key
** and the rule) for a bad key or value.
*/
th_rc th_config_grant(th_config *cfg, const char *plugin, const char *key, const char *value, th_err *err);
th_rc th_config_grant_arg(th_config *cfg, const char *arg, th_err *err);
size_t th_config_grant_count(const th_config *cfg, const char *plugin);
/* PLUGIN's grant K (*KEY, *VALUE borrowed from CFG). */
void th_config_grant_at(const th_config *cfg, const char *plugin, size_t k, const char **key, const char **value);
/* The plugin named by the K-th grant of all, or NULL past the last. */
const char *th_config_grant_plugin_at(const th_config *cfg, size_t k);
/* The sandbox policy member KEY fills ("allow-read": "read"), *LIST when it
 * is a list, not a number; NULL for an unknown key. */
const char *th_config_grant_member(const char *key, bool *list);

/* NAME of a path ".../NAME.so" into BUF; false when it is not one. */
bool th_config_plugin_name(const char *path, char *buf, size_t size);

#endif
