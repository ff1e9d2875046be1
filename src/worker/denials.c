/* SPDX-License-Identifier: MIT */
/*
** worker/denials.c: the worker's reporter of what its seccomp filter refused:
** one thread answers each refused system call EPERM and logs it, a line the
** host relays tagged with the plugin.
*/
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if HAVE_SECCOMP
#include <seccomp.h>
#endif

#include "base/log.h"
#include "worker/denials.h"

#if HAVE_SECCOMP && defined(SCMP_ACT_NOTIFY)

/* The listener and its buffers live as long as the worker: static, so a
 * leak check at exit sees them reachable. */
static int listener = -1;
static struct seccomp_notif *req;
static struct seccomp_notif_resp *resp;

static void report(const struct seccomp_notif *r)
{
    char *name = seccomp_syscall_resolve_num_arch(r->data.arch, r->data.nr);
    json_object *fields = json_object_new_object();
    json_object_object_add(fields, "syscall", json_object_new_string(name ? name : "?"));
    json_object_object_add(fields, "pid", json_object_new_int64(r->pid));
    th_log_ex(TH_LOG_WARNING, "sandbox", NULL, fields, "refused the system call %s (EPERM): a plugin's worker may not "
              "reach other processes, mounts, namespaces, modules or keys", name ? name : "?");
    json_object_put(fields);
    free(name);
}

/* Answer first, then log: the plugin's thread is not held by the log. */
static void *serve(void *arg)
{
    (void)arg;
    for (;;) {
        memset(req, 0, sizeof *req);
        /* libseccomp folds the failures into one code; errno tells them
         * apart: ENOENT is a caller that died before it was read. */
        if (seccomp_notify_receive(listener, req) != 0) {
            if (errno == EINTR || errno == ENOENT)
                continue;
            break;
        }
        *resp = (struct seccomp_notif_resp){.id = req->id, .error = -EPERM};
        if (seccomp_notify_respond(listener, resp) == 0)
            report(req);
    }
    /* Closed, a refused call is answered ENOSYS by the kernel: still refused. */
    close(listener);
    return NULL;
}

bool th_denials_prepare(void)
{
    return seccomp_api_get() >= 5 && (req || seccomp_notify_alloc(&req, &resp) == 0);
}

bool th_denials_start(int fd)
{
    sigset_t all, old;
    pthread_attr_t attr;
    pthread_t t;
    listener = fd;
    /* Signals stay with the plugin's threads. */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    bool ok = pthread_attr_init(&attr) == 0;
    if (ok) {
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, 64 * 1024);
        ok = pthread_create(&t, &attr, serve, NULL) == 0;
        pthread_attr_destroy(&attr);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!ok)
        close(fd);
    return ok;
}

#else

bool th_denials_prepare(void)
{
    return false;
}

bool th_denials_start(int fd)
{
    close(fd);
    return false;
}

#endif
