/* SPDX-License-Identifier: MIT */
/*
** protocol/mcpasks.c: a legacy session's own requests to its client, and
** the table of handlers waiting for their responses (the session's side of
** asking; the handler's is call/ask.c). Request ids are strings
** "th-ask-N@ORIGIN": N is unique in the session, ORIGIN the key of the
** tools/call being served, so an HTTP transport can put the request on that
** call's SSE stream without knowing the protocol.
*/
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/util.h"
#include "protocol/mcpasks.h"
#include "protocol/jsonrpc.h"

#define ID_PREFIX "th-ask-"
#define POLL_MS 50 /* how often a waiter looks at its stop condition */

typedef struct waiter {
    char *id;
    json_object *response; /* set by deliver */
    struct waiter *next;
} waiter;

struct th_asks {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    waiter *waiting;
    unsigned long long next;
    bool closed;
};

th_asks *th_asks_new(void)
{
    th_asks *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    pthread_mutex_init(&a->lock, NULL);
    pthread_cond_init(&a->cond, NULL);
    return a;
}

void th_asks_close(th_asks *a)
{
    if (!a)
        return;
    pthread_mutex_lock(&a->lock);
    a->closed = true;
    pthread_cond_broadcast(&a->cond);
    pthread_mutex_unlock(&a->lock);
}

void th_asks_free(th_asks *a)
{
    if (!a)
        return;
    pthread_mutex_destroy(&a->lock);
    pthread_cond_destroy(&a->cond);
    free(a);
}

char *th_asks_origin(json_object *msg)
{
    json_object *id, *method;
    if (!th_rpc_member(msg, "method", &method) || !th_rpc_member(msg, "id", &id) ||
        !json_object_is_type(id, json_type_string))
        return NULL;
    const char *s = json_object_get_string(id), *at = strchr(s, '@');
    if (strncmp(s, ID_PREFIX, strlen(ID_PREFIX)) != 0 || !at)
        return NULL;
    return strdup(at + 1);
}

static void unlink_waiter(th_asks *a, waiter *w)
{
    for (waiter **pp = &a->waiting; *pp; pp = &(*pp)->next)
        if (*pp == w) {
            *pp = w->next;
            break;
        }
}

th_rc th_asks_request(th_asks *a, void (*send)(void *ctx, json_object *msg), void *ctx, const char *origin,
                      const char *method, json_object *params, bool (*stop)(void *stop_ctx), void *stop_ctx,
                      json_object **result)
{
    *result = NULL;
    waiter w = {0};
    th_buf id = {0};
    pthread_mutex_lock(&a->lock);
    unsigned long long n = ++a->next;
    bool closed = a->closed;
    pthread_mutex_unlock(&a->lock);
    if (closed) {
        json_object_put(params);
        return TH_ERR_IO;
    }
    if (!th_buf_printf(&id, ID_PREFIX "%llu@%s", n, origin ? origin : "")) {
        json_object_put(params);
        return TH_ERR_NOMEM;
    }
    w.id = id.data;
    json_object *idobj = json_object_new_string(w.id);
    json_object *msg = json_object_new_object();
    if (!idobj || !msg) {
        json_object_put(idobj);
        json_object_put(msg);
        json_object_put(params);
        free(w.id);
        return TH_ERR_NOMEM;
    }
    json_object_object_add(msg, "jsonrpc", json_object_new_string("2.0"));
    json_object_object_add(msg, "id", idobj);
    json_object_object_add(msg, "method", json_object_new_string(method));
    json_object_object_add(msg, "params", params);

    pthread_mutex_lock(&a->lock);
    w.next = a->waiting;
    a->waiting = &w;
    pthread_mutex_unlock(&a->lock);
    send(ctx, msg); /* before waiting: the response may come at once */

    th_rc rc = TH_OK;
    pthread_mutex_lock(&a->lock);
    while (!w.response) {
        if (a->closed) {
            rc = TH_ERR_IO;
            break;
        }
        pthread_mutex_unlock(&a->lock);
        bool stopped = stop && stop(stop_ctx);
        pthread_mutex_lock(&a->lock);
        if (stopped && !w.response) {
            rc = TH_ERR_CANCELLED;
            break;
        }
        if (!w.response)
            th_cond_wait_until(&a->cond, &a->lock, th_now_ms() + POLL_MS);
    }
    unlink_waiter(a, &w);
    pthread_mutex_unlock(&a->lock);

    json_object *v, *m;
    if (rc == TH_OK && json_object_object_get_ex(w.response, "result", &v) &&
        json_object_is_type(v, json_type_object)) {
        *result = json_object_get(v);
    } else if (rc == TH_OK) {
        const char *why = json_object_object_get_ex(w.response, "error", &v) &&
                                  json_object_object_get_ex(v, "message", &m)
                              ? json_object_get_string(m)
                              : "no result object";
        th_log(TH_LOG_INFO, "%s (%s): the client answered with an error: %.300s", method, w.id, why);
        rc = TH_ERR_IO;
    }
    json_object_put(w.response);
    free(w.id);
    return rc;
}

bool th_asks_deliver(th_asks *a, json_object *msg)
{
    json_object *id;
    if (!a || !json_object_object_get_ex(msg, "id", &id) || !json_object_is_type(id, json_type_string))
        return false;
    const char *key = json_object_get_string(id);
    bool taken = false;
    pthread_mutex_lock(&a->lock);
    for (waiter *w = a->waiting; w; w = w->next)
        if (!w->response && strcmp(w->id, key) == 0) {
            /* A copy: the message belongs to the reader's thread. */
            if (json_object_deep_copy(msg, &w->response, NULL) == 0)
                taken = true;
            pthread_cond_broadcast(&a->cond);
            break;
        }
    pthread_mutex_unlock(&a->lock);
    return taken;
}
