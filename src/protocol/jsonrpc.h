/* SPDX-License-Identifier: MIT */
/*
** protocol/jsonrpc.h: JSON-RPC 2.0 as MCP uses it: parsing one message and telling
** requests, notifications and responses apart, and building result and error
** messages. Knows nothing of MCP methods or transports.
*/
#ifndef TH_JSONRPC_H
#define TH_JSONRPC_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "base/util.h"

/* Deepest nesting of arrays and objects a message may have. */
#define TH_RPC_MAX_DEPTH 128

/* The JSON-RPC and MCP error codes toolhost sends. */
enum {
    TH_RPC_PARSE_ERROR = -32700,
    TH_RPC_INVALID_REQUEST = -32600,
    TH_RPC_METHOD_NOT_FOUND = -32601,
    TH_RPC_INVALID_PARAMS = -32602,
    TH_RPC_INTERNAL_ERROR = -32603,
    /* Overloaded: too many calls, or one waited too long for a thread. MCP
     * 2026-07-28 asks new implementations not to use -32000..-32019 and to
     * put codes it does not define outside -32768..-32000. */
    TH_RPC_SERVER_BUSY = -31000,
    TH_RPC_HEADER_MISMATCH = -32020,
    TH_RPC_MISSING_CAPABILITY = -32021,
    TH_RPC_UNSUPPORTED_VERSION = -32022,
    /* A resources/read, prompts/get or completion/complete that ran past
     * --call-timeout (a tool call says so in an isError result instead);
     * outside the reserved range for the reason above. */
    TH_RPC_TIMED_OUT = -31001,
    /* A tools/call refused by --rate-limit, --rate-limit-per-principal or
     * --concurrency-limit before it ran; data.retryAfterMs says when to
     * retry. Over HTTP it is a 429 with Retry-After. */
    TH_RPC_RATE_LIMITED = -31002,
};

typedef enum th_rpc_kind {
    TH_RPC_REQUEST,      /* method and id */
    TH_RPC_NOTIFICATION, /* method, no id */
    TH_RPC_RESPONSE,     /* result or error, no method: ignored by a server */
    TH_RPC_INVALID,      /* answer with error_code/error_message to id */
    TH_RPC_BATCH,        /* a non-empty array: MSG holds the elements */
} th_rpc_kind;

/*
** A parsed message. MSG owns the whole tree (a request or notification may
** have none: see own_id); ID, METHOD and PARAMS point into it (borrowed). For TH_RPC_INVALID, ID is the request's id when one could be
** read (else NULL, answered with "id": null).
*/
typedef struct th_rpc_msg {
    th_rpc_kind kind;
    json_object *msg;
    json_object *id;
    const char *method;
    json_object *params; /* NULL when absent */
    int error_code;
    bool silent; /* TH_RPC_INVALID, but a notification: never answered */
    /* A plain request is read without an object for its envelope: MSG is
     * NULL then, and these own what ID, PARAMS and METHOD point to. */
    json_object *own_id, *own_params;
    /* A plain tools/call whose params have no members but "name" (a string
     * without escapes), "arguments" and "_meta" is read without an object
     * for params, which would be made only to be taken apart: PARAMS is
     * NULL then, CALL_LITE true, and these hold its members. CALL_ARGS and
     * CALL_META are owned here (NULL: absent or JSON null; a taker sets
     * them NULL). */
    bool call_lite, call_has_name, call_has_args, call_has_meta;
    json_object *call_args, *call_meta;
    /* CALL_ARGS's text as the client sent it (in the parsed text: valid
     * only while that is; NULL when not lite), for a proxied call that
     * forwards it instead of printing the tree. */
    const char *call_args_text;
    size_t call_args_len;
    /* The texts come last: a message is emptied by zeroing what is above
     * them and their first bytes, not their 300-odd bytes (twice a call). */
    char error_message[160];
    char method_here[40];
    char call_name[128]; /* NUL-terminated, no NUL inside */
} th_rpc_msg;

/*
** Parse LEN bytes (one message, no newline). Always fills OUT; release it
** with th_rpc_msg_clear. Unparseable text or invalid UTF-8 is TH_RPC_INVALID
** with -32700 (so are NaN and Infinity, which json-c would take); a
** structurally wrong message, params null or a scalar included, is -32600
** (-32602 for params that are an array). Numbers and ids are kept exactly as
** sent: an integer json-c would clamp becomes a double that serialises as
** its literal, and a string with a lone surrogate escape serialises as sent.
** A non-empty array is TH_RPC_BATCH (MSG is the array; an empty one is
** -32600): whether it is served is the session's business.
*/
void th_rpc_parse(const char *text, size_t len, th_rpc_msg *out);
/* Classify VALUE, one element of a batch, as th_rpc_parse would classify
** a message (an array is invalid here: batches do not nest). OUT takes its
** own reference to VALUE. */
void th_rpc_parse_value(json_object *value, th_rpc_msg *out);
void th_rpc_msg_clear(th_rpc_msg *msg);

