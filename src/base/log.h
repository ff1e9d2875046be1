/*
** base/log.h: the host's own diagnostics on stderr (never stdout, which carries
** protocol messages). Tests swap the sink to read what was logged.
*/
#ifndef TH_LOG_H
#define TH_LOG_H

#include "toolhost/plugin.h"

/* Where log lines go: the level and the formatted line (no newline). */
typedef void (*th_log_sink)(th_log_level level, const char *line, void *ctx);

/* Log at LEVEL; lines below the threshold are dropped. Thread-safe. */
void th_log(th_log_level level, const char *fmt, ...) TH_PRINTF(2, 3);

/* Lines below LEVEL are dropped (default TH_LOG_INFO). */
void th_log_set_threshold(th_log_level level);
th_log_level th_log_threshold(void);

/* Replace the sink (NULL restores stderr). Returns the previous one. */
void th_log_set_sink(th_log_sink sink, void *ctx);

/* The MCP name of LEVEL ("debug" ... "emergency"). */
const char *th_log_level_name(th_log_level level);

/* Parse an MCP level name; returns -1 when NAME is not one. */
int th_log_level_parse(const char *name);

#endif
