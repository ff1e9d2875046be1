/* SPDX-License-Identifier: MIT */
/*
** gencompletion.c: a build tool, not installed: writes the bash or zsh
** completion for toolhost from the option table (host/options.c) and the
** subcommand table below, so the completions miss no option the parser
** knows (tests/authors/completion.sh holds the subcommands to --help).
*/
#include "config.h"

#include <stdbool.h>
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

/*
** The subcommands (src/main.c's roles) with their own options, one word
** each: "--NAME", or "--NAME=ARG" taking a value (a path when ARG says
** DIR or FILE). SERVER: the server's options are theirs too (test and
** connect hand them on); FILES: other words are paths.
*/
static const struct sub {
    const char *name;
    const char *opts;
    bool server, files;
} subs[] = {
    {"inspect",
     "--json --follow-symlinks --allow-insecure-plugins --qualified-names --set=V --set-secret=V --config=FILE "
     "--sandbox=V --grant=V --help",
     false, true},
    {"call",
     "--plugin-dir=DIR --plugin=FILE --json --isolation=V --allow-insecure-plugins --follow-symlinks "
     "--qualified-names --set=V --set-secret=V --config=FILE --help",
     false, false},
    {"new-plugin", "--typed --autotools --dir=DIR --help", false, false},
    {"lock",
     "--lock=FILE --check --plugin-dir=DIR --config=FILE --set=V --set-secret=V --qualified-names "
     "--follow-symlinks --allow-insecure-plugins --help",
     false, false},
    {"test", "--start-timeout=SECONDS", true, true},
    {"connect", "--start", true, false},
};
#define NSUBS (sizeof subs / sizeof subs[0])

/* Word W of SUB's options, up to its '=', into BUF; false past the last. */
static bool sub_opt(const struct sub *s, size_t w, char *buf, size_t size, const char **arg)
{
    const char *p = s->opts;
    for (size_t i = 0; i < w && p; i++)
        p = strchr(p, ' ') ? strchr(p, ' ') + 1 : NULL;
    if (!p || !*p)
        return false;
    size_t n = strcspn(p, " ="), len = strcspn(p, " ");
    snprintf(buf, size, "%.*s", (int)n, p);
    *arg = n < len ? p + n + 1 : NULL; /* ends at the next ' ' */
    return true;
}

static bool arg_is_path(const char *arg)
{
    return arg && (strncmp(arg, "DIR", 3) == 0 || strncmp(arg, "FILE", 4) == 0);
}

static void put_sub_names(FILE *out)
{
    for (size_t i = 0; i < NSUBS; i++)
        fprintf(out, "%s%s", i ? " " : "", subs[i].name);
}

static void put_choices(FILE *out, const th_option *o)
{
    for (const th_opt_choice *c = o->choices; c && c->name; c++)
        fprintf(out, "%s%s", c == o->choices ? "" : " ", c->name);
}

static void put_host_words(FILE *out)
{
    size_t n;
    const th_option *opts = th_host_options(&n);
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%s--%s", i ? " " : "", opts[i].name);
}

/* The words bash offers for an option after each subcommand. */
static void bash_sub_words(FILE *out)
{
    fputs("    local words\n    case ${COMP_WORDS[1]} in\n", out);
    for (size_t i = 0; i < NSUBS; i++) {
        char name[64];
        const char *arg;
        fprintf(out, "    %s) words='", subs[i].name);
        for (size_t w = 0; sub_opt(&subs[i], w, name, sizeof name, &arg); w++)
            fprintf(out, "%s%s", w ? " " : "", name);
        if (subs[i].server) {
            fputc(' ', out);
            put_host_words(out);
        }
        fputs("' ;;\n", out);
    }
    fputs("    *) words='", out);
    put_host_words(out);
    fputs("' ;;\n    esac\n", out);
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
    /* Subcommand options taking a path that the server does not have. */
    for (size_t i = 0; i < NSUBS; i++) {
        char name[64];
        const char *arg;
        for (size_t w = 0; sub_opt(&subs[i], w, name, sizeof name, &arg); w++)
            if (arg_is_path(arg) && !th_host_option_find(name + 2))
                fprintf(out, "    %s) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n", name);
    }
    fputs("    esac\n", out);
    bash_sub_words(out);
    fputs("    if [[ $cur == -* ]]; then\n"
          "        COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
          "    elif [[ $COMP_CWORD -eq 1 ]]; then\n"
          "        COMPREPLY=($(compgen -W '",
          out);
    put_sub_names(out);
    fputs("' -- \"$cur\"))\n    else\n        case ${COMP_WORDS[1]} in\n", out);
    for (size_t i = 0; i < NSUBS; i++)
        if (subs[i].files)
            fprintf(out, "        %s) COMPREPLY=($(compgen -f -- \"$cur\")) ;;\n", subs[i].name);
    fputs("        esac\n"
          "    fi\n"
          "}\n"
          "complete -F _toolhost toolhost\n",
          out);
    return 0;
}

/* One _arguments spec for a subcommand option NAME (up to '=') taking ARG. */
static void zsh_sub_spec(FILE *out, const char *name, const char *arg)
{
    fprintf(out, "      '%s%s[%s]", name, arg ? "=" : "", name + 2);
    if (arg_is_path(arg))
        fputs(":path:_files", out);
    else if (arg)
        fputs(":value: ", out);
    fputs("' \\\n", out);
}

static int zsh(FILE *out)
{
    size_t n;
    const th_option *opts = th_host_options(&n);
    fputs("#compdef toolhost\n"
          "# zsh completion for toolhost, generated from its option table\n"
          "# (src/host/options.c) by src/gencompletion.c.\n"
          "local -a server\n"
          "server=(\n",
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
        fputs("'\n", out);
    }
    /* After a subcommand, its own options: the words are shifted so that
     * the subcommand is the command _arguments completes for. */
    fputs(")\n"
          "if (( CURRENT > 2 )); then\n"
          "  local sub=$words[2]\n"
          "  shift words\n"
          "  (( CURRENT-- ))\n"
          "  case $sub in\n",
          out);
    for (size_t i = 0; i < NSUBS; i++) {
        char name[64];
        const char *arg;
        fprintf(out, "    %s)\n      _arguments -s %s\\\n", subs[i].name, subs[i].server ? "$server " : "");
        for (size_t w = 0; sub_opt(&subs[i], w, name, sizeof name, &arg); w++)
            zsh_sub_spec(out, name, arg);
        fprintf(out, "      '*:argument:%s'\n      return ;;\n", subs[i].files ? "_files" : " ");
    }
    fputs("  esac\n"
          "  (( CURRENT++ ))\n"
          "  words=(toolhost $words)\n"
          "fi\n"
          "_arguments -s $server '1:subcommand:(",
          out);
    put_sub_names(out);
    fputs(")'\n", out);
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
