#!/usr/bin/env python3
"""sections.py BINARY: resident KiB of each ELF section of a fresh kiln-demo after /pong + one /pages/tour."""
import subprocess, sys, os, time, struct, socket, http.client, re
binary = os.path.realpath(sys.argv[1]); cwd = str(__import__("pathlib").Path(__file__).resolve().parents[3])
secs = []
for l in subprocess.run(["readelf", "-SW", binary], capture_output=True, text=True).stdout.splitlines():
    m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)", l)
    if m and int(m.group(2), 16): secs.append((m.group(1), int(m.group(2), 16), int(m.group(4), 16)))
s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
p = subprocess.Popen(["taskset", "-c", "0", binary, "--workers", "1", "--listen", f"127.0.0.1:{port}", "--access-log", "off"], cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
def get(path):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5); c.request("GET", path); r = c.getresponse(); r.read(); c.close(); return r.status
try:
    for _ in range(200):
        try:
            if get("/pong") == 200: break
        except OSError: time.sleep(0.05)
    get("/pages/tour"); time.sleep(0.1)
    base = None; res = {}
    maps = [l.split() for l in open(f"/proc/{p.pid}/maps")]
    base = min(int(m[0].split("-")[0], 16) for m in maps if len(m) > 5 and m[5] == binary)
    pm = open(f"/proc/{p.pid}/pagemap", "rb")
    for m in maps:
        lo, hi = (int(x, 16) for x in m[0].split("-"))
        if not (len(m) > 5 and m[5] == binary) and not (len(m) == 5 and lo >= base and lo < base + 0x2000000 ): continue
        pm.seek(lo // 4096 * 8); data = pm.read((hi - lo) // 4096 * 8)
        for i in range(0, len(data), 8):
            if struct.unpack("<Q", data[i:i+8])[0] >> 63:
                va = lo + i // 8 * 4096 - base
                name = next((n for n, a, sz in secs if a <= va < a + max(sz, 1)), "(between)")
                res[name] = res.get(name, 0) + 4
    for n, a, sz in secs:
        if n in res: print(f"  {n:22s} {sz//1024:6d} KiB  resident {res[n]:6d} KiB")
    if "(between)" in res: print("  (between sections)", res["(between)"])
    print("  total", sum(res.values()))
finally:
    p.terminate(); p.wait()
