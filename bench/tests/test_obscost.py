"""kilnbench.obscost's verdict: paired ratios per repetition, their median against 3 %."""

import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kilnbench.obscost import paired_ratios, summarise  # noqa: E402


def row(config, rep, cpu, status="ok"):
    return {"config": config, "rep": rep, "status": status, "requests": 1000, "rps": 1000.0, "errors": 0,
            "cpu_user_s": cpu * 1e-4, "cpu_system_s": cpu * 9e-4, "cpu_us_per_req": cpu}  # fmt: skip


class PairedRatiosTest(unittest.TestCase):
    def test_each_repetition_is_divided_by_its_own_off_run(self):
        # The machine drifts: repetition 1 runs everything 50 % slower. Paired, both
        # repetitions say 2 %; a ratio of the medians would not see the pairing.
        rows = [row("off", 0, 10.0), row("metrics", 0, 10.2), row("off", 1, 15.0), row("metrics", 1, 15.3)]
        self.assertEqual([round(r, 6) for r in paired_ratios(rows, "metrics")], [1.02, 1.02])

    def test_a_repetition_whose_off_run_failed_is_left_out(self):
        rows = [row("off", 0, 10.0, status="load failed"), row("metrics", 0, 10.2), row("off", 1, 10.0),
                row("metrics", 1, 10.5)]  # fmt: skip
        self.assertEqual([round(r, 6) for r in paired_ratios(rows, "metrics")], [1.05])

    def test_the_verdict_is_the_median_against_three_percent(self):
        rows = [row("off", rep, 10.0) for rep in range(3)]
        rows += [row("metrics", 0, 10.1), row("metrics", 1, 10.2), row("metrics", 2, 11.0)]
        rows += [row("metrics+spans", 0, 10.4), row("metrics+spans", 1, 10.5), row("metrics+spans", 2, 9.9)]
        summary = summarise(rows)
        self.assertIn("| metrics | 3 | 1.020 | 1.010 | 1.100 | within 3% |", summary)
        self.assertIn("| metrics+spans | 3 | 1.040 | 0.990 | 1.050 | over 3% |", summary)


if __name__ == "__main__":
    unittest.main()
