/*
 * wsload: a WebSocket echo load generator, one thread and one epoll loop.
 *
 * Opens C connections, upgrades each (the answer must be a 101; its accept key
 * is taken on trust), then each connection keeps one message of S bytes in
 * flight: it sends a masked binary frame and sends the next once the whole echo
 * came back (a closed loop, as wrk's connections are). The echo is parsed as
 * frames, so a compressed answer counts as well as a plain one. It stops after
 * D seconds, or after M echoed messages when -m is given, whichever comes
 * first, and prints one line. One core is its ceiling: report the server's CPU
 * (or instructions) per message, not the rate alone.
 *
 *   -m M   stop after M echoed messages (for instruction counts: a fixed amount
 *          of work whatever the speed)
 *   -z     offer permessage-deflate (client_no_context_takeover) and send every
 *          message compressed, as one raw deflate block made once at start
 *   -i     idle: open and upgrade the C connections, print a line, then hold them
 *          open for D seconds without sending (memory per idle WebSocket)
 *
 * Build: cc -O2 -o wsload wsload.c -lz
 * Usage: ./wsload [-m M] [-z] [-i] HOST PORT PATH CONNECTIONS SIZE SECONDS
 * Output (one line): connections=C size=S seconds=D messages=N rate=R errors=E
 *        (idle: upgraded=U errors=E, once all are open; then held=D)
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
#include <time.h>
#include <unistd.h>
#include <zlib.h>

/* Connections whose upgrade answer is still awaited, at most: stays under the listen backlog. */
#define CONNECTING_AT_ONCE 256
/* How long the whole set may take to open and upgrade. */
#define OPEN_DEADLINE 60.0

struct conn {
    int fd;
    int upgraded;
    char head[1024];
    size_t head_len;
    unsigned char hdr[14]; /* the frame header being read */
    size_t hdr_len;
    uint64_t left;         /* payload bytes of the current frame still to come */
    int fin;               /* the current frame ends its message */
};

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static unsigned char *frame;
static size_t frame_len;

/* Sends the whole request frame; the kernel buffer takes it at these sizes. */
static int send_frame(struct conn *c) {
    size_t off = 0;
    while (off < frame_len) {
        ssize_t n = write(c->fd, frame + off, frame_len - off);
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        if (n <= 0) return -1;
        off += (size_t)n;
    }
    return 0;
}

/* Consumes echoed bytes; returns how many whole messages they completed. */
static long take_echo(struct conn *c, const unsigned char *p, size_t n) {
    long done = 0;
    while (n > 0) {
        if (c->left == 0 && c->hdr_len < 2) {
            c->hdr[c->hdr_len++] = *p++;
            n--;
            if (c->hdr_len < 2) continue;
        }
        if (c->hdr_len >= 2 && c->left == 0) {
            size_t need = (c->hdr[1] & 0x7F) == 126 ? 4 : (c->hdr[1] & 0x7F) == 127 ? 10 : 2;
            while (c->hdr_len < need && n > 0) { c->hdr[c->hdr_len++] = *p++; n--; }
            if (c->hdr_len < need) break;
            uint64_t len = c->hdr[1] & 0x7F;
            if (need == 4) len = (uint64_t)c->hdr[2] << 8 | c->hdr[3];
            if (need == 10) { len = 0; for (int i = 0; i < 8; i++) len = len << 8 | c->hdr[2 + i]; }
            c->fin = (c->hdr[0] & 0x80) && (c->hdr[0] & 0x0F) < 8;
            c->hdr_len = 0;
            c->left = len;
            if (len == 0) { done += c->fin; continue; }
        }
        size_t used = n < c->left ? n : (size_t)c->left;
        c->left -= used;
        p += used;
        n -= used;
        if (c->left == 0) done += c->fin;
    }
    return done;
}

/* A message compressed as permessage-deflate sends it (RFC 7692 §7.2.1): raw deflate, synced, the
 * trailing 00 00 ff ff left off. Returns its length. */
