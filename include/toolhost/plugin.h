/* SPDX-License-Identifier: MIT */
/*
** toolhost/plugin.h: the one header a toolhost plugin includes.
**
** It declares the tool descriptor a plugin hands to the host, the typed
** function description the host turns into a JSON Schema and a libffi call,
** and the call context through which a running tool talks to the host.
**
** A plugin is a shared object NAME.so that exports
**
**     const th_tool *register_NAME_tool(th_server *server);
**
** The host dlopen()s the file, calls that function once, checks the ABI
** version in the returned descriptor before reading anything else, validates
** the descriptor against the registry rules and serves the tool as NAME.
**
** Compatibility rules (read these before changing this file):
**   - TH_ABI_VERSION changes only when an existing field changes meaning or
**     place. Plugins built against another ABI version are refused.
**   - Structs passed between plugin and host are append-only. Each carries
**     its size as the plugin saw it (struct_size), so a host can load a
**     plugin built against an older header: fields past struct_size read as
**     zero. A plugin built against a newer header than the host is refused.
**   - Functions are only ever added, never changed.
*/
#ifndef TOOLHOST_PLUGIN_H
#define TOOLHOST_PLUGIN_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
** The ABI version this header describes. Every descriptor carries it in its
** first field; the host compares it before it reads anything else.
*/
#define TH_ABI_VERSION 1

/* Marks the entry point so it stays visible under -fvisibility=hidden. */
#if defined(__GNUC__)
#define TH_EXPORT __attribute__((visibility("default")))
#define TH_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define TH_EXPORT
#define TH_PRINTF(fmt, args)
#endif

/*
** Result codes. Every host function that can fail returns one. The codes
** that describe a refused registration keep the meaning of the exception
** classes in the registry specification the host implements:
**
**   TH_ERR_TYPE       the object is not a tool at all (NULL descriptor,
**                     unreadable struct): the spec's TypeError.
**   TH_ERR_ATTRIBUTE  a required field (name, description, input_schema)
**                     is missing: the spec's AttributeError/TypeError.
**   TH_ERR_VALUE      a field is present but breaks a rule (bad name,
**                     duplicate, description length, bad schema, no
**                     handler): the spec's ValueError.
**   TH_ERR_RUNTIME    the registry is in the wrong state (already serving,
**                     shutting down): the spec's RuntimeError.
*/
typedef enum th_rc {
    TH_OK = 0,
    TH_ERR_TYPE = 1,
    TH_ERR_ATTRIBUTE = 2,
    TH_ERR_VALUE = 3,
    TH_ERR_RUNTIME = 4,
    TH_ERR_ABI = 5,       /* descriptor built against another ABI */
    TH_ERR_NOMEM = 6,     /* allocation failed */
    TH_ERR_MISUSE = 7,    /* a NULL or invalid argument to a th_ function */
    TH_ERR_CANCELLED = 8, /* the client cancelled the call */
    TH_ERR_TOOL = 9,      /* a handler's own failure (see th_handler) */
    TH_ERR_IO = 10,       /* the host could not deliver a message */
    /* Added with th_call_ask (see "asking the client"): */
    TH_ERR_INPUT_REQUIRED = 11, /* the answer comes with the client's retry:
                                 * return from the handler now */
    TH_ERR_CAPABILITY = 12,     /* the client did not declare what was asked */
    TH_ERR_NOT_FOUND = 13       /* (added with resources) a read function has no
                                 * resource at the URI it was asked for */
} th_rc;

/*
** An opaque handle on the host, valid only during the register_NAME_tool()
** call it is passed to. Use it to register further tools (th_server_add_tool)
** and to read why a registration was refused (th_server_errmsg).
**
** Misuse rule: a th_server kept after register_NAME_tool() returned (in a
** global, or by a thread it started) is refused, not undefined behaviour:
** th_server_add_tool() returns TH_ERR_MISUSE and registers nothing,
** th_server_errmsg() returns "", and the host logs the first such use,
** naming the plugin.
*/
typedef struct th_server th_server;

/*
** An opaque handle on one tool call, valid from the moment the handler is
** entered until it returns. It is the only way a running tool talks to the
** host: it collects the result (content blocks, structured content, the
** error flag) and carries progress, logging and cancellation.
**
** Thread rules: the th_call_* functions may be called from the handler's
** thread, or from threads the handler starts and joins before returning, but
** not from two threads at once, except th_call_cancelled(), which any thread
** may call at any time during the call.
**
** Misuse rule: the pointer is a handle, not the host's memory. Used after
** the handler returned (kept in a global for the next call, or by a thread
** still running), every th_call_* function refuses it, in every isolation
** mode: those returning th_rc return TH_ERR_MISUSE (a value handed over is
** still freed), th_call_cancelled() returns true (so a thread left behind
** stops), th_call_tool_name() returns "". Nothing reaches the client; the
** host logs the first such use, naming the tool.
*/
typedef struct th_call th_call;

/*
** A tool handler.
**
** ARGS is the call's "arguments" object, already validated against the
** tool's input schema. It is borrowed: valid until the handler returns; take
** json_object_get() on anything you keep. It is never NULL (an absent
** "arguments" is passed as an empty object).
**
** USER_DATA is the descriptor's user_data.
**
** Return TH_OK when the tool ran, even if it reported a tool-level failure
** with th_call_error() (that becomes a result with isError: true). Any other
** return value also becomes isError: true; if the handler did not call
** th_call_error(), the host writes a message naming the tool and the code.
** A handler must never call exit(), longjmp out, or keep CALL after
** returning.
*/
typedef th_rc (*th_handler)(th_call *call, json_object *args, void *user_data);

/* ---------------------------------------------------------------------
** Typed functions: an ordinary C function as a tool.
**
** Instead of a handler and a hand-written input schema, a descriptor may
** point at a th_function: the C function, its parameters' C types, names and
** descriptions. The host generates the input schema (and an output schema for
** the return value), checks and converts each call's arguments, and calls the
** function through libffi.
** ------------------------------------------------------------------- */

/*
** The C types a typed function may take and return, with the JSON Schema each
** becomes and the C type the function must declare:
**
**   TH_T_BOOL     boolean                          bool
**   TH_T_INT8..   integer, min/max = type's range   int8_t .. int64_t
**   TH_T_UINT8..  integer, min/max = type's range   uint8_t .. uint64_t
**   TH_T_INT      integer, INT_MIN..INT_MAX          int
**   TH_T_LONG     integer, LONG_MIN..LONG_MAX        long
**   TH_T_FLOAT    number, min/max = -/+FLT_MAX     float
**   TH_T_DOUBLE   number                           double
**   TH_T_STRING   string (enum when enum_values)   const char *
**   TH_T_JSON     object                           json_object *
**   TH_T_VOID     (return type only) no result     void
**
** Arrays: OR an element type (not TH_T_JSON, TH_T_VOID) with TH_T_ARRAY. The
** schema becomes {"type":"array","items":<element>}; the C parameter is a
** `const th_array *`, whose items point at `count` elements of the element's
** C type. As a result type (th_function.result) the function returns a
** `th_array *` instead.
*/
typedef enum th_type {
    TH_T_VOID = 0,
    TH_T_BOOL,
    TH_T_INT8,
    TH_T_INT16,
    TH_T_INT32,
    TH_T_INT64,
    TH_T_UINT8,
    TH_T_UINT16,
    TH_T_UINT32,
    TH_T_UINT64,
    TH_T_INT,
    TH_T_LONG,
    TH_T_FLOAT,
    TH_T_DOUBLE,
    TH_T_STRING,
    TH_T_JSON,
    TH_T_ARRAY = 0x100
} th_type;

