/* SPDX-License-Identifier: MIT */
/*
** cli/cli.h: the subcommands for plugin authors, above the protocol layer:
** `toolhost inspect`, `toolhost call`, `toolhost new-plugin`,
** `toolhost lock`, `toolhost connect` and `toolhost test`. Each takes
** its own argv (argv[0] is the subcommand's name) and returns the process
** exit status; main() dispatches to them.
*/
#ifndef TH_CLI_H
#define TH_CLI_H

/* Report plugins, tools, schemas and refusals (cli/inspect.c). */
int th_cli_inspect(int argc, char **argv);

/* Run one tool call without a client and print the result (cli/call.c).
 * A toolhost server process, this same executable, serves it. */
int th_cli_call(int argc, char **argv);

/* Run a file of declarative call tests in both isolation modes and
 * report TAP (cli/ttest.c). */
int th_cli_test(int argc, char **argv);

/* Write a plugin skeleton NAME.c and its Makefile (cli/scaffold.c). */
int th_cli_new_plugin(int argc, char **argv);

/* Pin the definitions served in a lock file, or check them against one
 * (cli/lock.c). */
int th_cli_lock(int argc, char **argv);

/* Relay MCP on stdin/stdout to the daemon on a Unix socket, starting it
 * with --start (cli/connect.c). */
int th_cli_connect(int argc, char **argv);

#endif
