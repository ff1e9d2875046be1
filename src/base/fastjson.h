/* SPDX-License-Identifier: MIT */
/*
** base/fastjson.h: a quick path from JSON text to json-c trees for the
** plain messages nearly every request is, declining everything else so
** json-c's tokener (and jsonrpc.c's checks around it) handles it as before.
*/
#ifndef TH_BASE_FASTJSON_H
#define TH_BASE_FASTJSON_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

/*
** The object or array TEXT (LEN bytes) holds, built exactly as json-c's
** strict tokener would build it, when TEXT is in the plain subset: ASCII
** only, no \u escapes, integers of at most 18 digits without a fraction or
** exponent, nesting of at most 32 levels, nothing but white space around
** one object or array. NULL when TEXT is outside that subset (valid or
** not) or memory ran out: the caller then parses it the general way.
*/
json_object *th_fastjson_parse(const char *text, size_t len);

/* One member th_fastjson_fields reads. */
typedef struct th_fastjson_field {
    const char *name;   /* in: the member's name (no byte JSON would escape) */
    size_t name_len;    /* in: strlen(name), or 0 to have it counted */
    bool as_text;       /* in: a string wanted as its bytes, not as an object */
    /* in: an object value wanted member by member, into these NSUB fields,
     * when its members are all among them (each once, as_text ones plain
     * strings); any other value, or an object that is not so, is read into
     * VALUE as usual */
    struct th_fastjson_field *sub;
    size_t nsub;
    bool present;       /* out: the object has the member */
    bool in_sub;        /* out: the value was read into SUB (VALUE is NULL) */
    size_t order;       /* out, present: how many members came before it */
    json_object *value; /* out: its value, the caller's (NULL: JSON null, as_text or in_sub) */
    const char *text;   /* out, as_text: the string's bytes, in TEXT (no NUL) */
    size_t len;
    /* out, read into VALUE: the value's own text, in TEXT (SPAN_LEN bytes,
     * no white space around it), for a caller that passes it on as it came */
    const char *span;
    size_t span_len;
} th_fastjson_field;

/*
** The object TEXT holds, read member by member into FIELDS (N of them)
** instead of into an object of its own: what a request's envelope needs,
** without the envelope's json-c object. True only when TEXT is an object
** in th_fastjson_parse's subset whose members are all among FIELDS, none
** twice, and each as_text one is a string without escapes; otherwise
** (valid or not) false, with nothing kept, and the caller parses it the
** general way. On false, SUB fields hold nothing either.
*/
bool th_fastjson_fields(const char *text, size_t len, th_fastjson_field *fields, size_t n);

#endif
