/* SPDX-License-Identifier: MIT */
/*
** worker/isolate.c: what keeps a worker from reaching the host or another
** worker, applied by the worker to itself before plugin code runs, and the
** host's own part (not dumpable; one warning for what a kernel lacks).
*/
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#if HAVE_PRCTL && HAVE_SYS_PRCTL_H
#include <linux/capability.h>
#include <sys/prctl.h>
#endif
#if HAVE_SECCOMP
#include <seccomp.h>
#endif

#include "worker/denials.h"
#include "worker/isolate.h"

/* ---- the policy from the hello -------------------------------------------- */

static const struct {
    const char *name;
    th_isolate_mode mode;
} modes[] = {{"off", TH_ISOLATE_OFF}, {"declared", TH_ISOLATE_DECLARED}, {"strict", TH_ISOLATE_STRICT}};

bool th_isolate_policy_read(json_object *hello, th_isolate_policy *p, th_err *err)
{
    *p = (th_isolate_policy){.mode = TH_ISOLATE_DECLARED};
    json_object *sb = NULL, *v;
    if (json_object_object_get_ex(hello, "isolation_report", &v))
        p->report = json_object_get_boolean(v);
    if (!json_object_object_get_ex(hello, "sandbox", &sb) || !sb)
        return true;
    if (!json_object_is_type(sb, json_type_object)) {
        th_err_set(err, TH_ERR_VALUE, "the hello's \"sandbox\" is not an object");
        return false;
    }
    if (json_object_object_get_ex(sb, "require", &v)) {
        if (!json_object_is_type(v, json_type_boolean)) {
            th_err_set(err, TH_ERR_VALUE, "the hello's \"sandbox\".\"require\" is not a boolean");
            return false;
        }
        p->require = json_object_get_boolean(v);
    }
    if (!json_object_object_get_ex(sb, "mode", &v))
        return true;
    const char *name = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
        if (strcmp(modes[i].name, name) == 0) {
            p->mode = modes[i].mode;
            return true;
        }
    th_err_set(err, TH_ERR_VALUE, "the hello's \"sandbox\".\"mode\" is not off, declared or strict");
    return false;
}

/* ---- the parts ------------------------------------------------------------ */

/* Each part says whether it holds; WHY gets the reason when it does not. */
typedef bool (*part_fn)(char *why, size_t size);

/* Not dumpable: /proc/PID/{fd,environ,mem,maps} and ptrace need
 * CAP_SYS_PTRACE, which no worker keeps. */
static bool not_dumpable(char *why, size_t size)
{
#if HAVE_PRCTL && defined(PR_SET_DUMPABLE)
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0 && prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0)
        return true;
    snprintf(why, size, "PR_SET_DUMPABLE: %s", strerror(errno));
#else
    snprintf(why, size, "no prctl(PR_SET_DUMPABLE) on this system");
#endif
    return false;
}

#if HAVE_PRCTL && defined(PR_CAPBSET_DROP) && defined(SYS_capset)
/* The calling thread's capability sets (v3: two 32-bit words each). */
static bool caps_get(struct __user_cap_data_struct data[2])
{
    struct __user_cap_header_struct head = {.version = _LINUX_CAPABILITY_VERSION_3};
    return syscall(SYS_capget, &head, data) == 0;
}

static bool caps_none(const struct __user_cap_data_struct data[2])
{
    for (int i = 0; i < 2; i++)
        if (data[i].effective || data[i].permitted || data[i].inheritable)
            return false;
    return true;
}

/* The bounding set first (it needs CAP_SETPCAP, which goes last), then the
 * ambient set, then effective, permitted and inheritable. A process
 * without CAP_SETPCAP keeps its bounding set, harmless under no_new_privs:
 * an exec grants nothing. */
static bool drop_caps(char *why, size_t size)
{
    struct __user_cap_data_struct data[2];
    if (!caps_get(data)) {
        snprintf(why, size, "capget: %s", strerror(errno));
        return false;
    }
    if (data[CAP_TO_INDEX(CAP_SETPCAP)].effective & CAP_TO_MASK(CAP_SETPCAP))
        for (int cap = 0; cap < 64 && prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0; cap++)
            if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) {
                snprintf(why, size, "PR_CAPBSET_DROP %d: %s", cap, strerror(errno));
                return false;
            }
