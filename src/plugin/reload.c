/* SPDX-License-Identifier: MIT */
/*
** plugin/reload.c: hot reload's plugin-side half: the registry slot swapped
** whole, the tool-set comparison, carrying a refused replacement's
** predecessor over, and the watch thread (inotify and SIGHUP to "rescan").
*/
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#if HAVE_INOTIFY_INIT1 && HAVE_SYS_INOTIFY_H
#define USE_INOTIFY 1
#include <sys/inotify.h>
#else
#define USE_INOTIFY 0
#endif
#include <unistd.h>

#include "base/compat.h"
#include "base/log.h"
#include "base/util.h"
#include "plugin/dirpoll.h"
#include "plugin/reload.h"
#include "plugin/resources.h"

/* ---- the slot ----------------------------------------------------------- */

/*
** A mutex, not a bare atomic pointer: taking the reference must happen
** before a concurrent swap can drop the slot's, or the reader could ref a
** registry already destroyed. The critical section is one increment.
*/
struct th_regslot {
    pthread_mutex_t lock;
    th_registry *reg;
};

th_regslot *th_regslot_new(th_registry *reg)
{
    th_regslot *slot = calloc(1, sizeof *slot);
    if (!slot)
        return NULL;
    pthread_mutex_init(&slot->lock, NULL);
    slot->reg = th_registry_ref(reg);
    return slot;
}

void th_regslot_free(th_regslot *slot)
{
    if (!slot)
        return;
    th_registry_unref(slot->reg);
    pthread_mutex_destroy(&slot->lock);
    free(slot);
}

th_registry *th_regslot_get(th_regslot *slot)
{
    pthread_mutex_lock(&slot->lock);
    th_registry *reg = th_registry_ref(slot->reg);
    pthread_mutex_unlock(&slot->lock);
    return reg;
}

void th_regslot_swap(th_regslot *slot, th_registry *reg)
{
    th_registry_ref(reg);
    pthread_mutex_lock(&slot->lock);
    th_registry *old = slot->reg;
    slot->reg = reg;
    pthread_mutex_unlock(&slot->lock);
    /* Outside the lock: the last unref of the old one may close plugins. */
    th_registry_unref(old);
}

/* ---- comparing and carrying over --------------------------------------- */

static bool same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static bool same_json(json_object *a, json_object *b)
{
    return (!a && !b) || (a && b && json_object_equal(a, b));
}

bool th_registry_same_tools(const th_registry *a, const th_registry *b)
{
    size_t n = th_registry_count(a);
    if (n != th_registry_count(b))
        return false;
    /* By name: a tool kept from before (th_reload_keep_plugin) may list in
     * another place, which is no change a client needs to hear about. */
    for (size_t i = 0; i < n; i++) {
        const th_entry *x = th_registry_at(a, i), *y = th_registry_get(b, x->name);
        if (!y || !same_str(x->name, y->name) || !same_str(x->title, y->title) ||
            !same_str(x->description, y->description) || !same_json(x->input_schema, y->input_schema) ||
            !same_json(x->output_schema, y->output_schema) || !same_json(x->annotations, y->annotations))
            return false;
    }
    return true;
}

/* The I-th resource (TEMPLATE_: template) of RS. */
static const th_res_entry *res_at(const th_resources *rs, bool template_, size_t i)
{
    return template_ ? th_resources_template_at(rs, i) : th_resources_at(rs, i);
}

static size_t res_count(const th_resources *rs, bool template_)
{
    return template_ ? th_resources_template_count(rs) : th_resources_count(rs);
}

bool th_reload_had_plugin(const th_registry *old, const char *origin)
{
    for (size_t i = 0; i < th_registry_count(old); i++)
        if (strcmp(th_registry_at(old, i)->origin, origin) == 0)
            return true;
    const th_resources *rs = th_registry_resources((th_registry *)old);
    for (int t = 0; t < 2; t++)
        for (size_t i = 0; i < res_count(rs, t); i++)
            if (strcmp(res_at(rs, t, i)->origin, origin) == 0)
                return true;
    return false;
}

