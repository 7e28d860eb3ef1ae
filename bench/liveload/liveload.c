/* liveload: the live-view load (issue 31, bench/kilnbench/live.py; the contract is
 * bench's LIVEBENCH part of the issue). One thread, one epoll loop.
 *
 * Opens N connections to 127.0.0.1:PORT (CONNECTING_AT_ONCE at most still waiting for
 * their answer), each sending the bytes of REQUEST_FILE as they are: in ws mode a
 * WebSocket upgrade answered 101 (then the text frame of HELLO_FILE, if given, masked),
 * in sse mode a GET answered 200 whose stream stays open. Once every connection is
 * answered and no byte has come for MOUNT_QUIET_MS (the views are mounted), it prints
 * "ready OPEN FAILED". Then, for each trigger (K of them with -k, else one per line read
 * from stdin until EOF), it POSTs TRIGGER_PATH (body -b, "%d" the trigger's number from
 * 0) on a connection of its own, and waits until every open connection has received
 * at least one byte of data after it and then ROUND_QUIET_MS of quiet, ROUND_S at most
 * (the rest count as missing). A delivery is one connection's data after one trigger:
 * its bytes as they came on the wire (the frames, or the SSE chunks), its latency from
 * the POST's send to the first of them. Pings are answered (masked pongs) and not
 * counted; a close frame or EOF closes the connection. Every phase has a deadline.
 * Ends with one JSON line.
 *
 *   cc -O2 -o liveload liveload.c
 *   ./liveload [-m ws|sse] [-H HELLO_FILE] [-k K] [-b BODY] PORT REQUEST_FILE N TRIGGER_PATH
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
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

#define CONNECTING_AT_ONCE 256 /* under the listen backlog */
#define OPEN_S 120             /* all N answered within this, or the rest failed */
#define MOUNT_QUIET_MS 500     /* no byte for this long after the last answer: mounted */
#define MOUNT_S 60             /* the mount's quiet comes within this, or we go on */
#define ROUND_S 10             /* one trigger reaches everyone within this, or counts as missing */
#define ROUND_QUIET_MS 200     /* after the last first byte, quiet this long ends the round */
#define POST_S 10              /* the trigger's answer comes within this */
#define MAX_TRIGGERS 10000
#define HEAD_MAX 4096
#define STDIN_TAG UINT32_MAX
#define POST_TAG (UINT32_MAX - 1)

enum state { CONNECTING, ANSWER_AWAITED, OPEN, GONE };

struct conn {
    int fd;
    enum state state;
    int head_len;
    char *head;            /* the answer's head while it is awaited */
    unsigned char hdr[14]; /* the frame header being read (ws) */
    int hdr_len;
    uint64_t left;         /* payload bytes of the current frame still to come */
    int opcode;            /* the current frame's */
    int in_payload;        /* its header is read */
    unsigned char ping[125];
    int ping_len;
    int got;               /* data received since the current trigger */
};

static struct conn *conns;
static int n_conns, port, ws = 1, ep;
static const char *request;
static size_t request_len;
static unsigned char *hello_frame;
static size_t hello_len;
static long open_now, failed, closed_later, pings;
static long round_bytes, round_got;
static long mount_bytes;
static int in_round;
static int64_t round_sent, last_byte;
static uint32_t *lat_us;
static long n_lat;

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *data = malloc((size_t)size + 1);
    if (!data || fread(data, 1, (size_t)size, f) != (size_t)size) {
        fclose(f);
        free(data);
        return NULL;
    }
    fclose(f);
    data[size] = 0;
    *len = (size_t)size;
    return data;
}

static int dial(void) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (fd < 0) return -1;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0 && errno != EINPROGRESS) {
        close(fd);
        return -1;
    }
    return fd;
}

/* A client frame (RFC 6455 §5.3: masked) of `opcode` around `payload` (at most 125
 * bytes, or 65535); its length. */
