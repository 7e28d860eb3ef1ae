"""The side runs' parsers and clients: h2 (kilnbench.h2, kilnbench.idleh2), compression
(kilnbench.compress) and the SSE fan-out (kilnbench.sse), on recorded or scripted input."""

import gzip
import socket
import sys
import threading
import unittest
from unittest import mock
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kilnbench import compress, h2, idleh2, sse  # noqa: E402
from kilnbench.parse import ParseError  # noqa: E402

SAMPLES = Path(__file__).parent / "samples"


class SseloadReportTest(unittest.TestCase):
    def test_the_report_line_after_ready(self):
        r = sse.parse_sseload((SAMPLES / "sseload_kiln.txt").read_text())
        self.assertEqual((r["subscribers"], r["events"]), (200, 3))
        self.assertEqual(r["delivered"], 600)
        self.assertEqual(r["missing"], 0)
        self.assertGreater(r["p99_ms"], 0)
        self.assertGreaterEqual(r["p99_ms"], r["p50_ms"])

    def test_no_report_is_a_parse_error(self):
        with self.assertRaises(ParseError):
            sse.parse_sseload("ready 10\nsseload: RLIMIT_NOFILE 1024 is below 10064\n")

    def test_summary_has_kilns_ratio(self):
        rows = [
            {"server": "kiln", "status": "ok", "subscribers": 10, "delivered": 100, "missing": 0, "p50_ms": 1.0,
             "p99_ms": 2.0, "round_p50_ms": 3.0, "deliveries_per_s": 3333, "cpu_us_per_delivery": 2.0},
            {"server": "axum-sse", "status": "ok", "subscribers": 10, "delivered": 100, "missing": 0, "p50_ms": 1.0,
             "p99_ms": 2.0, "round_p50_ms": 3.0, "deliveries_per_s": 3333, "cpu_us_per_delivery": 3.0},
        ]  # fmt: skip
        self.assertIn("| 1.50x |", sse.summarise(rows))

    def test_summary_has_each_servers_distance_from_the_floor(self):
        row = {"status": "ok", "subscribers": 10, "delivered": 100, "missing": 0, "p50_ms": 1.0, "p99_ms": 2.0,
               "round_p50_ms": 3.0, "deliveries_per_s": 3333}  # fmt: skip
        rows = [{**row, "server": "kiln", "cpu_us_per_delivery": 2.4}, {**row, "server": "axum-sse", "cpu_us_per_delivery": 3.0},
                {**row, "server": "sse-floor", "cpu_us_per_delivery": 2.0}]  # fmt: skip
        lines = sse.summarise(rows).splitlines()
        self.assertTrue(lines[2].endswith("| 2.40 |  | 1.20x |"), lines[2])
        self.assertTrue(lines[3].endswith("| 3.00 | 1.25x | 1.50x |"), lines[3])
        self.assertTrue(lines[4].endswith("| 2.00 | 0.83x |  |"), lines[4])