static size_t deflate_payload(const unsigned char *in, size_t len, unsigned char *out, size_t room) {
    z_stream z = {0};
    if (deflateInit2(&z, 1, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) return 0;
    z.next_in = (unsigned char *)in;
    z.avail_in = (unsigned)len;
    z.next_out = out;
    z.avail_out = (unsigned)room;
    deflate(&z, Z_SYNC_FLUSH);
    size_t n = room - z.avail_out;
    deflateEnd(&z);
    return n >= 4 ? n - 4 : 0;
}

/* Builds the masked binary frame every connection sends. */
static void build_frame(size_t size, int compressed) {
    unsigned char *plain = malloc(size + 1), *payload = plain;
    for (size_t i = 0; i < size; i++) plain[i] = (unsigned char)('a' + i % 26);
    if (compressed) {
        size_t room = size + 64;
        payload = malloc(room);
        size = deflate_payload(plain, size, payload, room);
    }
    size_t hl = size < 126 ? 2 : size < 65536 ? 4 : 10;
    frame_len = hl + 4 + size;
    frame = malloc(frame_len);
    frame[0] = compressed ? 0xC2 : 0x82;
    if (hl == 2) frame[1] = (unsigned char)(0x80 | size);
    else if (hl == 4) { frame[1] = 0x80 | 126; frame[2] = (unsigned char)(size >> 8); frame[3] = (unsigned char)size; }
    else { frame[1] = 0x80 | 127; for (int i = 0; i < 8; i++) frame[2 + i] = (unsigned char)((uint64_t)size >> (56 - 8 * i)); }
    memcpy(frame + hl, "\x12\x34\x56\x78", 4);
    for (size_t i = 0; i < size; i++) frame[hl + 4 + i] = payload[i] ^ frame[hl + (i & 3)];
}

int main(int argc, char **argv) {
    long max_messages = -1;
    int compressed = 0, idle = 0, opt;
    while ((opt = getopt(argc, argv, "m:zi")) != -1) {
        if (opt == 'm') max_messages = atol(optarg);
        else if (opt == 'z') compressed = 1;
        else if (opt == 'i') idle = 1;
        else return 2;
    }
    if (argc - optind != 6) {
        fprintf(stderr, "usage: %s [-m M] [-z] [-i] HOST PORT PATH CONNECTIONS SIZE SECONDS\n", argv[0]);
        return 2;
    }
    argv += optind;
    const char *host = argv[0], *path = argv[2];
    int port = atoi(argv[1]), nconn = atoi(argv[3]);
    size_t size = (size_t)atol(argv[4]);
    double seconds = atof(argv[5]);
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_cur < (rlim_t)nconn + 64) {
        rl.rlim_cur = rl.rlim_max < (rlim_t)nconn + 64 ? rl.rlim_max : (rlim_t)nconn + 64;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    build_frame(size, compressed);

    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
    inet_pton(AF_INET, host, &addr.sin_addr);
    int ep = epoll_create1(0);
    struct conn *conns = calloc((size_t)nconn, sizeof *conns);
    char req[512];
    int req_len = snprintf(req, sizeof req,
                           "GET %s HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                           "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n%s\r\n",
                           path, host, port,
                           compressed ? "Sec-WebSocket-Extensions: permessage-deflate; client_no_context_takeover\r\n"
                                      : "");
    static unsigned char buf[1 << 20];
    struct epoll_event events[512];
    long messages = 0, errors = 0;
    double start = 0, end = 0, open_by = now() + OPEN_DEADLINE;
    int opened = 0, ready = 0;
    while (1) {
        double t = now();
        if (start > 0 && t >= end) break;
        if (start == 0 && t >= open_by) { fprintf(stderr, "wsload: only %d of %d upgraded in time\n", ready, nconn); return 1; }
        /* Open more while few are pending, so the listen backlog never overflows. */
        while (opened < nconn && opened - ready < CONNECTING_AT_ONCE) {
            int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
            if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) < 0) { perror("wsload: connect"); return 1; }
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            if (write(fd, req, (size_t)req_len) != req_len) { perror("wsload: write"); return 1; }
            conns[opened].fd = fd;
            struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &conns[opened]};
            epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
            opened++;
        }
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
                    if (idle) {
                        printf("upgraded=%d errors=%ld\n", ready, errors);
                        fflush(stdout);
                        continue;
                    }
                    for (int j = 0; j < nconn; j++)
                        if (send_frame(&conns[j]) < 0) errors++;
                }
                continue;
            }
            if (idle) continue;
            long done = take_echo(c, buf, (size_t)r);
            messages += done;
            if (max_messages >= 0 && messages >= max_messages) { end = 0; break; }
            if (done > 0 && send_frame(c) < 0) errors++;
        }
        if (start > 0 && end == 0) break;
    }
    double took = now() - start;
    if (idle) printf("held=%.2f errors=%ld\n", took, errors);
    else printf("connections=%d size=%zu seconds=%.2f messages=%ld rate=%.0f errors=%ld\n", nconn, size, took,
                messages, (double)messages / took, errors);
    return errors > 0;
}
