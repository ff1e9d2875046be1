/* SPDX-License-Identifier: MIT */
/*
** test_http_hostile.c: hostile HTTP clients against a real src/toolhost on
** raw sockets: requests framed two ways (smuggling), bad Host and Origin,
** confused tokens and media ranges (a table, one row per attack), then
** senders too slow to finish a request and one address taking every slot.
*/
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"
#include "http_client.h"
#include "mcp_harness.h"

/* A modern tools/list (PING): answered 200 when the request is taken. */
#define PING "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{" MH_MODERN_META "}}"
#define PING_LEN "170"
_Static_assert(sizeof PING - 1 == 170, "PING_LEN is the length of PING");
#define POST_HEAD                                                                                                      \
    "POST /mcp HTTP/1.1\r\n" ACCEPT_BOTH MODERN_HEADERS "Mcp-Method: tools/list\r\nContent-Type: application/json\r\n"
/* PING in one chunk. */
#define PING_CHUNKED "aa\r\n" PING "\r\n0\r\n\r\n"
/* A long resource URI, mirrored in Mcp-Name as the 2026-07-28 headers ask. */
#define LONG_URI                                                                                                       \
    "mem://items/0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789" \
    "0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678" \
    "9012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567" \
    "8901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456" \
    "7890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345" \
    "6789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234" \
    "5678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123" \
    "4567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012" \
    "3456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901" \
    "2345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890" \
    "1234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789" \
    "0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678" \
    "9012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567"
#define READ_LONG                                                                                                      \
    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/read\",\"params\":{\"uri\":\"" LONG_URI "\","             \
    MH_MODERN_META "}}"

/* What the connection is after the answer. */
enum after { ANY, CLOSED, OPEN };

/* One hostile request. Hosts are configured by SETUP (see start_for). */
typedef struct hostile {
    const char *name;
    enum { PLAIN, TOKENS, SMALL_BODY } setup;
    const char *request; /* sent as is; NULL: built by BUILD */
    char *(*build)(void);
    int status;          /* the answer's status */
    enum after after;
    const char *body_lacks; /* NULL, or bytes the answer must not hold */
} hostile;

static char *build_big_chunked(void)
{
    /* 8 KiB in 1 KiB chunks against --max-message-bytes=4096. */
    char chunk[1024 + 16];
    size_t n = (size_t)snprintf(chunk, sizeof chunk, "400\r\n");
    memset(chunk + n, 'x', 1024);
    memcpy(chunk + n + 1024, "\r\n", 3);
    size_t clen = n + 1026, head = strlen(POST_HEAD "Host: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n");
    char *req = malloc(head + 8 * clen + 8);
    memcpy(req, POST_HEAD "Host: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n", head);
    for (size_t i = 0; i < 8; i++)
        memcpy(req + head + i * clen, chunk, clen);
    strcpy(req + head + 8 * clen, "0\r\n\r\n");
    return req;
}

static char *build_long_name(void)
{
    char *req = NULL;
    ck_assert(asprintf(&req,
                       "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n" ACCEPT_BOTH MODERN_HEADERS
                       "Mcp-Method: resources/read\r\nMcp-Name: " LONG_URI
                       "\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n" READ_LONG,
                       strlen(READ_LONG)) > 0);
    return req;
}

