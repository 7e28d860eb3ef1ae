/*
 * floor: the physical limit of this machine's loopback and syscalls.
 *
 * One thread, one epoll loop, non-blocking sockets. Every read that returns
 * data is answered with one canned HTTP response; requests are never parsed.
 * Nothing a real server does can be cheaper, so every other server is
 * reported as a fraction of this one.
 *
 * Usage: PORT=8080 ./floor
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_EVENTS 512
#define READ_BUF 16384

static const char RESPONSE[] =
    "HTTP/1.1 200 OK\r\n"
    "Server: floor\r\n"
    "Date: Thu, 01 Jan 2026 00:00:00 GMT\r\n"
    "Content-Type: text/plain\r\n"
    "Content-Length: 13\r\n"
    "Connection: keep-alive\r\n"
    "\r\n"
    "Hello, World!";

static volatile sig_atomic_t stop;

static void on_signal(int sig) { (void)sig; stop = 1; }

static int listen_on(int port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    int one = 1;
    struct sockaddr_in addr = {0};
    if (fd < 0) return -1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    addr.sin_family = AF_INET;
    addr.sin_port = htons((unsigned short)port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *)&addr, sizeof addr) < 0) return -1;
    if (listen(fd, 4096) < 0) return -1;
    return fd;
}

int main(void) {
    const char *port_env = getenv("PORT");
    int port = port_env ? atoi(port_env) : 8080;
    int lfd = listen_on(port);
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = lfd};
    struct epoll_event events[MAX_EVENTS];
    static char buf[READ_BUF];

    if (lfd < 0 || ep < 0) {
        perror("floor: listen");
        return 1;
    }
    signal(SIGPIPE, SIG_IGN);
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
    fprintf(stderr, "floor listening on 127.0.0.1:%d\n", port);

    while (!stop) {
        int n = epoll_wait(ep, events, MAX_EVENTS, 500);
        for (int i = 0; i < n; i++) {
            int fd = events[i].data.fd;
            if (fd == lfd) {
                int c;
                while ((c = accept4(lfd, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
                    int one = 1;
                    struct epoll_event cev = {.events = EPOLLIN, .data.fd = c};
                    setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    epoll_ctl(ep, EPOLL_CTL_ADD, c, &cev);
                }
                continue;
            }
            ssize_t r = read(fd, buf, sizeof buf);
            if (r > 0) {
                /* One canned response per read; a short write closes the connection. */
                if (write(fd, RESPONSE, sizeof RESPONSE - 1) != (ssize_t)(sizeof RESPONSE - 1)) close(fd);
            } else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
                close(fd);
            }
        }
    }
    return 0;
}