bool th_registry_same_resources(const th_registry *a, const th_registry *b)
{
    const th_resources *ra = th_registry_resources((th_registry *)a), *rb = th_registry_resources((th_registry *)b);
    for (int t = 0; t < 2; t++) {
        size_t n = res_count(ra, t);
        if (n != res_count(rb, t))
            return false;
        for (size_t i = 0; i < n; i++) {
            const th_res_entry *x = res_at(ra, t, i);
            const th_res_entry *y = th_resources_find(rb, t ? NULL : x->uri, t ? x->uri_template : NULL);
            if (!y || !same_str(x->name, y->name) || !same_str(x->title, y->title) ||
                !same_str(x->description, y->description) || !same_str(x->mime_type, y->mime_type) ||
                x->size != y->size || !same_json(x->annotations, y->annotations))
                return false;
        }
    }
    return true;
}

/* OLD's resources and templates from ORIGIN into NEWREG, reading through
 * OLD's code (held); their destroy stays OLD's to call. */
static size_t keep_resources(th_registry *newreg, th_registry *old, const char *origin)
{
    size_t kept = 0;
    th_resources *from = th_registry_resources(old), *to = th_registry_resources(newreg);
    for (int t = 0; t < 2; t++) {
        for (size_t i = 0; i < res_count(from, t); i++) {
            const th_res_entry *e = res_at(from, t, i);
            if (strcmp(e->origin, origin) != 0)
                continue;
            const char *key = t ? e->uri_template : e->uri;
            th_resource r = {
                TH_RESOURCE_INIT,
                .uri = e->uri,
                .uri_template = e->uri_template,
                .name = e->name,
                .title = e->title,
                .description = e->description,
                .mime_type = e->mime_type,
                .size = e->size,
                .annotations = e->annotations ? json_object_to_json_string(e->annotations) : NULL,
                .read = e->read,
                .user_data = e->user_data,
            };
            th_err err;
            th_err_clear(&err);
            th_rc rc = th_registry_hold(newreg, old);
            if (rc != TH_OK)
                th_err_set(&err, rc, "out of memory");
            else
                rc = th_resources_add_proxy(to, &r, t, origin, e->watch, &err);
            if (rc == TH_OK) {
                th_log(TH_LOG_WARNING, "plugin %s: its replacement was refused (see above); still serving the "
                       "previous version of resource%s '%s'", origin, t ? " template" : "", key);
                kept++;
            } else {
                th_log(TH_LOG_ERROR, "plugin %s: cannot keep the previous version of resource%s '%s': %s", origin,
                       t ? " template" : "", key, err.msg);
            }
        }
    }
    return kept;
}

size_t th_reload_keep_plugin(th_registry *newreg, th_registry *old, const char *origin)
{
    size_t kept = 0;
    for (size_t i = 0; i < th_registry_count(old); i++) {
        const th_entry *e = th_registry_at(old, i);
        if (strcmp(e->origin, origin) != 0)
            continue;
        th_err err;
        th_err_clear(&err);
        if (th_registry_borrow(newreg, old, i, &err) == TH_OK) {
            th_log(TH_LOG_WARNING, "plugin %s: its replacement was refused (see above); still serving the previous "
                   "version of tool '%s'", origin, e->name);
            kept++;
        } else {
            th_log(TH_LOG_ERROR, "plugin %s: cannot keep the previous version of tool '%s': %s", origin, e->name,
                   err.msg);
        }
    }
    return kept + keep_resources(newreg, old, origin);
}

/* ---- the watch thread --------------------------------------------------- */

/*
** Its own thread rather than the transport's loop: stdio, HTTP alone
** (main waiting for a stop) and both at once would each need the fds in
** their loop, and a rescan runs the scanner (up to --load-timeout per
** plugin), which must never hold up reading requests.
*/
struct th_watch {
    th_watch_opts opts;
    char **dirs;
    int ino;           /* inotify, or -1 */
    int *wds;          /* watch descriptor of dirs[i] */
    int wake[2];       /* th_watch_stop writes */
    pthread_t thread;
    char **writing;    /* NAME.so files written and not yet closed */
    size_t nwriting;
    th_dirpoll *poll;  /* --watch without inotify: a look every POLL_MS */
};