static const hostile cases[] = {
    /* The control: a well-framed request is answered and the connection kept. */
    {"well framed", PLAIN, POST_HEAD "Host: 127.0.0.1\r\nContent-Length: " PING_LEN "\r\n\r\n" PING, NULL, 200, OPEN,
     NULL},
    {"chunked", PLAIN, POST_HEAD "Host: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n" PING_CHUNKED, NULL, 200, OPEN,
     NULL},
    /* Smuggling: the front and the back would cut the stream differently. */
    {"two Content-Length", PLAIN,
     POST_HEAD "Host: 127.0.0.1\r\nContent-Length: " PING_LEN "\r\nContent-Length: 5\r\n\r\n" PING, NULL, 400, CLOSED,
     NULL},
    {"two equal Content-Length", PLAIN,
     POST_HEAD "Host: 127.0.0.1\r\nContent-Length: " PING_LEN "\r\nContent-Length: " PING_LEN "\r\n\r\n" PING, NULL,
     400, CLOSED, NULL},
    {"Content-Length list", PLAIN, POST_HEAD "Host: 127.0.0.1\r\nContent-Length: " PING_LEN ", 5\r\n\r\n" PING, NULL,
     400, CLOSED, NULL},
    {"Content-Length and chunked", PLAIN,
     POST_HEAD "Host: 127.0.0.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n" PING_CHUNKED, NULL, 400,
     CLOSED, NULL},
    {"unknown transfer coding", PLAIN,
     POST_HEAD "Host: 127.0.0.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n" PING_CHUNKED, NULL, 501, CLOSED, NULL},
    {"chunked over the limit", SMALL_BODY, NULL, build_big_chunked, 413, CLOSED, NULL},
    /* RFC 9112 3.2: exactly one valid Host. */
    {"HTTP/1.1 without Host", PLAIN, POST_HEAD "Content-Length: " PING_LEN "\r\n\r\n" PING, NULL, 400, CLOSED, NULL},
    {"two Host", PLAIN, POST_HEAD "Host: 127.0.0.1\r\nHost: evil.example\r\nContent-Length: " PING_LEN "\r\n\r\n" PING,
     NULL, 400, CLOSED, NULL},
    {"Host after an IPv6 literal", PLAIN, POST_HEAD "Host: [::1]evil\r\nContent-Length: " PING_LEN "\r\n\r\n" PING,
     NULL, 400, CLOSED, NULL},
    {"Host with userinfo", PLAIN, POST_HEAD "Host: localhost:80@evil\r\nContent-Length: " PING_LEN "\r\n\r\n" PING,
     NULL, 400, CLOSED, NULL},
    {"Host with a port", PLAIN, POST_HEAD "Host: [::1]:8080\r\nContent-Length: " PING_LEN "\r\n\r\n" PING, NULL, 200,
     OPEN, NULL},
    {"foreign Host", PLAIN, POST_HEAD "Host: evil.example\r\nContent-Length: " PING_LEN "\r\n\r\n" PING, NULL, 403,
     ANY, NULL},
    /* DNS rebinding through an Origin that only begins like loopback. */
    {"Origin after an IPv6 literal", PLAIN,
     POST_HEAD "Host: 127.0.0.1\r\nOrigin: http://[::1].evil\r\nContent-Length: " PING_LEN "\r\n\r\n" PING, NULL, 403,
     ANY, NULL},
    {"Origin with userinfo", PLAIN,
     POST_HEAD "Host: 127.0.0.1\r\nOrigin: http://localhost:80@evil\r\nContent-Length: " PING_LEN "\r\n\r\n" PING,
     NULL, 403, ANY, NULL},
    {"loopback Origin", PLAIN,
     POST_HEAD "Host: 127.0.0.1\r\nOrigin: http://[::1]:3000\r\nContent-Length: " PING_LEN "\r\n\r\n" PING, NULL, 200,
     OPEN, NULL},
    /* Token confusion: a token followed by more words is not that token. */
    {"bearer token and garbage", TOKENS,
     POST_HEAD "Host: 127.0.0.1\r\nAuthorization: Bearer tokA garbage\r\nContent-Length: " PING_LEN "\r\n\r\n" PING,
     NULL, 401, ANY, NULL},
    {"bearer token", TOKENS,
     POST_HEAD "Host: 127.0.0.1\r\nAuthorization: Bearer tokA\r\nContent-Length: " PING_LEN "\r\n\r\n" PING, NULL, 200,
     OPEN, NULL},
    /* RFC 9110 12.4.2: q=0 means "not acceptable". */
    {"Accept with q=0", PLAIN,
     "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json;q=0, text/event-stream; q=0.000\r\n"
     MODERN_HEADERS "Mcp-Method: tools/list\r\nContent-Type: application/json\r\nContent-Length: " PING_LEN "\r\n\r\n" PING,
     NULL, 406, ANY, NULL},
    {"Accept wildcard refused by name", PLAIN,
     "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: */*, application/json;q=0, text/event-stream;q=0\r\n"
     MODERN_HEADERS "Mcp-Method: tools/list\r\nContent-Type: application/json\r\nContent-Length: " PING_LEN "\r\n\r\n" PING,
     NULL, 406, ANY, NULL},
    /* A resource URI as long as the registry allows fits in Mcp-Name. */
    {"long Mcp-Name", PLAIN, NULL, build_long_name, 0, OPEN, "-32020"},
};

