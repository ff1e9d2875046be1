/* SPDX-License-Identifier: MIT */
/*
** plugin/trust.c: the StrictModes rule for plugin files, their directories
** and every directory above them. The rules judge a struct stat only, so
** they can be tested on any owner without being root; th_trust_open_dir
** applies them to each directory as it opens it.
*/
#define _GNU_SOURCE /* O_PATH */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plugin/trust.h"

/* Write bits that let someone other than the owner change a file or, for a
 * directory, replace what is in it; both bits first, so the message names
 * everyone who can write. */
static const struct {
    mode_t bits;
    const char *who;
} writable_by[] = {
    {S_IWGRP | S_IWOTH, "group and others"},
    {S_IWOTH, "others"},
    {S_IWGRP, "group"},
};

static bool owner_ok(const struct stat *st, uid_t euid, const char *path, char *why, size_t size)
{
    /* root may write anything anyway; trusting it costs nothing. */
    if (st->st_uid != 0 && st->st_uid != euid) {
        snprintf(why, size,
                 "owned by uid %lu, not by root or the user running toolhost (uid %lu); fix with: chown %lu %s",
                 (unsigned long)st->st_uid, (unsigned long)euid, (unsigned long)euid, path);
        return false;
    }
    return true;
}

bool th_trust_check(const struct stat *st, uid_t euid, const char *path, char *why, size_t size)
{
    if (!owner_ok(st, euid, path, why, size))
        return false;
    for (size_t i = 0; i < sizeof writable_by / sizeof writable_by[0]; i++) {
        if ((st->st_mode & writable_by[i].bits) == writable_by[i].bits) {
            snprintf(why, size, "writable by %s (mode %04o); fix with: chmod go-w %s", writable_by[i].who,
                     (unsigned)(st->st_mode & 07777), path);
            return false;
        }
    }
    return true;
}

bool th_trust_check_ancestor(const struct stat *st, uid_t euid, const char *path, char *why, size_t size)
{
    if (!owner_ok(st, euid, path, why, size))
        return false;
    /* Sticky (/tmp): others may add entries but not rename or remove
     * ours, and the entry below is judged in its turn. */
    if (S_ISDIR(st->st_mode) && (st->st_mode & S_ISVTX))
        return true;
    for (size_t i = 0; i < sizeof writable_by / sizeof writable_by[0]; i++) {
        if ((st->st_mode & writable_by[i].bits) == writable_by[i].bits) {
            snprintf(why, size,
                     "writable by %s without the sticky bit (mode %04o), so they can replace what is below it; "
                     "fix with: chmod go-w %s",
                     writable_by[i].who, (unsigned)(st->st_mode & 07777), path);
            return false;
        }
    }
    return true;
}

/* Step from directory FD into NAME without following a link. O_PATH: a
 * walk reads no directory, so a worker's sandbox, which lets it list none,
 * still lets it reach its plugin. O_PATH with O_NOFOLLOW stops at a link
 * without the ELOOP a read open gives: say it the same way. */
static int open_below(int fd, const char *name)
{
    int next = openat(fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (next < 0 && errno == ENOTDIR && fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
        errno = ELOOP;
    return next;
}

int th_trust_open_dir(const char *path, uid_t euid, bool *trusted, char *why, size_t size)
{
    struct stat st;
    char *copy = NULL, *save = NULL;
    int fd = -1;
    *trusted = true;
    why[0] = '\0';
    if (path[0] != '/' || !(copy = strdup(path))) {
        snprintf(why, size, "cannot open %s: %s", path, path[0] != '/' ? "not an absolute path" : strerror(errno));
        return -1;
    }
    if ((fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
        goto fail;
    /* Each directory is judged as opened, and the next opened from it:
     * what was judged is what is walked through, whatever is renamed. */
    size_t done = 0; /* bytes of PATH walked, for naming an ancestor */
    for (char *name = strtok_r(copy, "/", &save); name; name = strtok_r(NULL, "/", &save)) {
        if (fstat(fd, &st) != 0)
            goto fail;
        char here[4096];
        snprintf(here, sizeof here, "%.*s", done ? (int)done : 1, done ? path : "/");
        char rule[1536];
        if (*trusted && !th_trust_check_ancestor(&st, euid, here, rule, sizeof rule)) {
            snprintf(why, size, "%s above it: %s", here, rule);
            *trusted = false;
        }
        int next = open_below(fd, name);
        if (next < 0)
            goto fail;
        close(fd);
        fd = next;
        done = (size_t)(name - copy) + strlen(name);
    }
    free(copy);
    return fd;

fail:
    snprintf(why, size, "%s%s", strerror(errno), errno == ELOOP ? " (a symbolic link in its path)" : "");
    if (fd >= 0)
        close(fd);
    free(copy);
    *trusted = false;
    return -1;
}