/*
** An array argument. Owned by the host; valid until the function returns.
** ITEMS points at COUNT elements of the element type's C type (for strings,
** COUNT `const char *`).
*/
typedef struct th_array {
    size_t count;
    const void *items;
} th_array;

/*
** Limits on a typed parameter's value, put into the generated schema (so the
** model sees them) and checked on every call like the rest of it. A bit in
** SET says that a field applies; the others are not read (so a later field
** comes with a new bit, and an older plugin never sets it).
**
** minimum, maximum   TH_C_MINIMUM, TH_C_MAXIMUM: inclusive bounds of an
**                    integer or floating parameter ("minimum", "maximum").
** min_length,        TH_C_MIN_LENGTH, TH_C_MAX_LENGTH: a string's length in
**   max_length       characters, as JSON Schema counts ("minLength",
**                    "maxLength").
** pattern            TH_C_PATTERN: an ECMA-262 regular expression a string
**                    must match somewhere ("pattern"; anchor it with ^...$).
**
** On an array parameter they apply to each item. A bound that does not fit
** the type, minimum above maximum, or a pattern that does not compile is
** refused at registration, naming the parameter; so is a default that
** breaks them.
*/
#define TH_C_MINIMUM 0x1u
#define TH_C_MAXIMUM 0x2u
#define TH_C_MIN_LENGTH 0x4u
#define TH_C_MAX_LENGTH 0x8u
#define TH_C_PATTERN 0x10u

typedef struct th_constraints {
    unsigned set;
    double minimum;
    double maximum;
    size_t min_length;
    size_t max_length;
    const char *pattern;
} th_constraints;

/*
** One parameter of a typed function, in the order the C function takes them.
**
** name          required; must match ^[a-z][a-z0-9_]*$ and be unique.
** type          one of th_type.
** description   optional; copied into the schema.
** optional      false: listed in "required". true: may be omitted, and then
**               the function receives default_json converted to the C type,
**               or zero/NULL when default_json is NULL.
** default_json  JSON text of the default (e.g. "10", "\"metric\"", "false");
**               becomes the schema's "default". Only with optional.
** enum_values   for TH_T_STRING (or an array of strings, where it applies to
**               each item) only: a NULL-terminated list of the allowed
**               values; the schema gets "enum" and calls are checked.
** constraints   optional limits on the value (th_constraints), borrowed
**               while the tool is being registered.
**
** Argument lifetimes: strings, arrays and json_object arguments are owned by
** the host and valid until the function returns. An absent optional array
** without a default is a NULL `const th_array *`. A TH_T_JSON default is a
** fresh copy on every call, so a function may change it.
*/
typedef struct th_param {
    const char *name;
    th_type type;
    const char *description;
    bool optional;
    const char *default_json;
    const char *const *enum_values;
    /* The first of the slots this struct was laid out with (ABI 1 headers
     * before it had reserved[4]): zero means no constraints. */
    const th_constraints *constraints;
    /* Room to grow: params are laid out in arrays, so th_param cannot carry
     * a size of its own. Leave zero (designated initialisers do); a later
     * ABI 1 header may give these slots meanings where zero means absent. */
    const void *reserved[3];
} th_param;

/* th_function.flags */
#define TH_FN_WANTS_CALL 0x1u   /* the C function's first argument is th_call * */
#define TH_FN_FREE_RESULT 0x2u  /* string, array or string-field results were malloc()ed; host free()s them */
#define TH_FN_WANTS_USER_DATA 0x4u /* next argument (after th_call *, if any) is the tool's void *user_data */

/*
** A C function described for the host.
**
** fn        the function, cast to void (*)(void). Its real prototype must be
**           RESULT fn([th_call *,] [void *user_data,] PARAM1, PARAM2, ...),
**           matching the types
**           below exactly: the host calls it through libffi and cannot check.
** result    the return type. The value becomes a text block (its JSON text,
**           or the string itself) and structuredContent {"result": value};
**           TH_T_VOID gives an empty content list. String and JSON results
**           may be NULL, so their output schema also allows null.
**           A TH_T_STRING result is copied before the host returns; it is
**           freed with free() only with TH_FN_FREE_RESULT. A NULL string is
**           JSON null. A TH_T_JSON result is owned by the host afterwards.
**           An array result (element type | TH_T_ARRAY, not TH_T_JSON) is
**           returned as `th_array *` and becomes a JSON array (NULL: null);
**           it is read before the host returns, and with TH_FN_FREE_RESULT
**           the host free()s its string items, its items, then the
**           th_array. Non-finite numbers and NULL or non-UTF-8 strings in
**           it make the call an error result.
** flags     TH_FN_* bits.
** n_params  number of entries in params (at least 0, at most 64).
** params    the parameters, borrowed for the lifetime of the plugin.
** result_description  optional; goes into the output schema.
** result_fields named results instead of one (result must be TH_T_VOID):
**           an array of th_param ended by an entry whose name is NULL, at
**           most 16, each with a name, a bool, integer, floating or string
**           type and an optional description (nothing else). The C
**           function takes one pointer per field after its parameters
**           (`int *sum`, `const char **label`), which it fills; the fields
**           start zeroed (a string NULL, sent as null). The result is
**           structuredContent {"sum": ..., "label": ...}, its JSON text the
**           text block, and the output schema lists every field. With
**           TH_FN_FREE_RESULT the host free()s the string fields.
**
** A function that wants to report a failure sets TH_FN_WANTS_CALL and calls
** th_call_error() on its call argument; its return value is then ignored.
*/
typedef struct th_function {
    void (*fn)(void);
    th_type result;
    unsigned flags;
    size_t n_params;
    const th_param *params;
    const char *result_description;
    /* The first of the slots this struct was laid out with (ABI 1 headers
     * before it had reserved[4]): NULL means one result. */
    const th_param *result_fields;
    /* Room to grow, as in th_param: leave zero. */
    const void *reserved[3];
} th_function;

/* ---------------------------------------------------------------------
** The tool descriptor.
** ------------------------------------------------------------------- */

