/* SPDX-License-Identifier: MIT */
/*
** gencompletion.c: a build tool, not installed: writes the bash or zsh
** completion for toolhost from the option table (host/options.c), so the
** completions can never miss an option the parser knows.
*/
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "host/options.h"

/* An argument naming a file or directory completes as a path. */
static int wants_path(const th_option *o)
{
    return o->arg && (strstr(o->arg, "DIR") || strstr(o->arg, "FILE"));
}

/* The help text up to its first ';' or ". ", on one line and at most
 * SUMMARY_MAX bytes, with what zsh's _arguments spec would misread left out. */
enum { SUMMARY_MAX = 72 };
static void put_summary(FILE *out, const th_option *o)
{
    size_t len = 0;
    for (const char *p = o->help ? o->help : ""; *p && *p != ';' && len < SUMMARY_MAX; p++) {
        if (p[0] == '.' && (p[1] == ' ' || p[1] == '\n' || p[1] == '\0'))
            break;
        if (strchr("[]:'\\`$", *p))
            continue;
        fputc(*p == '\n' ? ' ' : *p, out);
        len++;
    }
}

static void put_choices(FILE *out, const th_option *o)
{
    for (const th_opt_choice *c = o->choices; c && c->name; c++)
        fprintf(out, "%s%s", c == o->choices ? "" : " ", c->name);
}

static int bash(FILE *out)
{
    size_t n;
    const th_option *opts = th_host_options(&n);
    fputs("# bash completion for toolhost, generated from its option table\n"
          "# (src/host/options.c) by src/gencompletion.c.\n"
          "_toolhost()\n{\n"
          "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
          "    if [[ $cur == --*=* ]]; then\n"
          "        prev=${cur%%=*}\n"
          "        cur=${cur#*=}\n"
          "    fi\n"
          "    case $prev in\n",
          out);
    for (size_t i = 0; i < n; i++) {
        if (opts[i].choices) {
            fprintf(out, "    --%s) COMPREPLY=($(compgen -W '", opts[i].name);
            put_choices(out, &opts[i]);
            fputs("' -- \"$cur\")); return ;;\n", out);
        } else if (wants_path(&opts[i])) {
            fprintf(out, "    --%s", opts[i].name);
            if (opts[i].short_name)
                fprintf(out, "|-%c", opts[i].short_name);
            fputs(") COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n", out);
        }
    }
    fputs("    esac\n"
          "    if [[ $cur == -* ]]; then\n"
          "        COMPREPLY=($(compgen -W '",
          out);
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%s--%s", i ? " " : "", opts[i].name);
    fputs("' -- \"$cur\"))\n"
          "    elif [[ $COMP_CWORD -eq 1 ]]; then\n"
          "        COMPREPLY=($(compgen -W 'inspect call new-plugin' -- \"$cur\"))\n"
          "    fi\n"
          "}\n"
          "complete -F _toolhost toolhost\n",
          out);
    return 0;
}

static int zsh(FILE *out)
{
    size_t n;
    const th_option *opts = th_host_options(&n);
    fputs("#compdef toolhost\n"
          "# zsh completion for toolhost, generated from its option table\n"
          "# (src/host/options.c) by src/gencompletion.c.\n"
          "_arguments -s \\\n",
          out);
    for (size_t i = 0; i < n; i++) {
        const th_option *o = &opts[i];
        const char *rep = o->help && strstr(o->help, "repeatable") ? "*" : "";
        if (o->short_name)
            fprintf(out, "  '%s'{-%c%s,--%s%s}'[", rep, o->short_name, o->arg ? "+" : "", o->name, o->arg ? "=" : "");
        else
            fprintf(out, "  '%s--%s%s[", rep, o->name, o->arg ? "=" : "");
        put_summary(out, o);
        fputc(']', out);
        if (o->choices) {
            fputs(":mode:(", out);
            put_choices(out, o);
            fputc(')', out);
        } else if (wants_path(o)) {
            fputs(":path:_files", out);
        } else if (o->arg) {
            fputs(":value: ", out);
        }
        fputs("' \\\n", out);
    }
    fputs("  '1:subcommand:(inspect call new-plugin)'\n", out);
    return 0;
}

static const struct {
    const char *shell;
    int (*write)(FILE *out);
} shells[] = {{"bash", bash}, {"zsh", zsh}};

int main(int argc, char **argv)
{
    for (size_t i = 0; argc == 2 && i < sizeof shells / sizeof shells[0]; i++)
        if (strcmp(argv[1], shells[i].shell) == 0)
            return shells[i].write(stdout) || fflush(stdout) != 0 || ferror(stdout);
    fprintf(stderr, "usage: gencompletion bash|zsh\n");
    return 2;
}
