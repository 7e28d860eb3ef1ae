"""The reports' tables: their data files, the tools' counts they quote, the layout beside what
was measured here, the registry that tolerates a peers module still being written, and
--check-peers's choice of what to probe."""

import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kilnbench import load, registry, reportdata, reporttable  # noqa: E402
from kilnbench.parse import parse_ab, parse_httperf  # noqa: E402
from kilnbench import peercheck  # noqa: E402
from kilnbench.peercheck import claimed, report_claims  # noqa: E402
from kilnbench.runner import ROW_FIELDS, runs  # noqa: E402
from kilnbench.servers import Server  # noqa: E402
from kilnbench.workloads import BY_NAME as WORKLOADS  # noqa: E402
from kilnbench.workloads import GROUPS  # noqa: E402

SAMPLES = Path(__file__).parent / "samples"


def sample(name: str) -> str:
    return (SAMPLES / name).read_text()


class ToolCountsTest(unittest.TestCase):
    def test_ab_failed_requests_count_length_failures_that_errors_leave_out(self):
        r = parse_ab(sample("ab_kiln_db_length_failures.txt"))
        self.assertEqual(r.requests, 2000)
        self.assertEqual(r.failed, 1678)
        self.assertEqual(r.errors, 0)

    def test_ab_failed_requests_of_a_refused_server(self):
        self.assertEqual(parse_ab(sample("ab_refused.txt")).failed, 300)

    def test_httperf_interrupted_burst_run_reports_what_it_did(self):
        r = parse_httperf(sample("httperf_kiln_burst_interrupted.txt"))
        self.assertEqual(r.requests, 184494)
        self.assertAlmostEqual(r.duration_s, 2.017)
        self.assertEqual(r.failed, 0)
        self.assertIsNone(r.reply_rate_avg)  # shorter than httperf's 5-second sample

    def test_httperf_average_reply_rate_once_it_has_a_sample(self):
        r = parse_httperf(sample("httperf_kiln_pong_6s.txt"))
        self.assertAlmostEqual(r.reply_rate_avg, 9993.5)
        self.assertEqual(r.requests, 60000)

    def test_httperf_errors_total_is_its_failure_count(self):
        self.assertEqual(parse_httperf(sample("httperf_refused.txt")).failed, 200)


class AbCommandTest(unittest.TestCase):
    def test_the_time_cap_comes_before_n_which_it_would_reset(self):
        with mock.patch.object(load, "_run") as run:
            load.ab(8080, "/hello", 100, 100_000, time_limit_s=4)
        argv = run.call_args.args[0]
        self.assertLess(argv.index("-t"), argv.index("-n"))
        self.assertEqual(argv[argv.index("-n") + 1], "100000")
        self.assertLessEqual(run.call_args.args[1], 4 + load.GRACE_S)

    def test_no_cap_no_t(self):
        with mock.patch.object(load, "_run") as run:
            load.ab(8080, "/hello", 100, 1000)
        self.assertNotIn("-t", run.call_args.args[0])


class ReportDataTest(unittest.TestCase):
    def test_every_report_loads_and_every_row_names_a_source_and_a_known_workload(self):
        reports = reportdata.load_all()
        self.assertEqual([r.id for r in reports], list(reportdata.REPORT_IDS))
        for rep in reports:
            for t in rep.tables:
                self.assertTrue(t.rows, f"{rep.id}/{t.key} has no rows")
                for row in t.rows:
                    self.assertTrue(row.source.startswith("http"), f"{rep.id} {row.system}: no source")
                    self.assertIn(row.workload, WORKLOADS, f"{rep.id} {row.system}")
                    self.assertTrue(row.unit)
                    self.assertTrue(row.figure is not None or row.figure_text, f"{rep.id} {row.system}")
                    self.assertTrue(row.peers or row.why, f"{rep.id} {row.system}: neither a peer nor why not")

    def test_a_missing_figure_is_words_not_a_number(self):
        rows = [r for t in reportdata.load("002").tables for r in t.rows]
        cgi_c = next(r for r in rows if r.system == "raw CGI: C")
        self.assertIsNone(cgi_c.figure)
        self.assertEqual(cgi_c.figure_text, reportdata.NOT_FOUND)
        static = next(r for r in rows if r.workload == "static-ab")
        self.assertEqual((static.figure, static.figure_text), (2100.0, "2100+"))

    def test_the_mix_table_expands_to_a_cell_per_concurrency_on_the_mix_workloads(self):
        (mix,) = reportdata.load("004").tables
        self.assertEqual(len(mix.rows), 30)
        self.assertEqual({r.workload for r in mix.rows}, set(GROUPS["mix-table"]))
        cell = next(r for r in mix.rows if r.workload == "mix-async-e100-c1000")
        self.assertEqual((cell.figure, cell.conns), (631.82, 1000))

    def test_the_report_figures_as_printed(self):
        pong = reportdata.load("001").tables[0]
        self.assertEqual({r.system: r.figure for r in pong.rows}["Snap (no logging)"], 35316.0)
        snap_log = next(r for r in pong.rows if r.system == "Snap (logging)")
        self.assertEqual(snap_log.kiln, "kiln+log")
        c100 = reportdata.load("003").tables[0]
        play = next(r for r in c100.rows if r.system.startswith("Play, first run"))
        self.assertEqual((play.figure_text, play.failed), ("15,563.80", 10))

    def test_a_figure_must_be_a_number_or_words(self):
        bad = 'id = "x"\ntitle = "t"\nsource = "http://a"\n[[tables]]\nkey = "k"\ntitle = "t"\nunit = "req/s"\nworkload = "hello-ab"\n[[tables.rows]]\nsystem = "s"\nfigure = true\n'
        with self.assertRaises(ValueError):
            reportdata.parse(bad)


