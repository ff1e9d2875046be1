/* SPDX-License-Identifier: MIT */
/*
** worker/sandbox.c: the one place a worker's sandbox is applied: resource
** limits, a network namespace unless a connection is granted, and one
** Landlock ruleset (files, TCP ports, signal and abstract socket scopes),
** best effort by ABI; and the host's view of what it enforces.
*/
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/log.h"
#include "worker/sandbox.h"

/*
** The kernel's interface, spelled out here: the installed headers may be
** older than the running kernel, and the structures only grow at the end.
*/
#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1
#define LL_RULE_NET_PORT 2

#define FS_EXECUTE (1ULL << 0)
#define FS_WRITE_FILE (1ULL << 1)
#define FS_READ_FILE (1ULL << 2)
#define FS_READ_DIR (1ULL << 3)
#define FS_REFER (1ULL << 13)
#define FS_TRUNCATE (1ULL << 14)
#define FS_IOCTL_DEV (1ULL << 15)
#define NET_BIND_TCP (1ULL << 0)
#define NET_CONNECT_TCP (1ULL << 1)
#define SCOPE_ABSTRACT_UNIX (1ULL << 0)
#define SCOPE_SIGNAL (1ULL << 1)

/* The rights a rule on a file (not a directory) may carry. */
#define FS_FILE_RIGHTS (FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV)
#define FS_READ (FS_READ_FILE | FS_READ_DIR)

struct ll_ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;
    uint64_t scoped;
};

struct ll_path_beneath_attr {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));

struct ll_net_port_attr {
    uint64_t allowed_access;
    uint64_t port;
};

static int ll_abi(void)
{
#ifdef SYS_landlock_create_ruleset
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
    return abi < 0 ? 0 : (int)abi;
#else
    return 0;
#endif
}

/* What each ABI handles: file rights grew at 2, 3 and 5; TCP came at 4,
 * scopes at 6. */
static uint64_t fs_rights(int abi)
{
    uint64_t r = abi >= 1 ? (1ULL << 13) - 1 : 0;
    r |= abi >= 2 ? FS_REFER : 0;
    r |= abi >= 3 ? FS_TRUNCATE : 0;
    r |= abi >= 5 ? FS_IOCTL_DEV : 0;
    return r;
}

/* The parts of the policy this ABI lacks, as the warning names them. */
static const struct {
    int abi;
    const char *part;
} since[] = {
    {1, "file access rules (Landlock)"},
    {3, "truncation rules"},
    {4, "TCP connect and bind rules"},
    {6, "signal and abstract unix socket scopes"},
};

/*
** 0 when a worker could make its network namespace, else the errno: tried
** in a child as a worker tries (directly, else inside a user namespace),
** since a container's or a service's own seccomp policy may refuse it on a
** kernel that has it.
*/
static int netns_try(void)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(unshare(CLONE_NEWNET) == 0 || unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0 ? 0 : errno & 0xff);
    int status = 0;
    if (pid < 0)
        return errno;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return errno;
    return WIFEXITED(status) ? WEXITSTATUS(status) : EINVAL;
}

static int netns_refused(void)
{
    static int known = -1; /* one answer per process: inspect asks per plugin */
    if (known < 0)
        known = netns_try();
    return known;
}

int th_sandbox_probe(char *buf, size_t size)
{
    int abi = ll_abi();
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof since / sizeof since[0]; i++)
        if (abi < since[i].abi && len < size)
            len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? ", " : "", since[i].part);
    int e = netns_refused();
    if (e && len < size)
        len += (size_t)snprintf(buf + len, size - len, "%snetwork namespaces (%s; a plugin without a connect "
                                "grant keeps UDP and unix sockets)", len ? ", " : "", strerror(e));
    return abi;
}

const char *th_sandbox_mode_name(th_sandbox_mode mode)
{
    static const char *const names[] = {"off", "declared", "strict"};
    return (unsigned)mode < 3 ? names[mode] : "?";
}

th_rc th_sandbox_check_kernel(const th_sandbox_opts *o, th_err *err)
{
    char missing[512];
    int abi = th_sandbox_probe(missing, sizeof missing);
    if (o->mode == TH_SANDBOX_OFF || !missing[0])
        return TH_OK;
    if (o->require)
        return th_err_set(err, TH_ERR_VALUE,
                          "--require-sandbox: this system (Landlock ABI %d) cannot enforce %s", abi, missing);
    th_log(TH_LOG_WARNING, "sandbox: this system (Landlock ABI %d) cannot enforce %s; plugins run without them", abi,
           missing);
    return TH_OK;
}

