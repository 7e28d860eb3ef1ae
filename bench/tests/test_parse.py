"""The wrk, ab and httperf parsers, on output recorded from real runs (tests/samples/)."""

import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kilnbench.parse import ParseError, parse_ab, parse_httperf, parse_wrk  # noqa: E402

SAMPLES = Path(__file__).parent / "samples"


def sample(name: str) -> str:
    return (SAMPLES / name).read_text()


class WrkTest(unittest.TestCase):
    def test_keep_alive_run(self):
        r = parse_wrk(sample("wrk_floor_pong.txt"))
        self.assertEqual(r.requests, 180631)
        self.assertAlmostEqual(r.duration_s, 2.01)
        self.assertAlmostEqual(r.rps, 90014.49)
        self.assertAlmostEqual(r.lat_mean_ms, 0.90)
        self.assertAlmostEqual(r.lat_p50_ms, 0.710)
        self.assertAlmostEqual(r.lat_p99_ms, 4.83)
        self.assertAlmostEqual(r.lat_max_ms, 8.60)
        self.assertEqual((r.non2xx, r.socket_errors, r.timeouts), (0, 0, 0))

    def test_non_2xx_responses_are_errors(self):
        r = parse_wrk(sample("wrk_kiln_404.txt"))
        self.assertEqual(r.requests, 68683)
        self.assertEqual(r.non2xx, 68683)
        self.assertEqual(r.errors, 68683)

    def test_pipelined_run_drops_wrk_zero_p99(self):
        r = parse_wrk(sample("wrk_kiln_pipeline.txt"))
        self.assertEqual(r.requests, 1429376)
        self.assertAlmostEqual(r.rps, 710691.07)
        self.assertAlmostEqual(r.lat_p50_ms, 1.03)
        self.assertIsNone(r.lat_p99_ms)

    def test_socket_errors(self):
        r = parse_wrk(sample("wrk_silent_timeouts.txt"))
        self.assertEqual(r.requests, 0)
        self.assertEqual(r.rps, 0.0)
        self.assertEqual(r.socket_errors, 5)
        self.assertEqual(r.timeouts, 0)
        self.assertIsNone(r.lat_p50_ms)

    def test_floor_cannot_pipeline(self):
        r = parse_wrk(sample("wrk_floor_pipeline_timeouts.txt"))
        self.assertEqual(r.requests, 20)
        self.assertAlmostEqual(r.rps, 9.97)

    def test_refused_connection_is_a_parse_error(self):
        with self.assertRaisesRegex(ParseError, "Connection refused"):
            parse_wrk(sample("wrk_refused.txt"))


class AbTest(unittest.TestCase):
    def test_keep_alive_run(self):
        r = parse_ab(sample("ab_floor_hello.txt"))
        self.assertEqual(r.requests, 20000)
        self.assertAlmostEqual(r.duration_s, 0.292)
        self.assertAlmostEqual(r.rps, 68428.47)
        self.assertAlmostEqual(r.lat_mean_ms, 1.461)
        self.assertEqual((r.lat_p50_ms, r.lat_p99_ms, r.lat_max_ms), (1.0, 5.0, 8.0))
        self.assertEqual(r.errors, 0)

    def test_non_2xx_responses(self):
        r = parse_ab(sample("ab_kiln_404.txt"))
        self.assertEqual(r.requests, 2000)
        self.assertEqual(r.non2xx, 2000)
        self.assertEqual(r.socket_errors, 0)

    def test_failed_requests_count_receive_and_exceptions(self):
        r = parse_ab(sample("ab_refused.txt"))
        self.assertEqual(r.requests, 200)
        self.assertEqual(r.socket_errors, 300)

    def test_garbage_is_a_parse_error(self):
        with self.assertRaises(ParseError):
            parse_ab("ab: invalid URL\n")


class HttperfTest(unittest.TestCase):
    def test_fixed_rate_run(self):
        r = parse_httperf(sample("httperf_floor_pong.txt"))
        self.assertEqual(r.requests, 10000)
        self.assertAlmostEqual(r.duration_s, 1.999)
        self.assertAlmostEqual(r.rps, 10000 / 1.999)
        self.assertAlmostEqual(r.lat_max_ms, 9.6)
        self.assertIsNone(r.lat_p50_ms)
        self.assertEqual(r.errors, 0)

    def test_refused_connections(self):
        r = parse_httperf(sample("httperf_refused.txt"))
        self.assertEqual(r.requests, 0)
        self.assertEqual(r.socket_errors, 200)
        self.assertEqual(r.timeouts, 0)
        self.assertIsNone(r.lat_max_ms)

    def test_garbage_is_a_parse_error(self):
        with self.assertRaises(ParseError):
            parse_httperf("httperf: connection refused\n")


if __name__ == "__main__":
    unittest.main()
