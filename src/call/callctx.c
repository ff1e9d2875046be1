/* SPDX-License-Identifier: MIT */
/*
** call/callctx.c: th_call, the one way a running handler talks to the host. It
** collects content blocks, structured content and the error flag, and turns
** progress and log reports into notifications through the call's hooks.
** What a plugin hands over is made fit for the wire here, or refused.
** The handler gets a handle, not the object: every public function resolves
** it, so a th_call kept past the handler's return is refused, not UB.
*/
#include "config.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsontree.h"
#include "call/callctx.h"
#include "base/handle.h"
#include "base/log.h"
#include "call/result.h"
#include "base/util.h"

struct th_call {
    char *tool_name;         /* name_here, or malloc'd when longer */
    char name_here[48];
    th_call_hooks hooks;
    /* The content blocks in order: blocks_here, or a malloc'd array once
     * there are more. Not a json-c array: that cost three allocations per
     * call, and a result printed as text (th_call_finish_text) needs none. */
    json_object **blocks;
    size_t nblocks, cap_blocks;
    json_object *blocks_here[4];
    json_object *structured; /* NULL until set */
    bool is_error;
    bool failed;             /* the host failed it (th_call_fail) */
    atomic_bool cancelled;
    bool progress_warned;    /* a non-finite progress was logged once */
    char *invalid;           /* the first reason the result cannot be sent */
    size_t content_bytes;    /* estimated serialised size of content */
    size_t structured_bytes; /* ... and of structured */
    bool too_big;            /* their sum passed hooks.max_result_bytes */
    th_handle handle;        /* what the handler was given; 0: none (yet) */
    atomic_llong startup_since; /* th_now_ms of a start-up wait in progress; 0: none */
    atomic_llong startup_ms;    /* start-up waits that ended */
    json_object *raw;           /* th_call_set_raw's whole result, or NULL */
    bool crashed;            /* its worker died running it (the call's log line) */
    atomic_bool aborted;        /* th_call_abort: the host got no result */
    bool in_callers_memory;     /* th_call_new_in: free() is not ours */
    bool deferred;              /* th_call_defer: hooks.resume finishes it */
};

const size_t th_call_size = sizeof(struct th_call);

/*
** The call CALL names as a plugin passed it: a handle, resolved and entered
** (leave with unuse), or the host's own pointer. NULL for NULL and for an
** ended handle; the latter is logged once, naming the tool and FN.
*/
static th_call *use(const th_call *call, const char *fn)
{
    if (!th_handle_is(call))
        return (th_call *)call;
    th_call *c = th_handle_enter((th_handle)call, TH_HANDLE_CALL);
    char name[128];
    if (!c && th_handle_first_misuse((th_handle)call, name, sizeof name))
        th_log(TH_LOG_ERROR,
               "tool '%s': %s() used its th_call after the handler returned; refused with TH_ERR_MISUSE "
               "(a handler must not keep its th_call, nor let threads use it after it returns)",
               name, fn);
    return c;
}

static void unuse(const th_call *call)
{
    if (th_handle_is(call))
        th_handle_leave((th_handle)call);
}

th_call *th_call_handle(th_call *c)
{
    if (!c->handle)
        c->handle = th_handle_open(c, TH_HANDLE_CALL, c->tool_name);
    if (!c->handle) {
        th_log(TH_LOG_WARNING, "tool '%s': no handle left for its call; use after its end goes unchecked",
               c->tool_name);
        return c;
    }
    return (th_call *)c->handle;
}

void th_call_end(th_call *c)
{
    if (c && c->handle) {
        th_handle_close(c->handle);
        c->handle = 0;
    }
}

static th_call *init(th_call *c, const char *tool_name, const th_call_hooks *hooks);

th_call *th_call_new(const char *tool_name, const th_call_hooks *hooks)
{
    th_call *c = th_zalloc(sizeof *c);
    return c ? init(c, tool_name, hooks) : NULL;
}

th_call *th_call_new_in(void *mem, const char *tool_name, const th_call_hooks *hooks)
{
    th_call *c = memset(mem, 0, sizeof *c);
    c->in_callers_memory = true;
    return init(c, tool_name, hooks);
}