/*
** What a plugin hands the host. The host copies every string and parses
** every JSON text during registration. A descriptor passed to
** th_server_add_tool() is copied before that call returns, so it may live
** on the stack of register_NAME_tool. The descriptor register_NAME_tool
** RETURNS is read after that function has returned, so it must outlive the
** call: give it static storage (or allocate it and free it in destroy). One
** found on the stack is refused, never read. The handler, user_data and
** function must stay valid while the plugin is loaded.
**
** abi_version   TH_ABI_VERSION: read first, before anything else.
** struct_size   sizeof(th_tool) as the plugin saw it.
** name          required. ^[a-z][a-z0-9_]*$, 1-50 characters; for the
**               descriptor returned by register_NAME_tool, equal to NAME.
** title         optional human-readable name for display.
** description   required. 10-500 characters of UTF-8.
** input_schema  JSON text of the arguments' schema: an object with
**               "type": "object" and "properties", valid JSON Schema 2020-12.
**               Required unless function is set (then it must be NULL: the
**               host generates it).
** output_schema optional JSON text, the schema of structuredContent.
** annotations   optional JSON text of the MCP ToolAnnotations object
**               (readOnlyHint, destructiveHint, idempotentHint,
**               openWorldHint, title).
** handler       the function the host calls; required unless function is set.
** user_data     passed to the handler untouched.
** destroy       optional; called with user_data when the host lets go of a
**               registered tool (never at exit: neither the host nor a
**               worker process calls it then), and for a refused descriptor
**               returned by register_NAME_tool (the plugin cannot learn of
**               that refusal). Not called when th_server_add_tool() refuses
**               a descriptor: its caller sees the result and keeps
**               user_data.
** function      a typed function instead of handler and input_schema.
** timeout_ms    (added in ABI 1, after function) the call deadline this tool
**               asks for, in milliseconds; 0 (and a plugin built before the
**               field existed) means the host's --call-timeout. A value
**               longer than the host's is cut to the host's. On expiry the
**               client is answered with an isError result ("tool 'x' timed
**               out after 500 ms"), th_call_cancelled() turns true, and
**               whatever the handler adds or returns afterwards is
**               discarded.
** task_support  (added with tasks, after timeout_ms) whether a call may run
**               as a task of the 2026-07-28 tasks extension
**               (io.modelcontextprotocol/tasks): TH_TASK_FORBIDDEN (0, and a
**               plugin built before the field existed) runs every call
**               synchronously; TH_TASK_OPTIONAL makes a call from a client
**               that declares the extension a task (the client polls
**               tasks/get for the result); TH_TASK_REQUIRED also refuses a
**               call from a client that does not (-32021). Shown in
**               tools/list as execution.taskSupport. A task's handler is an
**               ordinary handler: it runs in a worker in process isolation,
**               its th_call_ask() questions park the task in input_required
**               until the client answers through tasks/update (the handler
**               then runs again and gets the answers), and tasks/cancel
**               makes th_call_cancelled() true. Returning TH_OK with
**               th_call_error() completes the task with isError; returning
**               another code (or crashing a worker) fails it.
**               TH_TASK_AFTER_INPUT, or-ed with OPTIONAL or REQUIRED, is for
**               a tool that gathers its input first: its calls run
**               synchronously while they ask (InputRequiredResult rounds),
**               and the retry that brings answers becomes the task, its
**               handler seeing those answers. Other values are refused with
**               TH_ERR_VALUE.
** icons         (added after task_support) optional JSON text: an array of
**               MCP Icon objects, each with a string "src" (an https: or
**               data: URI) and optionally "mimeType" and "theme" ("light"
**               or "dark") strings and "sizes", an array of strings such
**               as "48x48" or "any". Shown in tools/list to clients of
**               2025-11-25 and later; NULL (and a plugin built before the
**               field existed) shows none. Anything else is refused with
**               TH_ERR_VALUE.
*/
typedef struct th_tool {
    uint32_t abi_version;
    uint32_t struct_size;
    const char *name;
    const char *title;
    const char *description;
    const char *input_schema;
    const char *output_schema;
    const char *annotations;
    th_handler handler;
    void *user_data;
    void (*destroy)(void *user_data);
    const th_function *function;
    /* ABI 1's first fields end here. Append new fields below; never
     * reorder. A host reads those past the plugin's struct_size as zero. */
    uint32_t timeout_ms;
    uint32_t task_support; /* th_task_support */
    const char *icons;
} th_tool;

/* th_tool.task_support: whether a call may, or must, run as a task. */
typedef enum th_task_support {
    TH_TASK_FORBIDDEN = 0,
    TH_TASK_OPTIONAL = 1,
    TH_TASK_REQUIRED = 2,
    TH_TASK_AFTER_INPUT = 0x10 /* a flag: see th_tool.task_support */
} th_task_support;

/*
** Start a designated initialiser with this so the version and size are
** always right:  static const th_tool t = { TH_TOOL_INIT, .name = "x", ... };
*/
#define TH_TOOL_INIT .abi_version = TH_ABI_VERSION, .struct_size = sizeof(th_tool)

/*
** The entry point's type. A plugin NAME.so must export a function with this
** type named register_NAME_tool. It is called once, on the host's main
** thread, before the host serves any request. Return the descriptor of the
** tool named NAME (in static storage, see th_tool), or NULL to decline (the
** plugin is then refused). While it runs it may register further tools with
** th_server_add_tool().
**
** A plugin's registrations are one transaction: when the returned descriptor
** is refused (or NULL), the tools it added are discarded too (their destroy
** is called) and the plugin serves nothing. Returning a descriptor the
** plugin already added itself with th_server_add_tool() is accepted and
** registers nothing more. A plugin that serves only the tools it added
** returns th_server_added_only(server).
*/
typedef const th_tool *(*th_register_fn)(th_server *server);

/*
** Declare and begin the entry point of plugin NAME, so the symbol is spelled
** right, exported, and has a prototype:
**
**     TH_REGISTER(echo)
**     {
**         (void)server;
**         return &echo_tool;
**     }
**
** expands to `const th_tool *register_echo_tool(th_server *server)`.
*/
#define TH_REGISTER(NAME)                                                  \
    TH_EXPORT const th_tool *register_##NAME##_tool(th_server *server);    \
    TH_EXPORT const th_tool *register_##NAME##_tool(th_server *server)

/* ---------------------------------------------------------------------
** The server handle (registration time only).
** ------------------------------------------------------------------- */

/*
** Register one more tool from inside register_NAME_tool(). The descriptor is
** validated with the same rules as the one the entry point returns, and
** copied; it need not outlive the call. It is served only if the plugin is
** accepted (see th_register_fn).
**
** The tool name OTHER belongs to the plugin file OTHER.so when one is present
** in any plugin directory: adding a tool by that name from another plugin is
** refused with TH_ERR_VALUE, whichever plugin loads first.
**
** Returns TH_OK, or the code of the rule it broke; th_server_errmsg() then
** says which. A refused tool changes nothing, and is reported by the host on
** stderr with the plugin file; the plugin may go on registering others.
*/
th_rc th_server_add_tool(th_server *server, const th_tool *tool);

/*
** What register_NAME_tool() returns instead of a descriptor when the plugin
** serves only the tools it added with th_server_add_tool() (and none named
** NAME). The host accepts the plugin if at least one of them was accepted,
** and refuses it otherwise. The result is a marker, never a descriptor to
** read: return it and do nothing else with it.
*/
const th_tool *th_server_added_only(th_server *server);

/*
** The message of the last refused th_server_add_tool() on SERVER, or "" when
** the last call succeeded. The string belongs to the host and is valid until
** the next th_server_add_tool() call or the end of register_NAME_tool().
*/
const char *th_server_errmsg(const th_server *server);