/* The portable --watch looks this often (at most; the settle time if
 * shorter), so a change is seen within about one settle time. */
#define POLL_MS 500

#if USE_INOTIFY
#define EVENTS (IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_ATTRIB)

static bool is_plugin_name(const char *name)
{
    size_t n = strlen(name);
    return n > 3 && strcmp(name + n - 3, ".so") == 0 && name[0] != '.';
}

/* Track FILE (dir index + name) as open for writing, or no longer. */
static void set_writing(th_watch *w, int wd, const char *name, bool on)
{
    char key[4096];
    snprintf(key, sizeof key, "%d/%s", wd, name);
    for (size_t i = 0; i < w->nwriting; i++) {
        if (strcmp(w->writing[i], key) == 0) {
            if (!on) {
                free(w->writing[i]);
                w->writing[i] = w->writing[--w->nwriting];
            }
            return;
        }
    }
    if (!on)
        return;
    char **p = realloc(w->writing, (w->nwriting + 1) * sizeof *p);
    char *k = strdup(key);
    if (!p || !k) {
        free(k);
        if (p)
            w->writing = p;
        return; /* out of memory: the file is simply not waited for */
    }
    w->writing = p;
    w->writing[w->nwriting++] = k;
}

static const char *dir_of(const th_watch *w, int wd)
{
    for (size_t i = 0; i < w->opts.ndirs; i++)
        if (w->wds[i] == wd)
            return w->dirs[i];
    return "?";
}

/* Read what inotify has; true when a rescan is due (after settling).
 * WHY gets the last file named. */
static bool read_events(th_watch *w, char *why, size_t size)
{
    char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
    bool due = false;
    for (;;) {
        ssize_t n = read(w->ino, buf, sizeof buf);
        if (n <= 0)
            return due;
        for (char *p = buf; p < buf + n;) {
            const struct inotify_event *ev = (const struct inotify_event *)p;
            p += sizeof *ev + ev->len;
            if (ev->mask & IN_Q_OVERFLOW) {
                snprintf(why, size, "inotify: events lost (queue overflow)");
                due = true;
                continue;
            }
            if (ev->mask & IN_IGNORED) {
                th_log(TH_LOG_WARNING, "--watch: plugin directory %s is gone; no longer watched (SIGHUP still "
                       "rescans)", dir_of(w, ev->wd));
                continue;
            }
            if (!ev->len || !is_plugin_name(ev->name))
                continue;
            if (ev->mask & IN_MODIFY)
                set_writing(w, ev->wd, ev->name, true);
            if (ev->mask & (IN_CLOSE_WRITE | IN_DELETE | IN_MOVED_FROM))
                set_writing(w, ev->wd, ev->name, false);
            snprintf(why, size, "inotify: %s/%s", dir_of(w, ev->wd), ev->name);
            due = true;
        }
    }
}

#endif /* USE_INOTIFY */

static void drain(int fd)
{
    char b[64];
    while (read(fd, b, sizeof b) > 0)
        ;
}

static void *watch_main(void *arg)
{
    th_watch *w = arg;
    char why[4200] = "";
    bool dirty = false;
    long long deadline = 0;
    for (;;) {
        struct pollfd p[3] = {{w->wake[0], POLLIN, 0}, {w->opts.hup_fd, POLLIN, 0}, {w->ino, POLLIN, 0}};
        int timeout = -1;
        if (dirty) {
            long long left = deadline - th_now_ms();
            timeout = left < 0 ? 0 : left > 60000 ? 60000 : (int)left;
        }
        if (w->poll) {
            int every = w->opts.settle_ms > 0 && w->opts.settle_ms < POLL_MS ? (int)w->opts.settle_ms : POLL_MS;
            if (timeout < 0 || timeout > every)
                timeout = every;
        }
        int r = poll(p, 3, timeout);
        if (r < 0 && errno != EINTR) {
            th_log(TH_LOG_ERROR, "--watch: poll failed: %s; reloading stops", strerror(errno));
            break;
        }
        if (r > 0 && p[0].revents)
            break;
        if (r > 0 && p[1].revents) {
            drain(w->opts.hup_fd);
            w->opts.rescan(w->opts.ctx, "SIGHUP");
            dirty = false; /* the rescan saw those changes too */
            continue;
        }
#if USE_INOTIFY
        if (r > 0 && p[2].revents && read_events(w, why, sizeof why)) {
            dirty = true;
            deadline = th_now_ms() + w->opts.settle_ms;
        }
#endif
        /* A file still being written changes between looks, which pushes
         * the rescan back; one quiet for a whole settle time is loaded,
         * written to the end or not (put plugins in place with a rename). */
        if (w->poll && th_dirpoll_changed(w->poll, why, sizeof why)) {
            dirty = true;
            deadline = th_now_ms() + w->opts.settle_ms;
        }
        /* A file still being written is not loaded half-way: wait for its
         * close (or removal), then for the settle time. */
        if (dirty && w->nwriting == 0 && th_now_ms() >= deadline) {
            dirty = false;
            w->opts.rescan(w->opts.ctx, why);
        } else if (dirty && w->nwriting > 0 && th_now_ms() >= deadline) {
            deadline = th_now_ms() + w->opts.settle_ms;
        }
    }
    return NULL;
}

