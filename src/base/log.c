/*
** base/log.c: the host's diagnostics. One line per event on stderr, prefixed with
** "toolhost: LEVEL:", serialised so lines from worker threads never mix.
*/
#include "config.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"

static const char *const level_names[] = {
    [TH_LOG_DEBUG] = "debug",     [TH_LOG_INFO] = "info",   [TH_LOG_NOTICE] = "notice",
    [TH_LOG_WARNING] = "warning", [TH_LOG_ERROR] = "error", [TH_LOG_CRITICAL] = "critical",
    [TH_LOG_ALERT] = "alert",     [TH_LOG_EMERGENCY] = "emergency",
};

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static th_log_level threshold = TH_LOG_INFO;
static th_log_sink sink;
static void *sink_ctx;

const char *th_log_level_name(th_log_level level)
{
    if ((unsigned)level <= TH_LOG_EMERGENCY)
        return level_names[level];
    return "unknown";
}

int th_log_level_parse(const char *name)
{
    for (int i = TH_LOG_DEBUG; i <= TH_LOG_EMERGENCY; i++)
        if (strcmp(level_names[i], name) == 0)
            return i;
    return -1;
}

void th_log_set_threshold(th_log_level level)
{
    pthread_mutex_lock(&log_lock);
    threshold = level;
    pthread_mutex_unlock(&log_lock);
}

th_log_level th_log_threshold(void)
{
    pthread_mutex_lock(&log_lock);
    th_log_level l = threshold;
    pthread_mutex_unlock(&log_lock);
    return l;
}

void th_log_set_sink(th_log_sink s, void *ctx)
{
    pthread_mutex_lock(&log_lock);
    sink = s;
    sink_ctx = ctx;
    pthread_mutex_unlock(&log_lock);
}

void th_log(th_log_level level, const char *fmt, ...)
{
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);

    pthread_mutex_lock(&log_lock);
    if (level >= threshold) {
        if (sink)
            sink(level, line, sink_ctx);
        else
            fprintf(stderr, "toolhost: %s: %s\n", th_log_level_name(level), line);
    }
    pthread_mutex_unlock(&log_lock);
}
