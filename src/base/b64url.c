/*
** base/b64url.c: base64url without padding, encoding and strict decoding,
** for requestStates (protocol/mrtr.c) and JWTs and JWKs (transport/jwt*.c).
*/
#include "base/b64url.h"

#include <stdlib.h>

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* Each byte's value in the alphabet: zero for 'A' and for every byte outside
 * it, which th_b64url_decode tells apart. */
static const signed char value_of[256] = {
    ['A'] = 0,  ['B'] = 1,  ['C'] = 2,  ['D'] = 3,  ['E'] = 4,  ['F'] = 5,  ['G'] = 6,  ['H'] = 7,
    ['I'] = 8,  ['J'] = 9,  ['K'] = 10, ['L'] = 11, ['M'] = 12, ['N'] = 13, ['O'] = 14, ['P'] = 15,
    ['Q'] = 16, ['R'] = 17, ['S'] = 18, ['T'] = 19, ['U'] = 20, ['V'] = 21, ['W'] = 22, ['X'] = 23,
    ['Y'] = 24, ['Z'] = 25, ['a'] = 26, ['b'] = 27, ['c'] = 28, ['d'] = 29, ['e'] = 30, ['f'] = 31,
    ['g'] = 32, ['h'] = 33, ['i'] = 34, ['j'] = 35, ['k'] = 36, ['l'] = 37, ['m'] = 38, ['n'] = 39,
    ['o'] = 40, ['p'] = 41, ['q'] = 42, ['r'] = 43, ['s'] = 44, ['t'] = 45, ['u'] = 46, ['v'] = 47,
    ['w'] = 48, ['x'] = 49, ['y'] = 50, ['z'] = 51, ['0'] = 52, ['1'] = 53, ['2'] = 54, ['3'] = 55,
    ['4'] = 56, ['5'] = 57, ['6'] = 58, ['7'] = 59, ['8'] = 60, ['9'] = 61, ['-'] = 62, ['_'] = 63,
};

char *th_b64url_encode(const void *in, size_t len)
{
    const unsigned char *p = in;
    if (len > (((size_t)-1) - 4) / 4 * 3)
        return NULL;
    char *out = malloc(len / 3 * 4 + 4), *o = out;
    if (!out)
        return NULL;
    for (size_t i = 0; i < len; i += 3) {
        unsigned v = (unsigned)p[i] << 16 | (i + 1 < len ? (unsigned)p[i + 1] << 8 : 0) | (i + 2 < len ? p[i + 2] : 0);
        *o++ = alphabet[v >> 18 & 63];
        *o++ = alphabet[v >> 12 & 63];
        if (i + 1 < len)
            *o++ = alphabet[v >> 6 & 63];
        if (i + 2 < len)
            *o++ = alphabet[v & 63];
    }
    *o = '\0';
    return out;
}

unsigned char *th_b64url_decode(const char *s, size_t len, size_t *outlen)
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
        int v = value_of[(unsigned char)s[i]];
        if (v == 0 && s[i] != 'A')
            goto fail;
        acc = (acc << 6 | (unsigned)v) & 0xffffff;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (unsigned char)(acc >> bits);
        }
    }
    if (acc & ((1u << bits) - 1))
        goto fail;
    out[o] = '\0';
    *outlen = o;
    return out;
fail:
    free(out);
    return NULL;
}
