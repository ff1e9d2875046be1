/* SPDX-License-Identifier: MIT */
/*
** test_jsonschema_suite.c: runs the official JSON Schema Test Suite (draft
** 2020-12, copied under tests/jsonschema-suite/) against th_schema and
** keeps the list of cases known to fail honest.
*/
#include "config.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "schema/jsonschema.h"

#define SUITE_DIR TEST_SRCDIR "/jsonschema-suite"
#define REMOTE_PREFIX "http://localhost:1234/"

/*
** Cases expected to fail, each with why. None at present: the four that
** compare with the official 2020-12 meta-schema pass through the built-in
** meta-schema (an instance is valid when the compiler accepts it). A case
** listed here that starts passing fails the run, as does any other failure.
** Fields: file, group description, test description. The empty entry keeps
** the array non-empty and matches nothing.
*/
static const struct known {
    const char *file, *group, *test;
} known_failures[] = {
    { "", "", "" },
};

/* Resolve http://localhost:1234/... from the copied remotes directory. */
static json_object *serve_remote(const char *uri, void *data)
{
    (void)data;
    if (strncmp(uri, REMOTE_PREFIX, strlen(REMOTE_PREFIX)))
        return NULL;
    char path[1024];
    snprintf(path, sizeof path, "%s/remotes/%s", SUITE_DIR, uri + strlen(REMOTE_PREFIX));
    return json_object_from_file(path);
}

static bool is_known(const char *file, const char *group, const char *test, bool *used, size_t nknown)
{
    for (size_t i = 0; i < nknown; i++) {
        const struct known *k = &known_failures[i];
        if (*k->file && !strcmp(k->file, file) && !strcmp(k->group, group) && !strcmp(k->test, test)) {
            used[i] = true;
            return true;
        }
    }
    return false;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* With arguments, runs only the named files (e.g. ref.json); the known
** failures list is then checked only for those files. */
int main(int argc, char **argv)
{
    size_t nknown = sizeof known_failures / sizeof known_failures[0];
    bool *known_seen = calloc(nknown, sizeof(bool));
    size_t passed = 0, failed = 0, unexpected = 0;
    char **names = NULL;
    size_t nnames = 0;
    DIR *d = opendir(SUITE_DIR "/draft2020-12");
    if (!d || !known_seen) {
        fprintf(stderr, "cannot open %s/draft2020-12\n", SUITE_DIR);
        return 1;
    }
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        bool wanted = argc < 2;
        for (int a = 1; a < argc; a++)
            wanted |= !strcmp(argv[a], e->d_name);
        if (wanted && len > 5 && !strcmp(e->d_name + len - 5, ".json")) {
            names = realloc(names, (nnames + 1) * sizeof *names);
            names[nnames++] = strdup(e->d_name);
        }
    }
    closedir(d);
    qsort(names, nnames, sizeof *names, cmp_names);

    for (size_t f = 0; f < nnames; f++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/draft2020-12/%s", SUITE_DIR, names[f]);
        json_object *groups = json_object_from_file(path);
        if (!groups) {
            fprintf(stderr, "%s: cannot parse\n", path);
            return 1;
        }
        size_t file_failed = 0;
        for (size_t g = 0; g < json_object_array_length(groups); g++) {
            json_object *group = json_object_array_get_idx(groups, g), *schema, *tests, *gdesc;
            json_object_object_get_ex(group, "schema", &schema);
            json_object_object_get_ex(group, "tests", &tests);
            json_object_object_get_ex(group, "description", &gdesc);
            char err[512];
            th_schema *s = th_schema_compile_ex(schema, serve_remote, NULL, err, sizeof err);
            for (size_t t = 0; t < json_object_array_length(tests); t++) {
                json_object *test = json_object_array_get_idx(tests, t), *data, *valid, *tdesc;
                json_object_object_get_ex(test, "data", &data);
                json_object_object_get_ex(test, "valid", &valid);
                json_object_object_get_ex(test, "description", &tdesc);
                char *msgs = NULL;
                bool ok = false;
                if (s) {
                    size_t n = th_schema_validate(s, data, &msgs);
                    ok = (n == 0) == json_object_get_boolean(valid);
                }
                const char *gd = json_object_get_string(gdesc), *td = json_object_get_string(tdesc);
                if (is_known(names[f], gd, td, known_seen, nknown)) {
                    if (ok) {
                        printf("%s: \"%s\" / \"%s\": listed as failing but passes\n", names[f], gd, td);
                        unexpected++;
                    }
                }
                if (ok)
                    passed++;
                else {
                    failed++;
                    file_failed++;
                    printf("FAIL %s: \"%s\" / \"%s\" (expected %s): %s\n", names[f], gd, td,
                           json_object_get_boolean(valid) ? "valid" : "invalid",
                           !s ? err : msgs ? msgs : "no violation found");
                    bool listed = false;
                    for (size_t k = 0; k < nknown; k++)
                        listed |= *known_failures[k].file && !strcmp(known_failures[k].file, names[f]) &&
                                  !strcmp(known_failures[k].group, gd) && !strcmp(known_failures[k].test, td);
                    if (!listed)
                        unexpected++;
                }
                free(msgs);
            }
            th_schema_free(s);
        }
        if (file_failed)
            printf("%s: %zu failed\n", names[f], file_failed);
        json_object_put(groups);
        free(names[f]);
    }
    for (size_t k = 0; k < nknown; k++)
        if (*known_failures[k].file && !known_seen[k] && argc < 2) {
            printf("listed failing case not found: %s: \"%s\" / \"%s\"\n", known_failures[k].file,
                   known_failures[k].group, known_failures[k].test);
            unexpected++;
        }
    free(names);
    free(known_seen);
    if (unexpected)
        printf("%zu unexpected result%s (see above)\n", unexpected, unexpected == 1 ? "" : "s");
    printf("%zu passed, %zu failed\n", passed, failed);
    return unexpected ? 1 : 0;
}
