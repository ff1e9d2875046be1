/* SPDX-License-Identifier: MIT */
/*
** plugin/dirpoll.c: the portable --watch (see dirpoll.h): each look lists
** the NAME.so files of every directory, sorted, and compares them with the
** previous list. Used where configure found no inotify.
*/
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/log.h"
#include "plugin/dirpoll.h"

typedef struct entry {
    char *name;
    long long size, mtime_s, mtime_ns, ctime_s, ctime_ns;
    unsigned long long ino;
} entry;

typedef struct listing {
    entry *e;
    size_t n;
    bool readable;
    int error; /* opendir's errno when not readable */
} listing;

struct th_dirpoll {
    char **dirs;
    listing *last; /* one per directory */
    size_t ndirs;
};

static bool is_plugin_name(const char *name)
{
    size_t n = strlen(name);
    return n > 3 && strcmp(name + n - 3, ".so") == 0 && name[0] != '.';
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const entry *)a)->name, ((const entry *)b)->name);
}

static void listing_free(listing *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->e[i].name);
    free(l->e);
    *l = (listing){0};
}

/* DIR's NAME.so files, sorted by name. False only when out of memory. */
static bool look(const char *dir, listing *out)
{
    *out = (listing){0};
    DIR *d = opendir(dir);
    if (!d) {
        out->error = errno; /* readable stays false */
        return true;
    }
    out->readable = true;
    size_t cap = 0;
    struct dirent *de;
    char path[4352];
    bool ok = true;
    while (ok && (de = readdir(d))) {
        struct stat st;
        if (!is_plugin_name(de->d_name))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        if (stat(path, &st) != 0)
            continue; /* gone between readdir and stat: the next look sees it */
        if (out->n == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            entry *ne = realloc(out->e, ncap * sizeof *ne);
            if (!ne) {
                ok = false;
                break;
            }
            out->e = ne;
            cap = ncap;
        }
        entry *e = &out->e[out->n];
        *e = (entry){.name = strdup(de->d_name), .size = (long long)st.st_size,
                     .mtime_s = (long long)st.st_mtim.tv_sec, .mtime_ns = st.st_mtim.tv_nsec,
                     .ctime_s = (long long)st.st_ctim.tv_sec, .ctime_ns = st.st_ctim.tv_nsec,
                     .ino = (unsigned long long)st.st_ino};
        if (!e->name)
            ok = false;
        else
            out->n++;
    }
    closedir(d);
    if (!ok) {
        listing_free(out);
        return false;
    }
    if (out->n)
        qsort(out->e, out->n, sizeof *out->e, by_name);
    return true;
}

static bool same_entry(const entry *a, const entry *b)
{
    return strcmp(a->name, b->name) == 0 && a->size == b->size && a->mtime_s == b->mtime_s &&
           a->mtime_ns == b->mtime_ns && a->ctime_s == b->ctime_s && a->ctime_ns == b->ctime_ns && a->ino == b->ino;
}

/* The first name in which A and B differ, or NULL when they are the same. */
static const char *first_difference(const listing *a, const listing *b)
{
    size_t i = 0;
    for (; i < a->n && i < b->n; i++)
        if (!same_entry(&a->e[i], &b->e[i]))
            return strcmp(a->e[i].name, b->e[i].name) <= 0 ? a->e[i].name : b->e[i].name;
    if (i < a->n)
        return a->e[i].name;
    if (i < b->n)
        return b->e[i].name;
    return NULL;
}

th_dirpoll *th_dirpoll_new(const char *const *dirs, size_t ndirs)
{
    th_dirpoll *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->ndirs = ndirs;
    p->dirs = calloc(ndirs + 1, sizeof *p->dirs);
    p->last = calloc(ndirs + 1, sizeof *p->last);
    if (!p->dirs || !p->last)
        goto fail;
    for (size_t i = 0; i < ndirs; i++)
        if (!(p->dirs[i] = strdup(dirs[i])) || !look(dirs[i], &p->last[i]))
            goto fail;
    return p;
fail:
    th_dirpoll_free(p);
    return NULL;
}

bool th_dirpoll_changed(th_dirpoll *p, char *why, size_t size)
{
    bool changed = false;
    for (size_t i = 0; i < p->ndirs; i++) {
        listing now;
        if (!look(p->dirs[i], &now))
            continue; /* out of memory: compare on the next look */
        if (p->last[i].readable && !now.readable)
            th_log(TH_LOG_WARNING, "--watch: plugin directory %s cannot be read (%s); watched again once it can",
                   p->dirs[i], strerror(now.error));
        const char *name = first_difference(&p->last[i], &now);
        if (name) {
            snprintf(why, size, "poll: %s/%s", p->dirs[i], name);
            changed = true;
        }
        listing_free(&p->last[i]);
        p->last[i] = now;
    }
    return changed;
}

void th_dirpoll_free(th_dirpoll *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->ndirs; i++) {
        free(p->dirs ? p->dirs[i] : NULL);
        if (p->last)
            listing_free(&p->last[i]);
    }
    free(p->dirs);
    free(p->last);
    free(p);
}
