/* SPDX-License-Identifier: MIT */
/*
** schema/ecma_regex.h: compiles an ECMA-262 regular expression (the dialect JSON
** Schema's "pattern" and "patternProperties" use) into a PCRE2 pattern.
*/
#ifndef TH_ECMA_REGEX_H
#define TH_ECMA_REGEX_H

#include <stddef.h>
#include <stdint.h>

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
** does. MD is match data owned by the calling thread; MCTX (NULL: PCRE2's
** defaults, and MATCH_LIMIT is ignored) a match context owned by it too,
** on which MATCH_LIMIT and depth and heap limits for this subject (1000 +
** 4 levels per byte, 16 MiB + 32 bytes per byte) are set. Returns 1 on a
** match, 0 on none, a negative PCRE2 error code when PCRE2 could not tell
** (a limit was reached, or SUBJECT is not valid UTF-8): the caller must
** not read that as "no match".
*/
int th_ecma_regex_search(const pcre2_code *code, const char *subject, size_t len, pcre2_match_data *md,
                         pcre2_match_context *mctx, uint32_t match_limit);

/* Match limits (PCRE2 backtracking units) for a subject of LEN bytes:
** QUICK, enough for every honest pattern (100 + 4 per byte), and FULL, the
** most a pattern that needs more may get (10000 + 8 per byte, at most
** PCRE2's default of 10 million). */
void th_ecma_regex_limits(size_t len, uint32_t *quick, uint32_t *full);

/* Why search returned RC < 0, for a message after "could not be
** evaluated ": "within the match limit", or PCRE2's text in parentheses. */
void th_ecma_regex_why(int rc, char *buf, size_t len);

#endif