/* C, zeroed: its name and hooks set. NULL when out of memory (C is then
 * freed, unless it is in its caller's memory). */
static th_call *init(th_call *c, const char *tool_name, const th_call_hooks *hooks)
{
    /* No allocation for the name, or for the content before a block
     * comes: a call costs few, every one of them on the hot path. */
    tool_name = tool_name ? tool_name : "";
    size_t n = strlen(tool_name);
    c->tool_name = n < sizeof c->name_here ? memcpy(c->name_here, tool_name, n + 1) : strdup(tool_name);
    c->blocks = c->blocks_here;
    c->cap_blocks = sizeof c->blocks_here / sizeof c->blocks_here[0];
    if (!c->tool_name) {
        th_call_free(c);
        return NULL;
    }
    if (hooks)
        c->hooks = *hooks;
    atomic_init(&c->cancelled, false);
    if (c->hooks.bind)
        c->hooks.bind(c->hooks.bind_ctx, c);
    return c;
}

/* Put C's blocks, and go back to the array inside C. */
static void drop_blocks(th_call *c)
{
    for (size_t i = 0; i < c->nblocks; i++)
        json_object_put(c->blocks[i]);
    if (c->blocks != c->blocks_here)
        free(c->blocks);
    c->blocks = c->blocks_here;
    c->cap_blocks = sizeof c->blocks_here / sizeof c->blocks_here[0];
    c->nblocks = 0;
}

void th_call_free(th_call *c)
{
    if (!c)
        return;
    if (c->hooks.bind) /* before the end: a cancel in between still finds it */
        c->hooks.bind(c->hooks.bind_ctx, NULL);
    th_call_end(c);
    if (c->tool_name != c->name_here)
        free(c->tool_name);
    drop_blocks(c);
    json_object_put(c->structured);
    json_object_put(c->raw);
    free(c->invalid);
    if (!c->in_callers_memory)
        free(c);
}

void th_call_set_raw(th_call *call, json_object *result)
{
    th_call *c = use(call, __func__);
    if (c) {
        json_object_put(c->raw);
        c->raw = result;
    } else {
        json_object_put(result);
    }
    unuse(c ? call : NULL);
}

void th_call_cancel(th_call *call)
{
    th_call *c = use(call, __func__);
    if (c)
        atomic_store(&c->cancelled, true);
    unuse(c ? call : NULL);
}

void th_call_startup_begin(th_call *call)
{
    th_call *c = use(call, __func__);
    if (c)
        atomic_store(&c->startup_since, th_now_ms());
    unuse(c ? call : NULL);
}

void th_call_startup_end(th_call *call)
{
    th_call *c = use(call, __func__);
    long long since = c ? atomic_load(&c->startup_since) : 0;
    /* Added before it is cleared: a reader in between counts the wait
     * twice (its deadline is re-checked later), never not at all. */
    if (since) {
        atomic_fetch_add(&c->startup_ms, th_now_ms() - since);
        atomic_store(&c->startup_since, 0);
    }
    unuse(c ? call : NULL);
}

long long th_call_startup_ms(th_call *call)
{
    th_call *c = use(call, __func__);
    long long ms = 0;
    if (c) {
        ms = atomic_load(&c->startup_ms);
        long long since = atomic_load(&c->startup_since);
        if (since)
            ms += th_now_ms() - since;
    }
    unuse(c ? call : NULL);
    return ms;
}

/* An ended call counts as cancelled: a thread the handler left behind
 * that polls this must stop. */
bool th_call_cancelled(const th_call *call)
{
    if (!call)
        return false;
    th_call *c = use(call, __func__);
    bool cancelled = !c || atomic_load(&c->cancelled);
    unuse(c ? call : NULL);
    return cancelled;
}

const char *th_call_tool_name(const th_call *call)
{
    th_call *c = use(call, __func__);
    const char *name = c ? c->tool_name : ""; /* lives until th_call_free */
    unuse(c ? call : NULL);
    return name;
}