class CompressedResponseTest(unittest.TestCase):
    def test_a_chunked_gzip_response_is_unframed(self):
        body = gzip.compress(b"<h1>A tour of kiln</h1>" * 10)
        chunked = b"%x\r\n%s\r\n%x\r\n%s\r\n0\r\n\r\n" % (5, body[:5], len(body) - 5, body[5:])
        raw = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked
        headers, unframed = compress.split_response(raw)
        self.assertEqual(headers["content-encoding"], "gzip")
        self.assertEqual(unframed, body)
        self.assertEqual(compress.decode(unframed, "gzip"), b"<h1>A tour of kiln</h1>" * 10)

    def test_a_content_length_response_is_its_body(self):
        headers, body = compress.split_response(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc")
        self.assertEqual((headers["content-length"], body), ("3", b"abc"))

    def test_summary_compares_body_bytes_with_kilns(self):
        row = {"workload": "wiki-gzip", "status": "ok", "rps": 1000.0, "lat_p99_ms": 5.0, "wire_bytes": 3300}
        rows = [{**row, "server": "kiln", "cpu_us_per_req": 100.0, "body_bytes": 3000},
                {**row, "server": "nginx-gzip", "cpu_us_per_req": 150.0, "body_bytes": 3030}]  # fmt: skip
        text = compress.summarise(rows, ["kiln", "nginx-gzip"])
        self.assertIn("| 1.50x |", text)
        self.assertIn("| 1.010 |", text)

    def test_nginx_is_also_compared_with_kiln_serving_the_same_saved_copy(self):
        row = {"workload": "wiki-br", "status": "ok", "rps": 1000.0, "lat_p99_ms": 5.0, "wire_bytes": 3300,
               "body_bytes": 3000}  # fmt: skip
        rows = [{**row, "server": "kiln", "cpu_us_per_req": 200.0},
                {**row, "server": "kiln-saved", "cpu_us_per_req": 80.0},
                {**row, "server": "nginx-gzip", "cpu_us_per_req": 100.0}]  # fmt: skip
        lines = compress.summarise(rows, ["kiln", "kiln-saved", "nginx-gzip"]).splitlines()
        nginx = next(line for line in lines if "| nginx-gzip |" in line)
        self.assertIn("| 0.50x | 1.25x |", nginx)
        saved = next(line for line in lines if "| kiln-saved |" in line)
        self.assertIn("| 0.40x |  |", saved)
        self.assertEqual(compress.page_path("kiln-saved"), compress.SAVED_PAGE)
        self.assertEqual(compress.page_path("nginx-gzip"), "/pages/tour")


class IdleH2ClientTest(unittest.TestCase):
    def test_the_request_is_a_preface_settings_and_one_headers_frame(self):
        hello = idleh2.client_hello("/pong", "127.0.0.1:80", tls=False)
        self.assertTrue(hello.startswith(idleh2.PREFACE))
        rest = hello[len(idleh2.PREFACE):]
        self.assertEqual(rest[:9], b"\x00\x00\x00\x04\x00\x00\x00\x00\x00")  # empty SETTINGS on stream 0
        headers = rest[9:]
        length = int.from_bytes(headers[:3], "big")
        self.assertEqual((headers[3], headers[4], int.from_bytes(headers[5:9], "big")), (idleh2.HEADERS, 0x5, 1))
        self.assertEqual(headers[9:], b"\x82\x86\x04\x05/pong\x01\x0c127.0.0.1:80")
        self.assertEqual(length, len(headers) - 9)

    def test_answer_one_acks_settings_and_waits_for_the_end_of_stream_1(self):
        client, server = socket.socketpair()
        with client, server:
            script = (idleh2.frame(idleh2.SETTINGS, 0, 0, b"\x00\x03\x00\x00\x00\x64")
                      + idleh2.frame(idleh2.HEADERS, idleh2.END_HEADERS, 1, b"\x88")
                      + idleh2.frame(idleh2.DATA, idleh2.END_STREAM, 1, b"PONG"))  # fmt: skip
            server.sendall(script)
            idleh2.answer_one(client)
            self.assertEqual(server.recv(64), idleh2.frame(idleh2.SETTINGS, idleh2.ACK, 0, b""))

    def test_a_refused_stream_is_an_error(self):
        client, server = socket.socketpair()
        with client, server:
            server.sendall(idleh2.frame(idleh2.RST_STREAM, 0, 1, b"\x00\x00\x00\x07"))
            with self.assertRaises(ConnectionError):
                idleh2.answer_one(client)

    def test_hold_idle_counts_what_a_server_answers(self):
        listener = socket.create_server(("127.0.0.1", 0))
        port = listener.getsockname()[1]
        answer = idleh2.frame(idleh2.HEADERS, idleh2.END_HEADERS | idleh2.END_STREAM, 1, b"\x88")
        accepted: list[socket.socket] = []

        def serve() -> None:
            for _ in range(3):
                conn, _ = listener.accept()
                conn.recv(4096)
                conn.sendall(answer)
                accepted.append(conn)

        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        readings = iter([1000, 1300])
        with mock.patch.object(idleh2, "SETTLE_S", 0):
            held = idleh2.hold_idle(port, 3, "/pong", False, lambda: next(readings))
        thread.join(5)
        for conn in accepted:
            conn.close()
        listener.close()
        self.assertEqual((held.answered, held.failed, held.rss_before_kb, held.rss_held_kb), (3, 0, 1000, 1300))


class H2WorkloadsTest(unittest.TestCase):
    def test_each_h2load_workload_comes_over_h2c_and_tls_at_10_and_100_streams(self):
        names = {w.name for w in h2.WORKLOADS}
        for base in ("pong", "static"):
            for wire in ("h2c", "h2"):
                self.assertLessEqual({f"{base}-{wire}-m10", f"{base}-{wire}-m100"}, names)
        self.assertTrue(h2.BY_NAME["wiki-h2"].tls and h2.BY_NAME["wiki-h2"].wiki)
        self.assertTrue(h2.BY_NAME["idle-h2c"].idle and not h2.BY_NAME["idle-h2c"].tls)

    def test_summary_ratio_is_other_over_kiln(self):
        row = {"workload": "pong-h2c-m10", "status": "ok", "rps": 1000.0, "errors": 0}
        rows = [{**row, "server": "kiln", "cpu_us_per_req": 4.0}, {**row, "server": "nginx-h2", "cpu_us_per_req": 6.0}]
        self.assertIn("| 1.50x |", h2.summarise(rows, ["kiln", "nginx-h2"]))


if __name__ == "__main__":
    unittest.main()
