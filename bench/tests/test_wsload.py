"""wsload's report line, and the WebSocket workloads' declarations."""

import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kilnbench.parse import ParseError, parse_wsload  # noqa: E402
from kilnbench.workloads import BY_NAME, GROUPS  # noqa: E402


class WsloadTest(unittest.TestCase):
    def test_report_line(self):
        r = parse_wsload("connections=100 size=20 seconds=1.00 messages=14314 rate=14294 errors=0\n")
        self.assertEqual((r.requests, r.duration_s, r.rps, r.errors), (14314, 1.0, 14294.0, 0))

    def test_errors_count(self):
        r = parse_wsload("connections=100 size=16384 seconds=3.54 messages=50000 rate=14106 errors=3\n")
        self.assertEqual(r.socket_errors, 3)

    def test_no_report_is_an_error(self):
        with self.assertRaises(ParseError):
            parse_wsload("wsload: not upgraded\n")

    def test_ws_workloads_are_named_not_default(self):
        for name in ("ws-echo-20", "ws-echo-16k", "ws-echo-16k-deflate", "ws-idle-10k", "sse-idle-10k"):
            self.assertIn(name, GROUPS["ws"])
            self.assertFalse(BY_NAME[name].default, name)
            self.assertFalse(BY_NAME[name].probe, name)
        self.assertEqual(BY_NAME["ws-echo-16k"].size, 16 * 1024)


if __name__ == "__main__":
    unittest.main()
