"""Whether two servers send the same wiki page: the bodies of one GET each, compared once
what may differ is made equal (docs/wiki-page.md): the CSRF token (random per visitor)
and the stylesheet's content hash. Loopback only; one request per URL.

Usage: python3 -m kilnbench.samepage http://127.0.0.1:8080/pages/tour http://127.0.0.1:8081/pages/tour
"""

from __future__ import annotations

import difflib
import re
import sys
import urllib.parse
import urllib.request

_CSRF = re.compile(rb'(name="csrf_token" value=")[0-9a-f]*(")')
_STYLESHEET = re.compile(rb"/static/site(?:\.[0-9a-f]{8})?\.css")


def normalise(body: bytes) -> bytes:
    """`body` with its CSRF token and its stylesheet's hashed name replaced by fixed text."""
    body = _CSRF.sub(rb"\1TOKEN\2", body)
    return _STYLESHEET.sub(b"/static/site.HASH.css", body)


def differences(a: bytes, b: bytes, context: int = 60) -> list[str]:
    """Where two normalised bodies part, as short excerpts of each tag; [] if they are equal."""
    a, b = normalise(a), normalise(b)
    if a == b:
        return []
    split = lambda body: [t.decode("utf-8", "replace") for t in re.split(rb"(?<=>)", body)]  # noqa: E731
    diff = difflib.unified_diff(split(a), split(b), lineterm="", n=0)
    return [line[: context * 2] for line in diff if not line.startswith(("---", "+++", "@@"))]


def _get(url: str) -> bytes:
    if urllib.parse.urlsplit(url).hostname not in ("127.0.0.1", "localhost", "::1"):
        raise SystemExit(f"samepage: {url}: loopback only")
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.read()


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    first, second = (_get(url) for url in argv)
    diff = differences(first, second)
    print(f"{len(first)} and {len(second)} bytes: " + ("the same page" if not diff else f"{len(diff)} differing lines"))
    for line in diff[:40]:
        print(line)
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