FAKE_REPORT = """
id = "900"
title = "a fake report"
source = "http://example.invalid/report"
[[tables]]
key = "hello"
title = "hello world"
unit = "req/s"
workload = "hello-ab"
[[tables.rows]]
system = "Fast peer"
figure = 5800
failed = 0
peers = ["fast"]
[[tables.rows]]
system = "Broken peer"
figure = "figure not found"
peers = ["broken"]
[[tables.rows]]
system = "Unregistered peer"
figure = 9300
peers = ["nowhere"]
[[tables.rows]]
system = "Play"
figure = 100
peers = []
why = "cannot be had: not in the Maven mirror"
"""


def raw_row(server, workload, rep, status="ok", **values):
    row = {f: "" for f in ROW_FIELDS} | {"server": server, "workload": workload, "rep": str(rep), "status": status}
    return row | {k: str(v) for k, v in values.items()}


FAKE_RAW = [
    raw_row("kiln", "hello-ab", 1, rps=40000, requests=100000, cpu_s=0.5, errors=0, failed=0),
    raw_row("kiln", "hello-ab", 2, rps=60000, requests=100000, cpu_s=0.7, errors=0, failed=0),
    raw_row("fast", "hello-ab", 1, rps=10000, requests=50000, cpu_s=2.0, errors=3, failed=5),
    raw_row("fast", "hello-ab", 2, rps=20000, requests=50000, cpu_s=2.0, errors=0, failed=1),
    raw_row("broken", "(build)", 0, status="cannot be had", note="ghc not found (install Debian package ghc)"),
]


class TableLayoutTest(unittest.TestCase):
    def setUp(self):
        self.report = reportdata.parse(FAKE_REPORT)
        registered = {"kiln", "fast", "broken"}
        self.lines = reporttable.table_lines(self.report, self.report.tables[0], registered, FAKE_RAW, {"peers_x": "not yet"})
        self.rows = {line.split(" | ")[0].lstrip("| "): line for line in self.lines if line.startswith("| ") and "---" not in line}

    def test_a_measured_row_has_the_report_figure_the_peer_kiln_and_the_ratios(self):
        # medians: kiln 50,000 req/s, 6 µs/req; fast 15,000 req/s, 40 µs/req; ab's failed summed over reps
        self.assertEqual(
            self.rows["Fast peer"],
            "| Fast peer | 5,800 (0 failed) | fast | 15,000 | 40.0 | 3 (6 failed) | 50,000 | 6.0 | 3.33 | 6.67 |",
        )

    def test_rows_without_a_measurement_say_why(self):
        self.assertIn("broken (cannot be had: ghc not found (install Debian package ghc))", self.rows["Broken peer"])
        self.assertIn("figure not found", self.rows["Broken peer"])
        self.assertIn("– (not registered (expected nowhere); not yet)", self.rows["Unregistered peer"])
        self.assertIn("– (cannot be had: not in the Maven mirror)", self.rows["Play"])

    def test_kiln_against_the_fastest_peer(self):
        self.assertIn(
            "kiln ÷ the fastest of the report's systems measured here (fast, 15,000 req/s): **3.33** in req/s, "
            "**6.67** in server CPU per request (fast ÷ kiln)",
            self.lines,
        )

    def test_the_markdown_and_a_chart_are_written(self):
        text = reporttable.report_markdown(self.report, {"kiln", "fast"}, FAKE_RAW, {}, ["- a setting"])
        self.assertIn("Source: <http://example.invalid/report>", text)
        self.assertIn("![900/hello](report-900-hello.png)", text)
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            self.skipTest("matplotlib is not installed")
        with tempfile.TemporaryDirectory() as out:
            written = reporttable.write_charts(Path(out), self.report, {"kiln", "fast"}, FAKE_RAW, {})
            self.assertEqual(written, ["report-900-hello.png"])
            self.assertTrue((Path(out) / written[0]).stat().st_size > 0)


