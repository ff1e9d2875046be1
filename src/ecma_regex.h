/*
** ecma_regex.h: compiles an ECMA-262 regular expression (the dialect JSON
** Schema's "pattern" and "patternProperties" use) into a PCRE2 pattern.
*/
#ifndef TH_ECMA_REGEX_H
#define TH_ECMA_REGEX_H

#include <stddef.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

/*
** Translate and compile PATTERN (UTF-8). Returns the compiled code (the
** caller frees it with pcre2_code_free()), or NULL after writing PCRE2's
** error text to ERR (ERRLEN bytes).
** Matching the code needs per-thread match data only.
*/
pcre2_code *th_ecma_regex_compile(const char *pattern, char *err, size_t errlen);

/*
** Search SUBJECT (LEN bytes) for CODE anywhere, as ECMA's RegExp.test()
** does. MD is match data owned by the calling thread. Returns 1 on a
** match, 0 on none, a negative PCRE2 error code otherwise (e.g. SUBJECT
** is not valid UTF-8).
*/
int th_ecma_regex_search(const pcre2_code *code, const char *subject, size_t len, pcre2_match_data *md);

#endif
