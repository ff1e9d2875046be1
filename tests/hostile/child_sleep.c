/* SPDX-License-Identifier: MIT */
/*
** child_sleep.c: hostile plugin that fork+execs `sleep 30` ("op":"spawn",
** answers its pid) and waits for a child ("op":"wait","pid":N, answers how
** it ended). A child must start with no signal blocked, so SIGTERM ends it.
*/
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <toolhost/plugin.h>

static th_rc child_sleep(th_call *call, json_object *args, void *user_data)
{
    (void)user_data;
    json_object *op, *pid;
    if (!json_object_object_get_ex(args, "op", &op))
        return th_call_error(call, "op missing");
    if (json_object_object_get_ex(args, "pid", &pid)) {
        int st;
        if (waitpid((pid_t)json_object_get_int(pid), &st, 0) < 0)
            return th_call_error(call, "waitpid failed");
        if (WIFSIGNALED(st))
            return th_call_textf(call, "signal %d", WTERMSIG(st));
        return th_call_textf(call, "exit %d", WEXITSTATUS(st));
    }
    pid_t child = fork();
    if (child < 0)
        return th_call_error(call, "fork failed");
    if (child == 0) {
        execlp("sleep", "sleep", "30", (char *)NULL);
        _exit(127);
    }
    return th_call_textf(call, "%d", (int)child);
}

static const th_tool child_sleep_tool = {
    TH_TOOL_INIT,
    .name = "child_sleep",
    .description = "Start sleep 30 as a child, or wait for one.",
    .input_schema = "{\"type\":\"object\",\"properties\":{}}",
    .handler = child_sleep,
};

TH_REGISTER(child_sleep)
{
    (void)server;
    return &child_sleep_tool;
}
