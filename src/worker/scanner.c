/* SPDX-License-Identifier: MIT */
/*
** worker/scanner.c: the host side of out-of-process loading: start a scanner
** child, follow its LOADING/PLUGIN frames with a per-plugin deadline, and
** turn a crash, exit or hang into a refusal naming the plugin and the cause.
*/
/* POLLRDHUP */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/compat.h"
#include "base/log.h"
#include "base/signals.h"
#include "plugin/needs.h"
#include "plugin/settings.h"
#include "worker/isolate.h"
#include "worker/ipc.h"
#include "worker/resproxy.h"
#include "worker/scanner.h"
#include "worker/spawn.h"

void th_scan_hello_load_opts(json_object *hello, const th_load_opts *load)
{
    json_object_object_add(hello, "follow_symlinks", json_object_new_boolean(load->follow_symlinks));
    json_object_object_add(hello, "allow_insecure", json_object_new_boolean(load->allow_insecure));
}

void th_scan_hello_settings(json_object *hello, const th_load_opts *load, const char *path)
{
    char name[256];
    if (path && !th_config_plugin_name(path, name, sizeof name))
        return;
    json_object *settings = th_config_to_json(load->config, path ? name : NULL);
    if (settings)
        json_object_object_add(hello, "settings", settings);
}

json_object *th_scan_paths_json(char *const *paths, size_t n)
{
    json_object *a = json_object_new_array();
    for (size_t i = 0; a && i < n; i++)
        json_object_array_add(a, json_object_new_string(paths[i]));
    return a;
}

void th_scan_free(th_scanned *s, size_t n)
{
    for (size_t i = 0; s && i < n; i++) {
        json_object_put(s[i].tools);
        json_object_put(s[i].needs);
        free(s[i].held);
    }
}

/* The scanner's "needs", each checked again: the scanner ran plugin code. */
static json_object *valid_needs(json_object *res)
{
    json_object *a;
    if (!json_object_object_get_ex(res, "needs", &a) || !json_object_is_type(a, json_type_array))
        return NULL;
    for (size_t i = 0; i < json_object_array_length(a); i++)
        if (!th_needs_valid(json_object_get_string(json_object_array_get_idx(a, i))))
            return NULL;
    return json_object_get(a);
}

static const char *base_name(const char *path)
{
    const char *b = strrchr(path, '/');
    return b ? b + 1 : path;
}

/* Why a scanner died while loading, from its wait status. */
static void death_cause(int status, char *buf, size_t size)
{
    if (th_child_lost_pipe(status)) {
        snprintf(buf, size, "closed or replaced descriptor %d or %d (the scanner's pipes) while loading", TH_WORKER_FD,
                 TH_WORKER_OUT_FD);
    } else if (WIFEXITED(status)) {
        snprintf(buf, size, "called exit(%d) while loading", WEXITSTATUS(status));
    } else if (WIFSIGNALED(status)) {
        const char *name = th_signal_name(WTERMSIG(status));
        snprintf(buf, size, "crashed while loading: signal %d (%s)", WTERMSIG(status), name ? name : "unknown");
    } else {
        snprintf(buf, size, "ended while loading");
    }
}

/* Plugins one scanner child loads before the next takes over. Every
 * dlopen() walks the list of objects already loaded, so one process
 * loading 10,000 plugins spends its time in the dynamic linker
 * (quadratic); a child per batch keeps each list short, for the price of
 * a start per batch. */
#define SCAN_BATCH 256

/* How long a scanner child may take to start before its first plugin's
 * --load-timeout begins. */
#define SCANNER_START_MS 30000

static void refuse(th_load_stats *stats, const char *path, const char *why)
{
    th_log(TH_LOG_ERROR, "plugin %s refused: %s", path, why);
    stats->plugins_refused++;
}

/* Read what is left of a dead child's output without waiting for a
 * grandchild that may still hold the pipe open. */
