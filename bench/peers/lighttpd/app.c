/* The FastCGI application behind lighttpd: one process answering in an FCGX_Accept_r loop,
 * as the C programs of the Ocsigen report (hello world) and the Yesod report (bigtable) did.
 * lighttpd starts max-procs copies of it on one socket. */
#include <fcgiapp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* kiln's /bigtable limits: more rows or columns is a 400, and a table holds at most this
 * many cells (rows beyond it are dropped), so every server renders the same page. */
#define MAX_ROWS 10000
#define MAX_COLS 1000
#define MAX_CELLS 100000

static void send_text(FCGX_Stream *out, const char *status, const char *type, const char *body, size_t len) {
    FCGX_FPrintF(out, "Status: %s\r\nContent-Type: %s\r\nContent-Length: %lu\r\n\r\n", status, type, (unsigned long)len);
    FCGX_PutStr(body, (int)len, out);
}

/* The value of `name` in a query string, or `fallback`; -1 for a value that is not a number. */
static long query_number(const char *query, const char *name, long fallback) {
    size_t n = strlen(name);
    for (const char *p = query; p && *p; p = strchr(p, '&') ? strchr(p, '&') + 1 : NULL) {
        if (strncmp(p, name, n) == 0 && p[n] == '=') {
            char *end;
            long v = strtol(p + n + 1, &end, 10);
            return (end == p + n + 1 || (*end && *end != '&') || v < 0) ? -1 : v;
        }
    }
    return fallback;
}

/* Appends `s` to the growing page. */
static void put(char **buf, size_t *len, size_t *cap, const char *s, size_t n) {
    if (*len + n > *cap) {
        *cap = (*len + n) * 2;
        *buf = realloc(*buf, *cap);
        if (!*buf) abort();
    }
    memcpy(*buf + *len, s, n);
    *len += n;
}

static void bigtable(FCGX_Stream *out, const char *query) {
    long rows = query_number(query, "rows", 1000), cols = query_number(query, "cols", 50);
    if (rows < 0 || cols < 0 || rows > MAX_ROWS || cols > MAX_COLS) {
        static const char msg[] = "bigtable is limited to 10000 rows and 1000 columns\n";
        send_text(out, "400 Bad Request", "text/plain", msg, sizeof msg - 1);
        return;
    }
    if (rows > MAX_CELLS / (cols ? cols : 1)) rows = MAX_CELLS / (cols ? cols : 1);
    static char *buf;
    static size_t cap;
    size_t len = 0;
    char cell[32];
    put(&buf, &len, &cap, "<table>", 7);
    for (long r = 0; r < rows; r++) {
        put(&buf, &len, &cap, "<tr>", 4);
        for (long c = 1; c <= cols; c++) put(&buf, &len, &cap, cell, (size_t)snprintf(cell, sizeof cell, "<td>%ld</td>", c));
        put(&buf, &len, &cap, "</tr>", 5);
    }
    put(&buf, &len, &cap, "</table>", 8);
    send_text(out, "200 OK", "text/html; charset=utf-8", buf, len);
}

int main(void) {
    FCGX_Request req;
    if (FCGX_Init() != 0 || FCGX_InitRequest(&req, 0, 0) != 0) return 1;
    while (FCGX_Accept_r(&req) >= 0) {
        /* The path is REQUEST_URI up to its query: SCRIPT_NAME and PATH_INFO depend on how
         * the prefix in fastcgi.server splits it. */
        const char *request_uri = FCGX_GetParam("REQUEST_URI", req.envp);
        const char *query = FCGX_GetParam("QUERY_STRING", req.envp);
        char uri[64];
        size_t n = request_uri ? strcspn(request_uri, "?") : 0;
        if (n >= sizeof uri) n = 0;
        memcpy(uri, request_uri ? request_uri : "", n);
        uri[n] = 0;
        if (strcmp(uri, "/pong") == 0) send_text(req.out, "200 OK", "text/plain", "PONG", 4);
        else if (strcmp(uri, "/hello") == 0) send_text(req.out, "200 OK", "text/plain", "Hello World!", 12);
        else if (strcmp(uri, "/plaintext") == 0) send_text(req.out, "200 OK", "text/plain", "Hello, World!", 13);
        else if (strcmp(uri, "/bigtable") == 0) bigtable(req.out, query);
        else send_text(req.out, "404 Not Found", "text/plain", "not found\n", 10);
        FCGX_Finish_r(&req);
    }
    return 0;
}
