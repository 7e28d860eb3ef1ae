/* sseload: the SSE fan-out load (issue 23). Opens N Server-Sent Events connections
 * (GET PATH_EVENTS) to 127.0.0.1:PORT, then E times publishes one event (POST
 * /bench/publish whose body is "SEQ SEND_NS", CLOCK_MONOTONIC) and waits until every
 * subscriber has it (or ROUND_S pass), reading each delivery's send time back out of
 * its "data:" line. Prints "ready" once all are subscribed, then one JSON line:
 * subscribers, events, delivered, missing, errors, seconds (publish phase),
 * p50/p99/max delivery latency in ms, and the median round (publish to the last
 * subscriber). Bounded everywhere: connect, subscribe and each round have deadlines.
 *
 *   cc -O2 -o sseload sseload.c && ./sseload PORT N E
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define CONNECTING_AT_ONCE 256 /* under the listen backlog */
#define SUBSCRIBE_S 60         /* all N subscribed within this, or give up */
#define ROUND_S 10             /* one event reaches everyone within this, or counts as missing */
#define PAUSE_NS 20000000LL    /* 20 ms of quiet between rounds */
#define TAIL 512               /* an incomplete line kept between reads */
#define MAX_EVENTS 1000

struct conn {
    int fd;
    int state; /* 0 connecting, 1 head awaited, 2 subscribed, 3 failed */
    int last_seq;
    int tail_len;
    char tail[TAIL];
};

static struct conn *conns;
static int n_conns, port;
static uint32_t *lat_us; /* one per (subscriber, event) delivered */
static long n_lat, errors;

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int dial(int nonblocking) {
    int fd = socket(AF_INET, SOCK_STREAM | (nonblocking ? SOCK_NONBLOCK : 0), 0);
    if (fd < 0) return -1;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0 && errno != EINPROGRESS) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Every complete "data: SEQ NS" line in c's bytes: one delivery each. */
static void take_lines(struct conn *c, int64_t at) {
    char *p = c->tail, *end = c->tail + c->tail_len, *nl;
    while ((nl = memchr(p, '\n', end - p))) {
        if (nl - p > 6 && memcmp(p, "data: ", 6) == 0) {
            long seq;
            long long sent;
            if (sscanf(p + 6, "%ld %lld", &seq, &sent) == 2 && seq > c->last_seq) {
                c->last_seq = (int)seq;
                int64_t us = (at - sent) / 1000;
                lat_us[n_lat++] = us < 0 ? 0 : (uint32_t)us;
            }
        }
        p = nl + 1;
    }
    c->tail_len = (int)(end - p);
    memmove(c->tail, p, c->tail_len);
}

/* Reads what c has; returns -1 when it closed or failed. */
static int on_readable(struct conn *c) {
    for (;;) {
        int room = TAIL - c->tail_len;
        if (room == 0) { /* a line longer than any event: drop it */
            c->tail_len = 0;
            room = TAIL;
        }
        ssize_t n = read(c->fd, c->tail + c->tail_len, room);
        if (n == 0) return -1;
        if (n < 0) return errno == EAGAIN ? 0 : -1;
        c->tail_len += (int)n;
        if (c->state == 1) {
            char *head_end = memmem(c->tail, c->tail_len, "\r\n\r\n", 4);
            if (!head_end) continue;
            if (c->tail_len < 12 || memcmp(c->tail + 9, "200", 3) != 0) return -1;
            c->state = 2;
            int rest = (int)(c->tail + c->tail_len - (head_end + 4));
            memmove(c->tail, head_end + 4, rest);
            c->tail_len = rest;
        }
        take_lines(c, now_ns());
    }
}

