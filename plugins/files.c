/* SPDX-License-Identifier: MIT */
/*
** files.c: the bundled files plugin. Serves one directory read-only as MCP
** resources: its top-level files are listed, and the template file:///{path}
** reads any regular file beneath it. Traversal ("..") and absolute paths are
** refused by name, and every open goes through openat2(RESOLVE_BENEATH), so
** no symbolic link or ".." can leave the root, checked atomically by the
** kernel during the lookup.
**
** Settings (th_server_config, read at registration: --set files.root=DIR,
** the environment's TOOLHOST_FILES_ROOT, or [files] in --config):
**   root       the directory to serve (unset: the plugin loads, lists
**              nothing, and every read is "not found", so a default plugin
**              directory holding it starts cleanly, --strict included)
**   max_bytes  largest file served (default 1048576)
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
#include <sys/syscall.h>
#include <unistd.h>

#include <toolhost/plugin.h>

#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#define HAVE_OPENAT2_H 1
#endif

#define LIST_MAX 256 /* top-level files listed; the template reads the rest */

static int root_fd = -1;   /* O_PATH descriptor of the root, for openat2 */
static char root_real[PATH_MAX]; /* realpath of the root, for the fallback and listing; static,
                                  * as nothing frees it when the plugin is unloaded */
static unsigned long long max_bytes = 1048576;

/* MIME types by extension: a table, so adding one is one line. */
static const struct {
    const char *ext, *mime;
} mimes[] = {
    {".txt", "text/plain"},        {".md", "text/markdown"},  {".json", "application/json"},
    {".c", "text/x-c"},            {".h", "text/x-c"},        {".html", "text/html"},
    {".css", "text/css"},          {".csv", "text/csv"},      {".xml", "application/xml"},
    {".png", "image/png"},         {".jpg", "image/jpeg"},    {".jpeg", "image/jpeg"},
    {".gif", "image/gif"},         {".pdf", "application/pdf"}, {".svg", "image/svg+xml"},
};

static const char *mime_of(const char *path)
{
    const char *dot = strrchr(path, '.');
    for (size_t i = 0; dot && i < sizeof mimes / sizeof mimes[0]; i++)
        if (strcasecmp(dot, mimes[i].ext) == 0)
            return mimes[i].mime;
    return NULL;
}

/*
** Open PATH (relative) beneath the root. openat2 with RESOLVE_BENEATH makes
** the kernel refuse, during the one lookup, any ".." or symbolic link
** (absolute or relative) whose resolution would leave the root: there is no
** window between a check and the open. RESOLVE_NO_MAGICLINKS refuses
** /proc-style links too. Kernels before 5.6 lack openat2 (ENOSYS): then the
** path's realpath must lie beneath the root's and the last component is
** opened with O_NOFOLLOW; a directory swapped for a link between the two
** steps could still escape there, which the log says.
*/
static int open_beneath(const char *path)
{
    int flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK; /* a FIFO must not block the open */
#if defined(HAVE_OPENAT2_H) && defined(SYS_openat2)
    struct open_how how = {.flags = (unsigned long long)flags,
                           .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS};
    long fd = syscall(SYS_openat2, root_fd, path, &how, sizeof how);
    if (fd >= 0 || errno != ENOSYS)
        return (int)fd;
#endif
    char *full = NULL, *real = NULL;
    int fd2 = -1;
    if (asprintf(&full, "%s/%s", root_real, path) < 0)
        return -1;
    real = realpath(full, NULL);
    size_t rl = strlen(root_real);
    if (!real) {
        /* errno from realpath: ENOENT and the like */
    } else if (strncmp(real, root_real, rl) != 0 || (real[rl] != '/' && real[rl] != '\0')) {
        errno = EXDEV; /* as openat2 says it */
    } else {
        fd2 = open(real, flags | O_NOFOLLOW);
    }
    free(real);
    free(full);
    return fd2;
}

/* Text when it is UTF-8 by the host's own rule, without NUL bytes (the
 * host would show other bytes as U+FFFD, changing the file), else a blob. */
static int is_text(const unsigned char *p, size_t n)
{
    return !memchr(p, 0, n) && th_utf8_valid((const char *)p, n);
}

/* Refuse what never names a file beneath the root, with a message that says why. */
static th_rc check_path(th_call *call, const char *path)
{
    if (!*path)
        return TH_ERR_NOT_FOUND;
    if (path[0] == '/')
        return th_call_error(call, "absolute path '%s' refused: paths are relative to the served directory", path),
               TH_ERR_VALUE;
    for (const char *seg = path; seg;) {
        const char *slash = strchr(seg, '/');
        size_t len = slash ? (size_t)(slash - seg) : strlen(seg);
        if (len == 2 && seg[0] == '.' && seg[1] == '.')
            return th_call_error(call, "path '%s' refused: '..' (path traversal) is not allowed", path), TH_ERR_VALUE;
        seg = slash ? slash + 1 : NULL;
    }
    return TH_OK;
}