const th_call_hooks *th_call_hooks_of(th_call *call, th_call **resolved, const char *fn)
{
    th_call *c = use(call, fn);
    *resolved = c;
    return c ? &c->hooks : NULL;
}

void th_call_release(const th_call *call, th_call *resolved)
{
    unuse(resolved ? call : NULL);
}

void th_call_mark_error(th_call *call)
{
    th_call *c = use(call, __func__);
    if (c)
        c->is_error = true;
    unuse(c ? call : NULL);
}

void th_call_mark_crashed(th_call *call)
{
    th_call *c = use(call, __func__);
    if (c)
        c->crashed = true;
    unuse(c ? call : NULL);
}

bool th_call_crashed(const th_call *call)
{
    th_call *c = use(call, __func__);
    bool crashed = c && c->crashed;
    unuse(c ? call : NULL);
    return crashed;
}

bool th_call_is_error(const th_call *call)
{
    th_call *c = use(call, __func__);
    bool is_error = c && c->is_error;
    unuse(c ? call : NULL);
    return is_error;
}

/* Remember the first reason the result cannot be sent; WHY is consumed. */
static void set_invalid(th_call *c, th_buf *why)
{
    if (!c->invalid)
        c->invalid = why->data ? why->data : strdup("out of memory describing the problem");
    else
        free(why->data);
    why->data = NULL;
}

static size_t add_sat(size_t a, size_t b)
{
    return b > SIZE_MAX - a ? SIZE_MAX : a + b;
}

/* How many blocks C holds. */
static size_t nblocks(const th_call *c)
{
    return c->nblocks;
}

/* The estimated size of the result; structured content counts twice
 * while there are no blocks, since its text is then sent as one. */
static size_t result_bytes(const th_call *c)
{
    size_t sc = nblocks(c) == 0 ? add_sat(c->structured_bytes, c->structured_bytes)
                                                           : c->structured_bytes;
    return add_sat(c->content_bytes, sc);
}

/* Past the limit the result is refused; what was handed over is dropped
 * at once instead of being held until the call ends. */
static bool within_limit(th_call *c)
{
    if (c->hooks.max_result_bytes && result_bytes(c) > c->hooks.max_result_bytes)
        c->too_big = true;
    return !c->too_big;
}

/* Whether BLOCK is no content block at all (not an object, or without a
 * string "type"): a mistake at the call site, not a result the host must
 * refuse, so the handler's other output stands. */
static bool not_a_block(json_object *block)
{
    json_object *type;
    return !json_object_is_type(block, json_type_object) || !json_object_object_get_ex(block, "type", &type) ||
           !json_object_is_type(type, json_type_string);
}

static th_rc content_in(th_call *c, json_object *block)
{
    if (!c || !block) {
        th_result_free(block);
        return TH_ERR_MISUSE;
    }
    if (not_a_block(block)) {
        th_log(TH_LOG_WARNING,
               "tool %s: th_call_content with a %s, not an object with a string \"type\"; refused with "
               "TH_ERR_MISUSE",
               c->tool_name, json_type_to_name(json_object_get_type(block)));
        th_result_free(block);
        return TH_ERR_MISUSE;
    }
    char where[40];
    size_t bytes = 1; /* the comma before it */
    th_buf why = {0};
    /* The plain text block needs no name for where it is (only a problem
     * does); any other is checked the long way. Not snprintf: this runs
     * for every block of every call. */
    bool plain = !c->invalid && !c->too_big && th_result_quick_text_block(block, &bytes);
    if (!plain) {
        memcpy(where, "content[", 8);
        size_t n = 8 + th_fmt_u64(where + 8, nblocks(c));
        memcpy(where + n, "]", 2);
    }
    if (!plain && (c->invalid || c->too_big || !th_result_check_block(block, where, &bytes, &why))) {
        if (why.len)
            set_invalid(c, &why);
        th_result_free(block);
        return TH_ERR_VALUE;
    }
    c->content_bytes = add_sat(c->content_bytes, bytes);
    if (!within_limit(c)) {
        th_result_free(block);
        return TH_ERR_VALUE;
    }
    if (c->nblocks == c->cap_blocks) {
        size_t cap = c->cap_blocks * 2;
        json_object **grown = cap < SIZE_MAX / sizeof *grown ? malloc(cap * sizeof *grown) : NULL;
        if (!grown) {
            json_object_put(block);
            return TH_ERR_NOMEM;
        }
        memcpy(grown, c->blocks, c->nblocks * sizeof *grown);
        if (c->blocks != c->blocks_here)
            free(c->blocks);
        c->blocks = grown;
        c->cap_blocks = cap;
    }
    c->blocks[c->nblocks++] = block;
    return TH_OK;
}