static size_t client_frame(unsigned char *out, int opcode, const unsigned char *payload, size_t len) {
    static const unsigned char mask[4] = {0x37, 0xfa, 0x21, 0x3d};
    size_t h = 2;
    out[0] = (unsigned char)(0x80 | opcode);
    if (len < 126) {
        out[1] = (unsigned char)(0x80 | len);
    } else {
        out[1] = 0x80 | 126;
        out[2] = (unsigned char)(len >> 8);
        out[3] = (unsigned char)len;
        h = 4;
    }
    memcpy(out + h, mask, 4);
    for (size_t i = 0; i < len; i++) out[h + 4 + i] = payload[i] ^ mask[i & 3];
    return h + 4 + len;
}

/* Small writes on a socket whose buffer is empty: they go whole or not at all. */
static int send_all(int fd, const void *data, size_t len) {
    return write(fd, data, len) == (ssize_t)len ? 0 : -1;
}

static void drop(struct conn *c, int was_open) {
    epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    c->fd = -1;
    free(c->head);
    c->head = NULL;
    if (was_open) open_now--, closed_later++;
    else failed++;
    c->state = GONE;
}

/* Counts `n` bytes of data reaching c now. */
static void data_bytes(struct conn *c, size_t n, int64_t at) {
    if (!in_round) {
        mount_bytes += (long)n;
        return;
    }
    round_bytes += (long)n;
    if (!c->got) {
        c->got = 1;
        round_got++;
        int64_t us = (at - round_sent) / 1000;
        lat_us[n_lat++] = us < 0 ? 0 : (uint32_t)us;
    }
}

/* A whole frame was read: a ping is answered; -1 for a close frame. */
static int frame_done(struct conn *c) {
    c->in_payload = 0;
    if (c->opcode == 8) return -1;
    if (c->opcode == 9) {
        unsigned char pong[2 + 4 + sizeof c->ping];
        size_t len = client_frame(pong, 0xA, c->ping, (size_t)c->ping_len);
        pings++;
        return send_all(c->fd, pong, len);
    }
    return 0;
}

/* Takes WebSocket bytes: data frames counted, pings answered; -1 on a close frame. */
static int take_frames(struct conn *c, const unsigned char *p, size_t n, int64_t at) {
    while (n > 0) {
        if (!c->in_payload) {
            c->hdr[c->hdr_len++] = *p++, n--;
            if (c->hdr_len < 2) continue;
            int l7 = c->hdr[1] & 0x7F;
            int need = 2 + (l7 == 126 ? 2 : l7 == 127 ? 8 : 0) + ((c->hdr[1] & 0x80) ? 4 : 0);
            if (c->hdr_len < need) continue;
            uint64_t len = (uint64_t)l7;
            if (l7 == 126) len = (uint64_t)c->hdr[2] << 8 | c->hdr[3];
            if (l7 == 127) {
                len = 0;
                for (int i = 0; i < 8; i++) len = len << 8 | c->hdr[2 + i];
            }
            c->opcode = c->hdr[0] & 0x0F;
            if (c->opcode < 8) data_bytes(c, (size_t)need, at);
            c->hdr_len = 0;
            c->left = len;
            c->ping_len = 0;
            c->in_payload = 1;
            if (len == 0 && frame_done(c) < 0) return -1;
            continue;
        }
        size_t used = n < c->left ? n : (size_t)c->left;
        if (c->opcode < 8) data_bytes(c, used, at);
        if (c->opcode == 9) {
            size_t room = sizeof c->ping - (size_t)c->ping_len, take = used < room ? used : room;
            memcpy(c->ping + c->ping_len, p, take);
            c->ping_len += (int)take;
        }
        c->left -= used;
        p += used;
        n -= used;
        if (c->left == 0 && frame_done(c) < 0) return -1;
    }
    return 0;
}

