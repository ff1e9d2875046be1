/* SPDX-License-Identifier: MIT */
/*
** plugin/qualname.h: toolboxes and qualified tool names, as section 7 of
** doc/registry-rules.md states them. Which toolbox each plugin directory
** is, how `{toolbox}__{plugin}__{tool}` is built and parsed, and the rules'
** error texts: a name grammar that knows nothing of the registry. The registry asks it what name a tool is exposed
** under, and words its own lookups' refusals with its texts.
*/
#ifndef TH_QUALNAME_H
#define TH_QUALNAME_H

#include <stdbool.h>
#include <stddef.h>

#include "base/util.h"

/* The MCP limit on a tool name, which a qualified name must also keep. */
#define TH_QUALNAME_MAX 64
/* A qualified prompt name's limit: a prompt name's own (plugin/prompts.h). */
#define TH_PROMPT_QUALNAME_MAX 128

/*
** What a qualified name names, for the rules and texts that differ: tools
** and, by the same rules, prompts. UPPER and LOWER name it in
** messages ("Tool", "tool"); MAX is the longest exposed name; LIMIT says
** where MAX comes from (a printf format taking MAX).
*/
typedef struct th_qualname_kind {
    const char *upper, *lower;
    int max;
    const char *limit;
} th_qualname_kind;
extern const th_qualname_kind th_qualname_tool_kind, th_qualname_prompt_kind;

/* The toolbox of a --plugin-dir given without NAME=. */
#define TH_DEFAULT_TOOLBOX "default"

/*
** A qualified name split as doc/registry-rules.md, 7, says: at the first
** two "__"; TOOL is the rest and may itself hold "__". The toolbox and
** server parts point into the parsed name (not NUL-terminated).
*/
typedef struct th_qualname {
    const char *toolbox;
    size_t toolbox_len;
    const char *server;
    size_t server_len;
    const char *tool; /* NUL-terminated: the end of the name */
} th_qualname;

/* Split NAME; false (OUT unspecified) when any of the three parts is
 * missing or empty: "dev__filesystem_read_file", "invalid", "a____b". */
bool th_qualname_parse(const char *name, th_qualname *out);

/*
** The qualified name "{TOOLBOX}__{SERVER}__{TOOL}", malloc'd, or
** NULL when out of memory or a part is NULL or empty.
*/
char *th_qualname_make(const char *toolbox, const char *server, const char *tool);

/*
** Can NAME be the toolbox or plugin (server) part of a qualified name?
** Rules 7.1-7.4: non-empty, letters, digits, '-' and '_'; and so that parsing
** gives NAME back, no "__" inside and no '_' at the end. NULL when it can,
** else the rule it breaks (static text).
*/
const char *th_qualname_part_rule(const char *name);

/* The texts of an unresolved qualified name (doc/registry-rules.md, 7),
 * into BUF (truncated to SIZE). */
void th_qualname_err_format(char *buf, size_t size, const char *name);
/* The format error for a name of KIND ("Invalid prompt name format ..."). */
void th_qualname_err_format_as(char *buf, size_t size, const th_qualname_kind *kind, const char *name);
void th_qualname_err_toolbox(char *buf, size_t size, const char *toolbox, size_t len);
void th_qualname_err_server(char *buf, size_t size, const char *toolbox, size_t tlen, const char *server,
                            size_t slen);

/*
** The toolboxes of one host: each plugin directory with its toolbox name,
** and whether tools are exposed by qualified name. Reference-counted, as
** every registry built from it (a reload builds more) holds one; read-only
** once the first registry has it, so readers need no lock.
*/
typedef struct th_naming th_naming;

th_naming *th_naming_new(bool qualified);
th_naming *th_naming_ref(th_naming *n);
void th_naming_unref(th_naming *n);

bool th_naming_qualified(const th_naming *n);

/*
** Split a --plugin-dir value: "NAME=DIR" names the toolbox NAME when the
** text before the first '=' holds no '/' (write ./a=b for a directory
** called "a=b"); anything else is a DIR of the toolbox TH_DEFAULT_TOOLBOX.
** *NAME gets a malloc'd copy, *DIR points into SPEC. An invalid NAME is
** TH_ERR_VALUE with ERR naming it and the rule.
*/
th_rc th_naming_split_spec(const char *spec, char **name, const char **dir, th_err *err);

/* Add the directory DIR (made absolute now, as the loader does) as toolbox
 * NAME. A toolbox may span several directories; a directory already added
 * under another name is TH_ERR_VALUE, since a plugin's path alone must say
 * which toolbox it is in. */
th_rc th_naming_add(th_naming *n, const char *name, const char *dir, th_err *err);

/* The number of directories added, and the toolbox name of the I-th. */
size_t th_naming_count(const th_naming *n);
const char *th_naming_toolbox_at(const th_naming *n, size_t i);

/* The toolbox of the plugin file PATH (absolute), or NULL when it is in
 * none of N's directories. */
const char *th_naming_toolbox_of(const th_naming *n, const char *path);

/* Is there a toolbox called NAME (LEN bytes)? */
bool th_naming_has_toolbox(const th_naming *n, const char *name, size_t len);

/*
** How the tool TOOL of the plugin file PATH (absolute, as the loader lists
** it; NULL for a tool the host adds itself) is exposed. *TOOLBOX and
** *PLUGIN get malloc'd copies (NULL when PATH is in no toolbox directory);
** *EXPOSED the name clients see: qualified when N says so, else TOOL.
** Refused with TH_ERR_VALUE (ERR naming the field and the rule) when the
** plugin name cannot be a qualified part or the qualified name is longer
** than TH_QUALNAME_MAX. N may be NULL: TOOL as it is, no toolbox.
*/
th_rc th_naming_expose(const th_naming *n, const char *path, const char *tool, char **toolbox, char **plugin,
                       char **exposed, th_err *err);
/* th_naming_expose for a name of KIND: a prompt's is qualified by the same
 * rules, up to KIND's length and in its words. */
th_rc th_naming_expose_as(const th_naming *n, const char *path, const char *name, const th_qualname_kind *kind,
                          char **toolbox, char **plugin, char **exposed, th_err *err);

#endif
