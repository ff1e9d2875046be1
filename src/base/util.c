/* SPDX-License-Identifier: MIT */
/*
** base/util.c: the error record, UTF-8 checks and the growable string buffer
** shared by the rest of the host.
*/
#include "config.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/util.h"

th_rc th_err_set(th_err *err, th_rc code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->code = code;
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

void th_err_clear(th_err *err)
{
    if (err) {
        err->code = TH_OK;
        err->msg[0] = '\0';
    }
}

static const char *const rc_names[] = {
    [TH_OK] = "TH_OK",
    [TH_ERR_TYPE] = "TH_ERR_TYPE",
    [TH_ERR_ATTRIBUTE] = "TH_ERR_ATTRIBUTE",
    [TH_ERR_VALUE] = "TH_ERR_VALUE",
    [TH_ERR_RUNTIME] = "TH_ERR_RUNTIME",
    [TH_ERR_ABI] = "TH_ERR_ABI",
    [TH_ERR_NOMEM] = "TH_ERR_NOMEM",
    [TH_ERR_MISUSE] = "TH_ERR_MISUSE",
    [TH_ERR_CANCELLED] = "TH_ERR_CANCELLED",
    [TH_ERR_TOOL] = "TH_ERR_TOOL",
    [TH_ERR_IO] = "TH_ERR_IO",
    [TH_ERR_INPUT_REQUIRED] = "TH_ERR_INPUT_REQUIRED",
    [TH_ERR_CAPABILITY] = "TH_ERR_CAPABILITY",
    [TH_ERR_NOT_FOUND] = "TH_ERR_NOT_FOUND",
};

const char *th_rc_name(th_rc rc)
{
    if ((unsigned)rc < sizeof rc_names / sizeof rc_names[0] && rc_names[rc])
        return rc_names[rc];
    return "TH_ERR_UNKNOWN";
}

/* The length of the well-formed UTF-8 character at S (AVAIL bytes left), or
** 0 when no well-formed character starts there. */
static size_t utf8_char(const unsigned char *s, size_t avail)
{
    unsigned c = s[0], cp;
    size_t n;
    if (c < 0x80)
        return 1;
    if ((c & 0xE0) == 0xC0) {
        n = 1;
        cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
        n = 2;
        cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
        n = 3;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (n >= avail)
        return 0;
    for (size_t k = 1; k <= n; k++) {
        if ((s[k] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[k] & 0x3F);
    }
    /* Overlong forms, surrogates and values past U+10FFFF. */
    if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
        (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
        return 0;
    return n + 1;
}

bool th_utf8_valid(const char *str, size_t len)
{
    const unsigned char *s = (const unsigned char *)str;
    for (size_t i = 0, n; i < len; i += n) {
        /* ASCII, nearly all text, eight bytes at a time. */
        uint64_t w;
        if (len - i >= 8 && (memcpy(&w, s + i, 8), (w & 0x8080808080808080ULL) == 0)) {
            n = 8;
            continue;
        }
        if ((n = utf8_char(s + i, len - i)) == 0)
            return false;
    }
    return true;
}

char *th_utf8_repair(const char *str, size_t len, size_t *out_len)
{
    static const char fffd[] = "\xEF\xBF\xBD";
    const unsigned char *s = (const unsigned char *)str;
    size_t bad = 0;
    for (size_t i = 0, n; i < len; i += n ? n : 1)
        bad += (n = utf8_char(s + i, len - i)) == 0;
    /* Each bad byte grows by two: U+FFFD takes three. */
    if (bad > (SIZE_MAX - len - 1) / 2)
        return NULL;
    char *out = malloc(len + 2 * bad + 1);
    if (!out)
        return NULL;
    size_t o = 0;
    for (size_t i = 0, n; i < len; i += n ? n : 1) {
        if ((n = utf8_char(s + i, len - i)) == 0) {
            memcpy(out + o, fffd, 3);
            o += 3;
        } else {
            memcpy(out + o, s + i, n);
            o += n;
        }
    }
    out[o] = '\0';
    if (out_len)
        *out_len = o;
    return out;
}

void th_utf8_clip(char *s)
{
    size_t len = strlen(s), i = len;
    /* Step back over continuation bytes to the last lead byte. */
    while (i > 0 && ((unsigned char)s[i - 1] & 0xC0) == 0x80)
        i--;
    if (i == 0)
        return;
    unsigned char lead = (unsigned char)s[i - 1];
    size_t need = lead < 0x80 ? 1 : (lead & 0xE0) == 0xC0 ? 2 : (lead & 0xF0) == 0xE0 ? 3 : 4;
    if (len - (i - 1) < need)
        s[i - 1] = '\0';
}

size_t th_utf8_length(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80)
            n++;
    return n;
}

bool th_buf_reserve_grow(th_buf *b, size_t extra)
{
    if (extra > SIZE_MAX / 2 - b->len)
        return false;
    if (b->len + extra + 1 <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p)
        return false;
    b->data = p;
    b->cap = cap;
    return true;
}

bool th_buf_append_grow(th_buf *b, const char *s, size_t len)
{
    if (!th_buf_reserve_grow(b, len))
        return false;
    memcpy(b->data + b->len, s, len);
    b->len += len;
    b->data[b->len] = '\0';
    return true;
}

bool th_buf_printf(th_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !th_buf_reserve_grow(b, (size_t)n))
        return false;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return true;
}

/* Through a volatile pointer: the compiler would fold malloc and memset
 * back into calloc. */
static void *(*volatile zero_fill)(void *, int, size_t) = memset;

void *th_zalloc(size_t size)
{
    void *p = malloc(size);
    if (p)
        zero_fill(p, 0, size);
    return p;
}

long long th_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

long long th_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

bool th_cond_wait_until(pthread_cond_t *cond, pthread_mutex_t *lock, long long deadline_ms)
{
    long long left = deadline_ms - th_now_ms();
    if (left <= 0)
        return false;
    /* Condition variables wait on the realtime clock by default. */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += left / 1000;
    ts.tv_nsec += (left % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(cond, lock, &ts);
    return true;
}

int th_hex_digit(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

size_t th_fmt_u64(char *out, unsigned long long v)
{
    /* Two digits a step, written from the end: ids and sizes are short,
     * and this runs several times a call. */
    static const char pairs[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                "8081828384858687888990919293949596979899";
    size_t n = 1;
    for (unsigned long long t = v; t >= 10; t /= 10)
        n++;
    out[n] = '\0';
    size_t i = n;
    for (; v >= 10; v /= 100) {
        unsigned d = (unsigned)(v % 100);
        out[--i] = pairs[2 * d + 1];
        out[--i] = pairs[2 * d];
        if (i == 0)
            return n;
    }
    out[--i] = (char)('0' + v);
    return n;
}
