/* SPDX-License-Identifier: MIT */
/*
** forge.h: what the forging hostile plugins (forge_result.c, forge_ask.c)
** share: telling a worker from the host, and writing a frame of their own
** on the worker's frame pipe, as plugin code in a worker can.
*/
#ifndef TH_TEST_FORGE_H
#define TH_TEST_FORGE_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "worker/ipc.h"
#include "worker/spawn.h"

/* Whether this process is a worker (in the host, fd 4 is the host's). */
static int in_worker(void)
{
    char cmd[4096];
    FILE *f = fopen("/proc/self/cmdline", "r");
    size_t n = f ? fread(cmd, 1, sizeof cmd - 1, f) : 0;
    if (f)
        fclose(f);
    cmd[n] = '\0';
    for (size_t i = 0; i < n; i += strlen(cmd + i) + 1)
        if (strcmp(cmd + i, TH_WORKER_ARG) == 0)
            return 1;
    return 0;
}

/* One frame of TYPE for call ID carrying PAYLOAD, in one write (under
 * PIPE_BUF: the worker's own writes cannot cut into it). 0, or -1. */
static int forge(uint8_t type, uint32_t id, const char *payload)
{
    unsigned char frame[512];
    uint32_t len = (uint32_t)strlen(payload);
    if (TH_IPC_HEADER + len > sizeof frame)
        return -1;
    memcpy(frame, &len, 4);
    frame[4] = type;
    memcpy(frame + 5, &id, 4);
    memcpy(frame + TH_IPC_HEADER, payload, len);
    return write(TH_WORKER_OUT_FD, frame, TH_IPC_HEADER + len) == (ssize_t)(TH_IPC_HEADER + len) ? 0 : -1;
}

#endif
