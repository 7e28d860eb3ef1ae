"""The h2load parser and the HTTP/2 workloads, on output recorded from real runs (tests/samples/)."""

import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kilnbench.parse import ParseError, parse_h2load  # noqa: E402
from kilnbench.workloads import BY_NAME, GROUPS  # noqa: E402

SAMPLES = Path(__file__).parent / "samples"


def sample(name: str) -> str:
    return (SAMPLES / name).read_text()


class H2loadTest(unittest.TestCase):
    def test_timed_run(self):
        r = parse_h2load(sample("h2load_kiln_pong.txt"))
        self.assertEqual(r.requests, 55114)
        self.assertAlmostEqual(r.duration_s, 2.01)
        self.assertAlmostEqual(r.rps, 27557.00)
        self.assertAlmostEqual(r.lat_mean_ms, 3.54)
        self.assertAlmostEqual(r.lat_max_ms, 137.03)
        self.assertIsNone(r.lat_p99_ms)
        self.assertEqual((r.non2xx, r.socket_errors, r.timeouts, r.failed), (0, 0, 0, 0))

    def test_non_2xx_responses_are_errors(self):
        r = parse_h2load(sample("h2load_kiln_404.txt"))
        self.assertEqual(r.non2xx, r.requests)
        self.assertGreater(r.errors, 0)

    def test_more_2xx_than_done_at_the_cutoff_is_no_negative_error_count(self):
        # nginx, -D 1: h2load counted two cut-off streams' 200s but not the streams as done.
        r = parse_h2load(sample("h2load_cutoff_more_2xx_than_done.txt"))
        self.assertEqual(r.requests, 12619)
        self.assertEqual((r.non2xx, r.errors), (0, 0))

    def test_a_server_that_refuses_or_lacks_h2c_is_a_parse_error(self):
        with self.assertRaisesRegex(ParseError, "HTTP/2"):
            parse_h2load(sample("h2load_refused.txt"))

    def test_garbage_is_a_parse_error(self):
        with self.assertRaises(ParseError):
            parse_h2load("h2load: command not found\n")


class H2WorkloadsTest(unittest.TestCase):
    def test_the_h2_group_names_pong_and_the_file_at_10_and_100_streams(self):
        self.assertEqual(GROUPS["h2"], ["pong-h2c-m10", "pong-h2c-m100", "static-h2c-m10", "static-h2c-m100"])
        for name in GROUPS["h2"]:
            w = BY_NAME[name]
            self.assertEqual((w.tool, w.conns, w.default, w.quick), ("h2load", 100, False, False))
            self.assertIn(w.streams, (10, 100))


if __name__ == "__main__":
    unittest.main()