/* Reads what c has; -1 when it closed or failed. */
static int on_readable(struct conn *c) {
    static unsigned char buf[1 << 16];
    for (;;) {
        ssize_t n = read(c->fd, buf, sizeof buf);
        if (n == 0) return -1;
        if (n < 0) return errno == EAGAIN ? 0 : -1;
        int64_t at = now_ns();
        last_byte = at;
        const unsigned char *p = buf;
        if (c->state == ANSWER_AWAITED) {
            size_t take = (size_t)n < (size_t)(HEAD_MAX - c->head_len) ? (size_t)n : (size_t)(HEAD_MAX - c->head_len);
            memcpy(c->head + c->head_len, buf, take);
            c->head_len += (int)take;
            char *end = memmem(c->head, (size_t)c->head_len, "\r\n\r\n", 4);
            if (!end) {
                if (c->head_len == HEAD_MAX) return -1;
                continue;
            }
            const char *want = ws ? "101" : "200";
            if (c->head_len < 12 || memcmp(c->head + 9, want, 3) != 0) return -1;
            size_t body = (size_t)(end + 4 - c->head);
            size_t before = (size_t)c->head_len - take; /* head bytes of earlier reads */
            p = buf + (body - before);
            n -= (ssize_t)(body - before);
            free(c->head);
            c->head = NULL;
            c->state = OPEN;
            open_now++;
            if (hello_frame && send_all(c->fd, hello_frame, hello_len) < 0) return -1;
        }
        if (n <= 0) continue;
        if (ws) {
            if (take_frames(c, p, (size_t)n, at) < 0) return -1;
        } else {
            data_bytes(c, (size_t)n, at);
        }
    }
}

static void handle(struct epoll_event *e) {
    struct conn *c = &conns[e->data.u32];
    if (c->state == CONNECTING) {
        if (send_all(c->fd, request, request_len) < 0) {
            drop(c, 0);
            return;
        }
        c->state = ANSWER_AWAITED;
        c->head = malloc(HEAD_MAX);
        struct epoll_event in = {.events = EPOLLIN, .data.u32 = e->data.u32};
        epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &in);
        return;
    }
    if (c->state == GONE) return;
    if (on_readable(c) < 0) drop(c, c->state == OPEN);
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* The trigger's POST, on a connection of its own that the answer closes. */
static int post_trigger(const char *path, const char *body_template, int seq) {
    char body[512], req[1024];
    int blen = snprintf(body, sizeof body, body_template, seq);
    int rlen = snprintf(req, sizeof req,
                        "POST %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: text/plain; charset=utf-8\r\n"
                        "Content-Length: %d\r\nConnection: close\r\n\r\n%s",
                        path, port, blen, body);
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    if (fd < 0) return -1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0 || send_all(fd, req, (size_t)rlen) < 0) {
        close(fd);
        return -1;
    }
    fcntl(fd, F_SETFL, O_NONBLOCK);
    struct epoll_event e = {.events = EPOLLIN, .data.u32 = POST_TAG};
    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e);
    return fd;
}

/* Whether an answer's bytes are a whole response: its head, then Content-Length bytes
 * or a chunked body's last chunk. */
static int answer_whole(const char *a, int len) {
    const char *end = memmem(a, (size_t)len, "\r\n\r\n", 4);
    if (!end) return 0;
    int head = (int)(end + 4 - a);
    for (const char *h = a; h < end; h = strstr(h, "\r\n") + 2) {
        if (strncasecmp(h, "content-length:", 15) == 0) return len - head >= atoi(h + 15);
        if (strncasecmp(h, "transfer-encoding:", 18) == 0) return len >= 5 && memcmp(a + len - 5, "0\r\n\r\n", 5) == 0;
    }
    return 0; /* read until the server closes */
}

/* Reads the trigger's answer; 1 once it is whole (its status in *status), 0 for more, -1 failed. */
static int read_answer(int fd, char *answer, int *len, int *status) {
    for (;;) {
        ssize_t n = read(fd, answer + *len, 1023 - (size_t)*len);
        if (n < 0) return errno == EAGAIN ? 0 : -1;
        *len += (int)n;
        answer[*len] = 0;
        if (n == 0 || *len == 1023 || answer_whole(answer, *len)) {
            *status = *len >= 12 ? atoi(answer + 9) : 0;
            return 1;
        }
    }
}

/* Takes the first whole line of what stdin gave; 1 if there was one. */
static int take_line(char *line, int *len) {
    char *nl = memchr(line, '\n', (size_t)*len);
    if (!nl) return 0;
    int rest = *len - (int)(nl + 1 - line);
    memmove(line, nl + 1, (size_t)rest);
    *len = rest;
    return 1;
}