/* VALUE (a C string) as a JSON string. A plugin's C strings are messages
 * and names: one in the wrong encoding (a Latin-1 file name) still arrives,
 * each bad byte shown as U+FFFD. NULL when out of memory. */
static json_object *new_str(const char *value)
{
    size_t len = strlen(value);
    if (len > INT_MAX)
        return NULL;
    if (th_utf8_valid(value, len))
        return json_object_new_string_len(value, (int)len);
    char *fixed = th_utf8_repair(value, len, &len);
    json_object *s = fixed && len <= INT_MAX ? json_object_new_string_len(fixed, (int)len) : NULL;
    free(fixed);
    return s;
}

/* Add KEY: VALUE to OBJ when VALUE is not NULL; false when out of memory.
 * KEY is a string constant: json-c keeps the pointer, not a copy (one
 * allocation less per member of every block). */
static bool put_str(json_object *obj, const char *key, const char *value)
{
    if (!value)
        return true;
    json_object *s = new_str(value);
    if (!s || json_object_object_add_ex(obj, key, s, JSON_C_OBJECT_ADD_CONSTANT_KEY) != 0) {
        json_object_put(s);
        return false;
    }
    return true;
}

static json_object *block_of(const char *type)
{
    json_object *b = json_object_new_object();
    if (b && !put_str(b, "type", type)) {
        json_object_put(b);
        return NULL;
    }
    return b;
}

/* Hand B (built by the host, NULL when out of memory) to the call. */
static th_rc add_built(th_call *c, json_object *b, bool ok)
{
    if (!b || !ok) {
        json_object_put(b);
        return TH_ERR_NOMEM;
    }
    return th_call_content(c, b);
}

th_rc th_call_content(th_call *call, json_object *block)
{
    th_call *c = use(call, __func__);
    th_rc rc = content_in(c, block);
    unuse(c ? call : NULL);
    return rc;
}

static th_rc text_in(th_call *c, const char *text)
{
    if (!c || !text)
        return TH_ERR_MISUSE;
    /* Refuse a text that alone passes the limit before copying it. */
    size_t len = strlen(text);
    if (c->hooks.max_result_bytes && len > c->hooks.max_result_bytes) {
        c->content_bytes = add_sat(c->content_bytes, len);
        c->too_big = true;
        return TH_ERR_VALUE;
    }
    json_object *b = block_of("text");
    return add_built(c, b, b && put_str(b, "text", text));
}

th_rc th_call_text(th_call *call, const char *text)
{
    th_call *c = use(call, __func__);
    th_rc rc = text_in(c, text);
    unuse(c ? call : NULL);
    return rc;
}

static th_rc vtextf(th_call *c, const char *fmt, va_list ap)
{
    th_buf buf = {0};
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return TH_ERR_MISUSE;
    buf.data = malloc((size_t)n + 1);
    if (!buf.data)
        return TH_ERR_NOMEM;
    vsnprintf(buf.data, (size_t)n + 1, fmt, ap);
    th_rc rc = th_call_text(c, buf.data);
    free(buf.data);
    return rc;
}

th_rc th_call_textf(th_call *call, const char *fmt, ...)
{
    th_call *c = use(call, __func__);
    if (!c || !fmt) {
        unuse(c ? call : NULL);
        return TH_ERR_MISUSE;
    }
    va_list ap;
    va_start(ap, fmt);
    th_rc rc = vtextf(c, fmt, ap);
    va_end(ap);
    unuse(call);
    return rc;
}

