/* SPDX-License-Identifier: MIT */
/*
** plugin/skills.h: the skill side of the registry (SEP-2640). Checks a
** th_skill against the skill rules (its SKILL.md frontmatter in a YAML subset
** included), and keeps every file as a resource at skill://NAME/PATH whose
** read the host serves from its own copy; the skill index is those entries.
*/
#ifndef TH_SKILLS_H
#define TH_SKILLS_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "base/sha256.h"
#include "base/util.h"
#include "plugin/resources.h"
#include "toolhost/plugin.h"

#define TH_SKILL_SCHEME "skill://"
#define TH_SKILL_MANIFEST "SKILL.md"
#define TH_SKILL_FILES_MAX 512                    /* the extension's limit per skill */
#define TH_SKILL_BYTES_MAX (16u * 1024 * 1024)    /* likewise, summed over its files */
#define TH_SKILL_PATH_MAX 128                     /* a resource name's limit */

/* One skill file as the host keeps it: the user_data of its resource entry,
 * owned by that entry (freed by its destroy). */
typedef struct th_skill_file_entry {
    char *skill;         /* the skill's name */
    char *path;          /* inside the skill, e.g. "references/FORMS.md" */
    char *mime_type;
    unsigned char *data; /* SIZE bytes and a NUL */
    size_t size;
    bool text;           /* UTF-8 without NUL bytes: read as text, else as a blob */
    char digest[TH_SHA256_DIGEST_LEN + 1];
    json_object *frontmatter; /* SKILL.md's, as JSON; NULL for other files */
} th_skill_file_entry;

/*
** Validate SKILL and add its files to RS as resources (SKILL.md first),
** all or none. STARTED: the registry is serving (TH_ERR_RUNTIME). ORIGIN
** (may be NULL) names the plugin. On failure ERR names the rule broken.
*/
th_rc th_skills_add(th_resources *rs, const th_skill *skill, bool started, const char *origin, th_err *err);

/*
** Add one file of skill SKILL as a host-served resource: how a process-
** isolated plugin's scanned skill is registered again in the host (its
** SKILL.md parsed again, its digest computed again). SIZE bytes at DATA.
*/
th_rc th_skills_add_file(th_resources *rs, const char *skill, const char *path, const void *data, size_t size,
                         const char *mime_type, const char *origin, th_err *err);

/* The skill file E serves, or NULL when E is not a skill file. */
const th_skill_file_entry *th_skills_file_of(const th_res_entry *e);

/*
** Parse the frontmatter of the SKILL.md text TEXT (LEN bytes, UTF-8) into a
** new JSON object, and check the extension's rules on it. NULL with ERR
** naming FILE and the line when it is not in the accepted subset.
*/
json_object *th_skills_parse_frontmatter(const char *text, size_t len, const char *file, th_err *err);

#endif
