/* SPDX-License-Identifier: MIT */
/*
** fuzz/fuzz_skill.c: a libFuzzer harness for skill registration: each input
** is a SKILL.md, registered as a skill with one more file; a refusal must come
** with a message, an accepted skill must be listed and read back intact.
*/
/*
** `make fuzz` builds and runs it (see doc/HACKING.md, Fuzzing); by hand, after
** `make fuzz`: fuzz/build/fuzz_skill $(srcdir)/fuzz/corpus/skill. ASan and
** UBSan check the frontmatter parser on every input.
*/
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "base/util.h"
#include "fuzz_json.h"
#include "plugin/skills.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    th_resources *rs = th_resources_new();
    if (!rs)
        return 0;
    const th_skill_file files[] = {{.path = "SKILL.md", .data = data, .size = size},
                                   {.path = "references/a.txt", .data = "a", .size = 1}};
    th_skill skill = {TH_SKILL_INIT, .files = files, .nfiles = 2};
    th_err err;
    th_err_clear(&err);
    th_rc rc = th_skills_add(rs, &skill, false, "fuzz", &err);
    if (rc != TH_OK && !err.msg[0])
        fz_die("fuzz_skill", "a refusal without a message", (const char *)data, size);
    if (rc == TH_OK) {
        const th_skill_file_entry *f = th_skills_file_of(th_resources_at(rs, 0));
        if (th_resources_count(rs) != 2 || !f || !f->frontmatter || f->size != size || memcmp(f->data, data, size))
            fz_die("fuzz_skill", "an accepted skill is not kept as given", (const char *)data, size);
        /* The frontmatter survives a round trip through JSON text. */
        json_object *back = json_tokener_parse(json_object_to_json_string(f->frontmatter));
        if (!back || !json_object_equal(back, f->frontmatter))
            fz_die("fuzz_skill", "the frontmatter does not round-trip as JSON", (const char *)data, size);
        json_object_put(back);
    }
    th_resources_free(rs);
    return 0;
}