static th_rc media(th_call *c, const char *type, const char *mime, const char *data)
{
    if (!c || !mime || !data)
        return TH_ERR_MISUSE;
    json_object *b = block_of(type);
    return add_built(c, b, b && put_str(b, "data", data) && put_str(b, "mimeType", mime));
}

th_rc th_call_image(th_call *call, const char *mime_type, const char *base64)
{
    th_call *c = use(call, __func__);
    th_rc rc = media(c, "image", mime_type, base64);
    unuse(c ? call : NULL);
    return rc;
}

th_rc th_call_audio(th_call *call, const char *mime_type, const char *base64)
{
    th_call *c = use(call, __func__);
    th_rc rc = media(c, "audio", mime_type, base64);
    unuse(c ? call : NULL);
    return rc;
}

static th_rc link_in(th_call *c, const char *uri, const char *name, const char *description, const char *mime_type)
{
    if (!c || !uri || !name)
        return TH_ERR_MISUSE;
    json_object *b = block_of("resource_link");
    return add_built(c, b,
                     b && put_str(b, "uri", uri) && put_str(b, "name", name) &&
                         put_str(b, "description", description) && put_str(b, "mimeType", mime_type));
}

th_rc th_call_resource_link(th_call *call, const char *uri, const char *name, const char *description,
                            const char *mime_type)
{
    th_call *c = use(call, __func__);
    th_rc rc = link_in(c, uri, name, description, mime_type);
    unuse(c ? call : NULL);
    return rc;
}

static th_rc embedded(th_call *c, const char *uri, const char *mime, const char *key, const char *value)
{
    if (!c || !uri || !value)
        return TH_ERR_MISUSE;
    json_object *b = block_of("resource");
    json_object *r = json_object_new_object();
    if (!b || !r || json_object_object_add(b, "resource", r) != 0) {
        json_object_put(b);
        json_object_put(r);
        return TH_ERR_NOMEM;
    }
    return add_built(c, b, put_str(r, "uri", uri) && put_str(r, "mimeType", mime) && put_str(r, key, value));
}

th_rc th_call_resource_text(th_call *call, const char *uri, const char *mime_type, const char *text)
{
    th_call *c = use(call, __func__);
    th_rc rc = embedded(c, uri, mime_type, "text", text);
    unuse(c ? call : NULL);
    return rc;
}

th_rc th_call_resource_blob(th_call *call, const char *uri, const char *mime_type, const char *base64)
{
    th_call *c = use(call, __func__);
    th_rc rc = embedded(c, uri, mime_type, "blob", base64);
    unuse(c ? call : NULL);
    return rc;
}

static th_rc structured_in(th_call *c, json_object *value)
{
    if (!c) {
        th_result_free(value);
        return TH_ERR_MISUSE;
    }
    json_object_put(c->structured);
    c->structured = NULL;
    c->structured_bytes = 0;
    if (!value)
        return TH_OK;
    size_t bytes = 0;
    th_buf why = {0};
    if (!json_object_is_type(value, json_type_object)) {
        const char *t = json_object_is_type(value, json_type_array)    ? "an array"
                        : json_object_is_type(value, json_type_string) ? "a string"
                        : json_object_is_type(value, json_type_boolean) ? "a boolean"
                                                                        : "a number";
        th_buf_printf(&why, "structuredContent: must be a JSON object, got %s", t);
    }
    if (c->invalid || why.len || !th_result_check_value(value, "structuredContent", &bytes, &why)) {
        if (why.len)
            set_invalid(c, &why);
        th_result_free(value);
        return TH_ERR_VALUE;
    }
    c->structured_bytes = bytes;
    c->structured = value;
    if (!within_limit(c)) {
        json_object *v = c->structured;
        c->structured = NULL;
        th_result_free(v);
        return TH_ERR_VALUE;
    }
    return TH_OK;
}

th_rc th_call_structured(th_call *call, json_object *value)
{
    th_call *c = use(call, __func__);
    th_rc rc = structured_in(c, value);
    unuse(c ? call : NULL);
    return rc;
}

