/* SPDX-License-Identifier: MIT */
/*
** base/handle.c: the handle table. Slots live in chunks that are allocated
** on demand and never freed or moved, so a stale handle always reads valid
** memory; a slot's generation and its count of threads inside share one
** atomic word, so resolving a handle is one compare-and-swap and closing one
** waits only for the threads already inside. Freed slots are reused oldest
** first, which keeps an ended handle's name on record as long as possible.
*/
#include "config.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/handle.h"

#define CHUNK_SLOTS 256
#define MAX_CHUNKS 4096 /* 1,048,576 objects open at once */
#define INDEX_BITS 20
#define INDEX_MASK ((1u << INDEX_BITS) - 1)
#define GEN_SHIFT (INDEX_BITS + 1)
/* The generation bits a handle has room for (all 32 on 64-bit hosts). */
#define GEN_MASK ((uint32_t)(UINTPTR_MAX >> GEN_SHIFT))
#define INSIDE_MASK 0xffffffffu
#define NAME_LEN 96
#define CLOSED_KEPT 4

typedef struct slot {
    _Atomic uint64_t state; /* generation << 32 | threads inside */
    void *obj;              /* written before the generation is published */
    int kind;
    uint32_t next_free;     /* index + 1 of the next free slot; under lock */
    char name[NAME_LEN];    /* the open (or last) owner; under lock */
    /* The last closed handles, for the misuse message (a kept handle is
     * typically used after its slot served a few more); under lock. */
    struct closed {
        uint32_t gen;
        bool known, warned;
        char name[NAME_LEN];
    } closed[CLOSED_KEPT];
    unsigned closed_next;
} slot;

static slot *_Atomic chunks[MAX_CHUNKS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t nslots;                  /* slots ever handed out */
static uint32_t free_head, free_tail;    /* FIFO of index + 1; 0: empty */
static bool old_warned;                  /* "(ended long ago)" was reported */

static slot *slot_at(uint32_t idx)
{
    slot *c = atomic_load_explicit(&chunks[idx / CHUNK_SLOTS], memory_order_acquire);
    return c ? &c[idx % CHUNK_SLOTS] : NULL;
}

static uint32_t gen_of(uint64_t state)
{
    return (uint32_t)(state >> 32);
}

static th_handle make(uint32_t idx, uint32_t gen)
{
    return ((th_handle)(gen & GEN_MASK) << GEN_SHIFT) | ((th_handle)idx << 1) | 1u;
}

/* A free slot's index, or -1. Under lock. */
static long take_slot(void)
{
    if (free_head) {
        uint32_t idx = free_head - 1;
        slot *s = slot_at(idx);
        free_head = s->next_free;
        if (!free_head)
            free_tail = 0;
        return idx;
    }
    if (nslots >= (uint32_t)MAX_CHUNKS * CHUNK_SLOTS)
        return -1;
    uint32_t c = nslots / CHUNK_SLOTS;
    if (!atomic_load_explicit(&chunks[c], memory_order_relaxed)) {
        slot *fresh = calloc(CHUNK_SLOTS, sizeof *fresh);
        if (!fresh)
            return -1;
        atomic_store_explicit(&chunks[c], fresh, memory_order_release);
    }
    return nslots++;
}

th_handle th_handle_open(void *obj, int kind, const char *name)
{
    pthread_mutex_lock(&lock);
    long idx = take_slot();
    if (idx < 0) {
        pthread_mutex_unlock(&lock);
        return 0;
    }
    slot *s = slot_at((uint32_t)idx);
    s->obj = obj;
    s->kind = kind;
    /* Not strncpy, which pads the whole field with zeros on every open. */
    size_t n = name ? strnlen(name, NAME_LEN - 1) : 0;
    memcpy(s->name, name ? name : "", n);
    s->name[n] = '\0';
    /* The generation was advanced when the slot was last closed; storing
     * it again publishes obj and kind to whoever enters with it. */
    uint64_t st = atomic_load_explicit(&s->state, memory_order_relaxed);
    atomic_store_explicit(&s->state, st, memory_order_release);
    pthread_mutex_unlock(&lock);
    return make((uint32_t)idx, gen_of(st));
}

void *th_handle_enter(th_handle h, int kind)
{
    if (!(h & 1u))
        return NULL;
    slot *s = slot_at((uint32_t)(h >> 1) & INDEX_MASK);
    if (!s)
        return NULL;
    uint32_t want = (uint32_t)(h >> GEN_SHIFT);
    uint64_t st = atomic_load_explicit(&s->state, memory_order_relaxed);
    do {
        if ((gen_of(st) & GEN_MASK) != want || (st & INSIDE_MASK) == INSIDE_MASK)
            return NULL;
    } while (!atomic_compare_exchange_weak_explicit(&s->state, &st, st + 1, memory_order_acquire,
                                                    memory_order_relaxed));
    /* A made-up handle can match a free slot's next generation: it names
     * no object then. */
    if (s->kind != kind || !s->obj) {
        th_handle_leave(h);
        return NULL;
    }
    return s->obj;
}

void th_handle_leave(th_handle h)
{
    slot *s = slot_at((uint32_t)(h >> 1) & INDEX_MASK);
    atomic_fetch_sub_explicit(&s->state, 1, memory_order_release);
}

void th_handle_close(th_handle h)
{
    if (!(h & 1u))
        return;
    uint32_t idx = (uint32_t)(h >> 1) & INDEX_MASK;
    slot *s = slot_at(idx);
    /* A new generation: every later enter fails. Those already inside
     * finish what they do with the object first. */
    uint64_t st = atomic_fetch_add_explicit(&s->state, (uint64_t)1 << 32, memory_order_acq_rel);
    while (atomic_load_explicit(&s->state, memory_order_acquire) & INSIDE_MASK)
        sched_yield();
    pthread_mutex_lock(&lock);
    s->obj = NULL;
    struct closed *c = &s->closed[s->closed_next++ % CLOSED_KEPT];
    c->gen = gen_of(st);
    c->known = true;
    c->warned = false;
    memcpy(c->name, s->name, NAME_LEN);
    s->next_free = 0;
    if (free_tail)
        slot_at(free_tail - 1)->next_free = idx + 1;
    else
        free_head = idx + 1;
    free_tail = idx + 1;
    pthread_mutex_unlock(&lock);
}

bool th_handle_first_misuse(th_handle h, char *name, size_t size)
{
    slot *s = (h & 1u) ? slot_at((uint32_t)(h >> 1) & INDEX_MASK) : NULL;
    bool first = false;
    pthread_mutex_lock(&lock);
    struct closed *c = NULL;
    for (int i = 0; s && i < CLOSED_KEPT && !c; i++)
        if (s->closed[i].known && (s->closed[i].gen & GEN_MASK) == (uint32_t)(h >> GEN_SHIFT))
            c = &s->closed[i];
    if (c) {
        first = !c->warned;
        c->warned = true;
        strncpy(name, c->name, size - 1);
    } else {
        first = !old_warned;
        old_warned = true;
        strncpy(name, "(ended long ago)", size - 1);
    }
    name[size - 1] = '\0';
    pthread_mutex_unlock(&lock);
    return first;
}