#ifdef PR_CAP_AMBIENT
    (void)prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); /* EINVAL before Linux 4.3: none */
#endif
    struct __user_cap_header_struct head = {.version = _LINUX_CAPABILITY_VERSION_3};
    memset(data, 0, sizeof data[0] * 2);
    if (syscall(SYS_capset, &head, data) != 0 || !caps_get(data) || !caps_none(data)) {
        snprintf(why, size, "capset: %s", strerror(errno));
        return false;
    }
    return true;
}
#else
static bool drop_caps(char *why, size_t size)
{
    snprintf(why, size, "no capabilities interface on this system");
    return false;
}
#endif

#if HAVE_SECCOMP
/* LeakSanitizer checks a process at exit() by stopping its threads with
 * ptrace from a helper of its own: a sanitizer build (a test build, never
 * one to serve with) leaves ptrace to the kernel's own check, which the
 * worker's not being dumpable and holding no capability already make
 * refuse every other process. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_LEAK__)
#define TH_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(leak_sanitizer)
#define TH_SANITIZED 1
#endif
#endif
#ifndef TH_SANITIZED
#define TH_SANITIZED 0
#endif

/* Answered EPERM whatever their arguments. */
static const char *const denied[] = {
#if !TH_SANITIZED
    "ptrace",
#endif
    "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd", "pidfd_send_signal",
    "mount", "umount2", "pivot_root", "chroot", "fsopen", "fsconfig", "fsmount", "fspick", "move_mount",
    "open_tree", "mount_setattr", "setns", "kexec_load", "kexec_file_load", "bpf", "init_module",
    "finit_module", "delete_module", "keyctl", "add_key", "request_key", "perf_event_open", "userfaultfd",
};

/* Signals: allowed only where argument 0 (a pid or thread group) is the
 * worker's own pid. kill(0) and kill(-1) are refused too: the worker's
 * process group holds the host. tkill's thread id cannot be checked
 * against the thread group, so it too must name the pid (glibc uses
 * tgkill). */
static const char *const signalling[] = {"kill", "tgkill", "tkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo"};

/* New namespaces: one rule per flag (libseccomp takes one comparison per
 * argument in a rule). CLONE_NEWTIME shares its bit with clone()'s exit
 * signal, so clone is checked without it. */
static const uint64_t ns_flags[] = {CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
                                    CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET,
#ifdef CLONE_NEWTIME
                                    CLONE_NEWTIME,
#endif
};

/* Add RULE for NAME unless this libseccomp or architecture lacks the call. */
#define RULE(ctx, action, name, ...)                                                                                   \
    (seccomp_syscall_resolve_name(name) == __NR_SCMP_ERROR                                                             \
         ? 0                                                                                                           \
         : seccomp_rule_add((ctx), (action), seccomp_syscall_resolve_name(name), __VA_ARGS__))

/* EPERM is what every refusal answers: REFUSE is that action, or the
 * notification worker/denials.c answers EPERM and logs. */
static int add_rules(scmp_filter_ctx ctx, uint32_t refuse)
{
    uint32_t self = (uint32_t)getpid();
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < sizeof denied / sizeof denied[0]; i++)
        rc = RULE(ctx, refuse, denied[i], 0);
    for (size_t i = 0; rc == 0 && i < sizeof signalling / sizeof signalling[0]; i++)
        if ((rc = RULE(ctx, refuse, signalling[i], 1, SCMP_A0_32(SCMP_CMP_LT, self))) == 0)
            rc = RULE(ctx, refuse, signalling[i], 1, SCMP_A0_32(SCMP_CMP_GT, self));
    for (size_t i = 0; rc == 0 && i < sizeof ns_flags / sizeof ns_flags[0]; i++) {
        rc = RULE(ctx, refuse, "unshare", 1, SCMP_A0(SCMP_CMP_MASKED_EQ, ns_flags[i], ns_flags[i]));
        if (rc == 0 && ns_flags[i] != 0x80) /* CLONE_NEWTIME */
            rc = RULE(ctx, refuse, "clone", 1, SCMP_A0(SCMP_CMP_MASKED_EQ, ns_flags[i], ns_flags[i]));
    }
    /* clone3's flags sit in memory a filter cannot read: ENOSYS makes glibc
     * fall back to clone, whose flags it can. */
    if (rc == 0)
        rc = RULE(ctx, SCMP_ACT_ERRNO(ENOSYS), "clone3", 0);
    /* Only the query; a new personality (READ_IMPLIES_EXEC, ...) is refused. */
    if (rc == 0)
        rc = RULE(ctx, refuse, "personality", 1, SCMP_A0_32(SCMP_CMP_NE, 0xffffffffu));
    return rc;
}

