/* SPDX-License-Identifier: MIT */
/*
** transport/httphead.c: the grammar of the header values admission trusts
** (see httphead.h). Each parser takes the whole value or refuses it: a value
** that only begins like a good one is what a smuggler or a rebinding page
** sends.
*/
#include "config.h"

#include <arpa/inet.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "transport/httphead.h"

static bool is_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_hex(char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* RFC 3986 reg-name: unreserved, pct-encoded, sub-delims. The length of
 * the one at S, or 0 when a percent sign is not followed by two hex digits. */
static size_t reg_name(const char *s)
{
    size_t i = 0;
    for (;;) {
        char c = s[i];
        if (c == '%') {
            if (!is_hex(s[i + 1]) || !is_hex(s[i + 2]))
                return 0;
            i += 3;
        } else if (is_alpha(c) || is_digit(c) || (c && strchr("-._~!$&'()*+,;=", c))) {
            i++;
        } else {
            return i;
        }
    }
}

/* S is empty or ":" *DIGIT with a value a TCP port can have. */
static bool port_ok(const char *s)
{
    if (!*s)
        return true;
    if (*s++ != ':')
        return false;
    size_t n = strspn(s, "0123456789");
    if (s[n] || n > 5)
        return false;
    return n == 0 || strtol(s, NULL, 10) <= 65535;
}

bool th_http_authority(const char *auth, char *host, size_t size)
{
    size_t n;
    if (auth[0] == '[') {
        /* Only IPv6 literals: IPvFuture names nothing a server binds. */
        const char *end = strchr(auth, ']');
        char lit[INET6_ADDRSTRLEN + 1];
        unsigned char bin[16];
        if (!end || (size_t)(end - auth - 1) >= sizeof lit)
            return false;
        memcpy(lit, auth + 1, (size_t)(end - auth - 1));
        lit[end - auth - 1] = '\0';
        if (inet_pton(AF_INET6, lit, bin) != 1)
            return false;
        n = (size_t)(end - auth) + 1;
    } else {
        n = reg_name(auth);
    }
    if (n == 0 || n >= size || !port_ok(auth + n))
        return false;
    for (size_t i = 0; i < n; i++)
        host[i] = (char)(auth[i] >= 'A' && auth[i] <= 'Z' ? auth[i] + 32 : auth[i]);
    host[n] = '\0';
    return true;
}

bool th_http_origin_host(const char *origin, char *host, size_t size)
{
    if (!is_alpha(origin[0]))
        return false;
    size_t n = 1 + strspn(origin + 1, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-.");
    if (strncmp(origin + n, "://", 3) != 0)
        return false;
    return th_http_authority(origin + n + 3, host, size);
}

/* RFC 9110 qvalue: "0" ["." 0*3DIGIT] / "1" ["." 0*3("0")], as thousandths;
 * -1 when it is not one. */
static int qvalue(const char *s, size_t n)
{
    if (n == 0 || (s[0] != '0' && s[0] != '1') || n > 5 || (n > 1 && s[1] != '.'))
        return -1;
    int q = (s[0] - '0') * 1000, scale = 100;
    for (size_t i = 2; i < n; i++, scale /= 10) {
        if (!is_digit(s[i]) || (s[0] == '1' && s[i] != '0'))
            return -1;
        q += (s[i] - '0') * scale;
    }
    return q;
}

/* How closely the range R (LEN bytes, "type/subtype", no parameters) names
 * TYPE: 3 exactly, 2 as "major/(*)", 1 as "(*)/(*)", 0 not at all. */
static int specificity(const char *r, size_t len, const char *type)
{
    size_t major = strcspn(type, "/");
    if (len == strlen(type) && strncasecmp(r, type, len) == 0)
        return 3;
    if (len == major + 2 && strncasecmp(r, type, major + 1) == 0 && r[major + 1] == '*')
        return 2;
    return len == 3 && memcmp(r, "*/*", 3) == 0 ? 1 : 0;
}

/* The q parameter among the parameters P..END (";" separated), in
 * thousandths: 1000 when absent, -1 when malformed. */
static int range_q(const char *p, const char *end)
{
    while (p < end) {
        p += strspn(p, " \t;");
        size_t n = (size_t)(end - p), plen = strcspn(p, ";");
        if (plen > n)
            plen = n;
        size_t tl = plen;
        while (tl > 0 && (p[tl - 1] == ' ' || p[tl - 1] == '\t'))
            tl--;
        if (tl >= 2 && (p[0] == 'q' || p[0] == 'Q') && p[1] == '=')
            return qvalue(p + 2, tl - 2);
        p += plen;
    }
    return 1000;
}

bool th_http_accepts(const char *list, const char *type)
{
    if (!list)
        return true;
    int best = 0, best_q = 0;
    for (const char *p = list; *p;) {
        p += strspn(p, " \t,");
        const char *end = p + strcspn(p, ",");
        size_t rlen = strcspn(p, ";, \t");
        if (rlen > (size_t)(end - p))
            rlen = (size_t)(end - p);
        int s = specificity(p, rlen, type);
        int q = s ? range_q(p + rlen, end) : -1;
        /* RFC 9110 12.5.1: the most specific range decides. */
        if (s > best && q >= 0) {
            best = s;
            best_q = q;
        } else if (s == best && q > best_q) {
            best_q = q;
        }
        p = end;
    }
    return best > 0 && best_q > 0;
}

bool th_http_length(const char *s, size_t *value)
{
    size_t v = 0;
    if (!is_digit(*s))
        return false;
    for (; is_digit(*s); s++) {
        if (v > (SIZE_MAX - 9) / 10)
            return false;
        v = v * 10 + (size_t)(*s - '0');
    }
    *value = v;
    return *s == '\0';
}
