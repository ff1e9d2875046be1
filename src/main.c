/* SPDX-License-Identifier: MIT */
/*
** main.c: the toolhost command as a table of contents: a worker or a
** subcommand, else read the options, check them, set up, load the plugins,
** serve, stop. The steps live in src/host/.
*/
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/compat.h"
#include "base/fastjson.h"
#include "cli/cli.h"
#include "host/options.h"
#include "host/serve.h"
#include "protocol/jsonrpc.h"
#include "worker/spawn.h"
#include "worker/worker.h"

/* th_worker_parse_fn: a worker reads a call's arguments as the protocol
 * would: plain ones the way th_rpc_parse's own quick path builds them,
 * others inside a notification th_rpc_parse reads whole. */
static json_object *parse_call(const char *text, size_t len)
{
    json_object *args = th_fastjson_parse(text, len);
    if (args)
        return args;
    static const char head[] = "{\"jsonrpc\":\"2.0\",\"method\":\"call\",\"params\":{\"a\":";
    size_t n = sizeof head - 1 + len + 2;
    char *msg = len < SIZE_MAX - sizeof head - 2 ? malloc(n) : NULL;
    if (!msg)
        return NULL;
    memcpy(msg, head, sizeof head - 1);
    memcpy(msg + sizeof head - 1, text, len);
    memcpy(msg + n - 2, "}}", 2);
    th_rpc_msg m;
    th_rpc_parse(msg, n, &m);
    free(msg);
    json_object *a = NULL;
    if (m.kind == TH_RPC_NOTIFICATION && m.params && json_object_object_get_ex(m.params, "a", &a))
        json_object_get(a);
    th_rpc_msg_clear(&m);
    return a;
}

/* The same executable in other roles, chosen by the first argument. */
static const struct role {
    const char *arg;
    int (*run)(int argc, char **argv);
} roles[] = {
    {"inspect", th_cli_inspect},       /* the subcommands for plugin authors (src/cli/) */
    {"call", th_cli_call},
    {"new-plugin", th_cli_new_plugin},
    {"lock", th_cli_lock},
    {"test", th_cli_test},
    {"connect", th_cli_connect},       /* a client's stdio to the shared daemon */
};

int main(int argc, char **argv)
{
    th_compat_set_argv0(argv[0]); /* where there is no /proc/self/exe */
    /* A worker or scanner child, before anything of the host's start-up. */
    if (argc > 1 && strcmp(argv[1], TH_WORKER_ARG) == 0)
        return th_worker_main(argc, argv, parse_call);
    for (size_t i = 0; argc > 1 && i < sizeof roles / sizeof roles[0]; i++)
        if (strcmp(argv[1], roles[i].arg) == 0)
            return roles[i].run(argc - 1, argv + 1);

    /* OpenSSL is initialized (without its exit handler) where libcrypto is
     * opened, on first use: base/crypto.c. */
    th_host_opts opts;
    th_host host = {0};
    int status = th_host_parse(argc, argv, &opts);
    if (status != TH_HOST_RUN)
        goto done;
    status = 1;
    if (!th_host_policy_ok(&opts) || !th_host_setup(&host, &opts))
        goto stop;
    if ((status = th_host_load(&host)) >= 0)
        goto stop;
    status = th_host_serve(&host);
stop:
    th_host_stop(&host);
done:
    th_host_opts_clear(&opts);
    return status;
}