static bool build_and_load(uint32_t refuse, char *why, size_t size)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    int rc = ctx ? 0 : -ENOMEM;
    const char *step = "seccomp_init";
    /* The native ABI only: a 64-bit worker has no use for the 32-bit ones
     * (int 0x80, x32), which every call of theirs would need rules for and
     * each rule costs the start time; they are refused, never killed. */
    if (rc == 0 && (rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(EPERM))) != 0)
        step = "seccomp_attr_set";
    if (rc == 0 && (rc = add_rules(ctx, refuse)) != 0)
        step = "seccomp_rule_add";
    if (rc == 0 && (rc = seccomp_load(ctx)) != 0)
        step = "seccomp_load";
#ifdef SCMP_ACT_NOTIFY
    if (rc == 0 && refuse == SCMP_ACT_NOTIFY)
        (void)th_denials_start(seccomp_notify_fd(ctx));
#endif
    if (ctx)
        seccomp_release(ctx);
    if (rc != 0)
        snprintf(why, size, "%s: %s", step, strerror(-rc));
    return rc == 0;
}

/* Refusals reported where the kernel can send them to a listener; else (an
 * older kernel, or a supervisor above the host holding the one listener a
 * process may have) refused in silence. */
static bool load_filter(char *why, size_t size)
{
#ifdef SCMP_ACT_NOTIFY
    if (th_denials_prepare() && build_and_load(SCMP_ACT_NOTIFY, why, size))
        return true;
#endif
    return build_and_load(SCMP_ACT_ERRNO(EPERM), why, size);
}
#else
static bool load_filter(char *why, size_t size)
{
    snprintf(why, size, "toolhost was built without libseccomp");
    return false;
}
#endif

/* In order: dumpability first (it costs nothing and holds in every mode),
 * the filter last (capset and prctl are not in it, but need not be). */
static const struct {
    const char *name;
    part_fn apply;
    bool in_off_mode;
} parts[] = {
    {"non-dumpable", not_dumpable, true},
    {"capabilities", drop_caps, false},
    {"seccomp", load_filter, false},
};

th_rc th_isolate_apply(const th_isolate_policy *p, char *missing, size_t size, th_err *err)
{
    size_t len = 0;
    char why[256];
    if (size)
        missing[0] = '\0';
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        if (p->mode == TH_ISOLATE_OFF && !parts[i].in_off_mode)
            continue;
        if (parts[i].apply(why, sizeof why))
            continue;
        if (p->require)
            return th_err_set(err, TH_ERR_RUNTIME, "isolation is required but %s is not enforced (%s)",
                              parts[i].name, why);
        int n = snprintf(missing + len, size - len, "%s%s (%s)", len ? ", " : "", parts[i].name, why);
        if (n > 0 && (size_t)n < size - len)
            len += (size_t)n;
    }
    return TH_OK;
}

/* ---- the host's part -------------------------------------------------------- */

bool th_isolate_host(void)
{
#if HAVE_PRCTL && defined(PR_SET_DUMPABLE)
    return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0;
#else
    return true;
#endif
}

static atomic_bool reported;

void th_isolate_hello(json_object *hello)
{
    if (!atomic_exchange(&reported, true))
        json_object_object_add(hello, "isolation_report", json_object_new_boolean(true));
}