static void watch_free(th_watch *w)
{
    if (w->ino >= 0)
        close(w->ino);
    for (int i = 0; i < 2; i++)
        if (w->wake[i] >= 0)
            close(w->wake[i]);
    for (size_t i = 0; i < w->opts.ndirs; i++)
        free(w->dirs ? w->dirs[i] : NULL);
    for (size_t i = 0; i < w->nwriting; i++)
        free(w->writing[i]);
    free(w->writing);
    free(w->dirs);
    free(w->wds);
    th_dirpoll_free(w->poll);
    free(w);
}

th_watch *th_watch_start(const th_watch_opts *opts, th_err *err)
{
    th_watch *w = calloc(1, sizeof *w);
    if (!w) {
        th_err_set(err, TH_ERR_NOMEM, "out of memory");
        return NULL;
    }
    w->opts = *opts;
    w->ino = w->wake[0] = w->wake[1] = -1;
    w->dirs = calloc(opts->ndirs + 1, sizeof *w->dirs);
    w->wds = calloc(opts->ndirs + 1, sizeof *w->wds);
    if (!w->dirs || !w->wds)
        goto nomem;
    for (size_t i = 0; i < opts->ndirs; i++) {
        w->wds[i] = -1;
        if (!(w->dirs[i] = strdup(opts->dirs[i])))
            goto nomem;
    }
    if (th_pipe_cloexec(w->wake, true) != 0) {
        th_err_set(err, TH_ERR_IO, "cannot create a pipe: %s", strerror(errno));
        goto fail;
    }
#if USE_INOTIFY
    if (opts->inotify) {
        if ((w->ino = inotify_init1(IN_CLOEXEC | IN_NONBLOCK)) < 0) {
            th_err_set(err, TH_ERR_IO, "--watch: inotify_init1: %s", strerror(errno));
            goto fail;
        }
        for (size_t i = 0; i < opts->ndirs; i++) {
            if ((w->wds[i] = inotify_add_watch(w->ino, w->dirs[i], EVENTS | IN_ONLYDIR)) < 0) {
                th_err_set(err, TH_ERR_IO, "--watch: cannot watch plugin directory %s: %s", w->dirs[i],
                           strerror(errno));
                goto fail;
            }
        }
    }
#else
    if (opts->inotify && !(w->poll = th_dirpoll_new(opts->dirs, opts->ndirs)))
        goto nomem;
#endif
    int rc = pthread_create(&w->thread, NULL, watch_main, w);
    if (rc != 0) {
        th_err_set(err, TH_ERR_IO, "cannot start the watch thread: %s", strerror(rc));
        goto fail;
    }
    return w;

nomem:
    th_err_set(err, TH_ERR_NOMEM, "out of memory");
fail:
    watch_free(w);
    return NULL;
}

void th_watch_stop(th_watch *w)
{
    if (!w)
        return;
    ssize_t r = write(w->wake[1], "x", 1);
    (void)r;
    pthread_join(w->thread, NULL);
    watch_free(w);
}
