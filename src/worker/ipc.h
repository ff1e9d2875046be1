/* SPDX-License-Identifier: MIT */
/*
** worker/ipc.h: the framing between the host and its child processes: on a
** pair of pipes (worker/spawn.h says why pipes), u32 payload length, u8 type, u32 call id (little-endian
** host order: both ends are the same binary), then the payload, JSON text.
*/
#ifndef TH_IPC_H
#define TH_IPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include <json-c/json.h>

#include "base/util.h"

#define TH_IPC_HEADER 9

/* Frame types. The first frame on every channel is HELLO (host to child). */
typedef enum th_ipc_type {
    TH_IPC_HELLO = 1, /* host->child: role and configuration */
    TH_IPC_CALL,      /* host->worker: u32 caps (the TH_ASK_* bits the
                       * client declared), the tool's name, a NUL, then the
                       * arguments' JSON text, the only part parsed (see
                       * th_worker_parse_fn) */
    TH_IPC_CANCEL,    /* host->worker: cancel call id */
    TH_IPC_PROGRESS,  /* worker->host: {"progress","total","message"} */
    TH_IPC_LOG,       /* worker->host: {"level","data"} */
    TH_IPC_RESULT,    /* worker->host: the CallToolResult */
    TH_IPC_READY,     /* worker->host: {"tools":[names]} once loaded */
    TH_IPC_LOADING,   /* scanner->host: id = index of the plugin it opens */
    TH_IPC_PLUGIN,    /* scanner->host: the outcome for plugin id */
    TH_IPC_DONE,      /* scanner->host: every plugin was scanned */
    TH_IPC_LOGGED,    /* host->scanner: plugin id's output is logged; load
                       * the next (the scanner waits for it, so that each
                       * plugin's output is told apart from the next one's) */
    TH_IPC_ASK,       /* worker->host: th_call_ask {"key","method","params"} */
    TH_IPC_ANSWER,    /* host->worker: {"rc":th_rc[,"result":{...}]} for it */
    TH_IPC_READ,      /* host->worker: read a resource, {"key","template",
                       * "uri","vars"} (worker/resproxy.h); answered by a
                       * RESULT {"rc": th_rc, "result": CallToolResult} */
    TH_IPC_UPDATED,   /* worker->host, id 0: th_resource_updated {"uri"} */
    TH_IPC_FAILED,    /* worker->host: a RESULT the worker wrote itself for a
                       * failed call (th_call_failed): the host's failure */
    TH_IPC_PROMPT,    /* host->worker: run a prompt's get {"name","arguments"}
                       * (worker/promptproxy.h); answered like a READ */
    TH_IPC_COMPLETE,  /* host->worker: run a completion {"prompt"|
                       * "uri_template","argument","value","context"} */
} th_ipc_type;

typedef struct th_ipc_frame {
    uint8_t type;
    uint32_t id;
    const char *payload; /* inside the reader's buffer, NUL-terminated;
                          * valid until the next read on that reader */
    size_t len;
} th_ipc_frame;

/* Reads frames from FD. Zero-initialise, then set fd and max (the largest
 * payload accepted). */
typedef struct th_ipc_reader {
    int fd;
    size_t max;
    char *buf;
    size_t start, len, cap; /* unread bytes are buf[start, start+len) */
    size_t saved_at;        /* the byte a payload's NUL replaced, put */
    char saved_byte;        /* back before the buffer is used again */
    bool saved;
} th_ipc_reader;

void th_ipc_reader_free(th_ipc_reader *r);

/*
** One read(2) into R's buffer (it blocks if FD is blocking and empty).
** Returns the byte count, 0 at end of stream, -1 with errno on error.
** A pipe wakes a reader asleep in read(2) for incoming bytes only, so a
** blocking fill costs one system call and one wake-up.
*/
long th_ipc_fill(th_ipc_reader *r);

/*
** The next complete frame from what has been read: 1 and *F, 0 when more
** bytes are needed, -1 (ERR says why) when the length is over R->max.
*/
int th_ipc_next(th_ipc_reader *r, th_ipc_frame *f, th_err *err);

/*
** Blocking: the next frame (1), a clean end of stream between frames (0),
** or -1 with ERR: an oversized length, a read error, or end of stream
** inside a frame.
*/
int th_ipc_recv(th_ipc_reader *r, th_ipc_frame *f, th_err *err);

/*
** Whether th_ipc_send blocks SIGPIPE around its write (two more system
** calls) so that a peer that is gone shows as TH_ERR_IO, never as a
** signal. On by default. A process whose SIGPIPE disposition no plugin code
** can change turns it off: the host in process isolation (its handler,
** base/signals.c, stays) and a worker (its own handler, installed before
** any plugin code; a plugin that replaces it chooses what its worker does
** once the host is gone). Call before the first send.
*/
void th_ipc_guard_sigpipe(bool on);

/*
** Write one frame with one writev (looping only on a short write). Callers
** that share FD between threads hold a lock around it. TH_ERR_IO on error.
*/
th_rc th_ipc_send(int fd, th_ipc_type type, uint32_t id, const char *payload, size_t len);

/* th_ipc_send of a payload in NPARTS pieces (at most 8), still one frame and one writev. */
th_rc th_ipc_sendv(int fd, th_ipc_type type, uint32_t id, const struct iovec *parts, size_t nparts);

/* th_ipc_send of OBJ's compact JSON text (NULL: an empty payload). */
th_rc th_ipc_send_json(int fd, th_ipc_type type, uint32_t id, json_object *obj);

/* The frame th_ipc_sendv would write, appended to B instead, for a sender
 * that writes several at once (th_ipc_write); false (B as it was) when out
 * of memory or too long. */
bool th_ipc_appendv(th_buf *b, th_ipc_type type, uint32_t id, const struct iovec *parts, size_t nparts);

/* Write LEN bytes of frames th_ipc_appendv made, as th_ipc_send does. */
th_rc th_ipc_write(int fd, const void *data, size_t len);

/*
** Parse a payload from the other end, which is not trusted: strict JSON,
** valid UTF-8, nesting bounded. NULL with ERR on failure.
*/
json_object *th_ipc_parse(const char *payload, size_t len, th_err *err);

#endif