/* ---- the host's half: the policy a worker receives ---------------------- */

static void add_grant(json_object *p, const char *member, bool list, const char *value)
{
    json_object *a;
    if (!list) {
        json_object_object_add(p, member, json_object_new_int64((int64_t)strtoull(value, NULL, 10)));
        return;
    }
    if (!json_object_object_get_ex(p, member, &a)) {
        a = json_object_new_array();
        json_object_object_add(p, member, a);
    }
    json_object_array_add(a, json_object_new_string(value));
}

/* A declared need "KIND:VALUE" joins the list KIND names. */
static void add_need(json_object *p, const char *need)
{
    static const char *const kinds[] = {"read", "write", "connect", "exec"};
    const char *colon = strchr(need, ':');
    for (size_t i = 0; colon && i < sizeof kinds / sizeof kinds[0]; i++)
        if (strlen(kinds[i]) == (size_t)(colon - need) && strncmp(kinds[i], need, (size_t)(colon - need)) == 0)
            add_grant(p, kinds[i], true, colon + 1);
}

json_object *th_sandbox_hello(const th_sandbox_opts *o, const char *name, json_object *needs)
{
    json_object *p = json_object_new_object();
    if (!p)
        return NULL;
    th_sandbox_mode mode = name ? o->mode : o->mode == TH_SANDBOX_OFF ? TH_SANDBOX_OFF : TH_SANDBOX_STRICT;
    json_object_object_add(p, "mode", json_object_new_string(th_sandbox_mode_name(mode)));
    json_object_object_add(p, "require", json_object_new_boolean(o->require));
    for (size_t i = 0; name && i < th_config_grant_count(o->grants, name); i++) {
        const char *key, *value;
        bool list;
        th_config_grant_at(o->grants, name, i, &key, &value);
        const char *member = th_config_grant_member(key, &list);
        if (member)
            add_grant(p, member, list, value);
    }
    for (size_t i = 0; name && mode == TH_SANDBOX_DECLARED && needs && i < json_object_array_length(needs); i++)
        add_need(p, json_object_get_string(json_object_array_get_idx(needs, i)));
    /* What the scan reported, against which the worker holds its plugin. */
    if (name)
        json_object_object_add(p, "needs", needs ? json_object_get(needs) : json_object_new_array());
    return p;
}

bool th_sandbox_grants_any(json_object *policy)
{
    static const char *const lists[] = {"read", "write", "connect", "exec"};
    json_object *a;
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++)
        if (json_object_object_get_ex(policy, lists[i], &a) && json_object_array_length(a) > 0)
            return true;
    return false;
}

/* ---- the worker's half --------------------------------------------------- */

static unsigned long long num(json_object *p, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(p, key, &v) ? (unsigned long long)json_object_get_int64(v) : 0;
}

static th_rc limit(int resource, unsigned long long value, const char *name, th_err *err)
{
    struct rlimit rl = {.rlim_cur = (rlim_t)value, .rlim_max = (rlim_t)value};
    if (value && setrlimit(resource, &rl) != 0)
        return th_err_set(err, TH_ERR_IO, "sandbox: cannot set %s to %llu: %s", name, value, strerror(errno));
    return TH_OK;
}

/* What a libc, a TLS library and the dynamic loader read, never write. */
static const char *const system_read[] = {
    "/lib", "/lib32", "/lib64", "/usr/lib", "/usr/lib32", "/usr/lib64", "/usr/local/lib", "/etc/ld.so.cache",
    "/etc/ssl", "/etc/pki", "/etc/ca-certificates", "/usr/share/ca-certificates", "/etc/localtime",
    "/usr/share/zoneinfo", "/usr/share/locale", "/dev/urandom", "/dev/random", "/dev/zero",
    "/sys/devices/system/cpu", /* sysconf(_SC_NPROCESSORS_ONLN) */
    "/proc/self",              /* resolved now: this process's own entry, no other's */
};

/* What a granted connect needs to find its host. */
static const char *const resolver_read[] = {"/etc/hosts", "/etc/resolv.conf", "/etc/nsswitch.conf",
                                            "/etc/gai.conf", "/etc/services", "/etc/host.conf"};

typedef struct ruleset {
    int fd, abi;
    uint64_t fs; /* the file rights handled */
} ruleset;

/* A rule for PATH. A path that does not exist is no rule: there is nothing
 * to reach. Rights a file cannot carry are dropped for one. */
