/* SPDX-License-Identifier: MIT */
/*
** skills.c: the bundled skills plugin. Serves a directory of skill folders
** (each with a SKILL.md at its top) through the skills extension: every
** folder becomes one skill, its regular files the skill's files.
**
** The tree is walked from the root's descriptor with openat(O_NOFOLLOW) at
** every step, so no symbolic link (to a file or a folder, inside the root or
** out of it) and no ".." is ever followed: a link is skipped and logged. Only
** names a skill:// URI can carry unescaped are served (A-Z a-z 0-9 . _ - ~);
** others, and dot files, are skipped and logged too.
**
** Settings (th_server_config, read at registration: --set skills.root=DIR,
** the environment's TOOLHOST_SKILLS_ROOT, or [skills] in --config):
**   root   the directory of skill folders (unset: the plugin serves one
**          skill, toolhost-skills-setup, saying how to set it with an
**          example folder, so a default plugin directory holding it starts
**          cleanly, --strict included)
** A folder the host refuses (bad frontmatter, too big, a name taken) is
** logged with the host's reason and left out; the others are served.
*/
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <toolhost/plugin.h>

#define FILES_MAX 512                  /* the extension's limits per skill; */
#define BYTES_MAX (16u * 1024 * 1024)  /* past them the host refuses anyway */
#define DEPTH_MAX 8
#define PATH_MAX_LEN 128

/* One skill folder being read: its files, their paths and bytes owned here. */
typedef struct folder {
    th_skill_file files[FILES_MAX + 1];
    char *paths[FILES_MAX + 1];
    void *bytes[FILES_MAX + 1];
    size_t n, total;
    const char *why; /* set when the folder cannot be served */
} folder;

static void folder_free(folder *f)
{
    for (size_t i = 0; i < f->n; i++) {
        free(f->paths[i]);
        free(f->bytes[i]);
    }
    f->n = 0;
}

static bool name_ok(const char *n)
{
    if (n[0] == '.') /* ".", "..", and hidden files such as .git */
        return false;
    for (const char *c = n; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '.' ||
              *c == '_' || *c == '-' || *c == '~'))
            return false;
    return true;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The entry names of directory DFD (taken: closed here), sorted; *N gets their count. */
static char **names_of(int dfd, size_t *n)
{
    DIR *d = fdopendir(dfd);
    char **names = NULL;
    *n = 0;
    if (!d) {
        close(dfd);
        return NULL;
    }
    size_t cap = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            char **more = realloc(names, cap * sizeof *names);
            if (!more)
                break;
            names = more;
        }
        if (!(names[*n] = strdup(e->d_name)))
            break;
        (*n)++;
    }
    closedir(d);
    if (names)
        qsort(names, *n, sizeof *names, by_name);
    return names;
}

/* Read the regular file NAME of DFD (no link followed) into F as PATH. */
static void add_file(th_server *server, folder *f, int dfd, const char *name, const char *path)
{
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        th_server_log(server, TH_LOG_WARNING, "skills: %s skipped: %s", path,
                      fd < 0 && errno == ELOOP ? "a symbolic link" : "not a regular file");
        if (fd >= 0)
            close(fd);
        return;
    }
    if (f->n >= FILES_MAX || f->total + (size_t)st.st_size > BYTES_MAX) {
        f->why = f->n >= FILES_MAX ? "more than 512 files" : "more than 16 MiB";
        close(fd);
        return;
    }
    char *buf = malloc((size_t)st.st_size + 1);
    size_t got = 0;
    while (buf && got < (size_t)st.st_size) {
        ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    char *p = buf ? strdup(path) : NULL;
    if (!p) {
        free(buf);
        f->why = "out of memory";
        return;
    }
    f->paths[f->n] = p;
    f->bytes[f->n] = buf;
    f->files[f->n] = (th_skill_file){.path = p, .data = buf, .size = got};
    f->n++;
    f->total += got;
}

