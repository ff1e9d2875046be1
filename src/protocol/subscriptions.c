/* SPDX-License-Identifier: MIT */
/*
** protocol/subscriptions.c: one session's subscriptions/listen streams: the
** table of subscription kinds, filter parsing and acknowledgment, and the
** notifications each event produces (every one carrying the subscription id).
*/
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/jsonrpc.h"
#include "protocol/subscriptions.h"

#define META_SUB_ID "io.modelcontextprotocol/subscriptionId"

/*
** The kinds of subscription this server honours, one row each: the
** SubscriptionFilter field, its type, the event and its notification.
** A K_URIS row (resourceSubscriptions) is matched against the event's URI.
** Prompts add promptsListChanged here when they exist.
*/
typedef enum { K_FLAG, K_URIS } kind_type;

static const struct kind {
    const char *field;
    kind_type type;
    th_sub_event event;
    const char *method;
} kinds[] = {
    {"toolsListChanged", K_FLAG, TH_SUB_TOOLS_LIST_CHANGED, "notifications/tools/list_changed"},
    {"resourcesListChanged", K_FLAG, TH_SUB_RESOURCES_LIST_CHANGED, "notifications/resources/list_changed"},
    {"resourceSubscriptions", K_URIS, TH_SUB_RESOURCE_UPDATED, "notifications/resources/updated"},
    {"promptsListChanged", K_FLAG, TH_SUB_PROMPTS_LIST_CHANGED, "notifications/prompts/list_changed"},
};
#define NKINDS (sizeof kinds / sizeof kinds[0])

typedef struct sub {
    json_object *id;      /* the listen request's id (own copy) */
    char *key;            /* th_rpc_id_key(id) */
    bool want[NKINDS];    /* per kind: K_FLAG asked for */
    json_object *uris[NKINDS]; /* per kind: K_URIS array, or NULL */
    struct sub *next;
} sub;

struct th_subs {
    sub *head;
    size_t n;
};

const char *th_subs_method(th_sub_event event)
{
    for (size_t i = 0; i < NKINDS; i++)
        if (kinds[i].event == event)
            return kinds[i].method;
    return NULL;
}

th_subs *th_subs_new(void)
{
    return calloc(1, sizeof(th_subs));
}

static void sub_free(sub *s)
{
    json_object_put(s->id);
    for (size_t i = 0; i < NKINDS; i++)
        json_object_put(s->uris[i]);
    free(s->key);
    free(s);
}

void th_subs_free(th_subs *subs)
{
    if (!subs)
        return;
    while (subs->head) {
        sub *s = subs->head;
        subs->head = s->next;
        sub_free(s);
    }
    free(subs);
}

size_t th_subs_count(const th_subs *subs)
{
    return subs ? subs->n : 0;
}

static sub *find(th_subs *subs, const char *key, sub ***link)
{
    for (sub **pp = &subs->head; *pp; pp = &(*pp)->next) {
        if (strcmp((*pp)->key, key) == 0) {
            if (link)
                *link = pp;
            return *pp;
        }
    }
    return NULL;
}

/* {"_meta": {subscriptionId: ID}} plus what the caller adds. */
static json_object *with_sub_meta(json_object *id)
{
    json_object *params = json_object_new_object(), *meta = json_object_new_object();
    if (!params || !meta) {
        json_object_put(params);
        json_object_put(meta);
        return NULL;
    }
    json_object *idc = NULL;
    if (json_object_deep_copy(id, &idc, NULL) != 0)
        idc = NULL;
    json_object_object_add(meta, META_SUB_ID, idc);
    json_object_object_add(params, "_meta", meta);
    return params;
}

static json_object *notification(const char *method, json_object *params)
{
    return params ? th_rpc_notification(method, params) : NULL;
}