/* A token file holding "tokA" (malloc'd path). */
static char *tokens_file(void)
{
    char *path = strdup("/tmp/th-hostile-XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert(write(fd, "tokA\n", 5) == 5);
    close(fd);
    return path;
}

static mh_proc *start_for(int setup, int *port, char **tokens)
{
    static char arg[256];
    *tokens = NULL;
    if (setup == SMALL_BODY)
        return start_http(port, "--max-message-bytes=4096", NULL, NULL);
    if (setup != TOKENS)
        return start_http(port, NULL, NULL, NULL);
    *tokens = tokens_file();
    snprintf(arg, sizeof arg, "--auth-token-file=%s", *tokens);
    return start_http(port, arg, NULL, NULL);
}

/* One response from FD, which stays open: status, headers and a
 * Content-Length body (every answer here has one). */
static hres read_one(int fd)
{
    hres r = {0};
    char buf[65536];
    size_t len = 0;
    char *end = NULL;
    while (!end) {
        ck_assert_msg(len + 1 < sizeof buf, "response head too long");
        ssize_t n = read(fd, buf + len, sizeof buf - len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return r; /* closed unanswered: status 0 */
        len += (size_t)n;
        buf[len] = '\0';
        end = strstr(buf, "\r\n\r\n");
    }
    *end = '\0';
    r.headers = strdup(buf);
    ck_assert_msg(sscanf(buf, "HTTP/1.1 %d", &r.status) == 1, "status line: %s", buf);
    char *cl = header_of(&r, "Content-Length");
    ck_assert_msg(cl != NULL, "no Content-Length in %s", r.headers);
    size_t want = strtoul(cl, NULL, 10), have = len - (size_t)(end + 4 - buf);
    free(cl);
    r.body = malloc(want + 1);
    memcpy(r.body, end + 4, have < want ? have : want);
    while (have < want) {
        ssize_t n = read(fd, r.body + have, want - have);
        if (n < 0 && errno == EINTR)
            continue;
        ck_assert_msg(n > 0, "the body ended early");
        have += (size_t)n;
    }
    r.body[want] = '\0';
    return r;
}

/* The server closed FD: a read ends (end of input, or a reset because the
 * refused body was never read). */
static bool peer_closed(int fd)
{
    char c;
    ssize_t n;
    while ((n = read(fd, &c, 1)) < 0 && errno == EINTR)
        ;
    return n == 0 || (n < 0 && errno == ECONNRESET);
}

static void send_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return; /* the server closed first: its answer says why */
        data += n;
        len -= (size_t)n;
    }
}

START_TEST(hostile_request)
{
    const hostile *t = &cases[_i];
    int port;
    char *tokens;
    mh_proc *p = start_for(t->setup, &port, &tokens);
    char *built = t->build ? t->build() : NULL;
    const char *req = built ? built : t->request;
    int fd = connect_to(port);
    send_all(fd, req, strlen(req));
    hres r = read_one(fd);
    if (t->status)
        ck_assert_msg(r.status == t->status, "%s: want HTTP %d, got %d: %.300s", t->name, t->status, r.status,
                      r.body ? r.body : "(closed unanswered)");
    else
        ck_assert_msg(r.status != 0, "%s: closed unanswered", t->name);
    if (t->body_lacks)
        ck_assert_msg(!strstr(r.body, t->body_lacks), "%s: HTTP %d %s", t->name, r.status, r.body);
    if (t->after == CLOSED) {
        ck_assert_msg(peer_closed(fd), "%s: the connection stayed open after HTTP %d", t->name, r.status);
    } else if (t->after == OPEN) {
        /* The same connection frames the next request where it should. */
        const char *next = t->setup == TOKENS ? POST_HEAD "Host: 127.0.0.1\r\nAuthorization: Bearer tokA\r\n"
                                                          "Content-Length: " PING_LEN "\r\n\r\n" PING
                                              : POST_HEAD "Host: 127.0.0.1\r\nContent-Length: " PING_LEN "\r\n\r\n" PING;
        send_all(fd, next, strlen(next));
        hres again = read_one(fd);
        ck_assert_msg(again.status == 200, "%s: the next request got HTTP %d %s", t->name, again.status,
                      again.body ? again.body : "(closed unanswered)");
        hres_free(&again);
    }
    hres_free(&r);
    close(fd);
    free(built);
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
    if (tokens) {
        unlink(tokens);
        free(tokens);
    }
}
END_TEST

/* ---- slow senders and one address taking every slot ---------------------- */

/* Trickle a header line on each of FDS every half second (the attack's own
 * pace) until the server has closed every one; false if that takes longer
 * than the harness's time limit. */
static bool trickle_until_closed(int *fds, size_t n)
{
    size_t open = n;
    long long give_up = mh_now_ms() + MH_TIMEOUT_MS;
    while (open > 0 && mh_now_ms() < give_up) {
        struct pollfd pf[8];
        for (size_t i = 0; i < n; i++)
            pf[i] = (struct pollfd){.fd = fds[i], .events = POLLIN};
        if (poll(pf, n, 500) == 0) {
            for (size_t i = 0; i < n; i++)
                if (fds[i] >= 0)
                    send(fds[i], "X-Slow: 1\r\n", 11, MSG_NOSIGNAL);
            continue;
        }
        for (size_t i = 0; i < n; i++) {
            if (fds[i] >= 0 && (pf[i].revents & (POLLIN | POLLHUP | POLLERR)) && peer_closed(fds[i])) {
                close(fds[i]);
                fds[i] = -1;
                open--;
            }
        }
    }
    return open == 0;
}

