/*
 * ws_floor: the floor for WebSocket echo, as floor.c is for HTTP.
 *
 * One thread, one epoll loop, non-blocking sockets. The handshake is answered
 * once (the accept key computed, nothing else checked); after it every frame
 * that has fully arrived is unmasked and echoed unmasked, all frames of one read
 * in one write. No UTF-8 check, no limits, no compression, no close handshake
 * beyond echoing the close frame: nothing a real WebSocket server does can be
 * cheaper, so every WebSocket server is reported as a fraction of this one.
 *
 * Build: cc -O2 -o ws_floor ws_floor.c
 * Usage: PORT=8080 ./ws_floor      (any path upgrades; a request without
 *        Sec-WebSocket-Key gets 200 PONG and a close: the runner's readiness check)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_EVENTS 512
#define MAX_FDS 65536
#include "epoll_floor.h"

#define READ_BUF (256 * 1024)

struct conn {
    int upgraded;
    size_t len;          /* bytes buffered in `in` */
    unsigned char *in;   /* READ_BUF bytes, allocated on first use */
    unsigned char *out;  /* READ_BUF + headers */
};

static struct conn conns[MAX_FDS];

/* SHA-1 (FIPS 180-4), for the one accept key per connection. */
static uint32_t rol(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

static void sha1(const unsigned char *msg, size_t len, unsigned char digest[20]) {
    uint32_t h[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
    unsigned char block[64];
    uint64_t bits = (uint64_t)len * 8;
    size_t total = ((len + 8) / 64 + 1) * 64;
    for (size_t off = 0; off < total; off += 64) {
        uint32_t w[80];
        for (int i = 0; i < 64; i++) {
            size_t at = off + (size_t)i;
            if (at < len) block[i] = msg[at];
            else if (at == len) block[i] = 0x80;
            else if (at >= total - 8) block[i] = (unsigned char)(bits >> (8 * (total - 1 - at)));
            else block[i] = 0;
        }
        for (int i = 0; i < 16; i++)
            w[i] = (uint32_t)block[4 * i] << 24 | (uint32_t)block[4 * i + 1] << 16 |
                   (uint32_t)block[4 * i + 2] << 8 | block[4 * i + 3];
        for (int i = 16; i < 80; i++) w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
        uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
        for (int i = 0; i < 80; i++) {
            uint32_t f, k;
            if (i < 20) { f = (b & c) | (~b & d); k = 0x5A827999; }
            else if (i < 40) { f = b ^ c ^ d; k = 0x6ED9EBA1; }
            else if (i < 60) { f = (b & c) | (b & d) | (c & d); k = 0x8F1BBCDC; }
            else { f = b ^ c ^ d; k = 0xCA62C1D6; }
            uint32_t t = rol(a, 5) + f + e + k + w[i];
            e = d; d = c; c = rol(b, 30); b = a; a = t;
        }
        h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e;
    }
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 4; j++) digest[4 * i + j] = (unsigned char)(h[i] >> (24 - 8 * j));
}

static void base64(const unsigned char *in, size_t len, char *out) {
    static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t o = 0;
    for (size_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < len ? (uint32_t)in[i + 1] << 8 : 0) | (i + 2 < len ? in[i + 2] : 0);
        out[o++] = tbl[(v >> 18) & 63];
        out[o++] = tbl[(v >> 12) & 63];
        out[o++] = i + 1 < len ? tbl[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < len ? tbl[v & 63] : '=';
    }
    out[o] = 0;
}

static void drop(int fd) {
    free(conns[fd].in);
    free(conns[fd].out);
    memset(&conns[fd], 0, sizeof conns[fd]);
    close(fd);
}

/* Answers the handshake in `c->in`, if complete; returns -1 to close. */
static int handshake(int fd, struct conn *c) {
    unsigned char *end = memmem(c->in, c->len, "\r\n\r\n", 4);
    if (!end) return c->len == READ_BUF ? -1 : 0;
    size_t head = (size_t)(end - c->in) + 4;
    char *key = memmem(c->in, head, "Sec-WebSocket-Key:", 18);
    if (!key) {
        /* A plain HTTP request (the suite's readiness check, its warm-up): one canned answer,
         * then close, so that the runner sees an HTTP server. */
        static const char pong[] = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 4\r\n"
                                   "Connection: close\r\n\r\nPONG";
        (void)!write(fd, pong, sizeof pong - 1);
        return -1;
    }
    key += 18;
    while (*key == ' ') key++;
    char *eol = memchr(key, '\r', (size_t)((char *)c->in + head - key));
    unsigned char src[128], digest[20];
    size_t klen = (size_t)(eol - key);
    if (!eol || klen > 60) return -1;
    memcpy(src, key, klen);
    memcpy(src + klen, "258EAFA5-E914-47DA-95CA-C5AB0DC85B11", 36);
    sha1(src, klen + 36, digest);
    char accept[32], res[256];
    base64(digest, 20, accept);
    int n = snprintf(res, sizeof res,
                     "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     "Sec-WebSocket-Accept: %s\r\n\r\n", accept);
    if (write(fd, res, (size_t)n) != n) return -1;
    memmove(c->in, c->in + head, c->len - head);
    c->len -= head;
    c->upgraded = 1;
    return 0;
}

/* Unmasks `len` bytes from `p` into `dst`, eight at a time (as any fast server does; the compiler
 * widens it further where it can). */
static void unmask(unsigned char *dst, const unsigned char *p, size_t len, const unsigned char *mask) {
    uint32_t m4;
    memcpy(&m4, mask, 4);
    uint64_t m8 = (uint64_t)m4 << 32 | m4;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t v;
        memcpy(&v, p + i, 8);
        v ^= m8;
        memcpy(dst + i, &v, 8);
    }
    for (; i < len; i++) dst[i] = p[i] ^ mask[i & 3];
}

/* Echoes every complete frame in `c->in` with one write; returns -1 to close. */
static int echo(int fd, struct conn *c) {
    size_t at = 0, out = 0;
    int closing = 0;
    while (c->len - at >= 2) {
        unsigned char *f = c->in + at;
        uint64_t len = f[1] & 0x7F;
        size_t hl = 2;
        if (len == 126) { if (c->len - at < 4) break; len = (uint64_t)f[2] << 8 | f[3]; hl = 4; }
        else if (len == 127) { if (c->len - at < 10) break; len = 0; for (int i = 0; i < 8; i++) len = len << 8 | f[2 + i]; hl = 10; }
        if (len > READ_BUF - 14) return -1;
        if (c->len - at < hl + 4 + len) break;
        unsigned char *mask = f + hl, *p = f + hl + 4;
        unsigned char op = f[0] & 0x0F;
        c->out[out++] = (unsigned char)(op == 0x9 ? 0x8A : f[0]);
        if (hl == 2) c->out[out++] = (unsigned char)len;
        else { c->out[out++] = f[1] & 0x7F; memcpy(c->out + out, f + 2, hl - 2); out += hl - 2; }
        unmask(c->out + out, p, (size_t)len, mask);
        out += len;
        at += hl + 4 + len;
        if (op == 0x8) { closing = 1; break; }
    }
    memmove(c->in, c->in + at, c->len - at);
    c->len -= at;
    if (out && write(fd, c->out, out) != (ssize_t)out) return -1;
    return closing ? -1 : 0;
}

int main(void) {
    int lfd, ep = floor_listen("ws_floor", floor_port(), &lfd);
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
            if (!c->in) {
                c->in = malloc(READ_BUF);
                c->out = malloc(READ_BUF + 64);
                if (!c->in || !c->out) { drop(fd); continue; }
            }
            ssize_t r = read(fd, c->in + c->len, READ_BUF - c->len);
            if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) { drop(fd); continue; }
            if (r < 0) continue;
            c->len += (size_t)r;
            if ((!c->upgraded && handshake(fd, c) < 0) || (c->upgraded && echo(fd, c) < 0)) drop(fd);
        }
    }
    return 0;
}
