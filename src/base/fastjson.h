/*
** base/fastjson.h: a quick path from JSON text to json-c trees for the
** plain messages nearly every request is, declining everything else so
** json-c's tokener (and jsonrpc.c's checks around it) handles it as before.
*/
#ifndef TH_BASE_FASTJSON_H
#define TH_BASE_FASTJSON_H

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

#endif
