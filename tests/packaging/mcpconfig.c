/* SPDX-License-Identifier: MIT */
/*
** mcpconfig.c: reads one MCP client configuration (a README snippet) and
** prints each stdio server it defines, one per line, for client-config.sh:
** KEY <tab> NAME <tab> TYPE <tab> COMMAND [<tab> ARG]...
** KEY is the top-level member ("mcpServers" or "servers"); TYPE is "-" when
** absent. Exits 1, naming the file and what is wrong, when the text is not
** exactly one JSON object or a server lacks a string command or string args.
*/
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

static int fail(const char *file, const char *what, const char *name)
{
    fprintf(stderr, "%s: %s%s%s\n", file, what, name ? ": " : "", name ? name : "");
    return 1;
}

/* The file as one JSON value, parsed strictly (json-c alone accepts a
** trailing comma, which clients refuse); NULL after a message. */
static json_object *parse_strict(const char *file)
{
    static char text[1 << 16];
    FILE *f = fopen(file, "r");
    if (!f) {
        fail(file, "cannot open", NULL);
        return NULL;
    }
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    json_tokener *tok = json_tokener_new();
    if (!tok)
        return NULL;
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    json_object *root = json_tokener_parse_ex(tok, text, (int)n);
    enum json_tokener_error err = json_tokener_get_error(tok);
    size_t end = json_tokener_get_parse_end(tok);
    json_tokener_free(tok);
    if (!root || err != json_tokener_success) {
        fprintf(stderr, "%s: not valid JSON at byte %zu: %s\n", file, end, json_tokener_error_desc(err));
        json_object_put(root);
        return NULL;
    }
    while (end < n && strchr(" \t\r\n", text[end]))
        end++;
    if (end != n) {
        fprintf(stderr, "%s: text after the JSON value at byte %zu\n", file, end);
        json_object_put(root);
        return NULL;
    }
    return root;
}

/* Prints the servers of one configuration object; 0, or 1 after a message. */
static int print_servers(const char *file, const char *key, json_object *servers)
{
    if (!json_object_is_type(servers, json_type_object) || json_object_object_length(servers) == 0)
        return fail(file, "expected a non-empty object", key);
    json_object_object_foreach(servers, name, server) {
        json_object *command, *type, *args;
        if (!json_object_is_type(server, json_type_object))
            return fail(file, "server is not an object", name);
        if (!json_object_object_get_ex(server, "command", &command) || !json_object_is_type(command, json_type_string))
            return fail(file, "server has no string \"command\"", name);
        bool has_type = json_object_object_get_ex(server, "type", &type);
        if (has_type && !json_object_is_type(type, json_type_string))
            return fail(file, "server's \"type\" is not a string", name);
        printf("%s\t%s\t%s\t%s", key, name, has_type ? json_object_get_string(type) : "-",
               json_object_get_string(command));
        if (json_object_object_get_ex(server, "args", &args)) {
            if (!json_object_is_type(args, json_type_array))
                return fail(file, "server's \"args\" is not an array", name);
            for (size_t i = 0; i < json_object_array_length(args); i++) {
                json_object *a = json_object_array_get_idx(args, i);
                if (!json_object_is_type(a, json_type_string))
                    return fail(file, "server has an argument that is not a string", name);
                printf("\t%s", json_object_get_string(a));
            }
        }
        printf("\n");
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return fail("mcpconfig", "usage: mcpconfig FILE", NULL);
    const char *file = argv[1];
    json_object *root = parse_strict(file);
    if (!root)
        return 1;
    int rc = 0;
    json_object *servers;
    if (!json_object_is_type(root, json_type_object))
        rc = fail(file, "not a JSON object", NULL);
    else if (json_object_object_get_ex(root, "mcpServers", &servers))
        rc = print_servers(file, "mcpServers", servers);
    else if (json_object_object_get_ex(root, "servers", &servers))
        rc = print_servers(file, "servers", servers);
    else
        rc = fail(file, "has neither \"mcpServers\" nor \"servers\"", NULL);
    json_object_put(root);
    return rc;
}
