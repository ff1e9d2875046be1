/* SPDX-License-Identifier: MIT */
/*
** call/ask.h: the requests a handler may send its client (th_call_ask),
** named once for the call context, the worker IPC and the protocol.
*/
#ifndef TH_ASK_H
#define TH_ASK_H

#include <stdbool.h>

#include <json-c/json.h>

#include "toolhost/plugin.h"

/* The TH_ASK_* kind of METHOD, or 0 when a client cannot be asked it. */
unsigned th_ask_kind_of(const char *method);

/* The capability name ("elicitation", ...) of one TH_ASK_* bit, or NULL. */
const char *th_ask_capability(unsigned kind);

/* The TH_ASK_* bits a ClientCapabilities object declares (NULL: none). */
unsigned th_ask_caps_of(json_object *capabilities);

/* A question key: 1-64 characters of [A-Za-z0-9_.-]. */
bool th_ask_key_ok(const char *key);

#endif
