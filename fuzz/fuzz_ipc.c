/* SPDX-License-Identifier: MIT */
/*
** fuzz/fuzz_ipc.c: a libFuzzer harness for what a worker writes on its pipe:
** worker/ipc.c's frame reader on a real pipe fed in pieces, and
** worker/frames.c's handling of each frame for a call in flight.
*/

/*
** In process isolation the worker runs plugin code, which can write any
** bytes on the host's pipe. The input's first byte picks the reader's
** limit, how the stream is cut into writes, and whether results are
** parsed (a tool with an outputSchema); the rest is the stream. Checked:
**
** - the reader against a model that reads the same bytes by hand
**   (u32 length, u8 type, u32 id, payload): every frame it returns is the
**   model's next one, NUL-terminated, and it fails exactly where the
**   model finds a length over the limit; at the end of the stream it ends
**   cleanly between frames and reports a torn last frame otherwise;
** - every frame goes where supervisor.c's route_frames and exchange send
**   it: UPDATED to th_resource_updated, PROGRESS, LOG, RESULT and FAILED
**   onto a host call (th_worker_apply_frame), a new call after each
**   final frame; what the call then sends the client (its notifications
**   and the response th_rpc_write writes) must be valid UTF-8 JSON on one
**   line, whatever the frames held. ASK answers on the pipe and is left out.
** ASan/UBSan catch overreads; a hang shows as libFuzzer's timeout.
*/
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "base/log.h"
#include "base/util.h"
#include "call/callctx.h"
#include "call/result.h"
#include "fuzz_json.h"
#include "plugin/resources.h"
#include "protocol/jsonrpc.h"
#include "worker/frames.h"
#include "worker/ipc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t *cur_data;
static size_t cur_size;

#define DIE(what) fz_die("fuzz_ipc", what, (const char *)cur_data, cur_size)

/* TEXT must be what the host may put on a client's line: valid UTF-8 JSON
 * json-c parses in full, no control byte. */
static void check_line(const char *text, size_t len, const char *what)
{
    if (!fz_is_line(text, len))
        DIE(what);
}

static void on_notify(void *ctx, json_object *n)
{
    (void)ctx;
    if (!fz_notice_is_line(n))
        DIE("a notification from a worker's frame is not one line of JSON");
}

static void on_updated(const char *uri, void *ctx)
{
    (void)ctx;
    if (!uri || !th_utf8_valid(uri, strlen(uri)))
        DIE("th_resource_updated passed on a URI that is not UTF-8");
}

static th_call *new_call(json_object *token)
{
    th_call_hooks hooks = {
        .notify = on_notify,
        .progress_token = token,
        .log_to_client = true,
        .log_level = TH_LOG_DEBUG,
        .max_result_bytes = 1 << 20,
    };
    th_call *call = th_call_new("fz_tool", &hooks);
    if (!call)
        abort();
    return call;
}

/* Finish CALL as the host does and check the response it writes. */
static void finish_call(th_call *call)
{
    json_object *result = th_call_finish(call, TH_OK);
    th_call_free(call);
    json_object *id = json_object_new_int(1);
    json_object *msg = th_rpc_result_spliced(id, result, "{\"resultType\":\"complete\"}");
    th_buf out = {0};
    if (!msg || !th_rpc_write(msg, &out))
        abort();
    check_line(out.data, out.len, "the response to a worker's frames is not one line of JSON");
    free(out.data);
    json_object_put(msg);
    json_object_put(id);
}

/* The model: the frame at DATA[*AT..) as ipc.h defines it. 1 and the
 * frame, 0 when the bytes end first, -1 when its length is over MAX. */
static int model_next(const uint8_t *d, size_t n, size_t *at, size_t max, th_ipc_frame *f)
{
    if (n - *at < TH_IPC_HEADER)
        return 0;
    uint32_t plen, id;
    memcpy(&plen, d + *at, 4);
    memcpy(&id, d + *at + 5, 4);
    if (plen > max)
        return -1;
    if (n - *at - TH_IPC_HEADER < plen)
        return 0;
    f->type = d[*at + 4];
    f->id = id;
    f->len = plen;
    f->payload = (const char *)d + *at + TH_IPC_HEADER;
    *at += TH_IPC_HEADER + plen;
    return 1;
}

typedef struct run {
    const uint8_t *stream;
    size_t n, at; /* the model's position */
    size_t max;
    bool parse;
    th_call *call;
    json_object *token;
    unsigned frames;
} run;