/* ---------------------------------------------------------------------
** The call context: building a result.
**
** A result is a list of content blocks, optional structured content, and an
** error flag. Functions append in call order. Strings are copied. Each
** returns TH_OK, TH_ERR_MISUSE for a NULL required argument, TH_ERR_NOMEM,
** or TH_ERR_VALUE when the result cannot go on the wire (see below).
**
** What is handed over must be valid on the wire; the host sees to it:
** - C strings (texts, messages, URIs, names, MIME types) should be UTF-8; a
**   byte that is not is shown as U+FFFD ("caf\xe9" arrives as "caf\uFFFD"),
**   so the message still arrives.
** - json-c values (th_call_content, th_call_structured, TH_T_JSON results)
**   are checked when handed over, in one walk: NaN or an infinity, a double
**   whose own text is not a JSON number (json_object_new_double_s), a
**   string or key that is not UTF-8, a block the MCP schema refuses, or
**   nesting deeper than 128 levels make the call's result an isError result
**   naming the problem and where ("structuredContent.avg: NaN is not a
**   JSON number"). The call owns the value from then on: do not change it.
** - A result larger than the host's --max-result-bytes (estimated JSON
**   size) becomes an isError result saying so.
** Once a result is refused, further content returns TH_ERR_VALUE.
** ------------------------------------------------------------------- */

/* Append a text block {"type":"text","text":TEXT}. */
th_rc th_call_text(th_call *call, const char *text);

/* Like th_call_text, with printf formatting. */
th_rc th_call_textf(th_call *call, const char *fmt, ...) TH_PRINTF(2, 3);

/*
** Append an image block {"type":"image","data":BASE64,"mimeType":MIME}.
** BASE64 is the already-encoded data.
*/
th_rc th_call_image(th_call *call, const char *mime_type, const char *base64);

/* Append an audio block {"type":"audio","data":BASE64,"mimeType":MIME}. */
th_rc th_call_audio(th_call *call, const char *mime_type, const char *base64);

/*
** Append a resource link {"type":"resource_link","uri":URI,"name":NAME,...}.
** DESCRIPTION and MIME_TYPE may be NULL.
*/
th_rc th_call_resource_link(th_call *call, const char *uri, const char *name,
                            const char *description, const char *mime_type);

/*
** Append an embedded text resource
** {"type":"resource","resource":{"uri":URI,"mimeType":MIME,"text":TEXT}}.
** MIME_TYPE may be NULL.
*/
th_rc th_call_resource_text(th_call *call, const char *uri, const char *mime_type,
                            const char *text);

/* Append an embedded binary resource (BASE64 "blob" instead of "text"). */
th_rc th_call_resource_blob(th_call *call, const char *uri, const char *mime_type,
                            const char *base64);

/*
** Append any content block as a json-c object, for fields the helpers above
** do not cover (annotations, _meta). Takes ownership of BLOCK, also on
** failure. The block must be an object with a known string "type" and the
** members the MCP schema requires for it ("text" for text, "data" and
** "mimeType" for image and audio, "uri" and "name" for resource_link, a
** "resource" object with "uri" and "text" or "blob" for resource).
*/
th_rc th_call_content(th_call *call, json_object *block);

/*
** Set the result's structuredContent. Takes ownership of VALUE, also on
** failure; a second call replaces the first. VALUE must be a JSON object
** (NULL clears). When the tool declares an output schema, VALUE should
** match it. If the result has no content blocks
** when the handler returns, the host adds VALUE's JSON text as a text block,
** as the specification recommends for older clients.
*/
th_rc th_call_structured(th_call *call, json_object *value);

/*
** Mark the result as a tool error (isError: true) and append a text block
** with the formatted message, so that the model can read what went wrong.
** Use it for failures the caller can correct; the handler should then return
** TH_OK.
*/
th_rc th_call_error(th_call *call, const char *fmt, ...) TH_PRINTF(2, 3);

/* ---------------------------------------------------------------------
** The call context: progress, logging, cancellation.
** ------------------------------------------------------------------- */

/*
** Report progress. When the client's request carried a progressToken, the
** host sends notifications/progress with PROGRESS, TOTAL (omitted when
** negative) and MESSAGE (may be NULL); otherwise it does nothing. PROGRESS
** should increase from call to call. Returns TH_OK even when nothing was
** sent, TH_ERR_CANCELLED once the call is cancelled, TH_ERR_VALUE (nothing
** sent; logged once per call on stderr) when PROGRESS or TOTAL is NaN or
** infinite, which JSON cannot carry: mind done / total with total == 0.
*/
th_rc th_call_progress(th_call *call, double progress, double total, const char *message);

/* Log levels, RFC 5424 order, as MCP's logging/setLevel names them. */
typedef enum th_log_level {
    TH_LOG_DEBUG = 0,
    TH_LOG_INFO,
    TH_LOG_NOTICE,
    TH_LOG_WARNING,
    TH_LOG_ERROR,
    TH_LOG_CRITICAL,
    TH_LOG_ALERT,
    TH_LOG_EMERGENCY
} th_log_level;

/*
** Log a message about this call. At or above the level the client asked for
** it is sent as notifications/message (logger: the tool's name); otherwise
** it goes to the host's stderr. Never write to stdout: the host keeps stdout
** for protocol messages and points fd 1 at stderr.
*/
th_rc th_call_log(th_call *call, th_log_level level, const char *fmt, ...) TH_PRINTF(3, 4);

/*
** True once the client has cancelled this call, its deadline has passed
** (th_tool.timeout_ms, the host's --call-timeout), or the host is shutting
** down. A long-running handler should poll it and return early; whatever it
** returns afterwards is discarded. Any thread may call it.
*/
bool th_call_cancelled(const th_call *call);

/* The name of the tool being called. Valid for the duration of the call. */
const char *th_call_tool_name(const th_call *call);

/* ---------------------------------------------------------------------
** Registration-time logging (added after ABI 1's first functions).
** ------------------------------------------------------------------- */

/*
** Log a message about this plugin while it registers: a missing setting, a
** library too old, a tool left out on purpose. th_call_log needs a call and
** cannot be used here, and fprintf(stderr) ignores the operator's choice.
**
** The line goes to the host's stderr as "plugin PATH: MESSAGE" (PATH is the
** plugin file), at LEVEL, and only when LEVEL is at or above --log-level
** (default info), like the host's own lines. It is never sent to the
** client: no session exists yet. FMT is printf-style; the formatted message
** should be UTF-8 and is cut at 4096 bytes.
**
** With --isolation=process, registration runs once in a scanner process and
** again in the plugin's worker, so a line can appear more than once; the
** loading passes log at warning and above.
**
** Returns TH_OK, TH_ERR_MISUSE (nothing logged) when SERVER or FMT is NULL
** or SERVER is used after register_NAME_tool() returned (see th_server).
** Valid only during register_NAME_tool(), from any thread it waits for.
*/
th_rc th_server_log(th_server *server, th_log_level level, const char *fmt, ...) TH_PRINTF(3, 4);

