/* SPDX-License-Identifier: MIT */
/*
** dlopen_loop.c: the bare reference for toolhost's start-up with many
** plugins: list DIR, and for every NAME.so dlopen() it the way the host does
** (RTLD_NOW | RTLD_LOCAL), dlsym() register_NAME_tool, call it and keep the
** tool's name in a table. No checks, no schema, no process; then exit.
** The plugins' references to the host (th_call_*) resolve against the stubs
** below, exported with -rdynamic; json-c comes from our own link.
*/
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <toolhost/plugin.h>

/* Stubs for what a plugin may reference; never called, only resolved. */
th_rc th_call_text(th_call *call, const char *text)
{
    (void)call;
    (void)text;
    return TH_OK;
}

th_rc th_call_error(th_call *call, const char *fmt, ...)
{
    (void)call;
    (void)fmt;
    return TH_OK;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: dlopen_loop DIR\n");
        return 2;
    }
    /* A reference to json-c, so that an --as-needed link keeps the library
     * the plugins' own references resolve against. */
    if (!json_c_version())
        return 1;
    DIR *d = opendir(argv[1]);
    if (!d) {
        perror(argv[1]);
        return 1;
    }
    size_t n = 0, cap = 0;
    char **names = NULL;
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 3, ".so") != 0)
            continue;
        char path[4096], sym[300];
        snprintf(path, sizeof path, "%s/%s", argv[1], e->d_name);
        snprintf(sym, sizeof sym, "register_%.*s_tool", (int)(len - 3), e->d_name);
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        th_register_fn reg = h ? (th_register_fn)(uintptr_t)dlsym(h, sym) : NULL;
        const th_tool *t = reg ? reg(NULL) : NULL;
        if (!t || !t->name) {
            fprintf(stderr, "dlopen_loop: %s: %s\n", path, h ? "no tool" : dlerror());
            rc = 1;
            continue;
        }
        if (n == cap) {
            cap = cap * 2 + 64;
            char **grown = realloc(names, cap * sizeof *names);
            if (!grown) {
                rc = 1;
                break;
            }
            names = grown;
        }
        names[n++] = strdup(t->name);
    }
    closedir(d);
    printf("dlopen_loop: %zu tools\n", n);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return rc;
}
