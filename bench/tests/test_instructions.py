"""The instruction-count A/B's parsing: callgrind's totals and the responses it counts."""

import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kilnbench.instructions import Side, callgrind_total, comparisons, parser, response_length, verdict  # noqa: E402

DUMP = """# callgrind format
version: 1
creator: callgrind-3.19.0
pid: 8725
events: Ir
summary: 211867083

ob=(1) /usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2
fn=(0) 0x000000000001ab70
0 12
totals: 211867083
"""


class CallgrindTest(unittest.TestCase):
    def test_the_summary_line_is_the_count(self):
        self.assertEqual(callgrind_total(DUMP), 211_867_083)

    def test_totals_serves_when_there_is_no_summary(self):
        self.assertEqual(callgrind_total("events: Ir\ntotals: 42\n"), 42)

    def test_a_dump_without_either_is_an_error(self):
        with self.assertRaises(ValueError):
            callgrind_total("events: Ir\n")


class ResponseTest(unittest.TestCase):
    HEAD = b"HTTP/1.1 200 OK\r\nServer: kiln\r\nContent-Length: 5\r\n\r\n"

    def test_a_whole_response_is_its_head_and_body(self):
        self.assertEqual(response_length(self.HEAD + b"hello" + b"HTTP/1.1"), len(self.HEAD) + 5)

    def test_a_partial_one_is_not_yet(self):
        self.assertIsNone(response_length(self.HEAD + b"hel"))
        self.assertIsNone(response_length(b"HTTP/1.1 200 OK\r\nContent-"))

    def test_the_header_name_is_case_insensitive_and_no_length_is_an_empty_body(self):
        self.assertEqual(response_length(b"HTTP/1.1 204 No\r\ncontent-length:0\r\n\r\n"), 37)
        self.assertEqual(response_length(b"HTTP/1.1 304 No\r\n\r\nnext"), 19)

    def test_a_chunked_body_ends_at_its_last_chunk(self):
        head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        body = b"5\r\nhello\r\n3;x=y\r\nabc\r\n0\r\n\r\n"
        self.assertEqual(response_length(head + body + b"HTTP/1.1"), len(head) + len(body))
        for cut in range(len(body)):
            self.assertIsNone(response_length(head + body[:cut]), cut)


class VerdictTest(unittest.TestCase):
    def test_more_than_three_percent_more_is_a_regression(self):
        self.assertEqual(verdict(1000.0, 1031.0), "new ÷ old 1.031: REGRESSION (> 1.03)")
        self.assertEqual(verdict(1000.0, 1030.0), "new ÷ old 1.030: ok")
        self.assertEqual(verdict(1000.0, 900.0), "new ÷ old 0.900: ok")

    def test_a_pair_names_its_paths_and_takes_its_threshold(self):
        line = verdict(1000.0, 1051.0, 0.05, ("/bench/first/live", "/bench/first/html"))
        self.assertEqual(line, "/bench/first/live ÷ /bench/first/html 1.051: REGRESSION (> 1.05)")
        self.assertEqual(verdict(1000.0, 1050.0, 0.05), "new ÷ old 1.050: ok")


def plan(*argv: str) -> list[tuple[Side, Side]]:
    return comparisons(parser().parse_args(list(argv)))


class ComparisonsTest(unittest.TestCase):
    def test_two_binaries_compare_each_path_the_new_env_on_the_new_one(self):
        self.assertEqual(
            plan("old", "new", "--path", "/a", "--path", "/b", "--new-env", "KILN_METRICS=1"),
            [
                (Side(Path("old"), "/a"), Side(Path("new"), "/a", (("KILN_METRICS", "1"),))),
                (Side(Path("old"), "/b"), Side(Path("new"), "/b", (("KILN_METRICS", "1"),))),
            ],
        )
        self.assertEqual(plan("old", "new"), [(Side(Path("old"), "/pages/tour"), Side(Path("new"), "/pages/tour"))])

    def test_a_pair_compares_two_paths_of_one_binary(self):
        self.assertEqual(
            plan("kiln-demo", "--pair", "/bench/first/html", "/bench/first/live", "--threshold", "0.05"),
            [(Side(Path("kiln-demo"), "/bench/first/html"), Side(Path("kiln-demo"), "/bench/first/live"))],
        )
        self.assertEqual(parser().parse_args(["b", "--pair", "/x", "/y", "--threshold", "0.05"]).threshold, 0.05)

    def test_a_pair_wants_one_binary_and_no_path_and_two_binaries_no_pair(self):
        for argv in (["a", "b", "--pair", "/x", "/y"], ["a", "--pair", "/x", "/y", "--path", "/z"], ["a"], ["a", "b", "c"]):
            with self.assertRaises(ValueError, msg=argv):
                plan(*argv)


if __name__ == "__main__":
    unittest.main()
