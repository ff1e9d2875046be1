/* SPDX-License-Identifier: MIT */
/*
** call/typed.h: plain C functions as tools. From a th_function description this
** generates the input and output schemas, prepares a libffi CIF once, and at
** call time converts JSON arguments to C values and calls the function.
*/
#ifndef TH_TYPED_H
#define TH_TYPED_H

#include <json-c/json.h>

#include "toolhost/plugin.h"
#include "base/util.h"

/* Limits a th_function must keep (the header promises at least 64 params). */
#define TH_TYPED_MAX_PARAMS 64
/* Named results (th_function.result_fields) a function may have. */
#define TH_TYPED_MAX_FIELDS 16
#define TH_TYPED_PARAM_NAME_MAX 64

typedef struct th_typed th_typed;

/*
** Check FN and build its schemas. On success returns TH_OK and sets *OUT
** (free with th_typed_free), *INPUT_SCHEMA and *OUTPUT_SCHEMA (new json-c
** references owned by the caller; *OUTPUT_SCHEMA is NULL for a void
** function). On failure returns TH_ERR_VALUE (or TH_ERR_NOMEM) with ERR
** naming the parameter and the rule, and sets nothing.
**
** Everything FN points at is copied or converted here (names, enum values,
** defaults); only FN->fn itself must stay valid while the plugin is loaded.
*/
th_rc th_typed_prepare(const th_function *fn, th_typed **out, json_object **input_schema,
                       json_object **output_schema, th_err *err);

/*
** Convert ARGS (a JSON object, borrowed; NULL counts as {}) and call the
** function. The result, or an isError result naming the parameter, what was
** expected and what was given (one line per problem), is written to CALL.
** The function is never called with bad input.
**
** Returns TH_OK when CALL holds a result (including an isError one),
** TH_ERR_NOMEM when memory ran out, TH_ERR_MISUSE for a NULL TYPED or CALL.
** Thread-safe: one th_typed may be invoked on many threads at once.
*/
th_rc th_typed_invoke(const th_typed *typed, th_call *call, json_object *args);

/* The tool's user_data, passed to a TH_FN_WANTS_USER_DATA function (set
** once, at registration, before any call). */
void th_typed_set_user_data(th_typed *typed, void *user_data);

void th_typed_free(th_typed *typed);

#endif