MIX_REPORT = """
id = "904"
title = "a fake mix report"
source = "http://example.invalid/mix"
[[tables]]
key = "mix"
title = "mix"
unit = "req/s"
conns = [10, 100]
[[tables.rows]]
system = "1 to 100, nonblocking"
every = 100
mode = "async"
figures = [456.94, 608.67]
peers = ["ruby"]
[[tables.rows]]
system = "1 to 100, blocking"
every = 100
mode = "blocking"
figures = [384.82, "figure not found"]
peers = ["ruby"]
"""

MIX_RAW = [
    raw_row("kiln", "mix-async-e100-c10", 1, rps=20000, requests=1),
    raw_row("kiln", "mix-blocking-e100-c10", 1, rps=2000, requests=1),
    raw_row("ruby", "mix-async-e100-c10", 1, rps=4000, requests=1),
    raw_row("ruby", "mix-blocking-e100-c10", 1, rps=1600, requests=1),
]


class MixGridTest(unittest.TestCase):
    def test_rows_per_ratio_and_mode_columns_per_concurrency_and_the_advantage(self):
        (t,) = reportdata.parse(MIX_REPORT).tables
        lines = reporttable.grid_lines(t, {"kiln", "ruby"}, MIX_RAW, {})
        self.assertEqual(lines[0], "| ratio | c=10: report / here / kiln | c=100: report / here / kiln |")
        self.assertEqual(lines[2], "| 1 to 100, nonblocking | 457 / 4,000 / 20,000 | 609 / – / – |")
        self.assertEqual(lines[3], "| 1 to 100, blocking | 385 / 1,600 / 2,000 | – / – / – |")
        self.assertEqual(lines[4], "| 1 to 100, advantage of nonblocking | +19% / +150% / +900% | – / – / – |")


def server(name, workloads=None):
    return Server(name, "", lambda p: [], lambda p, port, o: None, lambda p: "", workloads=workloads)


class RegistryTest(unittest.TestCase):
    def test_a_missing_peers_module_is_reported_not_fatal(self):
        with mock.patch.object(registry, "PEER_MODULES", ("peers_that_do_not_exist",)):
            found, unavailable = registry._load()
        self.assertIn("kiln", [s.name for s in found])
        self.assertEqual(unavailable, {"peers_that_do_not_exist": "kilnbench/peers_that_do_not_exist.py does not exist yet"})

    def test_names_are_unique(self):
        names = [s.name for s in registry.SERVERS]
        self.assertEqual(len(names), len(set(names)))


class WhatRunsTest(unittest.TestCase):
    def test_a_report_workload_runs_on_a_server_that_lists_its_family(self):
        only_pong = server("p", frozenset({"pong"}))
        self.assertTrue(runs(only_pong, WORKLOADS["pong-httperf-burst"]))
        self.assertFalse(runs(only_pong, WORKLOADS["hello-ab"]))
        self.assertTrue(runs(server("all"), WORKLOADS["bigtable-ab"]))

    def test_check_peers_requires_what_a_report_needs_and_only_tries_the_contract_elsewhere(self):
        claims = report_claims(reportdata.load_all())
        self.assertEqual(claims["snap"]["file-httperf-burst"], "report 001")
        pairs = dict(claimed(server("snap"), claims["snap"]))
        self.assertTrue(pairs["file-httperf-burst"])
        self.assertFalse(pairs["json"])
        pairs = dict(claimed(server("db", frozenset({"db", "idle-10k"})), {}))
        self.assertEqual(pairs, {"db": True})

    def test_check_peers_holds_a_server_that_answers_every_path_alike_to_the_status(self):
        # The floor answers every request with one canned response and never claimed more.
        canned = (200, {}, b"Hello, World!")
        with mock.patch.object(peercheck, "http_get", return_value=canned):
            self.assertIsNone(peercheck.probe(1, "pong", checks_body=False))
            self.assertIn("PONG", peercheck.probe(1, "pong") or "")


if __name__ == "__main__":
    unittest.main()