static void drain(th_outbuf *ob, int fd, const char *tag)
{
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    while (poll(&pfd, 1, 0) > 0 && th_outbuf_pump(ob, fd, tag) > 0)
        ;
    th_outbuf_pump(ob, -1, tag); /* the last unterminated line */
}

/* FD (the client's input, whose poll reported a hang-up) holds nothing
 * unread: the client is gone without a request for the plugins loading. */
static bool client_left(int fd)
{
    int unread = 0;
    return ioctl(fd, FIONREAD, &unread) == 0 && unread == 0;
}

/* Under HOLD, the lines of a plugin that declared needs stay with it (a
 * scan under its sandbox will say them again); the others are logged. */
static void keep_if_declared(th_outbuf *ob, th_scanned *s, const char *tag, bool hold)
{
    if (s->needs && json_object_array_length(s->needs) > 0) {
        s->held = ob->held;
        s->held_len = ob->held_len;
    } else {
        th_outbuf_release(ob->held, ob->held_len, tag);
    }
    ob->held = NULL;
    ob->held_len = 0;
    ob->hold = hold;
}

/* A plugin still registering after this long is heard as it goes (one
 * that hangs must be seen hanging), held lines first. */
#define HOLD_MS 300

static long long hold_left_ms(const th_outbuf *ob)
{
    return ob->held ? ob->held_since_ms + HOLD_MS - th_now_ms() : -1;
}

static void release_if_slow(th_outbuf *ob, const char *tag)
{
    if (ob->held && hold_left_ms(ob) <= 0) {
        th_outbuf_release(ob->held, ob->held_len, tag);
        ob->held = NULL;
        ob->held_len = 0;
        ob->hold = false;
    }
}

/* Log what S held back from its first scan. */
static void speak(th_scanned *s, const char *path)
{
    th_outbuf_release(s->held, s->held_len, base_name(path));
    s->held = NULL;
    s->held_len = 0;
}

