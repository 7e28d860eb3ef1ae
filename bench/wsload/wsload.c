/*
 * wsload: a WebSocket echo load generator, one thread and one epoll loop.
 *
 * Opens C connections, upgrades each (any server's handshake answer is taken
 * on trust), then each connection keeps one message of S bytes in flight:
 * it sends a masked binary frame and sends the next once the whole echo came
 * back (a closed loop, as wrk's connections are). After D seconds it prints
 * the echoed messages and the rate. One core is its ceiling: report the
 * server's CPU per message, not the rate alone.
 *
 * Build: cc -O2 -o wsload wsload.c
 * Usage: ./wsload HOST PORT PATH CONNECTIONS SIZE SECONDS
 * Output (one line): connections=C size=S seconds=D messages=N rate=R errors=E
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
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct conn {
    int fd;
    int upgraded;
    size_t want;  /* bytes of echo still expected */
    char head[4096];
    size_t head_len;
};

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static unsigned char *frame;
static size_t frame_len, echo_len;

/* Sends the whole request frame; the kernel buffer takes it at these sizes. */
static int send_frame(struct conn *c) {
    size_t off = 0;
    while (off < frame_len) {
        ssize_t n = write(c->fd, frame + off, frame_len - off);
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        if (n <= 0) return -1;
        off += (size_t)n;
    }
    c->want = echo_len;
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: %s HOST PORT PATH CONNECTIONS SIZE SECONDS\n", argv[0]);
        return 2;
    }
    const char *host = argv[1], *path = argv[3];
    int port = atoi(argv[2]), nconn = atoi(argv[4]);
    size_t size = (size_t)atol(argv[5]);
    double seconds = atof(argv[6]);
    size_t hl = size < 126 ? 2 : size < 65536 ? 4 : 10;
    frame_len = hl + 4 + size;
    echo_len = hl + size;
    frame = malloc(frame_len);
    frame[0] = 0x82;
    if (hl == 2) frame[1] = (unsigned char)(0x80 | size);
    else if (hl == 4) { frame[1] = 0x80 | 126; frame[2] = (unsigned char)(size >> 8); frame[3] = (unsigned char)size; }
    else { frame[1] = 0x80 | 127; for (int i = 0; i < 8; i++) frame[2 + i] = (unsigned char)((uint64_t)size >> (56 - 8 * i)); }
    memcpy(frame + hl, "\x12\x34\x56\x78", 4);
    for (size_t i = 0; i < size; i++) frame[hl + 4 + i] = (unsigned char)('a' + i % 26) ^ frame[hl + (i & 3)];

    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
    inet_pton(AF_INET, host, &addr.sin_addr);
    int ep = epoll_create1(0);
    struct conn *conns = calloc((size_t)nconn, sizeof *conns);
    char req[512];
    int req_len = snprintf(req, sizeof req,
                           "GET %s HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                           "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
                           path, host, port);
    for (int i = 0; i < nconn; i++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
        if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) < 0) { perror("wsload: connect"); return 1; }
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (write(fd, req, (size_t)req_len) != req_len) { perror("wsload: write"); return 1; }
        conns[i].fd = fd;
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &conns[i]};
        epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
    }
    static unsigned char buf[1 << 20];
    struct epoll_event events[512];
    long messages = 0, errors = 0;
    double start = 0, end = 0;
    int ready = 0;
    while (1) {
        double t = now();
        if (start > 0 && t >= end) break;
        int n = epoll_wait(ep, events, 512, 100);
        for (int i = 0; i < n; i++) {
            struct conn *c = events[i].data.ptr;
            ssize_t r = read(c->fd, buf, sizeof buf);
            if (r <= 0) {
                if (r < 0 && (errno == EAGAIN || errno == EINTR)) continue;
                errors++;
                epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
                continue;
            }
            if (!c->upgraded) {
                size_t take = (size_t)r < sizeof c->head - c->head_len ? (size_t)r : sizeof c->head - c->head_len;
                memcpy(c->head + c->head_len, buf, take);
                c->head_len += take;
                if (!memmem(c->head, c->head_len, "\r\n\r\n", 4)) continue;
                if (strncmp(c->head, "HTTP/1.1 101", 12) != 0) { fprintf(stderr, "wsload: not upgraded\n"); return 1; }
                c->upgraded = 1;
                /* Every connection starts once all are open, so the clock runs on a full load. */
                if (++ready == nconn) {
                    start = now();
                    end = start + seconds;
                    for (int j = 0; j < nconn; j++)
                        if (send_frame(&conns[j]) < 0) errors++;
                }
                continue;
            }
            size_t got = (size_t)r;
            while (got > 0 && c->want > 0) {
                size_t used = got < c->want ? got : c->want;
                c->want -= used;
                got -= used;
                if (c->want == 0) {
                    messages++;
                    if (send_frame(c) < 0) errors++;
                }
            }
        }
    }
    double took = now() - start;
    printf("connections=%d size=%zu seconds=%.2f messages=%ld rate=%.0f errors=%ld\n", nconn, size, took, messages,
           (double)messages / took, errors);
    return errors > 0;
}
