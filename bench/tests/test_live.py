"""The live-view run (kilnbench.live): liveload's report and ready lines on recorded
output, kiln's recipe from a first answer, and the summary's targets."""

import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kilnbench import live  # noqa: E402
from kilnbench.parse import ParseError  # noqa: E402

SAMPLES = Path(__file__).parent / "samples"


class LiveloadReportTest(unittest.TestCase):
    def test_the_report_line_after_ready(self):
        text = (SAMPLES / "liveload_kiln_table.txt").read_text()
        r = live.parse_liveload(text)
        self.assertEqual((r["mode"], r["connections"], r["opened"], r["triggers"]), ("ws", 200, 200, 3))
        self.assertEqual((r["delivered"], r["missing"], r["trigger_errors"]), (600, 0, 0))
        self.assertEqual(r["bytes_per_delivery"], 29.0)
        self.assertGreaterEqual(r["p99_ms"], r["p50_ms"])
        self.assertGreater(r["p50_ms"], 0)

    def test_the_ready_line_counts_opened_and_failed(self):
        text = (SAMPLES / "liveload_kiln_table.txt").read_text()
        self.assertEqual(live.parse_ready(text.splitlines()[1] + "\n"), (200, 0))

    def test_no_report_is_a_parse_error(self):
        with self.assertRaises(ParseError):
            live.parse_liveload("ready 10 0\nliveload: RLIMIT_NOFILE 1024 is below 10064\n")

    def test_a_usage_error_is_not_ready(self):
        with self.assertRaises(ParseError):
            live.parse_ready("usage: liveload [-m ws|sse] ...\n")


class RecipeTest(unittest.TestCase):
    def test_kilns_token_and_cookie_make_the_upgrade(self):
        html = '<div data-kiln-live data-kiln-token="1764300000.ab12.cd34.ef56.0a1b">'
        token, cookie = live.page_token(html, ["kiln_csrf=abc.def; Path=/; HttpOnly; SameSite=Lax"])
        self.assertEqual((token, cookie), ("1764300000.ab12.cd34.ef56.0a1b", "kiln_csrf=abc.def"))
        request = live.upgrade(8080, "/bench/live/table", f"Sec-WebSocket-Protocol: kiln-live, {token}\r\n")
        self.assertTrue(request.startswith(b"GET /bench/live/table HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"))
        self.assertIn(b"\r\nSec-WebSocket-Protocol: kiln-live, 1764300000.ab12.cd34.ef56.0a1b\r\n", request)
        self.assertTrue(request.endswith(b"\r\n\r\n"))

    def test_a_page_without_a_token_is_refused(self):
        with self.assertRaises(ValueError):
            live.page_token("<p>no view here</p>", [])

    def test_triggers_are_the_contracts_paths(self):
        kiln, floor = live.entries()[:2]
        self.assertEqual(kiln.trigger("table"), "/bench/live/table/change")
        self.assertEqual(floor.trigger("chat"), "/bench/live/floor/chat/say")


def row(server, page, cpu, sent, idle=None):
    return {"server": server, "page": page, "status": "ok", "views": 10, "delivered": 100, "missing": 0,
            "cpu_us_per_delivery": cpu, "bytes_per_delivery": sent, "p50_ms": 1.0, "p99_ms": 2.0,
            "rss_before_kb": 1024, "rss_idle_kb": 2048, "idle_kib_per_view": idle, "mount_bytes_per_view": 3353}  # fmt: skip


class SummaryTest(unittest.TestCase):
    def rows(self):
        rows = []
        for page in live.PAGES:
            idle = page == "counter"
            rows += [row("kiln", page, 2.4, 29.0, 3.0 if idle else None), row("floor", page, 2.0, 29.0, 2.5 if idle else None),
                     row("dioxus-liveview", page, 9.0, 400.0, 30.0 if idle else None),
                     row("datastar", page, 6.0, 900.0, 12.0 if idle else None)]  # fmt: skip
        return rows

    def test_each_target_is_held_to_the_better_peer_and_the_floor(self):
        summary = live.summarise(self.rows(), 20)
        self.assertIn("| idle view ≤ 4 KiB | 4.00 KiB | 3.00 KiB | **met** |", summary)
        self.assertIn("| idle view ≤ ⅓ of the better peer's | 4.00 KiB (datastar 12.00 ÷ 3) | 3.00 KiB | **met** |", summary)
        self.assertIn("| table: CPU per update ≤ 1.3 × floor | 2.60 µs (floor 2.00) | 2.40 µs | **met** |", summary)
        self.assertIn("| chat: CPU per update < the better peer's | datastar 6.00 µs | 2.40 µs | **met** |", summary)
        self.assertIn("| table: bytes per update ≥ 5× fewer than the better peer's | 80.0 B (dioxus-liveview 400.0 ÷ 5)", summary)
        self.assertIn("| table | kiln | 10 | 100 | 0 | 2.40 | 1.20x | 29.0 | 1.00 | 2.00 | 3,353 |", summary)

    def test_a_peer_below_the_floor_is_said_to_be(self):
        rows = [{**r, "cpu_us_per_delivery": 1.5} if r["server"] == "datastar" else r for r in self.rows()]
        summary = live.summarise(rows, 20)
        self.assertIn("| table: CPU per update < the better peer's | datastar 1.50 µs | 2.40 µs | **not met**: the peer "
                      "is at or below the floor (2.00 µs), which no live view goes under |", summary)

    def test_a_missing_peer_is_not_measured_rather_than_met(self):
        rows = [r for r in self.rows() if r["server"] in ("kiln", "floor")]
        summary = live.summarise(rows, 20)
        self.assertIn("| counter: CPU per update < the better peer's | no peer measured µs | 2.40 µs | not measured |", summary)

    def test_the_tables_dynamic_parts_follow_the_changed_rows(self):
        # Rows 1..3, each changed once: the id twice, scores 2-4, teams 1-3: 4 bytes each.
        self.assertEqual(live.row_dynamic_bytes(3), 4.0)
        # Row 9's score becomes "10"; row 10 is "10" twice, score "11", team "3".
        self.assertEqual(live.row_dynamic_bytes(10), (8 * 4 + 5 + 7) / 10)


if __name__ == "__main__":
    unittest.main()