/* Walk folder DFD (taken: closed here) of the skill, PREFIX its path inside the skill ("" at the top). */
static void walk(th_server *server, folder *f, int dfd, const char *prefix, int depth)
{
    size_t n;
    char **names = names_of(dup(dfd), &n);
    for (size_t i = 0; i < n && !f->why; i++) {
        char path[PATH_MAX_LEN + 2];
        int len = snprintf(path, sizeof path, "%s%s%s", prefix, *prefix ? "/" : "", names[i]);
        int sub = -1;
        if (!name_ok(names[i]) || len < 0 || len > PATH_MAX_LEN)
            th_server_log(server, TH_LOG_WARNING, "skills: %s%s%s skipped: a name a skill:// URI cannot carry", prefix,
                          *prefix ? "/" : "", names[i]);
        else if (depth < DEPTH_MAX &&
                 (sub = openat(dfd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) >= 0)
            walk(server, f, sub, path, depth + 1);
        else
            add_file(server, f, dfd, names[i], path);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    close(dfd);
}

#define UNSET_SKILL "toolhost-skills-setup"
static const char unset_md[] =
    "---\n"
    "name: " UNSET_SKILL "\n"
    "description: How to give this server's skills plugin a directory of skills to serve\n"
    "---\n"
    "\n"
    "This server's skills plugin has no directory of skills yet. Its operator\n"
    "sets one with `--set skills.root=DIR` (or `TOOLHOST_SKILLS_ROOT=DIR`);\n"
    "each folder of DIR holding a SKILL.md is then served as a skill.\n"
    "references/EXAMPLE.md shows a skill folder.\n";
static const char example_md[] =
    "# A skill folder\n"
    "\n"
    "    DIR/release-notes/SKILL.md\n"
    "    DIR/release-notes/references/STYLE.md\n"
    "\n"
    "SKILL.md begins with YAML frontmatter:\n"
    "\n"
    "    ---\n"
    "    name: release-notes\n"
    "    description: Write release notes from a git log\n"
    "    ---\n"
    "\n"
    "The name, 1-64 characters of a-z, 0-9 and '-', makes its URI: skill://NAME/SKILL.md.\n";

TH_REGISTER(skills)
{
    const char *root = th_server_config(server, "root");
    if (!root) {
        /* A plugin that serves nothing is refused, so a default plugin
         * directory holding this one would fail --strict: serve the one
         * skill that says how to serve the others. */
        th_server_log(server, TH_LOG_INFO, "setting skills.root (TOOLHOST_SKILLS_ROOT) is not set: serving only the "
                      "skill " UNSET_SKILL);
        const th_skill_file files[] = {
            {.path = "SKILL.md", .data = unset_md, .size = sizeof unset_md - 1},
            {.path = "references/EXAMPLE.md", .data = example_md, .size = sizeof example_md - 1},
        };
        th_skill skill = {TH_SKILL_INIT, .files = files, .nfiles = 2};
        return th_server_add_skill(server, &skill) == TH_OK ? th_server_added_only(server) : NULL;
    }
    /* Its worker's sandbox lets it read the root, and nothing more. */
    char real[PATH_MAX];
    if (!realpath(root, real) || th_server_need(server, TH_NEED_READ, real) != TH_OK) {
        th_server_log(server, TH_LOG_ERROR, "setting skills.root (TOOLHOST_SKILLS_ROOT) %s: %s", root, strerror(errno));
        return NULL;
    }
    int rfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (rfd < 0) {
        th_server_log(server, TH_LOG_ERROR, "setting skills.root (TOOLHOST_SKILLS_ROOT) %s: %s", root, strerror(errno));
        return NULL;
    }
    size_t n, served = 0;
    char **names = names_of(dup(rfd), &n);
    for (size_t i = 0; i < n; i++) {
        int sfd = name_ok(names[i]) ? openat(rfd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
        if (sfd < 0) {
            th_server_log(server, TH_LOG_WARNING, "skills: %s/%s skipped: not a skill folder (a link, a file, or a "
                          "name a skill:// URI cannot carry)", root, names[i]);
            free(names[i]);
            continue;
        }
        folder *f = calloc(1, sizeof *f);
        if (f) {
            walk(server, f, sfd, "", 0);
            th_skill skill = {TH_SKILL_INIT, .files = f->files, .nfiles = f->n};
            if (f->why)
                th_server_log(server, TH_LOG_ERROR, "skills: %s/%s left out: %s", root, names[i], f->why);
            else if (th_server_add_skill(server, &skill) != TH_OK)
                th_server_log(server, TH_LOG_ERROR, "skills: %s/%s left out: %s", root, names[i],
                              th_server_errmsg(server));
            else
                served++;
            folder_free(f);
            free(f);
        } else {
            close(sfd);
        }
        free(names[i]);
    }
    free(names);
    close(rfd);
    th_server_log(server, TH_LOG_INFO, "skills: serving %zu skills from %s", served, root);
    return th_server_added_only(server);
}
