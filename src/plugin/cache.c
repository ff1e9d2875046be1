/* SPDX-License-Identifier: MIT */
/*
** plugin/cache.c: the registry cache file: reading it (an untrusted file or
** directory, or anything unexpected, means an empty cache and a warning),
** matching plugin files against their keys, and writing it back atomically
** with mode 0600.
*/
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/compat.h"
#include "base/log.h"
#include "plugin/cache.h"
#include "plugin/qualname.h"
#include "plugin/settings.h"
#include "plugin/trust.h"

/* Bumped whenever the file's layout or the meaning of an entry changes. */
#define CACHE_FORMAT 2

struct th_cache {
    char *path;
    char *fingerprint;   /* what else the outcome of a scan depends on */
    json_object *old;    /* plugins object as read (never NULL) */
    json_object *keep;   /* entries to write: hits and new scans */
    bool dirty;          /* something to write even if KEEP equals OLD */
    bool untrusted_dir;  /* its directory is refused: never written there */
};

/* FNV-1a, 64 bits: names a file, not a secret. */
static uint64_t fnv(uint64_t h, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return h;
}

char *th_cache_default_path(const char *const *dirs, size_t ndirs)
{
    return th_cache_default_path_named(dirs, NULL, ndirs, false);
}

char *th_cache_default_path_named(const char *const *dirs, const char *const *toolboxes, size_t ndirs,
                                  bool qualified)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    char *cwd = NULL, *path = NULL;
    uint64_t h = 14695981039346656037ULL;
    /* The XDG rule: a relative $XDG_CACHE_HOME is invalid and ignored. */
    bool use_xdg = xdg && xdg[0] == '/';
    if (!use_xdg && !(home && home[0] == '/')) {
        errno = ENOENT; /* no place for it, which is not a failure */
        return NULL;
    }
    for (size_t i = 0; i < ndirs; i++) {
        if (dirs[i][0] != '/') {
            if (!cwd && !(cwd = getcwd(NULL, 0)))
                return NULL;
            h = fnv(h, cwd, strlen(cwd));
            h = fnv(h, "/", 1);
        }
        h = fnv(h, dirs[i], strlen(dirs[i]) + 1); /* the NUL separates them */
        /* Toolbox names too: two hosts naming the same directories
         * differently must not share (and, saving, prune) one file. The
         * default toolbox adds nothing, so plain directories keep the
         * file they had before toolboxes. */
        if (toolboxes && toolboxes[i] && strcmp(toolboxes[i], TH_DEFAULT_TOOLBOX) != 0) {
            h = fnv(h, "toolbox=", 8);
            h = fnv(h, toolboxes[i], strlen(toolboxes[i]) + 1);
        }
    }
    if (qualified)
        h = fnv(h, "qualified", 10);
    free(cwd);
    size_t len = strlen(use_xdg ? xdg : home) + 64;
    if ((path = malloc(len)))
        snprintf(path, len, "%s%s/toolhost/registry-%016llx.json", use_xdg ? xdg : home,
                 use_xdg ? "" : "/.cache", (unsigned long long)h);
    return path;
}

/*
** The host's version, plugin ABI and executable (a rebuilt toolhost of the
** same version may judge plugins differently), and the load options that
** change what a scan accepts. Trust settings and the user are not in it:
** the trust rule is applied on every start, cached or not.
*/
static char *fingerprint_of(const th_load_opts *opts)
{
    struct stat st;
    char buf[512];
    char exe[PATH_MAX];
    if (!th_self_exe(exe, sizeof exe) || stat(exe, &st) != 0)
        memset(&st, 0, sizeof st);
    snprintf(buf, sizeof buf, "toolhost %s abi %d exe %lld:%lld.%09ld follow_symlinks=%d allow_insecure=%d",
             PACKAGE_VERSION, TH_ABI_VERSION, (long long)st.st_size, (long long)st.st_mtim.tv_sec,
             (long)st.st_mtim.tv_nsec, opts && opts->follow_symlinks, opts && opts->allow_insecure);
    return strdup(buf);
}

