"""Instructions per response of the nginx-gzip peer (bench/peers/nginx/nginx-gzip.conf.template:
a saved copy of kiln's wiki page, compressed per request), counted by callgrind as
`kilnbench.instructions` counts kiln's, so that kiln's compressed page and nginx's can be
compared in instructions rather than in CPU time on a shared machine.

    python3 -m kilnbench.nginxcost PAGE_FILE [--header 'Accept-Encoding: gzip'] [--requests 300]

nginx runs as one process (`master_process off`), pinned to CPU 0, with Debian's brotli filter
module loaded when installed; after a warm-up, callgrind counts from the first of `--requests`
requests, sent `--conns` at a time on keep-alive connections, to the last.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path
from string import Template

from .instructions import free_port, measure

BROTLI_MODULE = Path("/usr/lib/nginx/modules/ngx_http_brotli_filter_module.so")
TEMPLATE = Path(__file__).resolve().parents[1] / "peers" / "nginx" / "nginx-gzip.conf.template"


def count(page: Path, path: str, requests: int, conns: int, warmup: int, headers: tuple[str, ...]) -> float:
    """Instructions per response of nginx serving `page` at `path` to requests carrying `headers`."""
    with tempfile.TemporaryDirectory(prefix="kiln-nginxcost-") as tmp:
        home, port, out = Path(tmp), free_port(), Path(tmp) / "callgrind.out"
        brotli = BROTLI_MODULE.exists()
        conf = Template(TEMPLATE.read_text()).substitute(
            prefix=home, port=port, page=page.resolve(), user="user root;" if os.geteuid() == 0 else "",
            brotli_module=f"load_module {BROTLI_MODULE};" if brotli else "",
            brotli="brotli on; brotli_comp_level 4; brotli_types text/html;" if brotli else "",
        )  # fmt: skip
        (home / "nginx.conf").write_text(conf)
        argv = ["taskset", "-c", "0", "valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}",
                "nginx", "-p", str(home), "-e", str(home / "error.log"), "-c", str(home / "nginx.conf"),
                "-g", "master_process off;"]  # fmt: skip
        return measure(argv, "nginx", port, home, path, requests, conns, warmup, headers)


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python3 -m kilnbench.nginxcost", description=__doc__.split("\n\n")[0])
    p.add_argument("page", type=Path, help="the saved page nginx serves (kilnbench.compress saves kiln's)")
    p.add_argument("--path", default="/pages/tour")
    p.add_argument("--header", action="append", default=[], metavar="'NAME: VALUE'")
    p.add_argument("--requests", type=int, default=300)
    p.add_argument("--conns", type=int, default=10)
    p.add_argument("--warmup", type=int, default=50)
    args = p.parse_args(argv)
    missing = [t for t in ("valgrind", "callgrind_control", "taskset", "nginx") if not shutil.which(t)]
    if missing:
        print(f"kilnbench.nginxcost: missing {', '.join(missing)}", file=sys.stderr)
        return 2
    n = count(args.page, args.path, args.requests, args.conns, args.warmup, tuple(args.header))
    print(f"nginx {args.path} {' '.join(args.header)}: {n:,.0f} instructions per response", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
