/* SPDX-License-Identifier: MIT */
/*
** sigpipe_fork.c: test plugin that fork()s and reports whether the child
** starts with SIGPIPE blocked. The host keeps SIGPIPE blocked in the threads
** that write stdout (transport/stdio.c); a child must not inherit that.
*/
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <toolhost/plugin.h>

static th_rc sigpipe_fork(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    pid_t pid = fork();
    if (pid < 0)
        return th_call_error(call, "fork failed");
    if (pid == 0) {
        sigset_t cur;
        sigprocmask(SIG_BLOCK, NULL, &cur);
        _exit(sigismember(&cur, SIGPIPE) ? 1 : 0);
    }
    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
        return th_call_error(call, "waitpid failed");
    return th_call_text(call, WEXITSTATUS(status) == 0 ? "child: SIGPIPE unblocked" : "child: SIGPIPE blocked");
}

static const th_tool sigpipe_fork_tool = {
    TH_TOOL_INIT,
    .name = "sigpipe_fork",
    .description = "Reports whether a fork()ed child has SIGPIPE blocked.",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = sigpipe_fork,
};

TH_REGISTER(sigpipe_fork)
{
    (void)server;
    return &sigpipe_fork_tool;
}
