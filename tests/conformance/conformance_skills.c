/* SPDX-License-Identifier: MIT */
/*
** conformance_skills.c: skills for the conformance suite's SEP-2640 scenarios
** (sep-2640-skills-manifest, -enumeration, -directory): pdf-processing, with
** a supporting file in a subfolder (so resources/directory/read has a
** folder child), and a second skill with metadata, served by a skills-only plugin.
*/
#include <string.h>

#include <toolhost/plugin.h>

static const char pdf_skill_md[] = "---\n"
                                   "name: pdf-processing\n"
                                   "description: Extract, fill, and assemble PDF documents\n"
                                   "license: Apache-2.0\n"
                                   "---\n"
                                   "\n"
                                   "# PDF processing\n"
                                   "\n"
                                   "Skill body. Read references/FORMS.md before filling a form.\n";

static const char pdf_forms_md[] = "# Forms\n\nFill each field, then flatten the document.\n";

static const char pdf_fill_py[] = "import sys\nprint('filled', sys.argv[1:])\n";

static const char review_skill_md[] = "---\n"
                                      "name: code-review\n"
                                      "description: \"Review a change: correctness first, then style\"\n"
                                      "compatibility: Needs git\n"
                                      "metadata:\n"
                                      "  author: toolhost\n"
                                      "  version: \"1.0\"\n"
                                      "---\n"
                                      "\n"
                                      "Read the diff, then the tests.\n";

TH_REGISTER(conformance_skills)
{
    const th_skill_file pdf_files[] = {
        {.path = "SKILL.md", .data = pdf_skill_md, .size = sizeof pdf_skill_md - 1},
        {.path = "references/FORMS.md", .data = pdf_forms_md, .size = sizeof pdf_forms_md - 1},
        {.path = "scripts/fill.py", .data = pdf_fill_py, .size = sizeof pdf_fill_py - 1},
    };
    const th_skill_file review_files[] = {
        {.path = "SKILL.md", .data = review_skill_md, .size = sizeof review_skill_md - 1},
    };
    const th_skill skills[] = {
        {TH_SKILL_INIT, .files = pdf_files, .nfiles = sizeof pdf_files / sizeof pdf_files[0]},
        {TH_SKILL_INIT, .files = review_files, .nfiles = 1},
    };
    for (size_t i = 0; i < sizeof skills / sizeof skills[0]; i++)
        if (th_server_add_skill(server, &skills[i]) != TH_OK)
            return NULL;
    return th_server_added_only(server);
}
