/* SPDX-License-Identifier: MIT */
/*
** base/canonjson.h: one canonical text for a JSON value (object keys sorted
** by their bytes, no white space), so two equal values hash the same: the
** lock file pins definitions by it, the audit log names arguments by it.
*/
#ifndef TH_BASE_CANONJSON_H
#define TH_BASE_CANONJSON_H

#include <json-c/json.h>

/* O's canonical text, malloc'd; NULL when out of memory. */
char *th_json_canonical(json_object *o);

#endif