static void fail(struct conn *c, int ep) {
    epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    c->fd = -1;
    c->state = 3;
    errors++;
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* One POST /bench/publish on the blocking publisher connection; 0 when answered 200. */
static int publish(int *fd, int seq) {
    char body[64], req[256];
    int blen = snprintf(body, sizeof body, "%d %lld", seq, (long long)now_ns());
    int rlen = snprintf(req, sizeof req,
                        "POST /bench/publish HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\n"
                        "Content-Length: %d\r\n\r\n%s", blen, body);
    if (write(*fd, req, rlen) != rlen) return -1;
    return 0;
}

static int read_publish_answer(int fd) {
    char buf[1024];
    ssize_t n = read(fd, buf, sizeof buf - 1); /* the answer is one small segment */
    if (n < 12) return -1;
    buf[n] = 0;
    return memcmp(buf + 9, "200", 3) == 0 ? 0 : -1;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: sseload PORT SUBSCRIBERS EVENTS [PATH]\n");
        return 2;
    }
    port = atoi(argv[1]);
    n_conns = atoi(argv[2]);
    int events = atoi(argv[3]);
    const char *path = argc > 4 ? argv[4] : "/bench/events";
    if (n_conns < 1 || events < 1 || events > MAX_EVENTS) {
        fprintf(stderr, "sseload: 1..%d events and at least one subscriber\n", MAX_EVENTS);
        return 2;
    }
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    if ((long)rl.rlim_cur < n_conns + 64) {
        fprintf(stderr, "sseload: RLIMIT_NOFILE %ld is below %d\n", (long)rl.rlim_cur, n_conns + 64);
        return 2;
    }
    conns = calloc(n_conns, sizeof *conns);
    lat_us = malloc(sizeof *lat_us * (size_t)n_conns * events);
    int64_t *rounds = calloc(events, sizeof *rounds);
    if (!conns || !lat_us || !rounds) return 2;
    char req[256];
    int req_len = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n", path);
    int ep = epoll_create1(0);
    struct epoll_event evs[1024];

    /* Subscribe everyone, a bounded number connecting at once. */
    int started = 0, pending = 0, subscribed = 0;
    int64_t deadline = now_ns() + SUBSCRIBE_S * 1000000000LL;
    while ((started < n_conns || pending) && now_ns() < deadline) {
        while (started < n_conns && pending < CONNECTING_AT_ONCE) {
            struct conn *c = &conns[started];
            c->fd = dial(1);
            c->last_seq = -1;
            started++;
            if (c->fd < 0) {
                c->state = 3;
                errors++;
                continue;
            }
            struct epoll_event e = {.events = EPOLLOUT | EPOLLIN, .data.u32 = (uint32_t)(c - conns)};
            epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &e);
            pending++;
        }
        int n = epoll_wait(ep, evs, 1024, 100);
        for (int i = 0; i < n; i++) {
            struct conn *c = &conns[evs[i].data.u32];
            if (c->state == 0 && (evs[i].events & EPOLLOUT)) {
                if (write(c->fd, req, req_len) != req_len) {
                    fail(c, ep), pending--;
                    continue;
                }
                c->state = 1;
                struct epoll_event e = {.events = EPOLLIN, .data.u32 = evs[i].data.u32};
                epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &e);
            } else if (c->state == 1 && (evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP))) {
                if (on_readable(c) < 0) {
                    fail(c, ep), pending--;
                } else if (c->state == 2) {
                    pending--, subscribed++;
                }
            }
        }
    }
    errors += pending;
    printf("ready %d\n", subscribed);
    fflush(stdout);

    int pub = dial(0);
    struct timeval tv = {.tv_sec = ROUND_S};
    setsockopt(pub, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    int64_t phase_start = now_ns();
    long missing = 0;
    for (int seq = 0; seq < events && pub >= 0; seq++) {
        long before = n_lat;
        int64_t sent = now_ns();
        if (publish(&pub, seq) < 0) {
            errors++;
            break;
        }
        int64_t round_deadline = sent + ROUND_S * 1000000000LL;
        while (n_lat - before < subscribed && now_ns() < round_deadline) {
            int n = epoll_wait(ep, evs, 1024, 100);
            for (int i = 0; i < n; i++) {
                struct conn *c = &conns[evs[i].data.u32];
                if (c->state == 2 && on_readable(c) < 0) fail(c, ep), subscribed--;
            }
        }
        rounds[seq] = now_ns() - sent;
        missing += subscribed - (n_lat - before);
        if (read_publish_answer(pub) < 0) errors++;
        int64_t quiet = now_ns() + PAUSE_NS;
        while (now_ns() < quiet) usleep(1000);
    }
    double seconds = (now_ns() - phase_start) / 1e9;
    qsort(lat_us, n_lat, sizeof *lat_us, cmp_u32);
    qsort(rounds, events, sizeof *rounds, cmp_i64);
    double p50 = n_lat ? lat_us[n_lat / 2] / 1e3 : 0, p99 = n_lat ? lat_us[(n_lat * 99) / 100] / 1e3 : 0;
    double max = n_lat ? lat_us[n_lat - 1] / 1e3 : 0;
    printf("{\"subscribers\": %d, \"events\": %d, \"delivered\": %ld, \"missing\": %ld, \"errors\": %ld, "
           "\"seconds\": %.3f, \"p50_ms\": %.3f, \"p99_ms\": %.3f, \"max_ms\": %.3f, \"round_p50_ms\": %.3f}\n",
           subscribed, events, n_lat, missing, errors, seconds, p50, p99, max, rounds[events / 2] / 1e6);
    fflush(stdout);
    return 0;
}
