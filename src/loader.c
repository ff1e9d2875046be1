/*
** loader.c: the plugin loader and the th_server handle plugins register
** through. The entry symbol comes from the file name (NAME.so ->
** register_NAME_tool); every failure names the file, the symbol or tool, and
** the rule, and closes the handle unless a tool from it was registered.
*/
#include "config.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "loader.h"
#include "log.h"
#include "signals.h"

/*
** Every function plugin.h declares, referenced here so that any program that
** links the loader (toolhost, the tests) also links, and with -export-dynamic
** exports, the whole API the plugins it loads will resolve against.
*/
__attribute__((used)) static const void *const plugin_api[] = {
    (const void *)th_server_add_tool,  (const void *)th_server_errmsg,
    (const void *)th_call_text,        (const void *)th_call_textf,
    (const void *)th_call_image,       (const void *)th_call_audio,
    (const void *)th_call_resource_link, (const void *)th_call_resource_text,
    (const void *)th_call_resource_blob, (const void *)th_call_content,
    (const void *)th_call_structured,  (const void *)th_call_error,
    (const void *)th_call_progress,    (const void *)th_call_log,
    (const void *)th_call_cancelled,   (const void *)th_call_tool_name,
};

/* The registration-time handle passed to register_NAME_tool(). */
struct th_server {
    th_registry *reg;
    const char *path;     /* plugin file, for messages */
    th_load_stats *stats;
    size_t added;         /* tools this plugin registered so far */
    th_err err;           /* last th_server_add_tool() outcome */
};

th_rc th_server_add_tool(th_server *server, const th_tool *tool)
{
    if (!server)
        return TH_ERR_MISUSE;
    th_rc rc = th_registry_add(server->reg, tool, server->path, &server->err);
    if (rc == TH_OK) {
        server->added++;
        server->stats->tools_loaded++;
        th_err_clear(&server->err);
    } else {
        server->stats->tools_refused++;
        th_log(TH_LOG_ERROR, "plugin %s: tool '%s' refused: %s [%s]", server->path,
               (tool && rc != TH_ERR_ABI && tool->name) ? tool->name : "?", server->err.msg, th_rc_name(rc));
    }
    return rc;
}

const char *th_server_errmsg(const th_server *server)
{
    return server ? server->err.msg : "";
}

size_t th_load_stats_refusals(const th_load_stats *s)
{
    return s->plugins_refused + s->tools_refused + s->dirs_refused;
}

/* NAME from ".../NAME.so", or false when the file is not a NAME.so. */
static bool plugin_name(const char *path, char *name, size_t size)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t len = strlen(base);
    if (len <= 3 || strcmp(base + len - 3, ".so") != 0 || len - 3 >= size)
        return false;
    memcpy(name, base, len - 3);
    name[len - 3] = '\0';
    return true;
}

/* Can NAME be spelled inside a C identifier? Otherwise there is no symbol to
 * look up. */
static bool identifier_ok(const char *name)
{
    for (const char *p = name; *p; p++) {
        char c = *p;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
            return false;
    }
    return *name != '\0';
}

static th_rc refuse(th_load_stats *stats, const char *path, const char *fmt, const char *a, const char *b)
{
    char msg[1536];
    snprintf(msg, sizeof msg, fmt, a, b);
    th_log(TH_LOG_ERROR, "plugin %s refused: %s", path, msg);
    stats->plugins_refused++;
    return TH_ERR_VALUE;
}

/* Does a registered tool still use USER_DATA? A plugin that returns a
 * descriptor it also registered itself gets a duplicate refusal, and its
 * user_data must then live on with the registered copy. */
static bool user_data_in_use(const th_registry *reg, const void *user_data)
{
    for (size_t i = 0; user_data && i < th_registry_count(reg); i++)
        if (th_registry_at(reg, i)->user_data == user_data)
            return true;
    return false;
}

