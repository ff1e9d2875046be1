/* SPDX-License-Identifier: MIT */
/*
** call/base64.c: th_base64_encode and the image/audio blocks from raw
** bytes (plugin.h "Binary content"); the blocks themselves, and their way
** across the worker IPC, are th_call_image/th_call_audio's.
*/
#include "config.h"

#include <stdint.h>
#include <stdlib.h>

#include "toolhost/plugin.h"

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *th_base64_encode(const void *data, size_t len)
{
    if (!data && len)
        return NULL;
    if (len > (SIZE_MAX - 1) / 4 * 3 - 2)
        return NULL;
    const unsigned char *in = data;
    char *out = malloc((len + 2) / 3 * 4 + 1), *o = out;
    if (!out)
        return NULL;
    size_t i = 0;
    for (; i + 3 <= len; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
        *o++ = alphabet[v >> 18];
        *o++ = alphabet[(v >> 12) & 63];
        *o++ = alphabet[(v >> 6) & 63];
        *o++ = alphabet[v & 63];
    }
    if (i < len) { /* one or two bytes left: pad to four characters */
        uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < len ? (uint32_t)in[i + 1] << 8 : 0);
        *o++ = alphabet[v >> 18];
        *o++ = alphabet[(v >> 12) & 63];
        *o++ = i + 1 < len ? alphabet[(v >> 6) & 63] : '=';
        *o++ = '=';
    }
    *o = '\0';
    return out;
}

typedef th_rc (*media_fn)(th_call *, const char *, const char *);

static th_rc media_bytes(media_fn put, th_call *call, const char *mime_type, const void *data, size_t len)
{
    if (!mime_type || (!data && len))
        return TH_ERR_VALUE;
    char *b64 = th_base64_encode(data, len);
    if (!b64)
        return TH_ERR_NOMEM;
    th_rc rc = put(call, mime_type, b64);
    free(b64);
    return rc;
}

th_rc th_call_image_bytes(th_call *call, const char *mime_type, const void *data, size_t len)
{
    return media_bytes(th_call_image, call, mime_type, data, len);
}

th_rc th_call_audio_bytes(th_call *call, const char *mime_type, const void *data, size_t len)
{
    return media_bytes(th_call_audio, call, mime_type, data, len);
}