/* ---------------------------------------------------------------------
** The call context: asking the client (added after th_server_log).
**
** A handler may need something only the client has: an answer from the
** user (elicitation), a completion from the client's model (sampling), or
** the client's filesystem roots. th_call_ask() asks for it, in both eras
** of the protocol, with one contract:
**
**   - Before 2026-07-28 (a session that began with initialize) the host
**     sends the client a JSON-RPC request (elicitation/create,
**     sampling/createMessage, roots/list) and th_call_ask() BLOCKS until
**     the client answers. Cancellation and the call's deadline still
**     apply: they end the wait with TH_ERR_CANCELLED.
**
**   - From 2026-07-28 on, servers may not send requests: the tool call is
**     answered with an InputRequiredResult listing what it needs, and the
**     client sends the tools/call again with the answers (the multi
**     round-trip pattern). A C handler cannot be suspended across two HTTP
**     requests, so the host RE-RUNS the handler from the start on the
**     retry, with the answers available. On the first run th_call_ask()
**     records the request and returns TH_ERR_INPUT_REQUIRED; on the retry
**     the same call (same KEY) returns TH_OK and the answer.
**
** So a handler that asks must be written to run more than once:
**   1. Ask before doing anything with side effects (or make those
**      idempotent): everything before the ask runs again on the retry.
**   2. On TH_ERR_INPUT_REQUIRED, stop: return TH_ERR_INPUT_REQUIRED (any
**      return value is taken the same way, and any content added is
**      discarded). A handler may first make further INDEPENDENT asks (each
**      with its own key), so the client gets them in one round.
**   3. Give each question a KEY that is the same on every run, and unique
**      within the call ("user_name", "step2"). Answers of earlier rounds
**      stay available: the host carries them in the integrity-protected
**      requestState, so a handler asking step1 then step2 over two rounds
**      gets step1's answer again on the third run without a new question.
**   4. Check the answer: it comes from the client like the arguments do.
**      An elicitation may be declined or cancelled ("action").
**
** A handler written this way works in both eras unchanged.
**
** Which client capabilities exist is known per call: th_call_client_can()
** says whether the client declared one. Asking for one it did not declare
** returns TH_ERR_CAPABILITY; in the 2026-07-28 era the host then also
** answers the request with error -32021 (MissingRequiredClientCapability,
** naming the capability), whatever the handler does next, as the
** specification requires. Check first when the tool can do without.
**
** With --isolation=process (the default), the ask crosses to the host and
** back; the contract is the same.
** ------------------------------------------------------------------- */

/* What a client may be asked for; also the bits of th_call_client_can. */
typedef enum th_ask_kind {
    TH_ASK_ELICITATION = 1, /* elicitation/create, capability "elicitation" */
    TH_ASK_SAMPLING = 2,    /* sampling/createMessage, capability "sampling" */
    TH_ASK_ROOTS = 4        /* roots/list, capability "roots" */
} th_ask_kind;

/*
** True when the client declared every capability in KINDS (TH_ASK_* bits)
** for this call: in its initialize (before 2026-07-28) or in the request's
** _meta clientCapabilities (2026-07-28). False for an ended CALL.
*/
bool th_call_client_can(const th_call *call, unsigned kinds);

/*
** Ask the client: METHOD is "elicitation/create", "sampling/createMessage"
** or "roots/list"; PARAMS its params object (NULL: {}), taken over by the
** host, also on failure. KEY names the question within the call (see the
** contract above): 1-64 characters of [A-Za-z0-9_.-].
**
** On TH_OK, *RESULT is the client's result object (ElicitResult,
** CreateMessageResult, ListRootsResult), a new reference the handler must
** json_object_put(). Otherwise *RESULT is NULL and the code says why:
**   TH_ERR_INPUT_REQUIRED  (2026-07-28) recorded; return from the handler.
**   TH_ERR_CAPABILITY      the client did not declare the capability.
**   TH_ERR_CANCELLED       the call was cancelled or passed its deadline
**                          while waiting.
**   TH_ERR_IO              the client answered with an error, or could not
**                          be reached (no transport to send on).
**   TH_ERR_VALUE           METHOD is none of the three, PARAMS is not an
**                          object, KEY breaks its rule, or (2026-07-28)
**                          KEY was already asked in this run.
**   TH_ERR_MISUSE          CALL or RESULT is NULL, or CALL has ended.
** Called from the handler's thread (or one it joins) only.
*/
th_rc th_call_ask(th_call *call, const char *key, const char *method, json_object *params,
                  json_object **result);

/*
** An elicitation in form mode: MESSAGE shown to the user, REQUESTED_SCHEMA
** the JSON text of a flat object schema of primitive properties (strings,
** numbers, integers, booleans, enums; defaults per SEP-1034, titled enums
** per SEP-1330). th_call_ask(call, key, "elicitation/create", ...) with
** those params; same results. *RESULT looks like
** {"action":"accept","content":{...}}; "decline" and "cancel" carry no
** content. A REQUESTED_SCHEMA that is not a JSON object is TH_ERR_VALUE.
*/
th_rc th_call_elicit(th_call *call, const char *key, const char *message, const char *requested_schema,
                     json_object **result);

/*
** A sampling request with one user message of text PROMPT and MAX_TOKENS
** (> 0). For anything richer (system prompt, model preferences, several
** messages), build the params and use th_call_ask(). *RESULT is the
** CreateMessageResult ({"role","content":{"type":"text","text"},"model",
** "stopReason"}).
*/
th_rc th_call_sample(th_call *call, const char *key, const char *prompt, int max_tokens, json_object **result);

/* roots/list: *RESULT is {"roots":[{"uri":"file:///...","name":...}]}. */
th_rc th_call_list_roots(th_call *call, const char *key, json_object **result);

/* ---------------------------------------------------------------------
** Resources (added after ABI 1's first functions).
**
** A plugin may serve MCP resources (data a client reads by URI) next to,
** or instead of, tools: it registers them from register_NAME_tool with
** th_server_add_resource() and th_server_add_resource_template(), and the
** host serves resources/list, resources/templates/list, resources/read and
** (protocol revisions before 2026-07-28) resources/subscribe. A plugin
** that registers only resources returns th_server_added_only(server).
** ------------------------------------------------------------------- */

/*
** A read function: produce the contents of the resource at URI.
**
** CALL is a call context like a tool's (th_call_*): append the contents
** with th_call_resource_text() or th_call_resource_blob() (the URI given
** there is the one the client sees for that part; a read may return
** several parts, e.g. a directory's files). A plain th_call_text() block
** becomes a text part with URI and the descriptor's mime_type, an image
** or audio block a blob part. th_call_log(), th_call_progress() and
** th_call_cancelled() work as for tools; th_call_tool_name() returns the
** resource's name.
**
** URI is the URI the client asked for (borrowed, valid until return).
** VARS is, for a template, an object of the template's variables as
** matched in URI and percent-decoded ({"id": "123"} for test://x/{id});
** for a plain resource an empty object. Borrowed, like URI. A decoded
** variable may contain any byte sequence a URI can spell, "/" and ".."
** included: check it before using it as a path.
**
** Return TH_OK with the contents; TH_ERR_NOT_FOUND when there is nothing
** at URI (the client gets the protocol's "Resource not found" error for
** its revision: -32002 before 2026-07-28, -32602 from then on, with the
** URI in the error's data); TH_ERR_VALUE when the URI is refused on
** purpose (a path escaping its root): the client gets -32602 with the
** message of th_call_error() if one was given. Anything else, or
** th_call_error() alone, is -32603 with that message.
*/
typedef th_rc (*th_read_fn)(th_call *call, const char *uri, json_object *vars, void *user_data);