th_rc th_loader_load_file(th_registry *reg, const char *path, const th_load_opts *opts, th_load_stats *stats)
{
    char name[256], symbol[300];
    th_rc rc;
    struct stat st;

    if (!plugin_name(path, name, sizeof name))
        return refuse(stats, path, "file name must be NAME.so%s%s", "", "");
    if (!identifier_ok(name))
        return refuse(stats, path, "'%s' cannot be part of the entry point's name register_%s_tool", name, name);
    if (lstat(path, &st) != 0)
        return refuse(stats, path, "cannot stat: %s%s", strerror(errno), "");
    if (S_ISLNK(st.st_mode)) {
        if (!opts || !opts->follow_symlinks)
            return refuse(stats, path, "is a symbolic link; not followed (use --follow-symlinks)%s%s", "", "");
        if (stat(path, &st) != 0)
            return refuse(stats, path, "dangling symbolic link: %s%s", strerror(errno), "");
    }
    if (!S_ISREG(st.st_mode))
        return refuse(stats, path, "not a regular file%s%s", "", "");

    /* dlopen() searches the library path for a name without a slash; the
     * file lstat() just checked is in the working directory. */
    char here[sizeof name + 8];
    const char *file = path;
    if (!strchr(path, '/')) {
        snprintf(here, sizeof here, "./%s", path);
        file = here;
    }
    void *handle = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (!handle)
        return refuse(stats, path, "cannot load shared object: %s (check its dependencies with ldd(1))%s",
                      dlerror(), "");

    snprintf(symbol, sizeof symbol, "register_%s_tool", name);
    dlerror();
    th_register_fn entry;
    *(void **)&entry = dlsym(handle, symbol);
    if (!entry) {
        const char *why = dlerror();
        refuse(stats, path, "no entry point [%s]: %s", symbol, why ? why : "symbol is NULL");
        dlclose(handle);
        return TH_ERR_TYPE;
    }

    th_server server = {.reg = reg, .path = path, .stats = stats};
    const th_tool *desc = entry(&server);
    th_tool t;
    th_err err;
    th_err_clear(&err);
    if (!desc) {
        rc = th_err_set(&err, TH_ERR_TYPE, "%s() returned NULL instead of a tool descriptor", symbol);
    } else if ((rc = th_tool_normalize(desc, &t, &err)) != TH_OK) {
        /* ABI first: nothing else in the descriptor can be trusted. */
    } else if (t.name && strcmp(t.name, name) != 0) {
        rc = th_err_set(&err, TH_ERR_VALUE,
                        "tool name '%.60s' does not match the plugin file: %s() must return the tool named '%s'",
                        t.name, symbol, name);
    } else {
        rc = th_registry_add(reg, &t, path, &err);
    }

    if (rc == TH_OK) {
        server.added++;
        stats->tools_loaded++;
        stats->plugins_loaded++;
    } else {
        th_log(TH_LOG_ERROR, "plugin %s refused: tool '%s': %s [%s]", path, name, err.msg, th_rc_name(rc));
        stats->plugins_refused++;
        /* The plugin never learns that its returned descriptor was refused,
         * so user_data is released here (only once the ABI check passed:
         * before that, no field can be trusted). */
        if (desc && rc != TH_ERR_ABI && t.destroy && !user_data_in_use(reg, t.user_data))
            t.destroy(t.user_data);
    }

    /* Handles stay open while any of their tools is registered. */
    if (server.added == 0) {
        dlclose(handle);
    } else if (th_registry_adopt_handle(reg, handle) != TH_OK) {
        th_log(TH_LOG_CRITICAL, "out of memory keeping %s open", path);
        return TH_ERR_NOMEM; /* leaking the handle beats unloading live code */
    }
    return rc;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

th_rc th_loader_load_dir(th_registry *reg, const char *dir, const th_load_opts *opts, th_load_stats *stats)
{
    DIR *d = opendir(dir);
    if (!d) {
        th_log(TH_LOG_ERROR, "plugin directory %s: cannot open: %s", dir, strerror(errno));
        stats->dirs_refused++;
        return TH_ERR_IO;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    th_rc rc = TH_OK;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        size_t len = strlen(de->d_name);
        if (len <= 3 || strcmp(de->d_name + len - 3, ".so") != 0)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 32;
            char **p = realloc(names, cap * sizeof *p);
            if (!p) {
                rc = TH_ERR_NOMEM;
                goto cleanup;
            }
            names = p;
        }
        if (!(names[n] = strdup(de->d_name))) {
            rc = TH_ERR_NOMEM;
            goto cleanup;
        }
        n++;
    }
    if (n > 1) /* qsort's base must not be NULL, even for 0 elements */
        qsort(names, n, sizeof *names, cmp_names);
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(dir) + strlen(names[i]) + 2;
        char *path = malloc(len);
        if (!path) {
            rc = TH_ERR_NOMEM;
            goto cleanup;
        }
        snprintf(path, len, "%s/%s", dir, names[i]);
        th_signals_loading(path); /* a stop signal names it from now on */
        th_loader_load_file(reg, path, opts, stats);
        th_signals_loading(NULL);
        free(path);
    }

cleanup:
    if (rc == TH_ERR_NOMEM)
        th_log(TH_LOG_CRITICAL, "plugin directory %s: out of memory", dir);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    closedir(d);
    return rc;
}