/* A POST of PING with HDRS on a new connection, which the server may close
 * unread (a full table): the writes may then fail, and the answer is none. */
static int send_or_refused(int port, const char *hdrs)
{
    char head[2048];
    int fd = connect_to(port);
    int n = snprintf(head, sizeof head,
                     "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n%sContent-Type: "
                     "application/json\r\nContent-Length: %zu\r\n\r\n%s",
                     port, hdrs, strlen(PING), PING);
    ck_assert(n > 0 && (size_t)n < sizeof head);
    (void)!send(fd, head, (size_t)n, MSG_NOSIGNAL);
    return fd;
}

/* Connections that send a header line every half second never finish their
 * request: each is closed at the request deadline, though it never idles. */
START_TEST(slow_headers_meet_the_request_deadline)
{
    int port;
    mh_proc *p = start_http(&port, "--http-max-connections=4", "--http-max-client-connections=4", "--http-timeout=2");
    int fds[4];
    for (size_t i = 0; i < 4; i++) {
        fds[i] = connect_to(port);
        send(fds[i], "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n", 37, MSG_NOSIGNAL);
    }
    ck_assert_msg(trickle_until_closed(fds, 4), "slow senders still hold their connections");
    ck_assert(mh_stderr_wait(p, "did not deliver its request", MH_TIMEOUT_MS));
    /* The slots are free again, once the server's accept thread has reaped
     * the closed connections (MHD gives no event for that): a connection
     * refused meanwhile is closed unanswered, and tried again. */
    hres r = {0};
    for (long long give_up = mh_now_ms() + MH_TIMEOUT_MS; r.status == 0 && mh_now_ms() < give_up;) {
        hres_free(&r);
        r = read_response_or_empty(send_or_refused(port, ACCEPT_BOTH MODERN_HEADERS "Mcp-Method: tools/list\r\n"));
        if (r.status == 0)
            poll(NULL, 0, 20);
    }
    ck_assert_msg(r.status == 200, "HTTP %d %s", r.status, r.body);
    hres_free(&r);
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
}
END_TEST

/* A body that comes slower than the deadline is cut the same way. */
START_TEST(slow_body_meets_the_request_deadline)
{
    int port;
    mh_proc *p = start_http(&port, "--http-timeout=2", NULL, NULL);
    int fd = connect_to(port);
    const char head[] = POST_HEAD "Host: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n{";
    send(fd, head, sizeof head - 1, MSG_NOSIGNAL);
    ck_assert_msg(trickle_until_closed(&fd, 1), "a slow body still holds its connection");
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
}
END_TEST

/* Four slow connections from one address once took all four slots; now the
 * first two do, the others are closed at once, and another address is
 * served meanwhile. */
START_TEST(one_address_cannot_take_every_slot)
{
    int port;
    mh_proc *p = start_http(&port, "--http-max-connections=4", NULL, NULL);
    int fds[4];
    for (size_t i = 0; i < 4; i++) {
        fds[i] = connect_to(port);
        send(fds[i], "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n", 37, MSG_NOSIGNAL);
    }
    /* Closed unanswered, in the order they came: the third and the fourth. */
    for (size_t i = 2; i < 4; i++)
        ck_assert_msg(peer_closed(fds[i]), "connection %zu from one address was kept", i + 1);
    int other = connect_from(port, "127.0.0.2");
    char req[512];
    int n = snprintf(req, sizeof req,
                     POST_HEAD "Host: 127.0.0.1\r\nConnection: close\r\nContent-Length: " PING_LEN "\r\n\r\n" PING);
    send_all(other, req, (size_t)n);
    hres r = read_one(other);
    ck_assert_msg(r.status == 200, "another address got HTTP %d while one held the slots", r.status);
    hres_free(&r);
    close(other);
    for (size_t i = 0; i < 4; i++)
        close(fds[i]);
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
}
END_TEST

