/* SPDX-License-Identifier: MIT */
/*
** cli/cases.h: the cases file of `toolhost test`, read and checked whole
** before anything runs, and what a result must be to pass a case.
*/
#ifndef TH_CLI_CASES_H
#define TH_CLI_CASES_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

/* The isolation modes a case runs in, as bits. */
enum { TH_CASE_PROCESS = 1, TH_CASE_NONE = 2 };

typedef struct th_case {
    char *name;             /* its "name", or one made from what it calls */
    long line;              /* where it starts in the file */
    const char *method;     /* tools/call, resources/read or prompts/get */
    json_object *params;    /* the request's params (owned) */
    json_object *expect;    /* borrowed from the file; NULL: a plain result */
    struct th_schema *schema; /* expect.structuredContentSchema compiled */
    long long timeout_ms;   /* the host's --call-timeout for it; 0: as given */
    long long cancel_ms;    /* cancel after this long; -1: never */
    unsigned modes;
} th_case;

typedef struct th_cases {
    json_object *root;
    th_case *v;
    size_t n;
} th_cases;

/* Read PATH (a JSON array of cases, or one case a line). False after
 * writing to ERR a message naming the file, the line, the case and the
 * field that is wrong. */
bool th_cases_load(const char *path, th_cases *out, char *err, size_t errlen);

void th_cases_free(th_cases *c);

/* What differed between a response and a case's expectation: FIELD (a
 * path like "structuredContent.total"), and EXPECTED and GOT as JSON
 * text, GOT NULL when the field was absent; SAID the text of a result
 * that was an error when none was expected (JSON text too). */
typedef struct th_case_diff {
    char field[256];
    char *expected, *got;
    char *said; /* an isError result's text, which tells why */
} th_case_diff;

/* Whether RESPONSE (a JSON-RPC response) passes C; when not, D says why
 * (free it with th_case_diff_clear). */
bool th_case_check(const th_case *c, json_object *response, th_case_diff *d);

void th_case_diff_clear(th_case_diff *d);

#endif