th_rc th_call_error(th_call *call, const char *fmt, ...)
{
    th_call *c = use(call, __func__);
    if (!c || !fmt) {
        unuse(c ? call : NULL);
        return TH_ERR_MISUSE;
    }
    c->is_error = true;
    va_list ap;
    va_start(ap, fmt);
    th_rc rc = vtextf(c, fmt, ap);
    va_end(ap);
    unuse(call);
    return rc;
}

th_rc th_call_fail(th_call *call, const char *fmt, ...)
{
    th_call *c = use(call, __func__);
    if (!c || !fmt) {
        unuse(c ? call : NULL);
        return TH_ERR_MISUSE;
    }
    c->is_error = c->failed = true;
    va_list ap;
    va_start(ap, fmt);
    th_rc rc = vtextf(c, fmt, ap);
    va_end(ap);
    unuse(call);
    return rc;
}

void th_call_mark_failed(th_call *call)
{
    th_call *c = use(call, __func__);
    if (c)
        c->is_error = c->failed = true;
    unuse(c ? call : NULL);
}

bool th_call_failed(const th_call *call)
{
    th_call *c = use(call, __func__);
    bool failed = c && (c->failed || c->invalid || c->too_big);
    unuse(c ? call : NULL);
    return failed;
}

static void notify(th_call *c, const char *method, json_object *params)
{
    json_object *n = json_object_new_object();
    if (!n) {
        json_object_put(params);
        return;
    }
    json_object_object_add(n, "jsonrpc", json_object_new_string("2.0"));
    json_object_object_add(n, "method", json_object_new_string(method));
    json_object_object_add(n, "params", params);
    c->hooks.notify(c->hooks.ctx, n);
}

static th_rc progress_in(th_call *c, double progress, double total, const char *message)
{
    if (!c)
        return TH_ERR_MISUSE;
    if (th_call_cancelled(c))
        return TH_ERR_CANCELLED;
    /* NaN and infinities are not JSON. Refused even when the client asked
     * for no progress, so the plugin's bug shows in every test. */
    if (!isfinite(progress) || !isfinite(total)) {
        if (!c->progress_warned)
            th_log(TH_LOG_WARNING, "tool %s: th_call_progress with a non-finite %s; not sent", c->tool_name,
                   isfinite(progress) ? "total" : "progress");
        c->progress_warned = true;
        return TH_ERR_VALUE;
    }
    if (!c->hooks.progress_token || !c->hooks.notify)
        return TH_OK;
    json_object *p = json_object_new_object();
    if (!p)
        return TH_ERR_NOMEM;
    json_object_object_add(p, "progressToken", json_object_get(c->hooks.progress_token));
    json_object_object_add(p, "progress", json_object_new_double(progress));
    if (total >= 0)
        json_object_object_add(p, "total", json_object_new_double(total));
    if (!put_str(p, "message", message)) {
        json_object_put(p);
        return TH_ERR_NOMEM;
    }
    notify(c, "notifications/progress", p);
    return TH_OK;
}

th_rc th_call_progress(th_call *call, double progress, double total, const char *message)
{
    th_call *c = use(call, __func__);
    th_rc rc = progress_in(c, progress, total, message);
    unuse(c ? call : NULL);
    return rc;
}

static th_rc log_in(th_call *c, th_log_level level, const char *fmt, va_list ap)
{
    if (!c || !fmt || (unsigned)level > TH_LOG_EMERGENCY)
        return TH_ERR_MISUSE;
    char text[4096];
    int n = vsnprintf(text, sizeof text, fmt, ap);
    /* A cut message must not end in half a character (which would then
     * show as U+FFFD). */
    if (n >= (int)sizeof text)
        th_utf8_clip(text);

    th_rc rc = TH_OK;
    json_object *data = new_str(text);
    if (!data)
        return TH_ERR_NOMEM;
    if (c->hooks.log_to_client && c->hooks.notify && level >= c->hooks.log_level && !th_call_cancelled(c)) {
        json_object *p = json_object_new_object();
        if (!p) {
            json_object_put(data);
            return TH_ERR_NOMEM;
        }
        json_object_object_add(p, "level", json_object_new_string(th_log_level_name(level)));
        json_object_object_add(p, "logger", json_object_new_string(c->tool_name));
        json_object_object_add(p, "data", data);
        notify(c, "notifications/message", p);
    } else {
        th_log(level, "tool %s: %s", c->tool_name, json_object_get_string(data));
        json_object_put(data);
    }
    return rc;
}