static int connect_unix(const char *path)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(fd, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    ck_assert_msg(connect(fd, (struct sockaddr *)&a, sizeof a) == 0, "connect %s: %s", path, strerror(errno));
    struct timeval tv = {.tv_sec = MH_TIMEOUT_MS / 1000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return fd;
}

/* One request on PATH: whether it got 200. */
static bool ping_ok(const char *path)
{
    int fd = connect_unix(path);
    char req[512];
    int n = snprintf(req, sizeof req,
                     POST_HEAD "Host: localhost\r\nConnection: close\r\nContent-Length: " PING_LEN "\r\n\r\n" PING);
    send_all(fd, req, (size_t)n);
    char head[16] = "";
    ssize_t got = read(fd, head, sizeof head - 1);
    close(fd);
    return got > 12 && strncmp(head, "HTTP/1.1 200", 12) == 0;
}

/* Opens a connection to PATH and sends a request's first lines, so that it
 * holds a slot until the request is finished or times out. */
static int hold_slot(const char *path)
{
    int fd = connect_unix(path);
    send_all(fd, POST_HEAD "Host: localhost\r\n", strlen(POST_HEAD "Host: localhost\r\n"));
    return fd;
}

/* Finishes the request hold_slot began: true when it was answered 200, so
 * the connection had been kept all along. */
static bool finish_held(int fd)
{
    const char rest[] = "Connection: close\r\nContent-Length: " PING_LEN "\r\n\r\n" PING;
    send_all(fd, rest, sizeof rest - 1);
    char head[16] = "";
    ssize_t got = read(fd, head, sizeof head - 1);
    return got > 12 && strncmp(head, "HTTP/1.1 200", 12) == 0;
}

/* In a child as uid 65534: holds two slots, then tries a third. The exit
 * status is 0 when the third was closed unanswered, 1 when it was kept. */
static int nobody_floods(const char *path)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        if (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0)
            _exit(2);
        int a = hold_slot(path), b = hold_slot(path), c = hold_slot(path);
        bool closed = peer_closed(c);
        close(a), close(b), close(c);
        _exit(closed ? 0 : 1);
    }
    int st;
    ck_assert(waitpid(pid, &st, 0) == pid);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) != 2, "the child could not become uid 65534");
    return WEXITSTATUS(st);
}

/* A Unix socket's peers all have the same (empty) address: the cap counts
 * them by uid, so one user's flood of the shared daemon leaves room for
 * another's. The daemon's own uid (the test's) is not capped: its many
 * clients are what the shared daemon is for. The cap here is 2 of 8 slots,
 * so that only the per-uid count can refuse. */
START_TEST(one_uid_cannot_take_every_slot)
{
    char dir[] = "/tmp/th-uidcap-XXXXXX", path[64], where[80];
    ck_assert(mkdtemp(dir) != NULL);
    ck_assert(chmod(dir, 0755) == 0);
    snprintf(path, sizeof path, "%s/d.sock", dir);
    snprintf(where, sizeof where, "unix:%s", path);
    mh_proc *p = mh_start("--http", where, "--http-socket-mode", "0666", "--http-max-connections=8",
                          "--http-max-client-connections=2", NULL);
    ck_assert_msg(mh_stderr_wait(p, "listening on unix:", MH_TIMEOUT_MS), "toolhost did not start listening");
    int held[3];
    for (size_t i = 0; i < 3; i++)
        held[i] = hold_slot(path);
    ck_assert_msg(ping_ok(path), "the daemon's own uid was capped at 2 connections");
    if (getuid() == 0) { /* only root can be a second uid */
        ck_assert_msg(nobody_floods(path) == 0, "uid 65534 kept a third connection over a cap of 2");
        ck_assert(mh_stderr_wait(p, "uid 65534 already holds 2 connections (--http-max-client-connections)",
                                 MH_TIMEOUT_MS));
    }
    for (size_t i = 0; i < 3; i++) {
        ck_assert_msg(finish_held(held[i]), "the owner's held connection %zu was not kept", i + 1);
        close(held[i]);
    }
    mh_kill(p, SIGTERM);
    ck_assert_int_eq(mh_wait(p, MH_TIMEOUT_MS), 0);
    mh_free(p);
    rmdir(dir);
}
END_TEST

static Suite *hostile_suite(void)
{
    Suite *s = suite_create("http_hostile");
    TCase *tc = tcase_create("http_hostile");
    tcase_set_timeout(tc, MH_TCASE_TIMEOUT);
    tcase_add_loop_test(tc, hostile_request, 0, (int)(sizeof cases / sizeof cases[0]));
    tcase_add_test(tc, slow_headers_meet_the_request_deadline);
    tcase_add_test(tc, slow_body_meets_the_request_deadline);
    tcase_add_test(tc, one_address_cannot_take_every_slot);
    tcase_add_test(tc, one_uid_cannot_take_every_slot);
    suite_add_tcase(s, tc);
    return s;
}

TH_CHECK_MAIN_WITH(hostile_suite, mh_global_setup, mh_global_teardown)
