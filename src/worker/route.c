/* SPDX-License-Identifier: MIT */
/*
** worker/route.c: a worker's calls in flight, by id, and the routing of
** the frames it writes to them. The worker runs plugin code, so an id or a
** type is never trusted: only a call the host has in flight gets a frame.
*/
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "worker/route.h"

uint32_t th_route_add(th_route *rt, th_route_call *c, bool deferred)
{
    if (++rt->last_id == 0) { /* ids start again from 1: all are in use */
        rt->last_id = 1;
        rt->wrapped = true;
    }
    c->id = rt->last_id;
    c->deferred = deferred;
    c->linked = true;
    c->next = rt->calls;
    rt->calls = c;
    if (deferred)
        rt->ndeferred++;
    return c->id;
}

void th_route_remove(th_route *rt, th_route_call *c)
{
    if (!c->linked)
        return;
    for (th_route_call **pp = &rt->calls; *pp; pp = &(*pp)->next)
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    c->linked = false;
    c->next = NULL;
    if (c->deferred)
        rt->ndeferred--;
}

void th_route_hand_over(th_route *rt, th_route_call *from, th_route_call *to)
{
    for (th_route_call **pp = &rt->calls; *pp; pp = &(*pp)->next)
        if (*pp == from) {
            to->id = from->id;
            to->deferred = true;
            to->linked = true;
            to->next = from->next;
            *pp = to;
            from->linked = false;
            from->next = NULL;
            rt->ndeferred++;
            return;
        }
}

/* The frames a worker writes for a call, and what each does there. Any
 * other type with a call's id is the worker's fault, not a call's frame. */
static const struct {
    uint8_t type;
    th_route_use use;
} uses[] = {
    {TH_IPC_PROGRESS, TH_USE_APPLY},
    {TH_IPC_LOG, TH_USE_APPLY},
    {TH_IPC_ASK, TH_USE_ASK},
    {TH_IPC_RESULT, TH_USE_FINAL},
    {TH_IPC_FAILED, TH_USE_FINAL},
};

th_route_use th_route_use_of(uint8_t type)
{
    for (size_t i = 0; i < sizeof uses / sizeof uses[0]; i++)
        if (uses[i].type == type)
            return uses[i].use;
    return TH_USE_NONE;
}

static const char *const type_names[] = {
    [TH_IPC_HELLO] = "HELLO",     [TH_IPC_CALL] = "CALL",       [TH_IPC_CANCEL] = "CANCEL",
    [TH_IPC_PROGRESS] = "PROGRESS", [TH_IPC_LOG] = "LOG",       [TH_IPC_RESULT] = "RESULT",
    [TH_IPC_READY] = "READY",     [TH_IPC_LOADING] = "LOADING", [TH_IPC_PLUGIN] = "PLUGIN",
    [TH_IPC_DONE] = "DONE",       [TH_IPC_LOGGED] = "LOGGED",   [TH_IPC_ASK] = "ASK",
    [TH_IPC_ANSWER] = "ANSWER",   [TH_IPC_READ] = "READ",       [TH_IPC_UPDATED] = "UPDATED",
    [TH_IPC_FAILED] = "FAILED",   [TH_IPC_PROMPT] = "PROMPT",   [TH_IPC_COMPLETE] = "COMPLETE",
};

const char *th_route_type_name(uint8_t type)
{
    return type < sizeof type_names / sizeof type_names[0] ? type_names[type] : NULL;
}

void th_route_ready(th_route *rt, th_route_call *c)
{
    if (c->queued)
        return;
    c->queued = true;
    c->ready_next = rt->ready;
    rt->ready = c;
}

th_route_call *th_route_next_ready(th_route *rt)
{
    th_route_call *c = rt->ready;
    if (c) {
        rt->ready = c->ready_next;
        c->ready_next = NULL;
    }
    return c;
}

th_route_verdict th_route_frame(th_route *rt, const th_ipc_frame *f, th_route_call **to)
{
    *to = NULL;
    if (f->type == TH_IPC_UPDATED) /* from a plugin's own thread, for no call */
        return TH_ROUTE_UPDATED;
    th_route_use use = th_route_use_of(f->type);
    /* Ids are given out in order from 1: one past the last was never a
     * call's, until they wrap. */
    if (use == TH_USE_NONE || f->id == 0 || (!rt->wrapped && f->id > rt->last_id))
        return TH_ROUTE_STRAY;
    th_route_call *c = rt->calls;
    while (c && c->id != f->id)
        c = c->next;
    if (!c)
        return TH_ROUTE_LATE;
    th_qframe *q = malloc(sizeof *q + f->len + 1);
    if (!q)
        return TH_ROUTE_NOMEM;
    q->type = f->type;
    q->len = f->len;
    q->next = NULL;
    memcpy(q->payload, f->payload, f->len);
    q->payload[f->len] = '\0';
    if (c->tail)
        c->tail->next = q;
    else
        c->head = q;
    c->tail = q;
    *to = c;
    if (use == TH_USE_FINAL) { /* its last frame: an ASK or a RESULT after it is late */
        th_route_remove(rt, c);
        c->final_seen = true;
    }
    if (!c->deferred)
        return TH_ROUTE_WAITER;
    th_route_ready(rt, c);
    return TH_ROUTE_READY;
}

th_qframe *th_route_pop(th_route_call *c)
{
    th_qframe *q = c->head;
    if (q) {
        c->head = q->next;
        if (!c->head)
            c->tail = NULL;
        q->next = NULL;
    }
    return q;
}

void th_route_clear(th_route_call *c)
{
    th_qframe *q;
    while ((q = th_route_pop(c)) != NULL)
        free(q);
}

void th_route_orphan(th_route *rt)
{
    for (th_route_call **pp = &rt->calls; *pp;) {
        th_route_call *c = *pp;
        if (!c->deferred) {
            pp = &c->next;
            continue;
        }
        th_route_remove(rt, c); /* *pp is now its successor */
        th_route_ready(rt, c);
    }
}
