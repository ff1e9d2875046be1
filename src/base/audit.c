/* SPDX-License-Identifier: MIT */
/*
** base/audit.c: the audit log's descriptor, its lines and what happens when
** the disk refuses them. One mutex orders the writers, so a reopen never
** races a write and the fix-up after a torn line is exact.
*/
/* fdatasync, O_CLOEXEC */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/audit.h"
#include "base/jsontree.h"
#include "base/log.h"
#include "base/metrics.h"

/* While writes fail, a warning at most this often: a full disk must not
 * turn into one log line per call. */
#define WARN_EVERY_MS 60000

static struct {
    pthread_mutex_t lock;
    atomic_bool on;
    int fd;
    char *path;
    bool torn;            /* the last write ended mid-line */
    unsigned long long lost; /* lines not written since the last that was */
    long long warned_ms;  /* when the last failure was warned about (0: not failing) */
} a = {.lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1};

bool th_audit_on(void)
{
    return atomic_load_explicit(&a.on, memory_order_relaxed);
}

static int open_log(const char *path)
{
    return open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0600);
}

th_rc th_audit_open(const char *path, th_err *err)
{
    int fd = open_log(path);
    if (fd < 0)
        return th_err_set(err, TH_ERR_IO, "--audit-log %s: %s", path, strerror(errno));
    char *copy = strdup(path);
    if (!copy) {
        close(fd);
        return th_err_set(err, TH_ERR_NOMEM, "--audit-log %s: out of memory", path);
    }
    pthread_mutex_lock(&a.lock);
    a.fd = fd;
    a.path = copy;
    atomic_store(&a.on, true);
    pthread_mutex_unlock(&a.lock);
    return TH_OK;
}

void th_audit_reopen(void)
{
    if (!th_audit_on())
        return;
    pthread_mutex_lock(&a.lock);
    int fd = open_log(a.path);
    if (fd < 0) {
        th_log(TH_LOG_WARNING, "audit log %s: cannot reopen (%s); still writing to the old file", a.path,
               strerror(errno));
    } else {
        /* The rotated file is complete on disk before it is let go. */
        (void)fdatasync(a.fd);
        close(a.fd);
        a.fd = fd;
        a.torn = false; /* the new file starts on a line boundary */
    }
    pthread_mutex_unlock(&a.lock);
}

void th_audit_close(void)
{
    pthread_mutex_lock(&a.lock);
    if (a.fd >= 0) {
        (void)fdatasync(a.fd);
        close(a.fd);
    }
    a.fd = -1;
    free(a.path);
    a.path = NULL;
    atomic_store(&a.on, false);
    pthread_mutex_unlock(&a.lock);
}

/* RFC 3339 UTC with milliseconds. */
static void put_time(th_buf *b)
{
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    th_buf_printf(b, "{\"time\":\"%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ\"", tm.tm_year + 1900, tm.tm_mon + 1,
                  tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);
}

static bool put_string(th_buf *b, const char *key, const char *v)
{
    return th_buf_printf(b, ",\"%s\":", key) && th_json_append_string(b, v ? v : "", v ? strlen(v) : 0);
}

/* R's line in B; a line after a torn one begins with the newline that
 * ends the torn one, so every line after it parses. */
static bool format(th_buf *b, const th_audit_record *r, bool torn, unsigned long long lost)
{
    if (torn)
        th_buf_append(b, "\n", 1);
    put_time(b);
    bool ok = put_string(b, "principal", r->principal) && put_string(b, "tool", r->tool) &&
              put_string(b, "outcome", r->outcome);
    if (ok && r->code)
        ok = th_buf_printf(b, ",\"code\":%d", r->code);
    if (ok)
        ok = th_buf_printf(b, ",\"duration_ms\":%lld", r->duration_ms < 0 ? 0 : r->duration_ms);
    if (ok && r->args_sha256)
        ok = put_string(b, "args_sha256", r->args_sha256);
    if (ok && lost)
        ok = th_buf_printf(b, ",\"lost_before\":%llu", lost);
    return ok && th_buf_append(b, "}\n", 2);
}

/* Under the lock: a write failed with ERR (0: short). */
static void failed(int err)
{
    a.lost++;
    if (th_metrics_enabled)
        th_metrics_audit_failure();
    long long now = th_now_ms();
    if (a.warned_ms && now - a.warned_ms < WARN_EVERY_MS)
        return;
    a.warned_ms = now;
    th_log(TH_LOG_WARNING, "audit log %s: write failed (%s); %llu line%s lost so far, calls go on", a.path,
           err ? strerror(err) : "short write", a.lost, a.lost == 1 ? "" : "s");
}

void th_audit_write(const th_audit_record *r)
{
    if (!th_audit_on())
        return;
    th_buf b = {0};
    pthread_mutex_lock(&a.lock);
    if (a.fd < 0 || !format(&b, r, a.torn, a.lost)) {
        if (a.fd >= 0)
            failed(ENOMEM);
        pthread_mutex_unlock(&a.lock);
        free(b.data);
        return;
    }
    ssize_t n;
    do
        n = write(a.fd, b.data, b.len);
    while (n < 0 && errno == EINTR);
    if (n == (ssize_t)b.len) {
        if (a.warned_ms)
            th_log(TH_LOG_NOTICE, "audit log %s: writing again after %llu lost line%s", a.path, a.lost,
                   a.lost == 1 ? "" : "s");
        a.torn = false;
        a.lost = 0;
        a.warned_ms = 0;
    } else {
        a.torn = a.torn || n > 0;
        failed(n < 0 ? errno : 0);
    }
    pthread_mutex_unlock(&a.lock);
    free(b.data);
}
