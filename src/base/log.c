/* SPDX-License-Identifier: MIT */
/*
** base/log.c: the host's diagnostics. One line per event on stderr, serialised
** so lines from worker threads never mix, in a stable format: text
**   2026-11-23T16:45:58.123Z toolhost: LEVEL: message key=value ...
** or JSON Lines (--log-format=json) with ts, level, component, plugin, msg
** and the fields as members. Child processes always log JSON; the host
** writes their lines again in its own format (th_log_relay).
*/
#include "config.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "base/util.h"

static const char *const level_names[] = {
    [TH_LOG_DEBUG] = "debug",     [TH_LOG_INFO] = "info",   [TH_LOG_NOTICE] = "notice",
    [TH_LOG_WARNING] = "warning", [TH_LOG_ERROR] = "error", [TH_LOG_CRITICAL] = "critical",
    [TH_LOG_ALERT] = "alert",     [TH_LOG_EMERGENCY] = "emergency",
};

static const char *const format_names[] = {[TH_LOG_TEXT] = "text", [TH_LOG_JSON] = "json"};

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
/* Atomic: th_log_enabled is asked on every protocol message. */
static atomic_int threshold = TH_LOG_INFO;
static atomic_int raised = -1;
static atomic_int format = TH_LOG_TEXT;
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

int th_log_format_parse(const char *name)
{
    for (int i = 0; i < (int)(sizeof format_names / sizeof format_names[0]); i++)
        if (strcmp(format_names[i], name) == 0)
            return i;
    return -1;
}

void th_log_set_threshold(th_log_level level)
{
    atomic_store(&threshold, (int)level);
}

th_log_level th_log_threshold(void)
{
    return (th_log_level)atomic_load(&threshold);
}

void th_log_raise(int level)
{
    atomic_store(&raised, level);
}

bool th_log_enabled(th_log_level level)
{
    int r = atomic_load_explicit(&raised, memory_order_relaxed);
    int t = atomic_load_explicit(&threshold, memory_order_relaxed);
    return (int)level >= (r > t ? r : t);
}

void th_log_set_format(th_log_format f)
{
    atomic_store(&format, (int)f);
}

th_log_format th_log_get_format(void)
{
    return (th_log_format)atomic_load(&format);
}

void th_log_set_sink(th_log_sink s, void *ctx)
{
    pthread_mutex_lock(&log_lock);
    sink = s;
    sink_ctx = ctx;
    pthread_mutex_unlock(&log_lock);
}

/* UTC, milliseconds: sorts as text, and reads the same on every host. The
 * part up to the second is made once a second per thread: gmtime_r and
 * strftime were a sixth of a tool call's log line. */
static void timestamp(char *buf, size_t size)
{
    static _Thread_local time_t sec = (time_t)-1;
    static _Thread_local char head[32];
    static _Thread_local size_t head_len;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    if (ts.tv_sec != sec) {
        struct tm tm;
        gmtime_r(&ts.tv_sec, &tm);
        head_len = strftime(head, sizeof head, "%Y-%m-%dT%H:%M:%S", &tm);
        sec = ts.tv_sec;
    }
    long ms = ts.tv_nsec / 1000000L;
    if (size < head_len + 6) { /* no caller's buffer is that small */
        if (size)
            buf[0] = '\0';
        return;
    }
    memcpy(buf, head, head_len);
    char *p = buf + head_len;
    *p++ = '.';
    *p++ = (char)('0' + ms / 100);
    *p++ = (char)('0' + ms / 10 % 10);
    *p++ = (char)('0' + ms % 10);
    *p++ = 'Z';
    *p = '\0';
}

/* Append LEN bytes of S to OUT (SIZE bytes, *N used), cutting at the end. */
static void put(char *out, size_t size, size_t *n, const char *s, size_t len)
{
    if (*n + 1 >= size)
        return;
    if (len > size - 1 - *n)
        len = size - 1 - *n;
    memcpy(out + *n, s, len);
    *n += len;
    out[*n] = '\0';
}

/* MSG with FIELDS appended as " key=value" (strings as JSON strings when
 * they hold a space or a quote, so a line splits back unambiguously).
 * Returns the length written. Integers are printed here, not by json-c,
 * which allocates a buffer for each. */