/* Whether MSG gets an answer: a request, a message refused with an error,
** or a batch holding one (a notification or a response gets none). */
bool th_rpc_expects_answer(const th_rpc_msg *msg);

/*
** Like th_rpc_result for an object RESULT, built without a tree for the
** envelope: the message is text spliced together when it is serialised,
** with the members of TAIL (the text of a JSON object, e.g. precomputed
** "{\"resultType\":...}"; NULL: none) appended to RESULT's. TAIL must
** outlive the message, and RESULT must not have TAIL's keys. Takes RESULT;
** ID is borrowed. NULL on allocation failure.
*/
json_object *th_rpc_result_spliced(json_object *id, json_object *result, const char *tail);

/*
** A result response made as text, with no tree for it (a tool call's,
** printed by call/callctx.c's th_call_finish_text):
** th_rpc_response_text_begin appends {"jsonrpc":"2.0","id":ID,"result":
** to OUT and sets *RESULT_AT to where the result goes; the caller appends
** the result, one compact JSON object fit for the wire, since it goes out
** as it is; th_rpc_response_text_end splices TAIL's members into it (as
** th_rpc_result_spliced does; NULL: none) and closes the message. False
** when memory ran out (OUT is then as it was, for _begin).
*/
bool th_rpc_response_text_begin(th_buf *out, json_object *id, size_t *result_at);
bool th_rpc_response_text_end(th_buf *out, size_t result_at, const char *tail);

/*
** That text as a message to send: TEXT (LEN bytes, copied) with its
** result at RESULT_AT. th_rpc_write and th_rpc_serialize write the text;
** th_rpc_member finds ID (borrowed: a reference is taken) and parses the
** result, members as sent, only when a caller asks for it. NULL on
** allocation failure, or when TEXT plainly is not such a response.
*/
json_object *th_rpc_response_text(json_object *id, const char *text, size_t len, size_t result_at);

/*
** json_object_object_get_ex for an outgoing message, seeing through the
** spliced form above (whose members are not a json-c object's): a transport
** that routes by "id" or tells responses from requests must use this.
** *OUT is borrowed from MSG.
*/
bool th_rpc_member(json_object *msg, const char *key, json_object **out);

/* {"jsonrpc":"2.0","id":ID,"result":RESULT}. Takes RESULT; ID is borrowed
** (NULL -> null). NULL on allocation failure. */
json_object *th_rpc_result(json_object *id, json_object *result);

/* {"jsonrpc":"2.0","id":ID,"error":{code,message[,data]}}. Takes DATA (may
** be NULL); ID borrowed. */
json_object *th_rpc_error(json_object *id, int code, const char *message, json_object *data);

/* A notification {"jsonrpc":"2.0","method":METHOD,"params":PARAMS}; takes
** PARAMS. */
json_object *th_rpc_notification(const char *method, json_object *params);

/*
** Serialise MSG compactly (no newline: framing is the transport's). The
** string belongs to MSG and is valid until MSG is freed or serialised again;
** *LEN receives its length.
*/
const char *th_rpc_serialize(json_object *msg, size_t *len);

/*
** Append MSG's text, as th_rpc_serialize writes it, to OUT: a tool call's
** result costs neither an envelope object nor a printbuf per object, and
** the caller's buffer is reused from message to message. False when
** memory ran out; OUT then holds part of the message, which the caller
** cuts back to its former length.
*/
bool th_rpc_write(json_object *msg, th_buf *out);

/*
** A text key for a request id (for in-flight tables), equal exactly when the
** ids are: numbers compare by value (8 and 8.0 are one id; no two distinct
** literals share a key, however large), strings by value, with a lone
** surrogate kept apart from U+FFFD. Malloc'd (the caller frees it); NULL for
** an id that is not a string or number, or on allocation failure.
** Serialises ID, so call it only from the thread that owns the message.
*/
char *th_rpc_id_key(json_object *id);

/* th_rpc_id_key written into HERE (SIZE bytes) when it is a common id's
 * short key, which it then returns; else th_rpc_id_key's malloc'd key
 * (or NULL). The caller frees the result unless it is HERE. */
char *th_rpc_id_key_in(json_object *id, char *here, size_t size);

#endif
