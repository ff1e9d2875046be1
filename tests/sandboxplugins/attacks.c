/* SPDX-License-Identifier: MIT */
/*
** attacks.c: hostile test plugin for the sandbox. Each tool tries one thing
** a plugin should not do unless granted, inside its worker, and answers
** "tried: ERRNO" with what the kernel said ("tried: OK" when it was let
** through): read a file, write one, connect to a TCP port, send a UDP
** datagram, execve a program. "ping" shows the worker still serves after a denial.
*/
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <toolhost/plugin.h>

/* The names the tests match; anything else is its number. */
static const struct {
    int code;
    const char *name;
} names[] = {
    {0, "OK"},         {EACCES, "EACCES"}, {EPERM, "EPERM"}, {ENOENT, "ENOENT"}, {ECONNREFUSED, "ECONNREFUSED"},
    {EROFS, "EROFS"}, {ENETUNREACH, "ENETUNREACH"},
};

static th_rc tried(th_call *call, int code)
{
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].code == code)
            return th_call_textf(call, "tried: %s", names[i].name);
    return th_call_textf(call, "tried: errno %d", code);
}

static const char *arg(json_object *args, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(args, key, &v) ? json_object_get_string(v) : "";
}

static th_rc read_file(th_call *call, json_object *args, void *user_data)
{
    (void)user_data;
    int fd = open(arg(args, "path"), O_RDONLY | O_CLOEXEC);
    int code = fd < 0 ? errno : 0;
    char byte;
    if (fd >= 0 && read(fd, &byte, 1) < 0)
        code = errno;
    if (fd >= 0)
        close(fd);
    return tried(call, code);
}

static th_rc write_file(th_call *call, json_object *args, void *user_data)
{
    (void)user_data;
    int fd = open(arg(args, "path"), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int code = fd < 0 ? errno : 0;
    if (fd >= 0 && write(fd, "pwned\n", 6) != 6)
        code = errno;
    if (fd >= 0)
        close(fd);
    return tried(call, code);
}

static th_rc connect_port(th_call *call, json_object *args, void *user_data)
{
    (void)user_data;
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(arg(args, "port")))};
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int code = fd < 0 ? errno : 0;
    if (fd >= 0 && connect(fd, (struct sockaddr *)&sin, sizeof sin) != 0)
        code = errno;
    else if (fd >= 0 && write(fd, "pwned\n", 6) != 6)
        code = errno;
    if (fd >= 0)
        close(fd);
    return tried(call, code);
}

/* Landlock has no UDP rules: what stops this is the network namespace. */
static th_rc send_datagram(th_call *call, json_object *args, void *user_data)
{
    (void)user_data;
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(arg(args, "port")))};
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    int code = fd < 0 ? errno : 0;
    if (fd >= 0 && sendto(fd, "pwned\n", 6, 0, (struct sockaddr *)&sin, sizeof sin) != 6)
        code = errno;
    if (fd >= 0)
        close(fd);
    return tried(call, code);
}

/* posix_spawn reports the child's execve error as its own result. */
static th_rc exec_program(th_call *call, json_object *args, void *user_data)
{
    (void)user_data;
    extern char **environ;
    const char *path = arg(args, "path");
    char *argv[] = {(char *)path, "-c", "exit 0", NULL};
    pid_t pid;
    int code = posix_spawn(&pid, path, NULL, NULL, argv, environ);
    int status;
    if (code == 0 && waitpid(pid, &status, 0) == pid && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
        code = ECHILD;
    return tried(call, code);
}

static th_rc ping(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    (void)user_data;
    return th_call_text(call, "pong");
}

#define PATH_SCHEMA "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"}},\"required\":[\"path\"]}"

static const th_tool tools[] = {
    {TH_TOOL_INIT, .name = "read_file", .description = "Try to read a byte of path.", .input_schema = PATH_SCHEMA,
     .handler = read_file},
    {TH_TOOL_INIT, .name = "write_file", .description = "Try to create and write path.", .input_schema = PATH_SCHEMA,
     .handler = write_file},
    {TH_TOOL_INIT, .name = "connect_port", .description = "Try to connect to 127.0.0.1:port and write a line.",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"port\":{\"type\":\"string\"}},\"required\":[\"port\"]}",
     .handler = connect_port},
    {TH_TOOL_INIT, .name = "send_datagram", .description = "Try to send a UDP datagram to 127.0.0.1:port.",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"port\":{\"type\":\"string\"}},\"required\":[\"port\"]}",
     .handler = send_datagram},
    {TH_TOOL_INIT, .name = "exec_program", .description = "Try to run path -c 'exit 0'.",
     .input_schema = PATH_SCHEMA, .handler = exec_program},
    {TH_TOOL_INIT, .name = "ping", .description = "Answer pong.", .input_schema = "{\"type\":\"object\",\"properties\":{}}",
     .handler = ping},
};

TH_REGISTER(attacks)
{
    for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++)
        if (th_server_add_tool(server, &tools[i]) != TH_OK)
            return NULL;
    return th_server_added_only(server);
}
