/* SPDX-License-Identifier: MIT */
/*
** base/scratch.c: the per-thread scratch buffer (scratch.h). A pthread key
** frees it when its thread ends: pool threads come and go, and a buffer
** left in an ended thread's storage would leak.
*/
#include "config.h"

#include <pthread.h>
#include <stdlib.h>

#include "base/scratch.h"

/* Kept past this many bytes only until th_scratch_done. */
#define SCRATCH_KEEP (64u << 10)

static _Thread_local th_buf *mine;
static pthread_key_t key;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool key_ok;

static void scratch_free(void *p)
{
    th_buf *b = p;
    free(b->data);
    free(b);
    mine = NULL;
}

static void key_make(void)
{
    key_ok = pthread_key_create(&key, scratch_free) == 0;
}

th_buf *th_scratch(void)
{
    if (mine) {
        mine->len = 0;
        return mine;
    }
    pthread_once(&once, key_make);
    th_buf *b = calloc(1, sizeof *b);
    if (!b || !key_ok || pthread_setspecific(key, b) != 0) {
        free(b);
        return NULL;
    }
    return mine = b;
}

void th_scratch_done(th_buf *b)
{
    if (b && b->cap > SCRATCH_KEEP) {
        free(b->data);
        *b = (th_buf){0};
    }
}