json_object *th_subs_listen(th_subs *subs, json_object *id, json_object *filter, char *msg, size_t size)
{
    if (!json_object_is_type(filter, json_type_object)) {
        snprintf(msg, size, "Invalid params: subscriptions/listen needs an object \"notifications\"");
        return NULL;
    }
    /* Check every field before anything is kept. */
    for (size_t i = 0; i < NKINDS; i++) {
        json_object *v;
        if (!json_object_object_get_ex(filter, kinds[i].field, &v))
            continue;
        bool ok = kinds[i].type == K_FLAG ? json_object_is_type(v, json_type_boolean)
                                          : json_object_is_type(v, json_type_array);
        for (size_t k = 0; ok && kinds[i].type == K_URIS && k < json_object_array_length(v); k++)
            ok = json_object_is_type(json_object_array_get_idx(v, k), json_type_string);
        if (!ok) {
            snprintf(msg, size, "Invalid params: notifications.%s must be %s", kinds[i].field,
                     kinds[i].type == K_FLAG ? "a boolean" : "an array of URI strings");
            return NULL;
        }
    }
    char *key = th_rpc_id_key(id);
    if (!key) {
        snprintf(msg, size, "Invalid Request: subscriptions/listen needs a string or number id");
        return NULL;
    }
    if (find(subs, key, NULL)) {
        free(key);
        snprintf(msg, size, "Invalid Request: a subscription with this id is already open");
        return NULL;
    }
    sub *s = calloc(1, sizeof *s);
    json_object *ack = with_sub_meta(id), *agreed = json_object_new_object();
    if (!s || !ack || !agreed || json_object_deep_copy(id, &s->id, NULL) != 0) {
        free(s);
        free(key);
        json_object_put(ack);
        json_object_put(agreed);
        snprintf(msg, size, "Internal error: out of memory");
        return NULL;
    }
    s->key = key;
    for (size_t i = 0; i < NKINDS; i++) {
        json_object *v;
        if (!json_object_object_get_ex(filter, kinds[i].field, &v))
            continue;
        if (kinds[i].type == K_FLAG) {
            s->want[i] = json_object_get_boolean(v);
            if (s->want[i])
                json_object_object_add(agreed, kinds[i].field, json_object_new_boolean(1));
        } else if (json_object_deep_copy(v, &s->uris[i], NULL) == 0) {
            json_object_object_add(agreed, kinds[i].field, json_object_get(s->uris[i]));
        }
    }
    json_object_object_add(ack, "notifications", agreed);
    s->next = subs->head;
    subs->head = s;
    subs->n++;
    return notification("notifications/subscriptions/acknowledged", ack);
}

bool th_subs_cancel(th_subs *subs, const char *key)
{
    sub **link;
    sub *s = find(subs, key, &link);
    if (!s)
        return false;
    *link = s->next;
    subs->n--;
    sub_free(s);
    return true;
}

static bool has_uri(json_object *uris, const char *uri)
{
    for (size_t k = 0; uris && uri && k < json_object_array_length(uris); k++)
        if (strcmp(json_object_get_string(json_object_array_get_idx(uris, k)), uri) == 0)
            return true;
    return false;
}

void th_subs_event(th_subs *subs, th_sub_event event, const char *uri, json_object *out)
{
    for (size_t i = 0; i < NKINDS; i++) {
        if (kinds[i].event != event)
            continue;
        for (sub *s = subs->head; s; s = s->next) {
            bool match = kinds[i].type == K_FLAG ? s->want[i] : has_uri(s->uris[i], uri);
            if (!match)
                continue;
            json_object *params = with_sub_meta(s->id);
            if (params && uri && kinds[i].type == K_URIS)
                json_object_object_add(params, "uri", json_object_new_string(uri));
            json_object *n = notification(kinds[i].method, params);
            if (n)
                json_object_array_add(out, n);
        }
    }
}

void th_subs_close_all(th_subs *subs, json_object *out)
{
    while (subs->head) {
        sub *s = subs->head;
        subs->head = s->next;
        subs->n--;
        json_object *result = json_object_new_object(), *meta = with_sub_meta(s->id);
        json_object *m = NULL;
        if (meta && json_object_object_get_ex(meta, "_meta", &m))
            json_object_object_add(result, "_meta", json_object_get(m));
        json_object_put(meta);
        if (result)
            json_object_object_add(result, "resultType", json_object_new_string("complete"));
        json_object *resp = result ? th_rpc_result(s->id, result) : NULL;
        if (resp)
            json_object_array_add(out, resp);
        sub_free(s);
    }
}
