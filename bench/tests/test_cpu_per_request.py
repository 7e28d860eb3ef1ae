"""Server CPU per request in the summary: the verdict when one wrk thread caps req/s."""

import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kilnbench.report import _workload_table, cells  # noqa: E402
from kilnbench.runner import ROW_FIELDS  # noqa: E402


def row(server, rep, requests, cpu_s, status="ok"):
    values = {f: "" for f in ROW_FIELDS} | {"server": server, "workload": "wiki", "rep": str(rep), "status": status}
    return values | {"rps": "1000", "requests": str(requests), "cpu_s": str(cpu_s), "errors": "0"}


class CpuPerRequestTest(unittest.TestCase):
    def test_it_is_the_median_of_each_reps_cpu_over_its_requests(self):
        rows = [row("kiln", 1, 10_000, 1.0), row("kiln", 2, 20_000, 1.0), row("kiln", 3, 10_000, 0.8)]
        # 100, 50 and 80 µs: the median of the ratios, not the ratio of the medians (62.5).
        self.assertAlmostEqual(cells(rows)["wiki"]["kiln"].cpu_us_per_req, 80.0)

    def test_no_requests_or_no_cpu_reading_is_not_zero(self):
        rows = [row("kiln", 1, 0, 1.0), row("axum", 1, 10_000, "")]
        table = cells(rows)["wiki"]
        self.assertIsNone(table["kiln"].cpu_us_per_req)
        self.assertIsNone(table["axum"].cpu_us_per_req)

    def test_the_table_shows_it_beside_its_ratio_to_kiln(self):
        rows = [row("kiln", 1, 10_000, 0.9), row("axum-wiki", 1, 10_000, 0.85)]
        lines = _workload_table("wiki", cells(rows)["wiki"])
        self.assertTrue(lines[0].endswith("| CPU µs/req | CPU/req vs kiln |"))
        by_server = {line.split(" | ")[0].strip("| *"): line for line in lines[2:]}
        self.assertTrue(by_server["kiln"].endswith("| 90.0 | 1.00 |"))
        self.assertTrue(by_server["axum-wiki"].endswith("| 85.0 | 0.94 |"))


class PairedRatioTest(unittest.TestCase):
    def test_ratios_are_taken_within_each_repetition_then_their_median(self):
        from kilnbench.report import paired_ratios

        # The machine runs at a different speed in each repetition; within each the
        # variant costs 1.02, 1.03 and 1.01 times kiln: the median of those is 1.02.
        rows = [
            row("kiln", 1, 10_000, 0.5), row("kiln+log", 1, 10_000, 0.51),
            row("kiln", 2, 10_000, 0.8), row("kiln+log", 2, 10_000, 0.824),
            row("kiln", 3, 10_000, 0.9), row("kiln+log", 3, 10_000, 0.909),
        ]
        rps, cpu, pairs = paired_ratios(rows, "wiki")["kiln+log"]
        self.assertEqual(pairs, 3)
        self.assertAlmostEqual(cpu, 1.02)
        self.assertAlmostEqual(rps, 1.0)

    def test_a_repetition_without_kiln_gives_no_pair(self):
        from kilnbench.report import paired_ratios

        rows = [row("kiln", 1, 10_000, 0.5), row("axum", 1, 10_000, 0.6), row("axum", 2, 10_000, 0.6)]
        self.assertEqual(paired_ratios(rows, "wiki")["axum"][2], 1)