static th_rc read_file(th_call *call, const char *uri, json_object *vars, void *user_data)
{
    json_object *v;
    if (root_fd < 0) {
        th_call_log(call, TH_LOG_WARNING, "the files plugin serves nothing: TOOLHOST_FILES_ROOT is not set");
        return TH_ERR_NOT_FOUND;
    }
    const char *path = user_data; /* a listed file's own path */
    if (!path)
        path = json_object_object_get_ex(vars, "path", &v) ? json_object_get_string(v) : "";
    th_rc rc = check_path(call, path);
    if (rc != TH_OK)
        return rc;
    int fd = open_beneath(path);
    if (fd < 0) {
        int e = errno;
        if (e == ENOENT || e == ENOTDIR)
            return TH_ERR_NOT_FOUND;
        if (e == EXDEV || e == ELOOP)
            return th_call_error(call, "path '%s' refused: it leads outside the served directory (a symbolic link "
                                       "or '..' that leaves it)", path), TH_ERR_VALUE;
        return th_call_error(call, "cannot open '%s': %s", path, strerror(e)), TH_ERR_TOOL;
    }
    struct stat st;
    unsigned char *buf = NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return th_call_error(call, "'%s' is not a regular file", path), TH_ERR_VALUE;
    }
    if ((unsigned long long)st.st_size > max_bytes) {
        close(fd);
        return th_call_error(call, "'%s' is %lld bytes, over the limit of %llu (TOOLHOST_FILES_MAX_BYTES)", path,
                             (long long)st.st_size, max_bytes), TH_ERR_VALUE;
    }
    size_t n = 0, cap = (size_t)st.st_size + 1;
    if (!(buf = malloc(cap))) {
        close(fd);
        return TH_ERR_NOMEM;
    }
    /* Read at most the limit even if the file grows meanwhile. */
    for (ssize_t got; n < cap && (got = read(fd, buf + n, cap - n)) != 0;) {
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            rc = th_call_error(call, "cannot read '%s': %s", path, strerror(errno)) == TH_OK ? TH_ERR_TOOL : TH_ERR_NOMEM;
            goto done;
        }
        n += (size_t)got;
    }
    close(fd);
    fd = -1;
    if (n > max_bytes) {
        th_call_error(call, "'%s' grew past the limit of %llu bytes while being read", path, max_bytes);
        rc = TH_ERR_VALUE;
        goto done;
    }
    const char *mime = mime_of(path);
    if (is_text(buf, n)) {
        buf[n] = '\0';
        rc = th_call_resource_text(call, uri, mime ? mime : "text/plain", (const char *)buf);
    } else {
        char *enc = th_base64_encode(buf, n);
        rc = enc ? th_call_resource_blob(call, uri, mime ? mime : "application/octet-stream", enc) : TH_ERR_NOMEM;
        free(enc);
    }
done:
    if (fd >= 0)
        close(fd);
    free(buf);
    return rc;
}

static void free_path(void *p)
{
    free(p);
}

/* NAME as a URI path segment into OUT (SIZE bytes): RFC 3986's unreserved
 * characters and the sub-delims a segment may hold stay; every other byte
 * (space, '%', '#', '?', braces, each byte of non-ASCII UTF-8) becomes %XX,
 * which the template decodes back to NAME. False if it does not fit. */
static bool uri_segment(const char *name, char *out, size_t size)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        bool keep = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                    strchr("-._~!$&'()*+,;=:@", *p) != NULL;
        if (o + (keep ? 1 : 3) >= size)
            return false;
        if (keep) {
            out[o++] = (char)*p;
        } else {
            out[o++] = '%';
            out[o++] = hex[*p >> 4];
            out[o++] = hex[*p & 15];
        }
    }
    out[o] = '\0';
    return true;
}

/* List the root's regular top-level files (sorted, at most LIST_MAX), each
 * as file:///NAME with NAME percent-encoded where a URI needs it, so a name
 * with a space or a '%' is listed too. */
static void list_files(th_server *server)
{
    struct dirent **names = NULL;
    int n = scandir(root_real, &names, NULL, alphasort);
    size_t listed = 0;
    for (int i = 0; i < n; i++) {
        const char *name = names[i]->d_name;
        struct stat st;
        char uri[3 * NAME_MAX + 16] = "file:///";
        if (listed < LIST_MAX && name[0] != '.' && fstatat(root_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            S_ISREG(st.st_mode) && uri_segment(name, uri + 8, sizeof uri - 8)) {
            char *path = strdup(name);
            th_resource r = {TH_RESOURCE_INIT, .uri = uri, .name = name, .mime_type = mime_of(name),
                             .size = (uint64_t)st.st_size, .read = read_file, .user_data = path,
                             .destroy = free_path};
            if (path && th_server_add_resource(server, &r) == TH_OK)
                listed++;
            else
                free(path);
        }
        free(names[i]);
    }
    free(names);
}

TH_REGISTER(files)
{
    const char *root = th_server_config(server, "root");
    const char *max = th_server_config(server, "max_bytes");
    bool have_root = root && *root;
    if (!have_root)
        th_server_log(server, TH_LOG_INFO, "setting files.root (TOOLHOST_FILES_ROOT) is not set: serving no files");
    if (max && *max) {
        char *end;
        unsigned long long m = strtoull(max, &end, 10);
        if (*end || m == 0) {
            th_server_log(server, TH_LOG_ERROR, "setting files.max_bytes (TOOLHOST_FILES_MAX_BYTES) '%s' is not a positive number", max);
            return NULL;
        }
        max_bytes = m;
    }
    if (have_root) {
        root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root_fd < 0 || !realpath(root, root_real)) {
            th_server_log(server, TH_LOG_ERROR, "setting files.root (TOOLHOST_FILES_ROOT) %s: %s", root, strerror(errno));
            return NULL;
        }
        /* Its worker's sandbox lets it read the root, and nothing more. */
        if (th_server_need(server, TH_NEED_READ, root_real) != TH_OK)
            return NULL;
        list_files(server);
    }
    static const th_resource files_template = {
        TH_RESOURCE_INIT,
        .uri_template = "file:///{path}",
        .name = "files",
        .title = "Files",
        .description = "Files beneath the served directory (TOOLHOST_FILES_ROOT), read-only",
        .read = read_file,
    };
    if (th_server_add_resource_template(server, &files_template) != TH_OK)
        return NULL;
    return th_server_added_only(server);
}