/*
** One scanner child for SCAN_BATCH plugins from index *NEXT on. Returns TH_OK, TH_ERR_IO when no
** child could be started, or TH_ERR_CANCELLED when the client left (its
** child killed); *NEXT moves past every plugin it settled.
*/
static th_rc scan_some(char *const *paths, size_t n, const th_scan_opts *o, th_scanned *out, th_load_stats *stats,
                       size_t *next, bool hold)
{
    th_child ch;
    th_err err;
    if (th_spawn_child(&ch, &err) != TH_OK) {
        th_log(TH_LOG_CRITICAL, "cannot start the plugin scanner: %s", err.msg);
        return TH_ERR_IO;
    }
    json_object *hello = json_object_new_object();
    json_object_object_add(hello, "role", json_object_new_string("scan"));
    json_object_object_add(hello, "paths", th_scan_paths_json(paths, n));
    json_object_object_add(hello, "from", json_object_new_int64((int64_t)*next));
    size_t until = n - *next > SCAN_BATCH ? *next + SCAN_BATCH : n;
    json_object_object_add(hello, "until", json_object_new_int64((int64_t)until));
    th_scan_hello_load_opts(hello, &o->load);
    th_scan_hello_settings(hello, &o->load, NULL);
    th_isolate_hello(hello);
    json_object_object_add(hello, "log_threshold", json_object_new_int(th_log_threshold()));
    json_object_object_add(hello, "sandbox",
                           o->policy ? json_object_get(o->policy) : th_sandbox_hello(&o->sandbox, NULL, NULL));
    th_ipc_send_json(ch.to, TH_IPC_HELLO, 0, hello);
    json_object_put(hello);

    th_ipc_reader r = {.fd = ch.from, .max = 256u << 20};
    th_outbuf ob = {.len = 0, .hold = hold};
    long long current = -1; /* the plugin being loaded */
    bool done = false, timed_out = false, eof = false;
    /* --load-timeout is each plugin's, counted from its LOADING frame. The
     * scanner's own start (an exec of the host: slow on a loaded machine or
     * under valgrind) is not a plugin's fault, and gets its own allowance. */
    long long deadline = o->load_timeout_ms ? th_now_ms() + SCANNER_START_MS + o->load_timeout_ms : 0;
    /* Output is the next plugin's from the HELLO, or from the LOGGED that
     * let the scanner go on, up to that plugin's PLUGIN frame: the two
     * streams (frames and output) are read in no particular order, so the
     * tag follows that lockstep, not the moment a LOADING frame is read. */
    char tag[300];
    snprintf(tag, sizeof tag, "%s", *next < n ? base_name(paths[*next]) : "scanner");
    int outfd = ch.out;
    /* Only its hang-up is watched: a request it sends waits for the
     * plugins, and is not to wake this loop. */
    int client = o->client_in > 0 ? o->client_in : -1;
    bool left = false;

    while (!done && !eof) {
        struct pollfd pfd[3] = {{.fd = ch.from, .events = POLLIN},
                                {.fd = outfd, .events = POLLIN},
                                {.fd = client, .events = TH_POLLRDHUP}};
        long long wait = deadline ? deadline - th_now_ms() : -1;
        if (deadline && wait <= 0) {
            timed_out = true;
            break;
        }
        long long hold_left = hold_left_ms(&ob);
        if (hold_left >= 0 && (wait < 0 || hold_left < wait))
            wait = hold_left;
        int k = poll(pfd, 3, wait > 1000 ? 1000 : (int)wait);
        release_if_slow(&ob, tag);
        if (k < 0 && errno != EINTR)
            break;
        if (k <= 0)
            continue;
        if (pfd[2].revents) {
            if ((left = client_left(client)))
                break;
            client = -1; /* it closed after its requests: they are answered once loaded */
        }
        if (outfd >= 0 && (pfd[1].revents & (POLLIN | POLLHUP | POLLERR))) {
            if (th_outbuf_pump(&ob, outfd, tag) <= 0)
                outfd = -1; /* closed: keep following the frames */
        }
        if (!(pfd[0].revents & (POLLIN | POLLHUP | POLLERR)))
            continue;
        long got = th_ipc_fill(&r);
        if (got <= 0) {
            eof = true;
            break;
        }
        th_ipc_frame f;
        int fr;
        while ((fr = th_ipc_next(&r, &f, &err)) == 1) {
            if (f.type == TH_IPC_LOADING && f.id < n) {
                current = f.id;
                th_signals_loading(paths[current]); /* a stop signal names it */
                if (o->load_timeout_ms)
                    deadline = th_now_ms() + o->load_timeout_ms;
            } else if (f.type == TH_IPC_PLUGIN && (long long)f.id == current) {
                json_object *res = th_ipc_parse(f.payload, f.len, &err), *v;
                th_scanned *s = &out[current];
                if (res && json_object_object_get_ex(res, "tools_refused", &v))
                    s->tools_refused = (size_t)json_object_get_int64(v);
                if (res && json_object_object_get_ex(res, "resources_refused", &v))
                    s->resources_refused = (size_t)json_object_get_int64(v);
                if (res && json_object_object_get_ex(res, "prompts_refused", &v))
                    s->prompts_refused = (size_t)json_object_get_int64(v);
                s->accepted = res && json_object_object_get_ex(res, "accepted", &v) && json_object_get_boolean(v) &&
                              json_object_object_get_ex(res, "tools", &v) && json_object_is_type(v, json_type_array);
                if (s->accepted)
                    s->tools = json_object_get(v);
                else if (!res)
                    refuse(stats, paths[current], "the scanner's report was not valid JSON");
                else
                    stats->plugins_refused++; /* its loader said why */
                s->needs = valid_needs(res); /* a refusal's too: its second scan may accept it */
                if (s->accepted && !s->needs) {
                    refuse(stats, paths[current], "the scanner's report of its needs was not valid");
                    s->accepted = false;
                }
                if (!s->accepted) { /* an accepted plugin's are counted when it is registered */
                    stats->tools_refused += s->tools_refused;
                    stats->resources_refused += s->resources_refused;
                    stats->prompts_refused += s->prompts_refused;
                }
                json_object_put(res);
                /* The scanner waits for LOGGED: what its pipe holds now is
                 * all this plugin wrote, its last line even unterminated. */
                if (outfd >= 0)
                    drain(&ob, outfd, tag);
                keep_if_declared(&ob, s, tag, hold);
                *next = (size_t)current + 1;
                snprintf(tag, sizeof tag, "%s", *next < n ? base_name(paths[*next]) : "scanner");
                th_ipc_send(ch.to, TH_IPC_LOGGED, (uint32_t)current, NULL, 0);
                current = -1;
                th_signals_loading(NULL);
            } else if (f.type == TH_IPC_DONE) {
                done = true;
                *next = until;
            }
        }
        if (fr < 0)
            break;
    }
    /* After end of stream the child is usually exiting: give it a moment
     * to, so its own status names the cause; a hang is killed. */
    int status = th_child_reap(ch.pid, eof ? 2000 : 0);
    if (outfd >= 0)
        drain(&ob, outfd, tag);
    th_outbuf_release(ob.held, ob.held_len, tag); /* a plugin that never reported */
    th_signals_loading(NULL);
    if (left)
        th_log(TH_LOG_INFO, "end of input while loading plugin %s; not waiting for it",
               current >= 0 ? paths[current] : "(the scanner starting)");
    else if (!done) {
        char why[200];
        if (timed_out)
            snprintf(why, sizeof why, "did not finish loading within %g s", (double)o->load_timeout_ms / 1000.0);
        else
            death_cause(status, why, sizeof why);
        /* The plugin being loaded is to blame; a scanner that died before
         * naming one blames the next, so the scan always moves on. */
        size_t blame = current >= 0 ? (size_t)current : *next;
        if (blame < n) {
            refuse(stats, paths[blame], why);
            *next = blame + 1;
        }
    }
    th_ipc_reader_free(&r);
    close(ch.to);
    close(ch.from);
    close(ch.out);
    return left ? TH_ERR_CANCELLED : TH_OK;
}

