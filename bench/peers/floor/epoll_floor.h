/* What the one-file C floors (ws_floor.c, ../sse-floor/sse_floor.c) share: the loopback
 * listener, the epoll set with the signals that stop the loop, and the accept loop. Each
 * floor keeps only what it measures: what it does with a readable connection.
 * Include after the system headers and after defining MAX_FDS. */
#ifndef EPOLL_FLOOR_H
#define EPOLL_FLOOR_H

static volatile sig_atomic_t stop;

static void on_signal(int sig) { (void)sig; stop = 1; }

/* The port from $PORT (8080 without it). */
static int floor_port(void) {
    const char *port_env = getenv("PORT");
    return port_env ? atoi(port_env) : 8080;
}

/* A non-blocking listener on 127.0.0.1:port registered in a new epoll set, SIGTERM and
 * SIGINT setting `stop`, SIGPIPE ignored. Returns the epoll fd, or -1 (said on stderr). */
static int floor_listen(const char *name, int port, int *lfd_out) {
    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), one = 1;
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&addr, sizeof addr) < 0 || listen(lfd, 4096) < 0) {
        fprintf(stderr, "%s: listen: %s\n", name, strerror(errno));
        return -1;
    }
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = lfd};
    signal(SIGPIPE, SIG_IGN);
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
    fprintf(stderr, "%s listening on 127.0.0.1:%d\n", name, port);
    *lfd_out = lfd;
    return ep;
}

/* Accepts every pending connection: non-blocking, TCP_NODELAY, registered for reading;
 * one past MAX_FDS is closed at once. */
static void floor_accept(int ep, int lfd) {
    int c, one = 1;
    while ((c = accept4(lfd, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
        if (c >= MAX_FDS) { close(c); continue; }
        struct epoll_event cev = {.events = EPOLLIN, .data.fd = c};
        setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        epoll_ctl(ep, EPOLL_CTL_ADD, c, &cev);
    }
}

#endif
