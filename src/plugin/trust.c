/*
** plugin/trust.c: the StrictModes rule for plugin files and directories. It
** judges a struct stat only; what was opened and checked is the loader's
** concern, so the rule can be tested on any owner without being root.
*/
#include "config.h"

#include <stdio.h>

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

bool th_trust_check(const struct stat *st, uid_t euid, const char *path, char *why, size_t size)
{
    /* root may write anything anyway; trusting it costs nothing. */
    if (st->st_uid != 0 && st->st_uid != euid) {
        snprintf(why, size,
                 "owned by uid %lu, not by root or the user running toolhost (uid %lu); fix with: chown %lu %s",
                 (unsigned long)st->st_uid, (unsigned long)euid, (unsigned long)euid, path);
        return false;
    }
    for (size_t i = 0; i < sizeof writable_by / sizeof writable_by[0]; i++) {
        if ((st->st_mode & writable_by[i].bits) == writable_by[i].bits) {
            snprintf(why, size, "writable by %s (mode %04o); fix with: chmod go-w %s", writable_by[i].who,
                     (unsigned)(st->st_mode & 07777), path);
            return false;
        }
    }
    return true;
}
