/*
** worker/resultjson.h: a worker's CallToolResult as JSON text, written
** directly for the common shape (text blocks, maybe isError) instead of
** through json-c's printer.
*/
#ifndef TH_RESULTJSON_H
#define TH_RESULTJSON_H

#include <stdbool.h>

#include <json-c/json.h>

#include "base/util.h"

/*
** RESULT's compact JSON text in B (from B->len 0; NUL-terminated), byte for
** byte what json_object_to_json_string_ext gives with JSON_C_TO_STRING_PLAIN
** and NOSLASHESCAPE, when RESULT has only "content" (blocks of exactly
** {"type":"text","text":...}) and a boolean "isError". False for any other
** result, or when out of memory: the caller then uses json-c.
*/
bool th_result_json_plain(json_object *result, th_buf *b);

#endif
