/* The Yesod report's bigtable as a CGI program in C: one process per request, the table
 * written with stdio. Same page as kiln's /bigtable: rows x cols cells, each its column number. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ROWS 10000
#define MAX_COLS 1000
#define MAX_CELLS 100000

/* The value of `name` in the query string, or `fallback`; -1 for one that is not a number. */
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

int main(void) {
    const char *query = getenv("QUERY_STRING");
    long rows = query_number(query, "rows", 1000), cols = query_number(query, "cols", 50);
    if (rows < 0 || cols < 0 || rows > MAX_ROWS || cols > MAX_COLS) {
        fputs("Status: 400 Bad Request\r\nContent-Type: text/plain\r\n\r\n"
              "bigtable is limited to 10000 rows and 1000 columns\n", stdout);
        return 0;
    }
    if (rows > MAX_CELLS / (cols ? cols : 1)) rows = MAX_CELLS / (cols ? cols : 1);
    static char out[1 << 16];
    setvbuf(stdout, out, _IOFBF, sizeof out);
    fputs("Content-Type: text/html; charset=utf-8\r\n\r\n<table>", stdout);
    for (long r = 0; r < rows; r++) {
        fputs("<tr>", stdout);
        for (long c = 1; c <= cols; c++) printf("<td>%ld</td>", c);
        fputs("</tr>", stdout);
    }
    fputs("</table>", stdout);
    return 0;
}