/* Why the parsed file ROOT cannot be used, or NULL when it can. */
static const char *unusable(json_object *root, const char *fingerprint)
{
    json_object *v;
    if (!root || !json_object_is_type(root, json_type_object))
        return "not a JSON object: corrupt or truncated";
    if (!json_object_object_get_ex(root, "toolhost_registry_cache", &v) || json_object_get_int(v) != CACHE_FORMAT)
        return "not a toolhost registry cache of this format";
    if (!json_object_object_get_ex(root, "fingerprint", &v) || !json_object_is_type(v, json_type_string) ||
        strcmp(json_object_get_string(v), fingerprint) != 0)
        return "written by another toolhost build or with other load options";
    if (!json_object_object_get_ex(root, "plugins", &v) || !json_object_is_type(v, json_type_object))
        return "no plugins object";
    return NULL;
}

/*
** Open the cache file PATH for reading, after the trust rules: every
** directory up to / as for a plugin directory's ancestors (sticky allowed,
** a file of ours there cannot be replaced by others), then the file itself,
** not a link, owned by root or this user and writable by nobody else: its
** descriptors are served as the plugins' without running them. -1 with
** *MISSING when there is no file, or with WHY (and *DIR_REFUSED when the
** directory is at fault) when it is refused.
*/
static int open_trusted(const char *path, bool *missing, bool *dir_refused, char *why, size_t size)
{
    struct stat st;
    bool ok = false;
    int dfd = -1, fd = -1;
    char *dir = strdup(path), *real = NULL, *slash = dir ? strrchr(dir, '/') : NULL;
    *missing = *dir_refused = false;
    if (!dir || !slash) {
        snprintf(why, size, "%s", dir ? "not an absolute path" : strerror(ENOMEM));
        goto cleanup;
    }
    *(slash == dir ? slash + 1 : slash) = '\0';
    if (!(real = realpath(dir, NULL))) {
        *missing = errno == ENOENT;
        snprintf(why, size, "cannot resolve its directory: %s", strerror(errno));
        goto cleanup;
    }
    /* The directory itself is judged like the ones above it: the file's
     * own checks below cover what a sticky directory leaves open. */
    if ((dfd = th_trust_open_dir(real, geteuid(), &ok, why, size)) < 0 || !ok || fstat(dfd, &st) != 0 ||
        !th_trust_check_ancestor(&st, geteuid(), real, why, size)) {
        *dir_refused = dfd >= 0;
        goto cleanup;
    }
    fd = openat(dfd, strrchr(path, '/') + 1, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) {
        *missing = errno == ENOENT;
        snprintf(why, size, "cannot open: %s", strerror(errno));
    } else if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || !th_trust_check(&st, geteuid(), path, why, size)) {
        if (!S_ISREG(st.st_mode))
            snprintf(why, size, "not a regular file");
        close(fd);
        fd = -1;
    }

cleanup:
    if (dfd >= 0)
        close(dfd);
    free(real);
    free(dir);
    return fd;
}

th_cache *th_cache_open(const char *path, const th_load_opts *opts)
{
    th_cache *c = calloc(1, sizeof *c);
    json_object *root = NULL;
    char why[1536];
    bool missing, dir_refused;
    int fd = -1;
    if (!c || !(c->path = strdup(path)) || !(c->fingerprint = fingerprint_of(opts)) ||
        !(c->keep = json_object_new_object()))
        goto nomem;
    if ((fd = open_trusted(path, &missing, &dir_refused, why, sizeof why)) >= 0) {
        /* json_object_from_fd: a strict parse of the whole file would
         * cost more than the file saves; the entries are checked as used. */
        root = json_object_from_fd(fd);
        const char *bad = unusable(root, c->fingerprint);
        if (bad) {
            th_log(TH_LOG_WARNING, "registry cache %s: ignored (%s); every plugin is scanned and the file rewritten",
                   path, bad);
            c->dirty = true;
        } else {
            json_object_object_get_ex(root, "plugins", &c->old);
            json_object_get(c->old);
        }
    } else if (dir_refused) {
        c->untrusted_dir = true;
        th_log(TH_LOG_WARNING, "registry cache %s: ignored and not written: its directory is refused: %s; every "
               "plugin is scanned", path, why);
    } else if (!missing) {
        th_log(TH_LOG_WARNING, "registry cache %s: ignored (%s); every plugin is scanned and the file rewritten", path,
               why);
        c->dirty = true;
    }
    if (fd >= 0)
        close(fd);
    json_object_put(root);
    if (!c->old && !(c->old = json_object_new_object()))
        goto nomem;
    return c;

nomem:
    json_object_put(root);
    th_cache_free(c);
    return NULL;
}