/*
** A resource or a resource template. Copied during registration, so it may
** live on the stack of register_NAME_tool; read, user_data and destroy must
** stay valid while the plugin is loaded.
**
** abi_version   TH_ABI_VERSION: read first.
** struct_size   sizeof(th_resource) as the plugin saw it.
** uri           th_server_add_resource(): required, an absolute URI
**               (RFC 3986: a scheme of a letter then letters, digits, "+",
**               "-" or ".", then ":"), at most 2048 bytes, no spaces or
**               control characters. Must be NULL for a template.
** uri_template  th_server_add_resource_template(): required, an RFC 6570
**               template whose expressions are simple ones ({name},
**               name of letters, digits and "_"), e.g. file:///{path}; its
**               text before the first "{" is an absolute URI's start.
**               Must be NULL for a plain resource. A variable matches the
**               shortest non-empty text up to the literal that follows it
**               (the last one: the rest of the URI, "/" included).
** name          required: a programmatic name, 1-128 characters of UTF-8.
** title         optional display name.
** description   optional, UTF-8.
** mime_type     optional, "type/subtype" (e.g. "text/plain").
** size          optional size in bytes, listed as "size"; 0 means not given.
** annotations   optional JSON text of the MCP Annotations object:
**               "audience" (array of "user"/"assistant"), "priority"
**               (number 0-1), "lastModified" (ISO 8601 string).
** read          required: the read function.
** user_data     passed to read untouched.
** destroy       optional; called with user_data when the host lets go of
**               the resource (not at exit), as for th_tool.destroy.
** timeout_ms    (added after destroy) the deadline of a read, in
**               milliseconds, as th_tool.timeout_ms: 0 (and a plugin built
**               before the field existed) means the host's --call-timeout,
**               a longer one is cut to the host's. On expiry the client
**               gets JSON-RPC error -31001 ("resource 'URI' timed out
**               after 500 ms"), th_call_cancelled() turns true, and what
**               the read adds or returns afterwards is discarded.
*/
typedef struct th_resource {
    uint32_t abi_version;
    uint32_t struct_size;
    const char *uri;
    const char *uri_template;
    const char *name;
    const char *title;
    const char *description;
    const char *mime_type;
    uint64_t size;
    const char *annotations;
    th_read_fn read;
    void *user_data;
    void (*destroy)(void *user_data);
    /* Append new fields below; never reorder. */
    uint32_t timeout_ms;
} th_resource;

/* Start a th_resource designated initialiser with this. */
#define TH_RESOURCE_INIT .abi_version = TH_ABI_VERSION, .struct_size = sizeof(th_resource)

/*
** Register a resource (RES->uri set, uri_template NULL) from inside
** register_NAME_tool(). Validated and copied before it returns; served
** only if the plugin is accepted, and taken back with the plugin's tools
** if it is refused. The rules, each refusal naming the field and the
** rule (read it back with th_server_errmsg()):
**   - RES NULL: TH_ERR_TYPE; abi_version or struct_size wrong: TH_ERR_ABI;
**   - uri or name missing: TH_ERR_ATTRIBUTE;
**   - uri not absolute, name too long, mime_type malformed, annotations
**     not an Annotations object, no read function, a uri another
**     resource already has (naming the plugin that registered it first):
**     TH_ERR_VALUE;
**   - after the host started serving: TH_ERR_RUNTIME.
** A refused resource changes nothing and is logged with the plugin file.
** Returns TH_OK or the code; TH_ERR_MISUSE for a stale SERVER.
*/
th_rc th_server_add_resource(th_server *server, const th_resource *res);

/*
** Register a resource template (RES->uri_template set, uri NULL): the same
** rules, with the template's syntax checked and duplicates judged by the
** template text. resources/read of a URI no plain resource has goes to the
** first template, in registration order across all plugins, that matches
** it.
*/
th_rc th_server_add_resource_template(th_server *server, const th_resource *res);

/*
** Tell the host that the resource at URI changed. Clients subscribed to
** URI (resources/subscribe) get notifications/resources/updated. Any
** thread of the plugin may call it at any time while the plugin is
** loaded, also from inside a read function; no handle is needed. In
** --isolation=process the notice crosses from the plugin's worker to the
** host; a worker runs only once one of its tools or resources was used
** (a subscription to one of its resources starts it), so updates a
** plugin announces before are not seen.
** Returns TH_OK (also when nobody is subscribed), TH_ERR_MISUSE when URI
** is NULL or not an absolute URI.
*/
th_rc th_resource_updated(const char *uri);

/* ---------------------------------------------------------------------
** Plugin settings (added after th_server_log).
** ------------------------------------------------------------------- */

/*
** The value of this plugin's setting KEY, or NULL when it is not set. A
** plugin NAME.so has the settings the operator gave for NAME:
**
**   command line   --set NAME.key=value, --set-secret NAME.key=value
**   environment    TOOLHOST_NAME_KEY=value (NAME and KEY upper-cased),
**                  which is how MCP clients pass a server's "env"
**   file           --config FILE, in its [NAME] section:
**                      key = value
**                      secret key = value
**
** When a key is set in more than one place, the command line wins over the
** environment, which wins over the file. KEY must match ^[a-z][a-z0-9_]*$
** (at most 64 characters); any other KEY is never set.
**
** Secrets: a value given with --set-secret, marked "secret" in the file, or
** taken from the environment (where clients put credentials) is secret.
** The host never writes a secret value to its log, to `toolhost inspect`
** output or to its registry cache, and hands it to a worker process over
** the worker's socket, never on a command line or in its environment
** (workers do not inherit TOOLHOST_* variables). The plugin must take the
** same care: do not log it, and do not put it in a tool's description.
**
** Ownership: the string belongs to the host and is valid until
** register_NAME_tool() returns. A handler that needs it copies it (strdup)
** into the user_data of the tools it registers, and frees it in destroy.
**
** Read settings only here, at registration: with --isolation=process,
** registration runs in the scanner and again in the plugin's worker, and
** both see the same settings. A plugin that declines without a required
** setting should say so with th_server_log() and return NULL.
**
** Returns NULL as well when SERVER or KEY is NULL or SERVER is used after
** register_NAME_tool() returned (see th_server).
*/
const char *th_server_config(th_server *server, const char *key);

/* ---------------------------------------------------------------------
** Binary content
** ------------------------------------------------------------------- */

/*
** LEN bytes at DATA as standard base64 (RFC 4648, with padding), a new
** NUL-terminated string the caller frees with free(). NULL when out of
** memory, or when DATA is NULL and LEN is not 0. Usable anywhere, also at
** registration.
*/
char *th_base64_encode(const void *data, size_t len);

