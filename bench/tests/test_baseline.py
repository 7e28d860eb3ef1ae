"""The A/B of two kilns: kiln's CPU per request against kiln-base's, paired per repetition."""

import os
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kilnbench import baseline  # noqa: E402
from kilnbench.registry import BY_NAME  # noqa: E402
from kilnbench.runner import ROW_FIELDS  # noqa: E402
from kilnbench.servers import Options, Paths  # noqa: E402


def row(server, workload, rep, requests, cpu_s, status="ok"):
    values = {f: "" for f in ROW_FIELDS} | {"server": server, "workload": workload, "rep": str(rep), "status": status}
    return values | {"rps": "1000", "requests": str(requests), "cpu_s": str(cpu_s), "errors": "0"}


def pairs(workload, kiln_us, base_us):
    """Rows of reps where kiln took `kiln_us[i]` and kiln-base `base_us[i]` µs per request."""
    rows = []
    for rep, (k, b) in enumerate(zip(kiln_us, base_us), start=1):
        rows += [row("kiln", workload, rep, 10_000, k / 100), row("kiln-base", workload, rep, 10_000, b / 100)]
    return rows


class CompareTest(unittest.TestCase):
    def test_a_page_dearer_by_more_than_three_percent_is_a_regression(self):
        # Ratios 1.05, 1.04, 0.99: the median, 1.04, is past 1.03.
        found = baseline.compare(pairs("wiki", [105, 104, 99], [100, 100, 100]))
        self.assertEqual(len(found), 1)
        workload, ratio, n, worse = found[0]
        self.assertEqual((workload, n, worse), ("wiki", 3, True))
        self.assertAlmostEqual(ratio, 1.04, places=3)

    def test_within_three_percent_or_faster_is_not(self):
        rows = pairs("wiki", [102, 103, 101], [100, 100, 100]) + pairs("pong", [6.0, 6.1, 5.9], [7.0, 7.0, 7.0])
        found = {w: (round(r, 3), worse) for w, r, _, worse in baseline.compare(rows)}
        self.assertEqual(found["wiki"], (1.02, False))
        self.assertFalse(found["pong"][1])
        self.assertLess(found["pong"][0], 1)

    def test_a_workload_without_both_kilns_or_failed_runs_is_left_out(self):
        rows = pairs("wiki", [100], [100])[:1] + [row("kiln-base", "pong", 1, 10_000, 1.0, status="load failed")]
        self.assertEqual(baseline.compare(rows), [])

    def test_the_table_and_the_lines_printed_name_the_regression(self):
        with tempfile.TemporaryDirectory() as out:
            lines = baseline.write(Path(out), pairs("wiki", [110, 110], [100, 100]), "HEAD~1")
            text = (Path(out) / "baseline.md").read_text()
        self.assertEqual(lines, ["kiln takes 10.0% more CPU per request than kiln-base (HEAD~1) on wiki (2 pairs)"])
        self.assertIn("| wiki | 1.100 | 2 | **regression** (> 1.03) |", text)


class ServerTest(unittest.TestCase):
    def test_it_is_registered_but_not_among_the_defaults(self):
        from kilnbench.servers import SERVERS as MODERN

        self.assertIn("kiln-base", BY_NAME)
        self.assertNotIn("kiln-base", [s.name for s in MODERN])

    def test_a_binary_is_copied_and_a_revision_built_in_a_worktree(self):
        paths = Paths(Path("/repo"))
        with tempfile.NamedTemporaryFile() as binary, mock.patch.object(Path, "mkdir"):
            with mock.patch.dict(os.environ, {baseline.ENV: binary.name}):
                steps = baseline.build(paths)
            self.assertEqual([s.argv[0] for s in steps], ["cp"])
            with mock.patch.dict(os.environ, {baseline.ENV: "abc123"}):
                steps = baseline.build(paths)
        self.assertEqual(steps[0].argv[-3:], ["checkout", "abc123", "/repo/bench/.build/kiln-base/src"])
        self.assertEqual(steps[1].argv, ["cargo", "build", "--release", "-p", "kiln-demo"])
        self.assertEqual(steps[1].env, {"CARGO_TARGET_DIR": "/repo/bench/.build/kiln-base/target"})

    def test_it_runs_on_a_database_file_of_its_own_unless_postgres(self):
        paths = Paths(Path("/repo"))
        launch = baseline.launch(paths, 8080, Options("sqlite:///tmp/kiln.sqlite"))
        self.assertIn("sqlite:///repo/bench/.build/kiln-base/kiln-base.sqlite", launch.argv)
        self.assertIn(Path("/repo/bench/.build/kiln-base/kiln-base.sqlite"), launch.cleanup)
        launch = baseline.launch(paths, 8080, Options("postgres://u@localhost/db"))
        self.assertIn("postgres://u@localhost/db", launch.argv)


if __name__ == "__main__":
    unittest.main()
