/* SPDX-License-Identifier: MIT */
/*
** call/ask.c: th_call_ask and its helpers, the handler's side of asking the
** client (elicitation, sampling, roots; a legacy session's side is
** protocol/mcpasks.c). It checks the request and hands it
** to the call's ask hook; how it reaches the client (a blocking JSON-RPC
** request, an InputRequiredResult, the worker IPC) is the hook's business.
*/
#include "config.h"

#include <string.h>

#include "base/jsontree.h"
#include "call/ask.h"
#include "call/callctx.h"

static const struct {
    const char *method;
    const char *capability;
    unsigned kind;
} kinds[] = {
    {"elicitation/create", "elicitation", TH_ASK_ELICITATION},
    {"sampling/createMessage", "sampling", TH_ASK_SAMPLING},
    {"roots/list", "roots", TH_ASK_ROOTS},
};
#define NKINDS (sizeof kinds / sizeof kinds[0])

unsigned th_ask_kind_of(const char *method)
{
    for (size_t i = 0; method && i < NKINDS; i++)
        if (strcmp(kinds[i].method, method) == 0)
            return kinds[i].kind;
    return 0;
}

const char *th_ask_capability(unsigned kind)
{
    for (size_t i = 0; i < NKINDS; i++)
        if (kinds[i].kind == kind)
            return kinds[i].capability;
    return NULL;
}

unsigned th_ask_caps_of(json_object *capabilities)
{
    unsigned caps = 0;
    json_object *v;
    if (!capabilities || !json_object_is_type(capabilities, json_type_object))
        return 0;
    for (size_t i = 0; i < NKINDS; i++)
        if (th_json_get(capabilities, kinds[i].capability, &v) && /* a walk: capabilities are few */
            json_object_is_type(v, json_type_object))
            caps |= kinds[i].kind;
    return caps;
}

bool th_ask_key_ok(const char *key)
{
    size_t n = key ? strlen(key) : 0;
    if (n == 0 || n > 64)
        return false;
    for (size_t i = 0; i < n; i++) {
        char ch = key[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
              ch == '.' || ch == '-'))
            return false;
    }
    return true;
}

bool th_call_client_can(const th_call *call, unsigned kinds_wanted)
{
    th_call *c;
    const th_call_hooks *h = th_call_hooks_of((th_call *)call, &c, __func__);
    bool can = h && kinds_wanted && (h->client_caps & kinds_wanted) == kinds_wanted;
    th_call_release(call, c);
    return can;
}

th_rc th_call_ask(th_call *call, const char *key, const char *method, json_object *params, json_object **result)
{
    if (result)
        *result = NULL;
    if (!call || !result || !key || !method) {
        json_object_put(params);
        return TH_ERR_MISUSE;
    }
    th_call *c;
    const th_call_hooks *h = th_call_hooks_of(call, &c, __func__);
    th_rc rc;
    if (!h) {
        rc = TH_ERR_MISUSE;
    } else if (!th_ask_key_ok(key) || !th_ask_kind_of(method) ||
               (params && !json_object_is_type(params, json_type_object))) {
        rc = TH_ERR_VALUE;
    } else if (!h->ask) {
        rc = TH_ERR_IO;
    } else if (!params && !(params = json_object_new_object())) {
        rc = TH_ERR_NOMEM;
    } else {
        rc = h->ask(h->ask_ctx, c, key, method, params, result);
        params = NULL; /* the hook took it */
    }
    th_call_release(call, c);
    json_object_put(params);
    return rc;
}

th_rc th_call_elicit(th_call *call, const char *key, const char *message, const char *requested_schema,
                     json_object **result)
{
    if (result)
        *result = NULL;
    if (!message || !requested_schema)
        return TH_ERR_MISUSE;
    json_object *schema = json_tokener_parse(requested_schema);
    if (!schema || !json_object_is_type(schema, json_type_object)) {
        json_object_put(schema);
        return TH_ERR_VALUE;
    }
    json_object *p = json_object_new_object();
    if (!p) {
        json_object_put(schema);
        return TH_ERR_NOMEM;
    }
    json_object_object_add(p, "message", json_object_new_string(message));
    json_object_object_add(p, "requestedSchema", schema);
    return th_call_ask(call, key, "elicitation/create", p, result);
}

th_rc th_call_sample(th_call *call, const char *key, const char *prompt, int max_tokens, json_object **result)
{
    if (result)
        *result = NULL;
    if (!prompt)
        return TH_ERR_MISUSE;
    if (max_tokens <= 0)
        return TH_ERR_VALUE;
    json_object *p = json_object_new_object(), *msgs = json_object_new_array(), *m = json_object_new_object(),
                *content = json_object_new_object();
    if (!p || !msgs || !m || !content) {
        json_object_put(p);
        json_object_put(msgs);
        json_object_put(m);
        json_object_put(content);
        return TH_ERR_NOMEM;
    }
    json_object_object_add(content, "type", json_object_new_string("text"));
    json_object_object_add(content, "text", json_object_new_string(prompt));
    json_object_object_add(m, "role", json_object_new_string("user"));
    json_object_object_add(m, "content", content);
    json_object_array_add(msgs, m);
    json_object_object_add(p, "messages", msgs);
    json_object_object_add(p, "maxTokens", json_object_new_int(max_tokens));
    return th_call_ask(call, key, "sampling/createMessage", p, result);
}

th_rc th_call_list_roots(th_call *call, const char *key, json_object **result)
{
    return th_call_ask(call, key, "roots/list", NULL, result);
}