th_rc th_call_log(th_call *call, th_log_level level, const char *fmt, ...)
{
    th_call *c = use(call, __func__);
    va_list ap;
    va_start(ap, fmt);
    th_rc rc = log_in(c, level, fmt, ap);
    va_end(ap);
    unuse(c ? call : NULL);
    return rc;
}

/* The result that replaces one that cannot be sent: one text block. */
static json_object *refusal(th_call *c)
{
    th_buf msg = {0};
    if (c->invalid)
        th_buf_printf(&msg, "Tool '%s' returned an invalid result: %s", c->tool_name, c->invalid);
    else
        th_buf_printf(&msg, "Tool '%s' returned %zu bytes, more than --max-result-bytes (%zu)", c->tool_name,
                      result_bytes(c), c->hooks.max_result_bytes);
    if (!msg.data)
        return NULL;
    th_log(TH_LOG_ERROR, "%s", msg.data);
    json_object *r = json_object_new_object(), *content = json_object_new_array(), *b = block_of("text");
    json_object *text = new_str(msg.data);
    free(msg.data);
    if (!r || !content || !b || !text) {
        json_object_put(r);
        json_object_put(content);
        json_object_put(b);
        json_object_put(text);
        return NULL;
    }
    json_object_object_add(b, "text", text);
    json_object_array_add(content, b);
    json_object_object_add(r, "content", content);
    json_object_object_add(r, "isError", json_object_new_boolean(1));
    return r;
}

json_object *th_call_finish(th_call *c, th_rc handler_rc)
{
    th_call_end(c); /* the handler has returned: its handle is dead from here */
    json_object *raw = c->raw;
    c->raw = NULL;
    if (raw && handler_rc == TH_OK && !c->invalid && !c->too_big && !c->is_error && !c->structured &&
        nblocks(c) == 0)
        return raw;
    json_object_put(raw);
    if (c->invalid || c->too_big)
        return refusal(c);
    if (handler_rc != TH_OK && !c->is_error) {
        c->is_error = c->failed = true;
        th_call_textf(c, "Tool '%s' failed (%s)", c->tool_name, th_rc_name(handler_rc));
    }
    json_object *r = json_object_new_object();
    if (!r)
        return NULL;
    /* Structured content is also sent as text for clients that ignore it.
     * It was checked when handed over, so serialising it is safe, and its
     * size was counted twice then. */
    c->hooks.max_result_bytes = 0;
    if (c->structured && nblocks(c) == 0)
        th_call_text(c, json_object_to_json_string_ext(c->structured, JSON_C_TO_STRING_PLAIN |
                                                                          JSON_C_TO_STRING_NOSLASHESCAPE));
    /* Constant keys: no copies of the names (see put_str). */
    json_object *content = json_object_new_array_ext(c->nblocks ? (int)c->nblocks : 1);
    for (size_t i = 0; content && i < c->nblocks; i++)
        if (json_object_array_add(content, c->blocks[i]) == 0)
            c->blocks[i] = NULL; /* the array's now */
    drop_blocks(c);
    if (!content) {
        json_object_put(r);
        return NULL;
    }
    json_object_object_add_ex(r, "content", content, JSON_C_OBJECT_ADD_CONSTANT_KEY);
    if (c->structured) {
        json_object_object_add_ex(r, "structuredContent", c->structured, JSON_C_OBJECT_ADD_CONSTANT_KEY);
        c->structured = NULL;
    }
    if (c->is_error)
        json_object_object_add_ex(r, "isError", json_object_new_boolean(1), JSON_C_OBJECT_ADD_CONSTANT_KEY);
    return r;
}

