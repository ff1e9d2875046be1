/* SPDX-License-Identifier: MIT */
/*
** cli/templates.h: the files `toolhost new-plugin` writes, as text with
** @MARKERS@; generated into cli/templates.c from cli/templates/.
*/
#ifndef TH_CLI_TEMPLATES_H
#define TH_CLI_TEMPLATES_H

typedef struct th_template {
    const char *name; /* the file's name under cli/templates/ */
    const char *text;
} th_template;

/* Ends with {NULL, NULL}. */
extern const th_template th_templates[];

#endif