/*
** Whether the LEN bytes at S are well-formed UTF-8 (RFC 3629: no overlong
** form, surrogate or code point above U+10FFFF; a NUL byte is UTF-8): the
** rule the host holds every string it sends to, so a plugin can tell
** whether bytes arrive as they are, as text, or must go as a blob. S may
** be NULL when LEN is 0. Usable anywhere, also at registration. (Added
** after th_call_audio_bytes.)
*/
bool th_utf8_valid(const char *s, size_t len);

/*
** th_call_image / th_call_audio from raw bytes: LEN bytes at DATA, encoded
** here. DATA is read before the call returns. TH_ERR_VALUE for a NULL
** MIME_TYPE (or NULL DATA with LEN > 0), TH_ERR_NOMEM when out of memory;
** otherwise what th_call_image / th_call_audio return.
*/
th_rc th_call_image_bytes(th_call *call, const char *mime_type, const void *data, size_t len);
th_rc th_call_audio_bytes(th_call *call, const char *mime_type, const void *data, size_t len);

/* ---------------------------------------------------------------------
** Prompts and completion (added after resources).
**
** A plugin may serve MCP prompts (message templates a client fills in and
** shows its user) and completions (suggested values for a prompt's
** arguments or a resource template's variables): it registers them from
** register_NAME_tool with th_server_add_prompt() and
** th_server_add_completion(), and the host serves prompts/list,
** prompts/get and completion/complete. A plugin that registers nothing
** else returns th_server_added_only(server).
** ------------------------------------------------------------------- */

/*
** A get function: produce the messages of the prompt.
**
** CALL is a call context like a tool's: each content block added with
** th_call_text(), th_call_textf(), th_call_image(), th_call_audio(),
** th_call_resource_text(), th_call_resource_blob() or
** th_call_resource_link() becomes one PromptMessage, in order, with the
** role "user"; th_call_prompt_role() switches the role of the blocks
** added after it. th_call_log(), th_call_progress(), th_call_cancelled()
** and th_call_ask() work as for tools (th_call_ask: the client's answer
** comes with its retry of prompts/get in 2026-07-28); th_call_tool_name()
** returns the prompt's name.
**
** ARGUMENTS is an object of the client's arguments, every value a string
** (borrowed, valid until return). The host checked it first: every
** argument declared required is present, no undeclared one is.
**
** Return TH_OK with the messages. TH_ERR_VALUE with th_call_error() for
** arguments the prompt refuses (the client gets -32602 with that
** message); anything else, or th_call_error() alone, is -32603.
*/
typedef th_rc (*th_prompt_fn)(th_call *call, json_object *arguments, void *user_data);

/*
** A prompt. Copied during registration (it may live on the stack); get,
** user_data and destroy must stay valid while the plugin is loaded.
**
** abi_version   TH_ABI_VERSION: read first.
** struct_size   sizeof(th_prompt) as the plugin saw it.
** name          required: 1-128 characters of A-Z, a-z, 0-9, "_", "-"
**               and "."; unique among all plugins' prompts.
** title         optional display name (listed from 2025-06-18 on).
** description   optional, UTF-8.
** arguments     optional JSON text: an array of PromptArgument objects,
**               {"name": "...", "description": "...", "required": true},
**               "name" required and unique, "title" allowed too.
** icons         optional JSON text: an array of Icon objects, each with a
**               string "src" (and optional "mimeType", "sizes", "theme").
** get           required: the get function.
** user_data     passed to get untouched.
** destroy       optional; called with user_data when the host lets go of
**               the prompt, as for th_tool.destroy.
** timeout_ms    (added after destroy) the deadline of a get, as
**               th_resource.timeout_ms is of a read ("prompt 'NAME' timed
**               out after 500 ms").
*/
typedef struct th_prompt {
    uint32_t abi_version;
    uint32_t struct_size;
    const char *name;
    const char *title;
    const char *description;
    const char *arguments;
    const char *icons;
    th_prompt_fn get;
    void *user_data;
    void (*destroy)(void *user_data);
    /* Append new fields below; never reorder. */
    uint32_t timeout_ms;
} th_prompt;

/* Start a th_prompt designated initialiser with this. */
#define TH_PROMPT_INIT .abi_version = TH_ABI_VERSION, .struct_size = sizeof(th_prompt)

/*
** Register a prompt from inside register_NAME_tool(). Validated and copied
** before it returns; served only if the plugin is accepted. Refusals name
** the field and the rule (th_server_errmsg()):
**   - PROMPT NULL: TH_ERR_TYPE; abi_version or struct_size wrong: TH_ERR_ABI;
**   - name missing: TH_ERR_ATTRIBUTE;
**   - name breaking its rule, a name another prompt already has (naming
**     the plugin that registered it first), arguments or icons not as
**     described above, no get function: TH_ERR_VALUE;
**   - after the host started serving: TH_ERR_RUNTIME.
** Returns TH_OK or the code; TH_ERR_MISUSE for a stale SERVER.
*/
th_rc th_server_add_prompt(th_server *server, const th_prompt *prompt);

/*
** In a get function: the blocks added from now on are messages of ROLE,
** "user" or "assistant" (the default is "user"). It adds a marker block
** (an empty text block whose _meta names the role) that the host turns
** into the switch, so it crosses process isolation with the result; call
** it only in a get function, where the host removes the marker (in a tool
** handler it would stay as an empty text block). TH_ERR_VALUE for another
** role, TH_ERR_MISUSE for a call that has ended.
*/
th_rc th_call_prompt_role(th_call *call, const char *role);

/*
** A completion function: suggest values for ARGUMENT (a prompt argument's
** or a template variable's name) whose text so far is VALUE (borrowed).
** CONTEXT is an object of the other arguments the client already filled
** in (completion/complete's context.arguments; {} when none), borrowed.
** Add each suggestion, best first, with th_call_text(CALL, value). The
** host sends at most 100 of them, with "total" the number added and
** "hasMore" true when more were added than sent. Return TH_OK; anything
** else is -32603 with the message of th_call_error() if one was given.
*/
typedef th_rc (*th_complete_fn)(th_call *call, const char *argument, const char *value, json_object *context,
                                void *user_data);

/*
** What a completion function completes: the arguments of the prompt named
** PROMPT, or the variables of the resource template URI_TEMPLATE (exactly
** one of the two). Copied during registration; complete, user_data and
** destroy must stay valid while the plugin is loaded. TIMEOUT_MS (added
** after destroy) is the deadline of a completion, as th_resource.timeout_ms
** is of a read ("completion of prompt 'NAME' timed out after 500 ms").
*/
typedef struct th_completion {
    uint32_t abi_version;
    uint32_t struct_size;
    const char *prompt;
    const char *uri_template;
    th_complete_fn complete;
    void *user_data;
    void (*destroy)(void *user_data);
    /* Append new fields below; never reorder. */
    uint32_t timeout_ms;
} th_completion;

