"""The summary arithmetic: medians over reps, ratios to kiln, the floor first."""

import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kilnbench.report import cells, mix_tables, write_summary  # noqa: E402
from kilnbench.runner import ROW_FIELDS  # noqa: E402


def row(server, workload, rep, rps, p99=1.0, errors=0, status="ok", note=""):
    values = {f: "" for f in ROW_FIELDS}
    values |= {"server": server, "workload": workload, "rep": str(rep), "status": status, "note": note}
    if status == "ok":
        values |= {"rps": str(rps), "lat_p50_ms": "0.5", "lat_p99_ms": str(p99), "errors": str(errors)}
        values |= {"rss_idle_kb": "2048", "rss_peak_kb": str(2048 + rep)}
    return values


ROWS = [
    row("kiln", "pong", 1, 100.0),
    row("kiln", "pong", 2, 300.0),
    row("kiln", "pong", 3, 200.0, errors=2),
    row("floor", "pong", 1, 400.0),
    row("actix", "pong", 1, 50.0, p99=3.0),
    row("actix", "pong", 2, 150.0, p99=5.0),
    row("go", "(build)", 0, None, status="build failed", note="go: not found"),
]


class CellsTest(unittest.TestCase):
    def test_medians_over_reps(self):
        kiln = cells(ROWS)["pong"]["kiln"]
        self.assertEqual(kiln.reps, 3)
        self.assertEqual(kiln.rps, 200.0)
        self.assertEqual((kiln.rps_min, kiln.rps_max), (100.0, 300.0))
        self.assertEqual(kiln.errors, 2)
        self.assertEqual(kiln.rss_peak_kb, 2051)
        self.assertEqual(cells(ROWS)["pong"]["actix"].p99, 4.0)

    def test_failed_rows_are_not_measurements(self):
        self.assertNotIn("(build)", cells(ROWS))


class SummaryTest(unittest.TestCase):
    def test_ratios_floor_first_and_failures_listed(self):
        with tempfile.TemporaryDirectory() as out:
            write_summary(Path(out), ROWS, "t", "")
            text = (Path(out) / "summary.md").read_text()
        pong = text.split("## pong")[1].split("##")[0]
        lines = [line for line in pong.splitlines() if line.startswith("| ") and "req/s" not in line]
        self.assertTrue(lines[0].startswith("| _floor (reference)_ | 400 | 2.00 | 100% |"))
        self.assertTrue(lines[1].startswith("| **kiln** | 200 | 1.00 | 50% |"))
        self.assertTrue(lines[2].startswith("| actix | 100 | 0.50 | 25% |"))
        self.assertIn("| go | (build) | build failed | go: not found |", text)


    def test_regression_the_memory_table_left_kib_per_conn_empty_for_ws_and_sse_idle(self):
        # Session 11's idle run printed "–" for both: only `idle-10k` was looked at.
        rows = []
        for workload, before, held in (("ws-idle-10k", 7668, 24556), ("sse-idle-10k", 10188, 32032)):
            r = row("kiln", workload, 1, None)
            r |= {"rps": "", "requests": "10000", "rss_idle_kb": str(before), "rss_peak_kb": str(held)}
            rows.append(r)
        with tempfile.TemporaryDirectory() as out:
            write_summary(Path(out), rows, "t", "")
            text = (Path(out) / "summary.md").read_text()
        memory = text.split("## Memory")[1]
        self.assertIn("| ws-idle-10k | 7.5 | 24.0 | 10,000 | 1.69 |", memory)
        self.assertIn("| sse-idle-10k | 9.9 | 31.3 | 10,000 | 2.18 |", memory)
        self.assertNotIn("## Overview", text)


MIX_ROWS = [
    row("kiln", "mix-blocking-e5-c10", 1, 100.0),
    row("kiln", "mix-async-e5-c10", 1, 400.0, errors=3),
    row("kiln", "mix-blocking-c10", 1, 200.0),
    row("kiln", "mix-async-c10", 1, 500.0),
    row("kiln", "mix-async-c1000", 1, 900.0),
    row("kiln", "pong", 1, 1000.0),
]


class MixTableTest(unittest.TestCase):
    def test_a_row_per_every_columns_per_concurrency_and_mode(self):
        lines = mix_tables(cells(MIX_ROWS))
        self.assertEqual(lines[0], "### kiln: req/s (median), a long query every N requests")
        header = lines[2]
        self.assertTrue(header.startswith("| every N | c=10 blocking | c=10 async | c=1000 blocking | c=1000 async |"))
        self.assertIn("c=10 async ÷ blocking | c=1000 async ÷ blocking | errors (blocking / async) |", header)
        self.assertEqual(lines[4], "| 5 | 100 | 400 |  |  | 4.00 | – | 0 / 3 |")
        self.assertEqual(lines[5], "| 10 | 200 | 500 |  | 900 | 2.50 | – | 0 / 0 |")

    def test_the_summary_shows_it_instead_of_mix_columns_in_the_overview(self):
        with tempfile.TemporaryDirectory() as out:
            write_summary(Path(out), MIX_ROWS, "t", "")
            text = (Path(out) / "summary.md").read_text()
        overview = text.split("## Overview")[1].split("## Mix")[0]
        self.assertIn("| server | pong |", overview)
        self.assertNotIn("mix-", overview)
        self.assertIn("| 5 | 100 | 400 |", text)

    def test_no_mix_no_table(self):
        self.assertEqual(mix_tables(cells(ROWS)), [])


if __name__ == "__main__":
    unittest.main()
