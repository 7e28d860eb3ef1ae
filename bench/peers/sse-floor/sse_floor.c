/*
 * sse_floor: the floor for the SSE fan-out (issue 23), as floor.c is for HTTP and
 * ws_floor.c for WebSocket echo.
 *
 * One thread, one epoll loop, non-blocking sockets, TCP_NODELAY (as kiln). A request
 * is taken once its head (and, for a POST, its Content-Length body) has arrived; only
 * the request line and Content-Length are looked at:
 *
 *   GET /bench/events    the head kiln sends for an event stream (200, text/event-stream,
 *                        no-cache, chunked); the socket joins the subscribers.
 *   POST /bench/publish  the body becomes one event, rendered once into the bytes kiln
 *                        sends for it (a chunk holding "id: ID\ndata: BODY\n\n", ID a
 *                        16-digit counter as wide as kiln's message ids), then written to
 *                        every subscriber with one write() each; then the id is answered.
 *   anything else        200 PONG (the readiness check).
 *
 * No line splitting, no limits, no lag handling, no keep-alive comments, no drain: a
 * subscriber whose write is short (its socket buffer full) is dropped. Nothing a real
 * SSE server does per delivery can be cheaper than one write() of prepared bytes, so
 * this is the best any server can do on this kernel.
 *
 * Build: cc -O2 -o sse_floor sse_floor.c
 * Usage: PORT=8080 ./sse_floor
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_EVENTS 512
#define MAX_FDS 65536
#include "../floor/epoll_floor.h"

#define IN_BUF 2048       /* a request head and a publish body fit */
#define MAX_PAYLOAD 256   /* as kiln's /bench/publish */

struct conn {
    int len;        /* bytes buffered in `in` */
    int sub;        /* index in `subs` + 1, or 0 */
    char in[IN_BUF];
};

static struct conn conns[MAX_FDS];
static int subs[MAX_FDS], n_subs;
static unsigned long long next_id = 1000000000000000ULL;

/* kiln's event-stream head (Date fixed: a real server renders it once a second). */
static const char SSE_HEAD[] =
    "HTTP/1.1 200 OK\r\n"
    "Server: sse-floor\r\n"
    "Date: Thu, 01 Jan 2026 00:00:00 GMT\r\n"
    "Content-Type: text/event-stream\r\n"
    "Cache-Control: no-cache\r\n"
    "X-Accel-Buffering: no\r\n"
    "Transfer-Encoding: chunked\r\n"
    "\r\n";

static const char PONG[] =
    "HTTP/1.1 200 OK\r\n"
    "Server: sse-floor\r\n"
    "Date: Thu, 01 Jan 2026 00:00:00 GMT\r\n"
    "Content-Type: text/plain\r\n"
    "Content-Length: 4\r\n"
    "\r\n"
    "PONG";

static void drop(int ep, int fd) {
    struct conn *c = &conns[fd];
    if (c->sub) {
        /* The last subscriber takes the leaver's place. */
        int last = subs[--n_subs];
        subs[c->sub - 1] = last;
        conns[last].sub = c->sub;
    }
    c->len = 0;
    c->sub = 0;
    epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
    close(fd);
}

/* Writes one event with `body` to every subscriber; returns its id. */
static unsigned long long fan_out(int ep, const char *body, int body_len) {
    static char event[MAX_PAYLOAD + 64], chunk[MAX_PAYLOAD + 80];
    unsigned long long id = next_id++;
    int n = snprintf(event, sizeof event, "id: %llu\ndata: %.*s\n\n", id, body_len, body);
    int len = snprintf(chunk, sizeof chunk, "%x\r\n%s\r\n", n, event);
    for (int i = 0; i < n_subs;) {
        int fd = subs[i];
        if (write(fd, chunk, (size_t)len) != len) {
            drop(ep, fd); /* `subs[i]` is now another subscriber: write it too */
            continue;
        }
        i++;
    }
    return id;
}

/* Answers every complete request buffered in `c`; returns -1 to close. */
static int serve(int ep, int fd, struct conn *c) {
    for (;;) {
        char *end = memmem(c->in, (size_t)c->len, "\r\n\r\n", 4);
        if (!end) return c->len == IN_BUF ? -1 : 0;
        int head = (int)(end - c->in) + 4, body_len = 0;
        char *cl = memmem(c->in, (size_t)head, "Content-Length:", 15);
        if (!cl) cl = memmem(c->in, (size_t)head, "content-length:", 15);
        if (cl) body_len = atoi(cl + 15);
        if (body_len < 0 || head + body_len > IN_BUF) return -1;
        if (c->len < head + body_len) return 0;
        int closing = memmem(c->in, (size_t)head, "Connection: close", 17) != NULL;
        if (strncmp(c->in, "GET /bench/events", 17) == 0) {
            if (write(fd, SSE_HEAD, sizeof SSE_HEAD - 1) != sizeof SSE_HEAD - 1) return -1;
            if (!c->sub) {
                subs[n_subs++] = fd;
                c->sub = n_subs;
            }
        } else if (strncmp(c->in, "POST /bench/publish", 19) == 0) {
            if (body_len > MAX_PAYLOAD) return -1;
            unsigned long long id = fan_out(ep, c->in + head, body_len);
            char answer[160];
            int n = snprintf(answer, sizeof answer,
                             "HTTP/1.1 200 OK\r\nServer: sse-floor\r\nDate: Thu, 01 Jan 2026 00:00:00 GMT\r\n"
                             "Content-Type: text/plain\r\nContent-Length: 17\r\n\r\n%llu\n", id);
            if (write(fd, answer, (size_t)n) != n) return -1;
        } else if (write(fd, PONG, sizeof PONG - 1) != sizeof PONG - 1) {
            return -1;
        }
        memmove(c->in, c->in + head + body_len, (size_t)(c->len - head - body_len));
        c->len -= head + body_len;
        if (closing) return -1;
    }
}

int main(void) {
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    int lfd, ep = floor_listen("sse_floor", floor_port(), &lfd);
    struct epoll_event events[MAX_EVENTS];
    if (ep < 0) return 1;
    while (!stop) {
        int n = epoll_wait(ep, events, MAX_EVENTS, 500);
        for (int i = 0; i < n; i++) {
            int fd = events[i].data.fd;
            if (fd == lfd) {
                floor_accept(ep, lfd);
                continue;
            }
            struct conn *c = &conns[fd];
            ssize_t r = read(fd, c->in + c->len, (size_t)(IN_BUF - c->len));
            if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) { drop(ep, fd); continue; }
            if (r < 0) continue;
            c->len += (int)r;
            if (serve(ep, fd, c) < 0) drop(ep, fd);
        }
    }
    return 0;
}