static th_rc scan_all(char *const *paths, size_t n, const th_scan_opts *opts, th_scanned *out, th_load_stats *stats,
                      bool hold)
{
    size_t next = 0;
    memset(out, 0, n * sizeof *out);
    th_rc rc = TH_OK;
    while (rc == TH_OK && next < n)
        rc = scan_some(paths, n, opts, out, stats, &next, hold);
    return rc;
}

th_rc th_scan_plugins(char *const *paths, size_t n, const th_scan_opts *opts, th_scanned *out,
                      th_load_stats *stats)
{
    return scan_all(paths, n, opts, out, stats, false);
}

/*
** A plugin that its worker will let do more than the scanner did (what it
** declared, what it is granted) is scanned again alone under its worker's
** policy: registration code that reads its declared root lists then what
** its worker will serve. It must declare the same needs again. Returns
** whether it was scanned again.
*/
static bool rescan_granted(char *const *path, const th_scan_opts *o, th_scanned *s, th_load_stats *stats)
{
    char name[256];
    bool declared = s->needs && json_object_array_length(s->needs) > 0;
    if ((!s->accepted && !declared) || o->sandbox.mode == TH_SANDBOX_OFF ||
        !th_config_plugin_name(*path, name, sizeof name)) {
        speak(s, *path);
        return false;
    }
    th_scan_opts one = *o;
    if (!(one.policy = th_sandbox_hello(&o->sandbox, name, s->needs)) || !th_sandbox_grants_any(one.policy)) {
        json_object_put(one.policy);
        speak(s, *path);
        if (!s->accepted) /* its first scan's refusal went unsaid */
            th_log(TH_LOG_ERROR, "plugin %s refused: it failed to register in a sandbox without what it declared (%s)",
                   *path, json_object_to_json_string_ext(s->needs, JSON_C_TO_STRING_NOSLASHESCAPE));
        return false;
    }
    if (!s->accepted) { /* counted as refused by its first scan: judged now */
        stats->plugins_refused -= stats->plugins_refused > 0;
        stats->tools_refused -= s->tools_refused <= stats->tools_refused ? s->tools_refused : 0;
        stats->resources_refused -= s->resources_refused <= stats->resources_refused ? s->resources_refused : 0;
        stats->prompts_refused -= s->prompts_refused <= stats->prompts_refused ? s->prompts_refused : 0;
    }
    th_scanned again;
    th_load_stats st = {0};
    th_rc rc = th_scan_plugins(path, 1, &one, &again, &st);
    json_object_put(one.policy);
    if (rc == TH_OK && again.accepted && !json_object_equal(again.needs, s->needs)) {
        th_log(TH_LOG_ERROR, "plugin %s refused: it declares other needs under its sandbox (%s) than without (%s)",
               *path, json_object_to_json_string(again.needs), json_object_to_json_string(s->needs));
        again.accepted = false;
        st.plugins_refused++;
    }
    memcpy(again.digest, s->digest, sizeof again.digest); /* the same file's */
    th_scan_free(s, 1);
    *s = again;
    stats->plugins_refused += st.plugins_refused;
    if (!s->accepted) { /* refused now: the tools it took with it */
        stats->tools_refused += s->tools_refused + st.tools_refused;
        stats->resources_refused += st.resources_refused;
        stats->prompts_refused += st.prompts_refused;
    }
    return true;
}