static th_rc allow_path(const ruleset *rs, const char *path, uint64_t access, th_err *err)
{
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT || errno == ENOTDIR || errno == EACCES
                   ? TH_OK
                   : th_err_set(err, TH_ERR_IO, "sandbox: cannot open %s: %s", path, strerror(errno));
    struct stat st;
    struct ll_path_beneath_attr attr = {.allowed_access = access & rs->fs, .parent_fd = fd};
    if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode))
        attr.allowed_access &= FS_FILE_RIGHTS;
    long rc = attr.allowed_access ? syscall(SYS_landlock_add_rule, rs->fd, LL_RULE_PATH_BENEATH, &attr, 0) : 0;
    int e = errno;
    close(fd);
    return rc == 0 ? TH_OK : th_err_set(err, TH_ERR_IO, "sandbox: cannot allow %s: %s", path, strerror(e));
}

static th_rc allow_list(const ruleset *rs, json_object *p, const char *member, uint64_t access, th_err *err)
{
    json_object *a;
    if (!json_object_object_get_ex(p, member, &a) || !json_object_is_type(a, json_type_array))
        return TH_OK;
    th_rc rc = TH_OK;
    for (size_t i = 0; rc == TH_OK && i < json_object_array_length(a); i++)
        rc = allow_path(rs, json_object_get_string(json_object_array_get_idx(a, i)), access, err);
    return rc;
}

/* "HOST:PORT": Landlock knows ports only, so HOST is the operator's word,
 * not enforced. */
static th_rc allow_connect(const ruleset *rs, const char *grant, th_err *err)
{
    const char *colon = strrchr(grant, ':');
    char *end;
    unsigned long port = colon ? strtoul(colon + 1, &end, 10) : 0;
    if (!colon || !colon[1] || *end || port == 0 || port > 65535)
        return th_err_set(err, TH_ERR_VALUE, "sandbox: connect grant '%s' is not HOST:PORT", grant);
    struct ll_net_port_attr attr = {.allowed_access = NET_CONNECT_TCP, .port = port};
    if (rs->abi >= 4 && syscall(SYS_landlock_add_rule, rs->fd, LL_RULE_NET_PORT, &attr, 0) != 0)
        return th_err_set(err, TH_ERR_IO, "sandbox: cannot allow connect to port %lu: %s", port, strerror(errno));
    return TH_OK;
}

static size_t count(json_object *p, const char *member)
{
    json_object *a;
    return json_object_object_get_ex(p, member, &a) && json_object_is_type(a, json_type_array)
               ? json_object_array_length(a)
               : 0;
}

/* The system's paths, the plugin files, then the grants. */
static th_rc add_rules(const ruleset *rs, json_object *p, char *const *plugins, size_t n, th_err *err)
{
    /* The dynamic loader of a granted program is opened for execution. */
    uint64_t lib = FS_READ | (count(p, "exec") ? FS_EXECUTE : 0);
    th_rc rc = TH_OK;
    for (size_t i = 0; rc == TH_OK && i < sizeof system_read / sizeof system_read[0]; i++)
        rc = allow_path(rs, system_read[i], lib, err);
    for (size_t i = 0; rc == TH_OK && count(p, "connect") && i < sizeof resolver_read / sizeof resolver_read[0]; i++)
        rc = allow_path(rs, resolver_read[i], FS_READ, err);
    if (rc == TH_OK)
        rc = allow_path(rs, "/dev/null", FS_READ_FILE | FS_WRITE_FILE | FS_TRUNCATE, err);
    for (size_t i = 0; rc == TH_OK && i < n; i++)
        rc = allow_path(rs, plugins[i], FS_READ_FILE, err);
    if (rc == TH_OK)
        rc = allow_list(rs, p, "read", FS_READ, err);
    if (rc == TH_OK)
        rc = allow_list(rs, p, "write", rs->fs & ~FS_EXECUTE, err);
    if (rc == TH_OK)
        rc = allow_list(rs, p, "exec", FS_EXECUTE | FS_READ_FILE, err);
    json_object *a;
    if (json_object_object_get_ex(p, "connect", &a) && json_object_is_type(a, json_type_array))
        for (size_t i = 0; rc == TH_OK && i < json_object_array_length(a); i++)
            rc = allow_connect(rs, json_object_get_string(json_object_array_get_idx(a, i)), err);
    return rc;
}

static bool granted(json_object *p, const char *member, const char *path)
{
    json_object *a;
    for (size_t i = 0; json_object_object_get_ex(p, member, &a) && i < json_object_array_length(a); i++)
        if (strcmp(json_object_get_string(json_object_array_get_idx(a, i)), path) == 0)
            return true;
    return false;
}