int main(int argc, char **argv) {
    const char *hello_path = NULL, *body = "";
    int triggers = -1, opt;
    while ((opt = getopt(argc, argv, "m:H:k:b:")) != -1) {
        if (opt == 'm') ws = strcmp(optarg, "sse") != 0;
        else if (opt == 'H') hello_path = optarg;
        else if (opt == 'k') triggers = atoi(optarg);
        else if (opt == 'b') body = optarg;
        else return 2;
    }
    if (argc - optind != 4) {
        fprintf(stderr, "usage: liveload [-m ws|sse] [-H HELLO_FILE] [-k K] [-b BODY] PORT REQUEST_FILE N TRIGGER_PATH\n");
        return 2;
    }
    port = atoi(argv[optind]);
    n_conns = atoi(argv[optind + 2]);
    const char *trigger_path = argv[optind + 3];
    request = read_file(argv[optind + 1], &request_len);
    if (!request || n_conns < 1 || triggers > MAX_TRIGGERS) {
        fprintf(stderr, "liveload: a readable request file, N >= 1, at most %d triggers\n", MAX_TRIGGERS);
        return 2;
    }
    if (hello_path) {
        size_t len;
        char *hello = read_file(hello_path, &len);
        if (!hello || len > 65535 || !ws) {
            fprintf(stderr, "liveload: the hello is a readable file of at most 65535 bytes, in ws mode\n");
            return 2;
        }
        hello_frame = malloc(len + 8);
        hello_len = client_frame(hello_frame, 0x1, (unsigned char *)hello, len);
    }
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    if ((long)rl.rlim_cur < n_conns + 64) {
        fprintf(stderr, "liveload: RLIMIT_NOFILE %ld is below %d\n", (long)rl.rlim_cur, n_conns + 64);
        return 2;
    }
    int max_rounds = triggers >= 0 ? triggers : MAX_TRIGGERS;
    conns = calloc((size_t)n_conns, sizeof *conns);
    lat_us = malloc(sizeof *lat_us * (size_t)n_conns * (size_t)(max_rounds ? max_rounds : 1));
    if (!conns || !lat_us) return 2;
    ep = epoll_create1(0);
    struct epoll_event evs[1024];

    /* Open everyone, a bounded number waiting for their answer at once. */
    int started = 0;
    long answered = 0;
    int64_t deadline = now_ns() + OPEN_S * 1000000000LL;
    while (answered < n_conns && now_ns() < deadline) {
        while (started < n_conns && started - answered < CONNECTING_AT_ONCE) {
            struct conn *c = &conns[started];
            c->fd = dial();
            if (c->fd < 0) {
                c->state = GONE;
                failed++, answered++, started++;
                continue;
            }
            struct epoll_event e = {.events = EPOLLOUT, .data.u32 = (uint32_t)started};
            epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &e);
            started++;
        }
        int n = epoll_wait(ep, evs, 1024, 100);
        for (int i = 0; i < n; i++) handle(&evs[i]);
        answered = open_now + closed_later + failed;
    }
    for (int i = 0; i < n_conns; i++)
        if (conns[i].state == CONNECTING || conns[i].state == ANSWER_AWAITED) drop(&conns[i], 0);
    /* The mount: until no byte has come for MOUNT_QUIET_MS. */
    last_byte = now_ns();
    deadline = last_byte + MOUNT_S * 1000000000LL;
    while (now_ns() - last_byte < MOUNT_QUIET_MS * 1000000LL && now_ns() < deadline) {
        int n = epoll_wait(ep, evs, 1024, 50);
        for (int i = 0; i < n; i++) handle(&evs[i]);
    }
    long opened = open_now;
    printf("ready %ld %ld\n", open_now, failed);
    fflush(stdout);

    if (triggers < 0) {
        struct epoll_event e = {.events = EPOLLIN, .data.u32 = STDIN_TAG};
        epoll_ctl(ep, EPOLL_CTL_ADD, 0, &e);
    }
    long delivered = 0, missing = 0, bytes = 0, trigger_errors = 0;
    int rounds = 0;
    int64_t phase_start = now_ns();
    char line[256];
    int line_len = 0, stdin_open = triggers < 0;
    while (rounds < max_rounds) {
        if (triggers < 0) { /* wait for a line, keeping the connections served */
            int have_line = take_line(line, &line_len);
            while (stdin_open && !have_line) {
                int n = epoll_wait(ep, evs, 1024, 1000);
                for (int i = 0; i < n; i++) {
                    if (evs[i].data.u32 != STDIN_TAG) {
                        handle(&evs[i]);
                        continue;
                    }
                    ssize_t r = read(0, line + line_len, sizeof line - 1 - (size_t)line_len);
                    if (r <= 0) {
                        stdin_open = 0;
                        epoll_ctl(ep, EPOLL_CTL_DEL, 0, NULL);
                        break;
                    }
                    line_len += (int)r;
                    have_line = take_line(line, &line_len);
                    if (!have_line && line_len == (int)sizeof line - 1) line_len = 0, have_line = 1; /* an overlong line */
                }
            }
            if (!have_line) break;
        }
        for (int i = 0; i < n_conns; i++) conns[i].got = 0;
        round_bytes = round_got = 0;
        in_round = 1;
        long expected = open_now;
        round_sent = now_ns();
        int post = post_trigger(trigger_path, body, rounds);
        if (post < 0) trigger_errors++;
        char answer[1024];
        int answer_len = 0, status = 0, answer_done = post < 0;
        int64_t round_deadline = round_sent + ROUND_S * 1000000000LL;
        int64_t post_deadline = round_sent + POST_S * 1000000000LL;
        last_byte = round_sent;
        for (;;) {
            int64_t t = now_ns();
            /* A connection that closed meanwhile is waited for no longer (and is missing). */
            if (round_got >= open_now && answer_done && t - last_byte >= ROUND_QUIET_MS * 1000000LL) break;
            if (t >= round_deadline && (answer_done || t >= post_deadline)) break;
            int n = epoll_wait(ep, evs, 1024, 20);
            for (int i = 0; i < n; i++) {
                if (evs[i].data.u32 == POST_TAG) {
                    int r = read_answer(post, answer, &answer_len, &status);
                    if (r != 0) {
                        answer_done = 1;
                        if (r < 0 || status != 200) trigger_errors++;
                        epoll_ctl(ep, EPOLL_CTL_DEL, post, NULL);
                        close(post);
                        post = -1;
                    }
                } else if (evs[i].data.u32 != STDIN_TAG) {
                    handle(&evs[i]);
                }
            }
        }
        if (!answer_done) {
            trigger_errors++;
            epoll_ctl(ep, EPOLL_CTL_DEL, post, NULL);
            close(post);
        }
        in_round = 0;
        delivered += round_got;
        missing += expected > round_got ? expected - round_got : 0;
        bytes += round_bytes;
        rounds++;
    }
    double seconds = (now_ns() - phase_start) / 1e9;
    qsort(lat_us, (size_t)n_lat, sizeof *lat_us, cmp_u32);
    double p50 = n_lat ? lat_us[n_lat / 2] / 1e3 : 0, p99 = n_lat ? lat_us[(n_lat * 99) / 100] / 1e3 : 0;
    double max = n_lat ? lat_us[n_lat - 1] / 1e3 : 0;
    printf("{\"mode\": \"%s\", \"connections\": %d, \"opened\": %ld, \"failed\": %ld, \"closed\": %ld, "
           "\"mount_bytes_per_connection\": %.1f, \"triggers\": %d, \"trigger_errors\": %ld, \"delivered\": %ld, "
           "\"missing\": %ld, \"bytes\": %ld, \"bytes_per_delivery\": %.1f, \"pings\": %ld, \"seconds\": %.3f, "
           "\"p50_ms\": %.3f, \"p99_ms\": %.3f, \"max_ms\": %.3f}\n",
           ws ? "ws" : "sse", n_conns, opened, failed, closed_later, opened ? (double)mount_bytes / opened : 0.0,
           rounds, trigger_errors, delivered, missing, bytes, delivered ? (double)bytes / delivered : 0.0, pings,
           seconds, p50, p99, max);
    fflush(stdout);
    return 0;
}
