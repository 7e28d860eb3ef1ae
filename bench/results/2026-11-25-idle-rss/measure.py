#!/usr/bin/env python3
"""measure.py BINARY [starts] [--smaps]: VmRSS after /pong and after one /pages/tour, fresh start each."""
import subprocess, sys, time, socket, http.client, os, collections
binary = sys.argv[1]; starts = int(sys.argv[2]) if len(sys.argv) > 2 else 3
smaps = "--smaps" in sys.argv
cwd = os.environ.get("CWD", str(__import__("pathlib").Path(__file__).resolve().parents[3]))
def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p
def get(port, path):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5); c.request("GET", path); r = c.getresponse(); b = r.read(); c.close(); return r.status, b
def rss(pid):
    for l in open(f"/proc/{pid}/status"):
        if l.startswith("VmRSS:"): return int(l.split()[1])
def by_mapping(pid):
    out = collections.OrderedDict(); name = None
    for l in open(f"/proc/{pid}/smaps"):
        f = l.split()
        if not f[0].endswith(":") :
            perms = f[1]; name = (f[5] if len(f) > 5 else "[anon]") ; key = (os.path.basename(name), perms)
        elif f[0] == "Rss:":
            out[key] = out.get(key, 0) + int(f[1])
    return out
def rollup(pid):
    d = {}
    for l in open(f"/proc/{pid}/smaps_rollup").readlines()[1:]:
        f = l.split(); d[f[0].rstrip(":")] = int(f[1])
    return {k: d[k] for k in ("Rss", "Anonymous", "Shared_Clean", "Private_Clean", "Private_Dirty")}
res = []
for i in range(starts):
    port = free_port()
    p = subprocess.Popen(["taskset", "-c", "0", binary, "--workers", "1", "--listen", f"127.0.0.1:{port}", "--access-log", "off"],
                         cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=os.environ | {"STATIC_DIR": cwd + "/bench/static"})
    try:
        for _ in range(200):
            try:
                if get(port, "/pong")[0] == 200: break
            except OSError: time.sleep(0.05)
        time.sleep(0.1); a = rss(p.pid); ra = rollup(p.pid); ma = by_mapping(p.pid)
        st, body = get(port, "/pages/tour"); assert st == 200, st
        time.sleep(0.1); b = rss(p.pid); rb = rollup(p.pid); mb = by_mapping(p.pid)
        res.append((a, b))
        print(f"start {i+1}: after /pong {a} KiB, after /pages/tour {b} KiB (body {len(body)})")
        if smaps and i == 0:
            print("  rollup /pong:", ra); print("  rollup tour:", rb)
            for k in mb:
                if mb[k] >= 16: print(f"  {k[0]:40s} {k[1]} {ma.get(k,0):6d} {mb[k]:6d}")
    finally:
        p.terminate(); p.wait()
