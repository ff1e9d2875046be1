/* SPDX-License-Identifier: MIT */
/*
** loop_register.c: hostile plugin whose register function never returns.
** SIGTERM must still end the host promptly, naming this plugin.
*/
#include <stdio.h>
#include <unistd.h>

#include <toolhost/plugin.h>

TH_REGISTER(loop_register)
{
    (void)server;
    fprintf(stderr, "loop_register: looping\n");
    for (;;)
        sleep(1);
    return NULL;
}