void th_cache_free(th_cache *c)
{
    if (!c)
        return;
    json_object_put(c->old);
    json_object_put(c->keep);
    free(c->fingerprint);
    free(c->path);
    free(c);
}

th_cache_key th_cache_key_of(const char *plugin)
{
    th_cache_key k = {.valid = false};
    struct stat st;
    if (stat(plugin, &st) != 0)
        return k;
    k.valid = true;
    k.size = (long long)st.st_size;
    k.mtime_ns = (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
    /* ctime too: it cannot be set back by hand, so a file rewritten in
     * place with its old size and mtime restored is still noticed. */
    k.ctime_ns = (long long)st.st_ctim.tv_sec * 1000000000LL + st.st_ctim.tv_nsec;
    k.ino = (unsigned long long)st.st_ino;
    k.dev = (unsigned long long)st.st_dev;
    return k;
}

th_cache_key th_cache_key_with(const char *plugin, const th_config *settings)
{
    th_cache_key k = th_cache_key_of(plugin);
    char name[256];
    bool uncacheable = false;
    if (k.valid && th_config_plugin_name(plugin, name, sizeof name)) {
        k.settings = th_config_digest(settings, name, &uncacheable);
        if (uncacheable)
            k.valid = false;
    }
    return k;
}

bool th_cache_key_digest(th_cache_key *key, const char *plugin)
{
    struct stat st;
    int fd = open(plugin, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    bool same = fd >= 0 && fstat(fd, &st) == 0 && key->valid && (unsigned long long)st.st_ino == key->ino &&
                (unsigned long long)st.st_dev == key->dev && (long long)st.st_size == key->size;
    if (!same || !th_loader_digest_fd(fd, key->digest))
        key->valid = false;
    if (fd >= 0)
        close(fd);
    return key->valid;
}

static long long get_i64(json_object *o, const char *key, bool *ok)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int)) {
        *ok = false;
        return 0;
    }
    return (long long)json_object_get_int64(v);
}

static unsigned long long get_u64(json_object *o, const char *key, bool *ok)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int)) {
        *ok = false;
        return 0;
    }
    return (unsigned long long)json_object_get_uint64(v);
}

json_object *th_cache_lookup(th_cache *c, const char *plugin, const th_cache_key *key, const char **digest)
{
    json_object *e, *tools, *sha;
    bool ok = true;
    if (!c || !key->valid || !json_object_object_get_ex(c->old, plugin, &e) ||
        !json_object_is_type(e, json_type_object))
        return NULL;
    ok = get_i64(e, "size", &ok) == key->size && ok;
    ok = get_i64(e, "mtime_ns", &ok) == key->mtime_ns && ok;
    ok = get_i64(e, "ctime_ns", &ok) == key->ctime_ns && ok;
    ok = get_u64(e, "ino", &ok) == key->ino && ok;
    ok = get_u64(e, "dev", &ok) == key->dev && ok;
    ok = get_u64(e, "settings", &ok) == key->settings && ok;
    if (!ok || !json_object_object_get_ex(e, "tools", &tools) || !json_object_is_type(tools, json_type_array) ||
        json_object_array_length(tools) == 0 || !json_object_object_get_ex(e, "sha256", &sha) ||
        !json_object_is_type(sha, json_type_string) || json_object_get_string_len(sha) != TH_SHA256_DIGEST_LEN)
        return NULL; /* changed: scanned again, and put replaces the entry */
    json_object_object_add(c->keep, plugin, json_object_get(e));
    *digest = json_object_get_string(sha);
    return tools;
}