/*
** Append B when it is exactly {"type":"text","text":S}, members in that
** order and both plain strings (no serializer of their own): the block
** nearly every result is, written without walking it, byte for byte as
** th_json_append writes it. False, with OUT as it was, for any other.
*/
static bool append_text_block(th_buf *out, json_object *b)
{
    static const char head[] = "{\"type\":\"text\",\"text\":";
    lh_table *t = json_object_get_object(b);
    struct lh_entry *e1 = t && t->count == 2 ? lh_table_head(t) : NULL, *e2 = e1 ? lh_entry_next(e1) : NULL;
    if (!e2 || strcmp(lh_entry_k(e1), "type") != 0 || strcmp(lh_entry_k(e2), "text") != 0)
        return false;
    json_object *type = (json_object *)lh_entry_v(e1), *text = (json_object *)lh_entry_v(e2);
    if (!json_object_is_type(type, json_type_string) || !json_object_is_type(text, json_type_string) ||
        json_object_get_userdata(type) || json_object_get_userdata(text) || json_object_get_string_len(type) != 4 ||
        memcmp(json_object_get_string(type), "text", 4) != 0)
        return false;
    size_t mark = out->len;
    if (th_buf_append(out, head, sizeof head - 1) &&
        th_json_append_string(out, json_object_get_string(text), (size_t)json_object_get_string_len(text)) &&
        th_buf_append(out, "}", 1))
        return true;
    out->len = mark;
    return false;
}

bool th_call_finish_text(th_call *c, th_rc handler_rc, th_buf *out)
{
    th_call_end(c); /* first: no plugin thread adds a block while we look */
    if (handler_rc != TH_OK || c->raw || c->invalid || c->too_big || c->structured)
        return false;
    size_t mark = out->len;
    bool ok = th_buf_append(out, "{\"content\":[", 12);
    for (size_t i = 0; ok && i < c->nblocks; i++)
        ok = (i == 0 || th_buf_append(out, ",", 1)) &&
             (append_text_block(out, c->blocks[i]) || th_json_append(out, c->blocks[i]));
    ok = ok && th_buf_append(out, "]", 1) && (!c->is_error || th_buf_append(out, ",\"isError\":true", 15)) &&
         th_buf_append(out, "}", 1);
    if (!ok) {
        out->len = mark;
        return false;
    }
    drop_blocks(c); /* printed: the call keeps nothing, as th_call_finish */
    return true;
}

/* The one waiting handler there is (worker/supervisor.c's proxy). */
static _Atomic(th_handler) waiting_handler;

void th_call_mark_waiting_handler(th_handler handler)
{
    atomic_store(&waiting_handler, handler);
}

bool th_call_is_waiting_handler(th_handler handler)
{
    return handler && handler == atomic_load(&waiting_handler);
}

th_call *th_call_defer(th_call *call)
{
    th_call *c = use(call, __func__);
    th_call *host = c && c->hooks.resume ? c : NULL;
    if (host)
        host->deferred = true;
    unuse(c ? call : NULL);
    return host;
}

bool th_call_deferred(const th_call *c)
{
    return c && !th_handle_is(c) && c->deferred;
}

void th_call_resume(th_call *c, th_rc handler_rc)
{
    c->hooks.resume(c->hooks.resume_ctx, handler_rc);
}

static _Thread_local void (*held_flush)(void);

void th_call_hold(void (*flush)(void))
{
    held_flush = flush;
}

void th_call_flush_held(void)
{
    void (*flush)(void) = held_flush;
    held_flush = NULL;
    if (flush)
        flush();
}

void th_call_abort(th_call *call)
{
    th_call *c = use(call, __func__);
    if (c)
        atomic_store(&c->aborted, true);
    unuse(c ? call : NULL);
}

bool th_call_aborted(const th_call *c)
{
    return c && !th_handle_is(c) && atomic_load(&c->aborted);
}

bool th_call_refused(const th_call *c)
{
    return c->invalid || c->too_big;
}
