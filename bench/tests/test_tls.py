"""The HTTPS run (kilnbench.tls): the tls-handshakes report parser and the summary's ratios."""

import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kilnbench.parse import ParseError  # noqa: E402
from kilnbench.tls import parse_handshakes, summarise  # noqa: E402


class HandshakesParserTest(unittest.TestCase):
    def test_the_last_json_line_is_the_report(self):
        text = "warming up\n{\"connections\": 5120, \"errors\": 2, \"resumed\": 5100, \"seconds\": 2.004}\n"
        self.assertEqual(parse_handshakes(text), {"connections": 5120, "errors": 2, "resumed": 5100, "seconds": 2.004})

    def test_no_report_is_a_parse_error(self):
        for text in ("", "usage: tls-handshakes PORT ...", "{\"connections\": 1}", "{not json"):
            with self.assertRaises(ParseError, msg=text):
                parse_handshakes(text)


class SummaryTest(unittest.TestCase):
    def test_kiln_ratios_are_to_nginx_medians(self):
        def row(server, rep, rate, cpu):
            return {"server": server, "workload": "handshake-full", "rep": rep, "status": "ok", "rate": rate,
                    "cpu_us_per_op": cpu, "errors": 0, "resumed_pct": 0}  # fmt: skip

        rows = [row("kiln", 0, 900, 100), row("kiln", 1, 1000, 110), row("kiln", 2, 1100, 90),
                row("nginx-tls", 0, 1000, 200), row("nginx-tls", 1, 1000, 200),
                {"server": "actix-tls", "workload": "handshake-full", "rep": 0, "status": "no HTTPS answer"}]  # fmt: skip
        table = summarise(rows)
        kiln_line = next(line for line in table.splitlines() if "| kiln |" in line)
        self.assertIn("| 2.00x | 1.00x |", kiln_line)
        self.assertNotIn("actix-tls", table)


if __name__ == "__main__":
    unittest.main()
