/* SPDX-License-Identifier: MIT */
/*
** call/media.c: the image and audio blocks from raw bytes (plugin.h
** "Binary content"), encoded by base/base64.c; the blocks themselves, and
** their way across the worker IPC, are th_call_image/th_call_audio's.
*/
#include "config.h"

#include <stdlib.h>

#include "base/base64.h"
#include "toolhost/plugin.h"

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