/* What PATH's sandbox would be (mode and grants, off included): they
 * change what its registration can read, so they join its cache key. */
static unsigned long long sandbox_digest(const th_sandbox_opts *o, const char *path)
{
    char name[256];
    unsigned long long h = 14695981039346656037ULL;
    const char *mode = th_sandbox_mode_name(o->mode);
    for (const char *c = mode; *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211ULL;
    for (size_t k = 0; th_config_plugin_name(path, name, sizeof name) && k < th_config_grant_count(o->grants, name);
         k++) {
        const char *key, *value;
        th_config_grant_at(o->grants, name, k, &key, &value);
        for (const char *parts[] = {"\n", key, "=", value}, **p = parts; p < parts + 4; p++)
            for (const char *c = *p; *c; c++)
                h = (h ^ (unsigned char)*c) * 1099511628211ULL;
    }
    return h;
}

/* The first of PATHS[0..N) named NAME.so: the file tool name NAME belongs to. */
static const char *owner_of(char *const *paths, size_t n, const char *name)
{
    size_t len = strlen(name);
    for (size_t i = 0; i < n; i++) {
        const char *b = base_name(paths[i]);
        if (strncmp(b, name, len) == 0 && strcmp(b + len, ".so") == 0)
            return paths[i];
    }
    return NULL;
}

/*
** A scanner child given only the stale plugins judged tool-name ownership
** by that part of the list: refuse, as the loader would have, a tool S
** added under a name that a file outside it owns. Its own tool is never
** such a one, so S stays accepted unless nothing is left.
*/
static void own_names(char *const *paths, size_t n, const char *path, th_scanned *s, th_load_stats *stats)
{
    for (size_t k = json_object_array_length(s->tools); k-- > 0;) {
        json_object *d = json_object_array_get_idx(s->tools, k), *v;
        if (th_resproxy_is_resource(d, NULL))
            continue; /* resources, prompts, completions ("kind"): no file owns them */
        const char *name = json_object_object_get_ex(d, "name", &v) ? json_object_get_string(v) : NULL;
        const char *owner = name ? owner_of(paths, n, name) : NULL;
        if (!owner || strcmp(owner, path) == 0)
            continue;
        th_log(TH_LOG_ERROR, "plugin %s: tool '%.60s' refused: tool name '%.60s' belongs to plugin file %s [%s]",
               path, name, name, owner, th_rc_name(TH_ERR_VALUE));
        json_object_array_del_idx(s->tools, k, 1);
        s->tools_refused++;
    }
    if (json_object_array_length(s->tools) == 0) {
        refuse(stats, path, "none of its tools is left");
        stats->tools_refused += s->tools_refused;
        json_object_put(s->tools);
        s->tools = NULL;
        s->accepted = false;
    }
}

th_rc th_scan_plugins_cached(char *const *paths, size_t n, const th_scan_opts *opts, th_cache *cache,
                             th_scanned *out, th_load_stats *stats)
{
    th_rc rc = TH_OK;
    size_t nstale = 0;
    th_cache_key *keys = calloc(n + 1, sizeof *keys);
    size_t *stale = calloc(n + 1, sizeof *stale);
    char **sub = calloc(n + 1, sizeof *sub);
    th_scanned *subout = calloc(n + 1, sizeof *subout);
    memset(out, 0, n * sizeof *out);
    if (!keys || !stale || !sub || !subout) {
        rc = TH_ERR_NOMEM;
        goto cleanup;
    }
    th_loader_dir_memo(true); /* the cached plugins' trust checks below */
    for (size_t i = 0; i < n; i++) {
        /* The key before the scan: a change while it runs is seen next time. */
        keys[i] = th_cache_key_with(paths[i], opts->load.config);
        keys[i].settings ^= sandbox_digest(&opts->sandbox, paths[i]);
        const char *digest = NULL;
        json_object *tools = th_cache_lookup(cache, paths[i], &keys[i], &digest);
        if (!tools) {
            /* Hashed before the scan too: the entry is bound to bytes
             * that are not newer than what the scanner loads. */
            if (cache)
                th_cache_key_digest(&keys[i], paths[i]);
            sub[nstale] = paths[i];
            stale[nstale++] = i;
        } else if (opts->host_loads || th_loader_check_plugin(paths[i], &opts->load, stats) == TH_OK) {
            out[i].accepted = true;
            out[i].tools = json_object_get(tools);
            json_object *needs = th_cache_needs(cache, paths[i]);
            out[i].needs = needs ? json_object_get(needs) : json_object_new_array();
            snprintf(out[i].digest, sizeof out[i].digest, "%s", digest);
        }
    }
    th_loader_dir_memo(false);
    if (nstale == 0)
        goto cleanup; /* no scanner child at all */
    if ((rc = scan_all(sub, nstale, opts, subout, stats, opts->sandbox.mode != TH_SANDBOX_OFF)) != TH_OK)
        goto cleanup;
    for (size_t j = 0; j < nstale; j++) {
        size_t i = stale[j];
        out[i] = subout[j];
        memset(&subout[j], 0, sizeof subout[j]); /* moved */
        if (keys[i].valid)
            memcpy(out[i].digest, keys[i].digest, sizeof out[i].digest);
        bool alone = rescan_granted(&paths[i], opts, &out[i], stats);
        if (out[i].accepted && (nstale < n || (alone && n > 1)))
            own_names(paths, n, paths[i], &out[i], stats);
        /* Only clean acceptances: a refusal's message is the loader's, and
         * its cause (a missing library, a slow constructor) may lie outside
         * the key, so it is scanned and reported again on every start. */
        if (out[i].accepted && out[i].tools_refused == 0 && out[i].resources_refused == 0 &&
            out[i].prompts_refused == 0)
        {
            th_cache_put(cache, paths[i], &keys[i], out[i].tools);
            th_cache_put_needs(cache, paths[i], out[i].needs);
        }
    }

cleanup:
    th_scan_free(subout, nstale);
    free(subout);
    free(sub);
    free(stale);
    free(keys);
    return rc;
}
