/* SPDX-License-Identifier: MIT */
/*
** whereami.c: test plugin whereami.so. Its tool's description says the name
** the dynamic linker loaded it by (dladdr's dli_fname) and the inode its
** code is mapped from (/proc/self/maps), so a test sees whether the loader
** mapped the descriptor it judged or opened the path again.
*/
#define _GNU_SOURCE
#include <dlfcn.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>

#include <toolhost/plugin.h>

static char description[2 * PATH_MAX + 64];

static th_rc whereami(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    return th_call_text(call, description);
}

/* The inode of the mapping holding ADDR, or 0. */
static unsigned long long inode_of(uintptr_t addr)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[PATH_MAX + 128];
    unsigned long long inode = 0;
    while (f && !inode && fgets(line, sizeof line, f)) {
        uintmax_t from, to;
        unsigned long long ino;
        if (sscanf(line, "%jx-%jx %*s %*s %*s %llu", &from, &to, &ino) == 3 && addr >= from && addr < to)
            inode = ino;
    }
    if (f)
        fclose(f);
    return inode;
}

static th_tool tool = {
    TH_TOOL_INIT,
    .name = "whereami",
    .description = description,
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = whereami,
};

TH_REGISTER(whereami)
{
    (void)server;
    Dl_info info;
    if (!dladdr((void *)whereami, &info) || !info.dli_fname)
        return NULL;
    snprintf(description, sizeof description, "loaded as %s, inode %llu", info.dli_fname,
             inode_of((uintptr_t)whereami));
    return &tool;
}
