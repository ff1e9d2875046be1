/* SPDX-License-Identifier: MIT */
/*
** base/log.h: the host's own diagnostics on stderr (never stdout, which carries
** protocol messages), in one stable line format: text or JSON Lines. Tests
** swap the sink to read what was logged.
*/
#ifndef TH_LOG_H
#define TH_LOG_H

#include "toolhost/plugin.h"

/* Where log lines go: the level and the message, its fields appended as
 * " key=value" (no timestamp, no newline). */
typedef void (*th_log_sink)(th_log_level level, const char *line, void *ctx);

/* Log at LEVEL; lines below the threshold are dropped. Thread-safe. */
void th_log(th_log_level level, const char *fmt, ...) TH_PRINTF(2, 3);

/*
** th_log with the structured parts a collector wants: COMPONENT ("host",
** "call", "plugin", "protocol"; NULL: "host"), PLUGIN (the plugin or tool
** it is about, or NULL) and FIELDS (a JSON object of extra members,
** borrowed, or NULL). Text lines show the fields as " key=value" after the
** message; JSON lines carry them as members.
*/
void th_log_ex(th_log_level level, const char *component, const char *plugin, json_object *fields,
               const char *fmt, ...) TH_PRINTF(5, 6);

/*
** A registration line of a plugin (th_server_log): filtered by the
** operator's --log-level even while th_log_raise hides the loader's own
** lines below warning.
*/
void th_log_plugin(th_log_level level, const char *plugin, const char *msg);

/* Lines below LEVEL are dropped (default TH_LOG_INFO). */
void th_log_set_threshold(th_log_level level);
th_log_level th_log_threshold(void);

/* True when a line at LEVEL would be written: lets a caller skip building
 * an expensive message (a protocol trace). Lock-free. */
bool th_log_enabled(th_log_level level);

/*
** Hide the host's own lines below LEVEL for a while (a worker loading its
** plugin: the host logs each accepted tool itself) without changing what
** th_log_plugin lines follow. A negative LEVEL ends it.
*/
void th_log_raise(int level);

/* The line format: text (the default) or one JSON object per line. */
typedef enum th_log_format { TH_LOG_TEXT = 0, TH_LOG_JSON } th_log_format;
void th_log_set_format(th_log_format format);
th_log_format th_log_get_format(void);
/* Parse "text" or "json"; -1 when NAME is neither. */
int th_log_format_parse(const char *name);

/*
** One line a child process (worker or scanner) wrote on stderr, TAG naming
** its plugin. A child's own log lines are JSON objects with "ts", "level"
** and "msg" (it always logs in JSON): they are written again in the host's
** format, filtered by the host's threshold. Anything else is the plugin's
** own output and is written whole, never filtered: as "TS plugin TAG: line"
** in text, or a JSON object with component "output".
*/
void th_log_relay(const char *tag, const char *line, size_t len);

/* Replace the sink (NULL restores stderr). Returns the previous one. */
void th_log_set_sink(th_log_sink sink, void *ctx);

/* The MCP name of LEVEL ("debug" ... "emergency"). */
const char *th_log_level_name(th_log_level level);

/* Parse an MCP level name; returns -1 when NAME is not one. */
int th_log_level_parse(const char *name);

#endif
