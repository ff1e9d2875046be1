/* SPDX-License-Identifier: MIT */
/*
** needy.c: test plugin for declared needs. It declares that it reads the
** directory of setting "root" (th_server_need), and, when the file named by
** setting "more_if" exists as it registers, that it reads /etc too: the
** scan and its worker then disagree. "read_file" tries to read a byte of
** "path" and answers "tried: OK" or "tried: EACCES" (else the errno).
*/
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <toolhost/plugin.h>

static th_rc read_file(th_call *call, json_object *args, void *user_data)
{
    (void)user_data;
    json_object *v;
    const char *path = json_object_object_get_ex(args, "path", &v) ? json_object_get_string(v) : "";
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    int code = fd < 0 ? errno : 0;
    char byte;
    if (fd >= 0 && read(fd, &byte, 1) < 0)
        code = errno;
    if (fd >= 0)
        close(fd);
    return code == 0        ? th_call_text(call, "tried: OK")
           : code == EACCES ? th_call_text(call, "tried: EACCES")
                            : th_call_textf(call, "tried: errno %d", code);
}

static const th_tool tool = {
    TH_TOOL_INIT,
    .name = "needy_read",
    .description = "Try to read a byte of path.",
    .input_schema = "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"}},\"required\":[\"path\"]}",
    .handler = read_file,
};

TH_REGISTER(needy)
{
    const char *root = th_server_config(server, "root"), *more_if = th_server_config(server, "more_if");
    if (root && th_server_need(server, TH_NEED_READ, root) != TH_OK)
        return NULL;
    if (more_if && access(more_if, F_OK) == 0 && th_server_need(server, TH_NEED_READ, "/etc") != TH_OK)
        return NULL;
    /* A bad need is refused, and the plugin may go on without it. */
    if (th_server_need(server, TH_NEED_CONNECT, "no-port") != TH_ERR_VALUE || strstr(th_server_errmsg(server), "HOST:PORT") == NULL)
        return NULL;
    return th_server_add_tool(server, &tool) == TH_OK ? th_server_added_only(server) : NULL;
}