static size_t text_with_fields(char *out, size_t size, const char *msg, json_object *fields)
{
    size_t n = 0;
    out[0] = '\0';
    put(out, size, &n, msg, strlen(msg));
    if (!fields || !json_object_is_type(fields, json_type_object))
        return n;
    json_object_object_foreach(fields, key, val)
    {
        char num[24];
        const char *v = json_object_is_type(val, json_type_string) ? json_object_get_string(val) : NULL;
        bool quote = !v || strpbrk(v, " \"=") || !*v;
        const char *text = v && !quote ? v : NULL;
        int64_t i = !text && json_object_is_type(val, json_type_int) ? json_object_get_int64(val) : INT64_MAX;
        if (i != INT64_MAX && i != INT64_MIN) { /* those may be a clamped (or unsigned) one: json-c knows */
            snprintf(num, sizeof num, "%" PRId64, i);
            text = num;
        }
        if (!text)
            text = json_object_to_json_string_ext(val, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        put(out, size, &n, " ", 1);
        put(out, size, &n, key, strlen(key));
        put(out, size, &n, "=", 1);
        put(out, size, &n, text, strlen(text));
    }
    return n;
}

/* Write one line; under log_lock. TS: the event's time, or NULL for now. */
static void emit(th_log_level level, const char *ts, const char *component, const char *plugin, json_object *fields,
                 const char *msg, bool name_plugin)
{
    char line[4096 + 128], now[40], named[4096];
    if (!ts) {
        timestamp(now, sizeof now);
        ts = now;
    }
    if (sink) {
        text_with_fields(line, sizeof line, msg, fields);
        sink(level, line, sink_ctx);
        return;
    }
    if (atomic_load(&format) == TH_LOG_JSON) {
        json_object *o = json_object_new_object();
        if (!o)
            return;
        json_object_object_add(o, "ts", json_object_new_string(ts));
        json_object_object_add(o, "level", json_object_new_string(th_log_level_name(level)));
        json_object_object_add(o, "component", json_object_new_string(component ? component : "host"));
        if (plugin)
            json_object_object_add(o, "plugin", json_object_new_string(plugin));
        /* A collector's parser wants UTF-8: a plugin's bytes may not be. */
        char *fixed = th_utf8_valid(msg, strlen(msg)) ? NULL : th_utf8_repair(msg, strlen(msg), NULL);
        json_object_object_add(o, "msg", json_object_new_string(fixed ? fixed : msg));
        free(fixed);
        if (fields && json_object_is_type(fields, json_type_object)) {
            json_object_object_foreach(fields, key, val)
            {
                /* A field never replaces one of the fixed members. */
                if (!json_object_object_get_ex(o, key, NULL))
                    json_object_object_add(o, key, json_object_get(val));
            }
        }
        fprintf(stderr, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
        json_object_put(o);
        return;
    }
    /* A child's line names its plugin first: the host's own name it in
     * their message or fields. */
    if (name_plugin && plugin) {
        snprintf(named, sizeof named, "%s plugin=%s", msg, plugin);
        msg = named;
    }
    /* One fwrite of the whole line: what the fprintf of three strings did,
     * without parsing a format for each line. */
    size_t n = 0;
    const char *name = th_log_level_name(level);
    put(line, sizeof line, &n, ts, strlen(ts));
    put(line, sizeof line, &n, " toolhost: ", 11);
    put(line, sizeof line, &n, name, strlen(name));
    put(line, sizeof line, &n, ": ", 2);
    n += text_with_fields(line + n, sizeof line - n, msg, fields);
    if (n + 1 >= sizeof line)
        n = sizeof line - 2;
    line[n++] = '\n';
    fwrite(line, 1, n, stderr);
}

static void vlog(th_log_level level, bool plugin_line, const char *component, const char *plugin,
                 json_object *fields, const char *fmt, va_list ap)
{
    char msg[2048];
    if (!(plugin_line ? (int)level >= atomic_load(&threshold) : th_log_enabled(level)))
        return;
    vsnprintf(msg, sizeof msg, fmt, ap);
    pthread_mutex_lock(&log_lock);
    emit(level, NULL, component, plugin, fields, msg, false);
    pthread_mutex_unlock(&log_lock);
}

void th_log(th_log_level level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(level, false, NULL, NULL, NULL, fmt, ap);
    va_end(ap);
}

void th_log_ex(th_log_level level, const char *component, const char *plugin, json_object *fields,
               const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(level, false, component, plugin, fields, fmt, ap);
    va_end(ap);
}

/* Through a helper: vlog's format argument must not be MSG itself. */
static void plugin_line(th_log_level level, const char *plugin, const char *fmt, ...) TH_PRINTF(3, 4);
static void plugin_line(th_log_level level, const char *plugin, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(level, true, "plugin", plugin, NULL, fmt, ap);
    va_end(ap);
}

void th_log_plugin(th_log_level level, const char *plugin, const char *msg)
{
    plugin_line(level, plugin, "%s", msg);
}

/* NAME from a child's tag, the base name NAME.so of its plugin file. */
static void plugin_of(const char *tag, char *buf, size_t size)
{
    size_t n = strlen(tag);
    n = n > 3 && strcmp(tag + n - 3, ".so") == 0 ? n - 3 : n;
    snprintf(buf, size, "%.*s", (int)n, tag);
}

void th_log_relay(const char *tag, const char *line, size_t len)
{
    static const char marker[] = "{\"ts\":";
    json_object *o = NULL, *v;
    if (len > sizeof marker - 1 && memcmp(line, marker, sizeof marker - 1) == 0) {
        json_tokener *tok = json_tokener_new();
        if (tok) {
            o = json_tokener_parse_ex(tok, line, (int)len);
            if (json_tokener_get_error(tok) != json_tokener_success || !json_object_is_type(o, json_type_object)) {
                json_object_put(o);
                o = NULL;
            }
            json_tokener_free(tok);
        }
    }
    int level = -1;
    const char *ts = NULL, *msg = NULL;
    if (o && json_object_object_get_ex(o, "level", &v))
        level = th_log_level_parse(json_object_get_string(v));
    if (o && json_object_object_get_ex(o, "ts", &v) && json_object_is_type(v, json_type_string))
        ts = json_object_get_string(v);
    if (o && json_object_object_get_ex(o, "msg", &v) && json_object_is_type(v, json_type_string))
        msg = json_object_get_string(v);
    if (level >= 0 && ts && msg) {
        /* A child's own line: the rest of its members are its fields. */
        json_object *component = NULL, *fields = json_object_new_object();
        json_object_object_get_ex(o, "component", &component);
        /* The plugin the line names (a scanner runs many), else the one
         * the host started the child for. */
        char plugin[256];
        if (json_object_object_get_ex(o, "plugin", &v) && json_object_is_type(v, json_type_string))
            snprintf(plugin, sizeof plugin, "%s", json_object_get_string(v));
        else
            plugin_of(tag, plugin, sizeof plugin);
        json_object_object_foreach(o, key, val)
        {
            static const char *const fixed[] = {"ts", "level", "component", "plugin", "msg"};
            bool skip = false;
            for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
                skip = skip || strcmp(key, fixed[i]) == 0;
            if (!skip && fields)
                json_object_object_add(fields, key, json_object_get(val));
        }
        pthread_mutex_lock(&log_lock);
        if ((int)level >= atomic_load(&threshold))
            emit((th_log_level)level, ts, component ? json_object_get_string(component) : "worker", plugin, fields,
                 msg, true);
        pthread_mutex_unlock(&log_lock);
        json_object_put(fields);
        json_object_put(o);
        return;
    }
    json_object_put(o);
    /* The plugin's own output: never filtered, whatever it says. */
    char ts_now[40];
    timestamp(ts_now, sizeof ts_now);
    pthread_mutex_lock(&log_lock);
    if (atomic_load(&format) == TH_LOG_JSON && !sink) {
        char *copy = strndup(line, len), plugin[256];
        plugin_of(tag, plugin, sizeof plugin);
        if (copy) {
            emit(TH_LOG_INFO, ts_now, "output", plugin, NULL, copy, false);
            free(copy);
        }
    } else {
        /* One fprintf: stdio's lock keeps it whole among other lines. */
        fprintf(stderr, "%s plugin %s: %.*s\n", ts_now, tag, (int)len, line);
    }
    pthread_mutex_unlock(&log_lock);
}
