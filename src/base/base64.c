/* SPDX-License-Identifier: MIT */
/*
** base/base64.c: encoding to base64url and to standard base64 (the
** plugins' th_base64_encode too), and strict decoding of both: one loop
** each way for both alphabets.
*/
#include "base/base64.h"

#include <stdint.h>
#include <stdlib.h>

static const char url_alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
static const char std_alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Each byte's value plus one in an alphabet; 0 for a byte outside it. The
 * two alphabets differ in their last two characters only. */
#define LETTERS(...)                                                                                                   \
    ['A'] = 1, ['B'] = 2, ['C'] = 3, ['D'] = 4, ['E'] = 5, ['F'] = 6, ['G'] = 7, ['H'] = 8, ['I'] = 9, ['J'] = 10,     \
    ['K'] = 11, ['L'] = 12, ['M'] = 13, ['N'] = 14, ['O'] = 15, ['P'] = 16, ['Q'] = 17, ['R'] = 18, ['S'] = 19,       \
    ['T'] = 20, ['U'] = 21, ['V'] = 22, ['W'] = 23, ['X'] = 24, ['Y'] = 25, ['Z'] = 26, ['a'] = 27, ['b'] = 28,       \
    ['c'] = 29, ['d'] = 30, ['e'] = 31, ['f'] = 32, ['g'] = 33, ['h'] = 34, ['i'] = 35, ['j'] = 36, ['k'] = 37,       \
    ['l'] = 38, ['m'] = 39, ['n'] = 40, ['o'] = 41, ['p'] = 42, ['q'] = 43, ['r'] = 44, ['s'] = 45, ['t'] = 46,       \
    ['u'] = 47, ['v'] = 48, ['w'] = 49, ['x'] = 50, ['y'] = 51, ['z'] = 52, ['0'] = 53, ['1'] = 54, ['2'] = 55,       \
    ['3'] = 56, ['4'] = 57, ['5'] = 58, ['6'] = 59, ['7'] = 60, ['8'] = 61, ['9'] = 62, __VA_ARGS__
static const unsigned char url_values[256] = {LETTERS(['-'] = 63, ['_'] = 64)};
static const unsigned char std_values[256] = {LETTERS(['+'] = 63, ['/'] = 64)};

/* The LEN bytes at IN in ALPHABET, padded with '=' to a multiple of four
 * characters when PAD says so: the one encoder of the host and its plugins. */
static char *encode(const unsigned char *in, size_t len, const char *alphabet, int pad)
{
    if (len > (SIZE_MAX - 1) / 4 * 3 - 2)
        return NULL;
    char *out = malloc((len + 2) / 3 * 4 + 1), *o = out;
    if (!out)
        return NULL;
    for (size_t i = 0; i < len; i += 3) {
        unsigned v = (unsigned)in[i] << 16 | (i + 1 < len ? (unsigned)in[i + 1] << 8 : 0) | (i + 2 < len ? in[i + 2] : 0);
        *o++ = alphabet[v >> 18 & 63];
        *o++ = alphabet[v >> 12 & 63];
        if (i + 1 < len || pad)
            *o++ = i + 1 < len ? alphabet[v >> 6 & 63] : '=';
        if (i + 2 < len || pad)
            *o++ = i + 2 < len ? alphabet[v & 63] : '=';
    }
    *o = '\0';
    return out;
}

char *th_b64url_encode(const void *in, size_t len)
{
    return encode(in, len, url_alphabet, 0);
}

char *th_base64_encode(const void *data, size_t len)
{
    if (!data && len)
        return NULL;
    return encode(data, len, std_alphabet, 1);
}

/* The LEN characters at S in the alphabet of VALUES, unpadded, into a new
 * buffer (see th_b64url_decode); CANONICAL refuses unused bits set. */
static unsigned char *decode(const char *s, size_t len, const unsigned char *values, int canonical, size_t *outlen)
{
    /* One character left over carries 6 bits: no byte ends there. */
    if (len % 4 == 1)
        return NULL;
    unsigned char *out = malloc(len / 4 * 3 + 3);
    if (!out)
        return NULL;
    size_t o = 0;
    unsigned acc = 0, bits = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned v = values[(unsigned char)s[i]];
        if (!v)
            goto fail;
        acc = (acc << 6 | (v - 1)) & 0xffffff;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (unsigned char)(acc >> bits);
        }
    }
    if (canonical && acc & ((1u << bits) - 1))
        goto fail;
    out[o] = '\0';
    *outlen = o;
    return out;
fail:
    free(out);
    return NULL;
}

unsigned char *th_b64url_decode(const char *s, size_t len, size_t *outlen)
{
    return decode(s, len, url_values, 1, outlen);
}

unsigned char *th_base64_decode(const char *s, size_t len, size_t *outlen)
{
    if (len % 4)
        return NULL;
    /* Up to two '=' end the text; decode() refuses one anywhere else, and
     * the length it is left with tells a third. */
    size_t n = len;
    if (n && s[n - 1] == '=')
        n--;
    if (n && s[n - 1] == '=')
        n--;
    return decode(s, n, std_values, 0, outlen);
}
