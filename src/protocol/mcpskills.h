/* SPDX-License-Identifier: MIT */
/*
** protocol/mcpskills.h: the methods of the skills extension (SEP-2640,
** io.modelcontextprotocol/skills): skills/list, skills/get and
** resources/directory/read, served from the registry's skill files
** (plugin/skills.h). protocol/mcp.c dispatches them here, on the request
** and answer types of protocol/mcpresources.h.
*/
#ifndef TH_PROTOCOL_MCPSKILLS_H
#define TH_PROTOCOL_MCPSKILLS_H

#include <stdbool.h>

#include <json-c/json.h>

#include "protocol/mcpresources.h"

#define TH_SKILLS_EXTENSION "io.modelcontextprotocol/skills"

/* Is METHOD one of the extension's methods? */
bool th_mcpskills_is_method(const char *method);

/* Serve Q (one of those methods) into *A, which the caller zeroed; any
 * other method is answered "Method not found". */
void th_mcpskills_serve(const th_mcpres_req *q, th_mcpres_answer *a);

/* The extension's settings object for capabilities.extensions (new). */
json_object *th_mcpskills_capability(void);

#endif