/*
** Landlock binds per thread, and a program can log "enforced" while it runs
** unconfined: so look from inside. The root directory is in no rule unless
** granted; reading it must now fail.
*/
static th_rc check_holds(json_object *p, th_err *err)
{
    if (granted(p, "read", "/") || granted(p, "write", "/"))
        return TH_OK;
    int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 && errno == EACCES)
        return TH_OK;
    if (fd >= 0)
        close(fd);
    return th_err_set(err, TH_ERR_IO, "sandbox: applied, yet / can still be read");
}

static th_rc landlock(json_object *p, char *const *plugins, size_t n, bool require, th_err *err)
{
    ruleset rs = {.fd = -1, .abi = ll_abi()};
    if (rs.abi == 0)
        return require ? th_err_set(err, TH_ERR_VALUE, "sandbox: this kernel has no Landlock") : TH_OK;
    rs.fs = fs_rights(rs.abi);
    struct ll_ruleset_attr attr = {
        .handled_access_fs = rs.fs,
        .handled_access_net = rs.abi >= 4 ? NET_BIND_TCP | NET_CONNECT_TCP : 0,
        .scoped = rs.abi >= 6 ? SCOPE_ABSTRACT_UNIX | SCOPE_SIGNAL : 0,
    };
    rs.fd = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
    if (rs.fd < 0)
        return th_err_set(err, TH_ERR_IO, "sandbox: landlock_create_ruleset: %s", strerror(errno));
    th_rc rc = add_rules(&rs, p, plugins, n, err);
    if (rc != TH_OK)
        goto cleanup;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || syscall(SYS_landlock_restrict_self, rs.fd, 0) != 0) {
        rc = th_err_set(err, TH_ERR_IO, "sandbox: landlock_restrict_self: %s", strerror(errno));
        goto cleanup;
    }
    rc = check_holds(p, err);
cleanup:
    close(rs.fd);
    return rc;
}

/* Write TEXT to the /proc/self file NAME (a user namespace's maps). */
static bool write_self(const char *name, const char *text)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/%s", name);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    size_t len = strlen(text);
    bool ok = fd >= 0 && write(fd, text, len) == (ssize_t)len;
    if (fd >= 0)
        close(fd);
    return ok;
}

/*
** Landlock rules TCP only: without a connect grant, a network namespace of
** its own leaves UDP, raw and every other socket nothing to reach (its
** loopback is down). Root makes one directly; another user through a user
** namespace mapping its own ids, so getuid() answers as before.
*/
static th_rc no_network(json_object *p, bool require, th_err *err)
{
    if (count(p, "connect") || unshare(CLONE_NEWNET) == 0)
        return TH_OK;
    uid_t uid = getuid();
    gid_t gid = getgid();
    char map[64];
    if (unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0) {
        bool ok = write_self("setgroups", "deny");
        snprintf(map, sizeof map, "%lu %lu 1", (unsigned long)uid, (unsigned long)uid);
        ok = ok && write_self("uid_map", map);
        snprintf(map, sizeof map, "%lu %lu 1", (unsigned long)gid, (unsigned long)gid);
        if (ok && write_self("gid_map", map))
            return TH_OK;
        return th_err_set(err, TH_ERR_IO, "sandbox: cannot map the ids of its user namespace: %s", strerror(errno));
    }
    return require ? th_err_set(err, TH_ERR_VALUE, "sandbox: no network namespace: %s", strerror(errno)) : TH_OK;
}

th_rc th_sandbox_apply(json_object *policy, char *const *plugins, size_t n, th_err *err)
{
    json_object *v;
    const char *mode = policy && json_object_object_get_ex(policy, "mode", &v) ? json_object_get_string(v) : "off";
    bool require = policy && json_object_object_get_ex(policy, "require", &v) && json_object_get_boolean(v);
    th_rc rc = limit(RLIMIT_CPU, num(policy, "cpu_seconds"), "RLIMIT_CPU (cpu-seconds)", err);
    if (rc == TH_OK)
        rc = limit(RLIMIT_NPROC, num(policy, "max_procs"), "RLIMIT_NPROC (max-procs)", err);
    if (rc != TH_OK || strcmp(mode, "off") == 0)
        return rc;
    if ((rc = no_network(policy, require, err)) != TH_OK)
        return rc;
    return landlock(policy, plugins, n, require, err);
}
