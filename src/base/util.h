/* SPDX-License-Identifier: MIT */
/*
** base/util.h: small helpers every part of the host uses: the error record that
** carries a result code with its message, UTF-8 checks, and string building.
*/
#ifndef TH_UTIL_H
#define TH_UTIL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "toolhost/plugin.h"

/* A result code and the message that names what failed. */
typedef struct th_err {
    th_rc code;
    char msg[1024];
} th_err;

/* Set ERR (may be NULL) to CODE and the formatted message; returns CODE. */
th_rc th_err_set(th_err *err, th_rc code, const char *fmt, ...) TH_PRINTF(3, 4);

/* Reset ERR to TH_OK with an empty message. */
void th_err_clear(th_err *err);

/* The symbolic name of a result code, e.g. "TH_ERR_VALUE". */
const char *th_rc_name(th_rc rc);

/* The value of the hexadecimal digit C (either case), or -1. */
int th_hex_digit(int c);

/* Write V in decimal and a NUL to OUT (room for 21 bytes); returns the
** digits' count. What snprintf("%llu") gives, for hot paths that format
** on every call. */
size_t th_fmt_u64(char *out, unsigned long long v);

/* True when the LEN bytes at S are well-formed UTF-8 (no overlongs or
** surrogates). */
bool th_utf8_valid(const char *s, size_t len);

/*
** LEN bytes at S as a new NUL-terminated string (malloc'd; *OUT_LEN, if not
** NULL, gets its length) in which every byte that does not begin a
** well-formed UTF-8 character is replaced by U+FFFD, so a message in the
** wrong encoding still arrives readable. NULL when out of memory.
*/
char *th_utf8_repair(const char *s, size_t len, size_t *out_len);

/* Cut S (valid UTF-8 that a fixed-size buffer may have truncated) back to
 * the last whole character, so no half character reaches the wire. */
void th_utf8_clip(char *s);

/* The number of code points in the valid UTF-8 string S. */
size_t th_utf8_length(const char *s);

/* A growable string. Zero-initialise; free data with free(). */
typedef struct th_buf {
    char *data;
    size_t len;
    size_t cap;
} th_buf;

/* Append; return false on allocation failure (the buffer is unchanged).
 * Inline while there is room: responses are built from many short pieces. */
bool th_buf_append_grow(th_buf *b, const char *s, size_t len);
static inline bool th_buf_append(th_buf *b, const char *s, size_t len)
{
    if (len >= b->cap - b->len) /* no room for LEN bytes and the NUL (or no buffer yet) */
        return th_buf_append_grow(b, s, len);
    memcpy(b->data + b->len, s, len);
    b->len += len;
    b->data[b->len] = '\0';
    return true;
}
bool th_buf_printf(th_buf *b, const char *fmt, ...) TH_PRINTF(2, 3);

/* Room for N more bytes and the NUL after them; false on allocation
 * failure (the buffer is unchanged). For writers that fill b->data
 * themselves, inline while there is room as th_buf_append is. */
bool th_buf_reserve_grow(th_buf *b, size_t n);
static inline bool th_buf_reserve(th_buf *b, size_t n)
{
    return b->cap - b->len > n || th_buf_reserve_grow(b, n);
}

/*
** SIZE zeroed bytes, as calloc(1, SIZE) gives, for what is allocated and
** freed on every call: glibc's calloc never takes from the per-thread
** cache malloc uses, so such an object went through the arena both ways.
*/
void *th_zalloc(size_t size);

/* Monotonic clock in milliseconds. */
long long th_now_ms(void);
/* The same clock in nanoseconds. */
long long th_now_ns(void);

/*
** pthread_cond_timedwait until DEADLINE_MS (th_now_ms clock). Returns false
** once the deadline has passed (without waiting), true after a wakeup, which
** may be spurious: callers re-check their condition in a loop.
*/
bool th_cond_wait_until(pthread_cond_t *cond, pthread_mutex_t *lock, long long deadline_ms);

#endif