/* A frame the reader returned: the model's next one, then routed. */
static void take(run *r, const th_ipc_frame *f)
{
    th_ipc_frame m;
    if (model_next(r->stream, r->n, &r->at, r->max, &m) != 1)
        DIE("the reader returned a frame the model does not see");
    if (m.type != f->type || m.id != f->id || m.len != f->len || memcmp(m.payload, f->payload, f->len) != 0)
        DIE("the reader returned another frame than the model");
    if (f->payload[f->len] != '\0')
        DIE("a frame's payload is not NUL-terminated");
    if (f->len > r->max)
        DIE("the reader returned a frame over its limit");
    if (++r->frames > 256) /* enough to route; the reader is still checked */
        return;
    if (f->type == TH_IPC_UPDATED) {
        th_worker_apply_updated(f->payload, f->len);
        return;
    }
    if (!r->call)
        r->call = new_call(r->token);
    if (th_worker_apply_frame(r->call, "fz_tool", r->parse, f->type, f->payload, f->len)) {
        finish_call(r->call);
        r->call = NULL;
    }
}

/* Drain every complete frame; -1 when the reader failed (then the model
 * must see a length over the limit next). */
static int drain(run *r, th_ipc_reader *rd)
{
    th_ipc_frame f;
    th_err err;
    int got;
    while ((got = th_ipc_next(rd, &f, &err)) == 1)
        take(r, &f);
    if (got < 0) {
        th_ipc_frame m;
        size_t at = r->at;
        if (model_next(r->stream, r->n, &at, r->max, &m) != -1)
            DIE("the reader failed where the model sees no oversized frame");
        if (!err.msg[0])
            DIE("the reader failed without saying why");
    }
    return got;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool once;
    if (!once) {
        once = true;
        signal(SIGPIPE, SIG_IGN);
        th_resources_on_update(on_updated, NULL);
        th_log_set_threshold(TH_LOG_EMERGENCY); /* the host's own lines are not checked */
    }
    if (size < 1)
        return 0;
    cur_data = data;
    cur_size = size;
    /* Control byte: the limit (bits 0-1), the pieces' sizes (2-5), parse (6). */
    static const size_t limits[] = {0, 64, 4096, 1 << 20};
    uint8_t ctl = data[0];
    run r = {.stream = data + 1, .n = size - 1, .max = limits[ctl & 3], .parse = ctl & 0x40};
    r.token = json_object_new_int(42);
    unsigned piece = 1u + ((ctl >> 2) & 15) * 37u; /* 1 .. 556 bytes */

    int fds[2];
    if (pipe(fds) != 0)
        abort();
    fcntl(fds[0], F_SETFL, O_NONBLOCK);
    th_ipc_reader rd = {.fd = fds[0], .max = r.max};
    int got = 0;
    size_t sent = 0;
    /* The stream in pieces, each read before the next is written: frames
     * split at every offset, the reader's buffer moved and grown. */
    while (sent < r.n && got >= 0) {
        size_t k = r.n - sent < piece ? r.n - sent : piece;
        if (write(fds[1], r.stream + sent, k) != (ssize_t)k)
            abort();
        sent += k;
        long n;
        while ((n = th_ipc_fill(&rd)) > 0)
            if ((got = drain(&r, &rd)) < 0)
                break;
        if (got >= 0 && n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
            DIE("th_ipc_fill failed on a live pipe");
    }
    close(fds[1]);
    if (got >= 0) {
        /* The end of the stream, read as a blocking reader would. */
        fcntl(fds[0], F_SETFL, 0);
        th_ipc_frame f;
        th_err err;
        while ((got = th_ipc_recv(&rd, &f, &err)) == 1)
            take(&r, &f);
        th_ipc_frame m;
        size_t at = r.at;
        int want = model_next(r.stream, r.n, &at, r.max, &m);
        if (got == 0 && (want != 0 || r.at != r.n))
            DIE("th_ipc_recv ended cleanly inside a frame");
        if (got < 0 && want == 0 && r.at == r.n)
            DIE("th_ipc_recv failed at a clean end of stream");
        if (got < 0 && !err.msg[0])
            DIE("th_ipc_recv failed without saying why");
    }
    close(fds[0]);
    th_ipc_reader_free(&rd);
    if (r.call) /* the stream ended under a call: the host fails it */
        finish_call(r.call);
    json_object_put(r.token);
    return 0;
}