void th_cache_put(th_cache *c, const char *plugin, const th_cache_key *key, json_object *tools)
{
    if (!c || !key->valid || !key->digest[0] || !tools)
        return;
    json_object *e = json_object_new_object();
    if (!e)
        return; /* not cached: scanned again next time */
    json_object_object_add(e, "size", json_object_new_int64(key->size));
    json_object_object_add(e, "mtime_ns", json_object_new_int64(key->mtime_ns));
    json_object_object_add(e, "ctime_ns", json_object_new_int64(key->ctime_ns));
    json_object_object_add(e, "ino", json_object_new_uint64(key->ino));
    json_object_object_add(e, "dev", json_object_new_uint64(key->dev));
    json_object_object_add(e, "settings", json_object_new_uint64(key->settings));
    json_object_object_add(e, "sha256", json_object_new_string(key->digest));
    json_object_object_add(e, "tools", json_object_get(tools));
    json_object_object_add(c->keep, plugin, e);
    c->dirty = true;
}

void th_cache_put_needs(th_cache *c, const char *plugin, json_object *needs)
{
    json_object *e;
    if (c && needs && json_object_object_get_ex(c->keep, plugin, &e))
        json_object_object_add(e, "needs", json_object_get(needs));
}

json_object *th_cache_needs(th_cache *c, const char *plugin)
{
    json_object *e, *needs;
    return c && json_object_object_get_ex(c->keep, plugin, &e) && json_object_object_get_ex(e, "needs", &needs) &&
                   json_object_is_type(needs, json_type_array)
               ? needs
               : NULL;
}

/* mkdir -p DIR's last two components at most (…/.cache/toolhost), 0700. */
static void make_parent(const char *path)
{
    char *dir = strdup(path), *slash;
    if (!dir)
        return;
    if ((slash = strrchr(dir, '/')) && slash != dir) {
        *slash = '\0';
        if (mkdir(dir, 0700) != 0 && errno == ENOENT && (slash = strrchr(dir, '/')) && slash != dir) {
            *slash = '\0';
            mkdir(dir, 0700);
            *slash = '/';
            mkdir(dir, 0700);
        }
    }
    free(dir);
}

th_rc th_cache_save(th_cache *c, th_err *err)
{
    th_rc rc = TH_OK;
    char *tmp = NULL;
    int fd = -1;
    json_object *root = NULL;
    if (!c || c->untrusted_dir ||
        (!c->dirty && json_object_object_length(c->keep) == json_object_object_length(c->old)))
        return TH_OK; /* every entry was a hit: the file is already right */
    size_t len = strlen(c->path) + 16;
    if (!(tmp = malloc(len)) || !(root = json_object_new_object())) {
        rc = th_err_set(err, TH_ERR_NOMEM, "registry cache %s: out of memory", c->path);
        goto cleanup;
    }
    json_object_object_add(root, "toolhost_registry_cache", json_object_new_int(CACHE_FORMAT));
    json_object_object_add(root, "fingerprint", json_object_new_string(c->fingerprint));
    json_object_object_add(root, "plugins", json_object_get(c->keep));
    size_t n;
    const char *text = json_object_to_json_string_length(root, JSON_C_TO_STRING_PLAIN, &n);
    make_parent(c->path);
    snprintf(tmp, len, "%s.XXXXXX", c->path);
    /* mkstemp creates the file 0600, whatever the umask. */
    if ((fd = mkstemp(tmp)) < 0) {
        rc = th_err_set(err, TH_ERR_IO, "registry cache %s: cannot create %s: %s", c->path, tmp, strerror(errno));
        free(tmp);
        tmp = NULL;
        goto cleanup;
    }
    for (size_t off = 0; off < n;) {
        ssize_t w = write(fd, text + off, n - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            rc = th_err_set(err, TH_ERR_IO, "registry cache %s: cannot write %s: %s", c->path, tmp,
                            w < 0 ? strerror(errno) : "short write");
            goto cleanup;
        }
        off += (size_t)w;
    }
    /* No fsync: after a crash an empty or torn file is only a corrupt
     * cache, ignored with a warning; a start should not wait for the disk. */
    int closed = close(fd);
    fd = -1;
    if (closed != 0 || rename(tmp, c->path) != 0) {
        rc = th_err_set(err, TH_ERR_IO, "registry cache %s: cannot replace it: %s", c->path, strerror(errno));
        goto cleanup;
    }
    free(tmp);
    tmp = NULL;
    c->dirty = false;

cleanup:
    if (fd >= 0)
        close(fd);
    if (tmp) {
        unlink(tmp);
        free(tmp);
    }
    json_object_put(root);
    return rc;
}