#define TH_COMPLETION_INIT .abi_version = TH_ABI_VERSION, .struct_size = sizeof(th_completion)

/*
** Register a completion function from inside register_NAME_tool(). The
** prompt or template it names may come from any plugin, registered before
** or after it; completion/complete for a reference nobody completes
** answers an empty list. With --qualified-names, PROMPT is qualified with
** the completing plugin's toolbox and name, as its own prompts are; to
** complete another plugin's prompt then, give its exposed name
** (BOX__PLUGIN__PROMPT). Refusals: COMPLETION NULL: TH_ERR_TYPE; ABI:
** TH_ERR_ABI; neither or both of prompt and uri_template: TH_ERR_ATTRIBUTE;
** no complete function, or a reference another completion already has
** (naming the first registrant): TH_ERR_VALUE; after the start:
** TH_ERR_RUNTIME.
*/
th_rc th_server_add_completion(th_server *server, const th_completion *completion);

/* ---------------------------------------------------------------------
** Skills (added after prompts): the MCP skills extension (SEP-2640,
** io.modelcontextprotocol/skills, protocol revision 2026-07-28 on).
**
** A skill is a folder of files an agent loads on demand: a SKILL.md whose
** YAML frontmatter names and describes it, plus any supporting files. A
** plugin registers a skill's files with th_server_add_skill(); the host
** keeps a copy, computes each file's SHA-256 digest and size, serves every
** file as a resource at skill://NAME/PATH (NAME from the frontmatter) and
** answers skills/list, skills/get and resources/directory/read. Reads of
** skill files never run plugin code, in either isolation mode.
** ------------------------------------------------------------------- */

/*
** One file of a skill.
**
** path       required: the file's path inside the skill, "SKILL.md" for
**            the manifest, "references/FORMS.md" for one in a
**            subfolder; "/"-separated segments of A-Z, a-z, 0-9, ".", "_",
**            "-" and "~" (so the URI needs no escaping), not "." or "..",
**            at most 128 bytes in all.
** data       the file's bytes (SIZE of them; may be NULL when SIZE is 0).
** size       the number of bytes at DATA.
** mime_type  optional, "type/subtype"; NULL: from the file's extension
**            (SKILL.md is always text/markdown).
*/
typedef struct th_skill_file {
    const char *path;
    const void *data;
    size_t size;
    const char *mime_type;
} th_skill_file;

/*
** A skill: its files, copied during registration (the array and the bytes
** may be freed when th_server_add_skill returns).
**
** abi_version   TH_ABI_VERSION: read first.
** struct_size   sizeof(th_skill) as the plugin saw it.
** files         required: NFILES files, one of them "SKILL.md".
** nfiles        1-512 (the extension's limit per skill).
*/
typedef struct th_skill {
    uint32_t abi_version;
    uint32_t struct_size;
    const th_skill_file *files;
    size_t nfiles;
    /* Append new fields below; never reorder. */
} th_skill;

#define TH_SKILL_INIT .abi_version = TH_ABI_VERSION, .struct_size = sizeof(th_skill)

/*
** Register a skill from inside register_NAME_tool(). Validated and copied
** before it returns; served only if the plugin is accepted. SKILL.md must
** be UTF-8 that begins with a frontmatter block ("---" lines around it)
** written in this subset of YAML:
**   key: value          one per line; keys of letters, digits, "_", "-",
**                       "." and "/"; a key at most once
**   key:                followed by lines indented with spaces, each
**     sub: value        "sub: value": a mapping one level deep (metadata)
**   value               plain text on one line, 'single' or "double"
**                       quoted (escapes \" \\ \/ \b \f \n \r \t \uXXXX);
**                       plain true/false, null/~/nothing and numbers
**                       are typed as YAML 1.2 types them
**   # comment           whole lines, or after a plain value's " #"
** Anything else (lists, flow collections {} [], block scalars | >,
** anchors, aliases, tags, multi-line values, tabs) is refused naming the
** line. The frontmatter must have name (1-64 characters of a-z, 0-9 and
** "-", no leading, trailing or double "-") and description (1-1024
** characters); compatibility, when given, is a string of at most 500,
** and metadata a mapping of strings whose keys do not start with
** "io.modelcontextprotocol/" (reserved). The skill is served at
** skill://NAME/SKILL.md, listed with name and description as its
** resource's name and description.
**
** Refusals, each naming the field, the file (and line) and the rule
** (th_server_errmsg()):
**   - SKILL NULL: TH_ERR_TYPE; abi_version or struct_size wrong: TH_ERR_ABI;
**   - files NULL or nfiles 0: TH_ERR_ATTRIBUTE;
**   - more than 512 files or 16 MiB in all, a path breaking its rule or
**     given twice, a path that is both a file and a folder, data NULL
**     with size > 0, no SKILL.md, a SKILL.md breaking the rules above, a
**     name another skill already has (naming the plugin that registered
**     it first), a mime_type that is not type/subtype: TH_ERR_VALUE;
**   - after the host started serving: TH_ERR_RUNTIME.
** Returns TH_OK or the code; TH_ERR_MISUSE for a stale SERVER.
*/
th_rc th_server_add_skill(th_server *server, const th_skill *skill);

/* ---------------------------------------------------------------------
** Declared needs (added after th_server_add_skill).
**
** With --isolation=process each plugin's worker runs in a sandbox that
** denies by default: it may read the system's libraries and certificates
** and its own file, and nothing else; it may not write, execute a program
** or connect anywhere. A plugin declares at registration what more it
** needs, and under --sandbox=declared (the default) its worker is given
** exactly that; the operator sees it in `toolhost inspect` and may grant
** more, or (--sandbox=strict) only what they grant.
** ------------------------------------------------------------------- */

/* What a plugin may need. */
typedef enum th_need {
    TH_NEED_READ = 1, /* read the file, or the tree below the directory, VALUE */
    TH_NEED_WRITE,    /* create, write and remove below VALUE (a directory), or write the file */
    TH_NEED_CONNECT,  /* TCP connect to "HOST:PORT" */
    TH_NEED_EXEC,     /* execute the program VALUE */
} th_need;

/*
** Declare that this plugin's handlers need KIND of access to VALUE, written
** as an operator would: an absolute path ("/srv/data") for READ, WRITE and
** EXEC, "HOST:PORT" ("api.example.com:443") for CONNECT (the sandbox
** enforces the port; the host is shown as written). Call it from
** register_NAME_tool only, before returning: the sandbox is applied before
** the plugin is opened, so the host learns a plugin's needs when it lists
** its tools, and a worker that finds its plugin declaring more than was
** listed refuses it, naming the need. Declaring the same need twice is
** harmless. A path read from a setting (th_server_config) is the usual
** VALUE: `files` declares the root it serves.
**
** Returns TH_OK; TH_ERR_VALUE for an unknown KIND or a VALUE that breaks
** its rule (th_server_errmsg() names it); TH_ERR_MISUSE for a NULL or stale
** SERVER; TH_ERR_NOMEM.
*/
th_rc th_server_need(th_server *server, th_need kind, const char *value);

#ifdef __cplusplus
}
#endif

#endif /* TOOLHOST_PLUGIN_H */
