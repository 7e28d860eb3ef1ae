"""The Yesod report's bigtable as a CGI program in Python: one process per request.

Same page as kiln's /bigtable: rows x cols cells, each its column number.
"""

import os
import sys
from urllib.parse import parse_qs

MAX_ROWS, MAX_COLS, MAX_CELLS = 10_000, 1_000, 100_000


def main() -> None:
    query = parse_qs(os.environ.get("QUERY_STRING", ""))
    rows, cols = query.get("rows", ["1000"])[0], query.get("cols", ["50"])[0]
    if not (rows.isdigit() and cols.isdigit()) or int(rows) > MAX_ROWS or int(cols) > MAX_COLS:
        sys.stdout.write("Status: 400 Bad Request\r\nContent-Type: text/plain\r\n\r\n")
        sys.stdout.write(f"bigtable is limited to {MAX_ROWS} rows and {MAX_COLS} columns\n")
        return
    cols_n = int(cols)
    rows_n = min(int(rows), MAX_CELLS // max(cols_n, 1))
    parts = ["Content-Type: text/html; charset=utf-8\r\n\r\n<table>"]
    for _ in range(rows_n):
        parts.append("<tr>")
        parts.extend(f"<td>{col}</td>" for col in range(1, cols_n + 1))
        parts.append("</tr>")
    parts.append("</table>")
    sys.stdout.write("".join(parts))


if __name__ == "__main__":
    main()
