"""The live-view peers' entries (kilnbench.live_peers): their recipes, read from a page as a
browser would, their registrations, and the self-check's frame reader and expected values.

The peers themselves are not built or started here (`python3 -m kilnbench.live_peers --check`
does that); a small HTTP server stands in for them with the parts of their pages a recipe reads.
"""

import http.server
import json
import sys
import threading
import unittest
import urllib.parse
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kilnbench import live_peers  # noqa: E402
from kilnbench.servers import Options, Paths  # noqa: E402

PAGES = {
    "/bench/live/chat": '<script>var WS_ADDR = __dioxusGetWsUrl("/bench/live/chat/ws");</script>',
    "/bench/live/table": (
        "<body data-signals=\"{sort: 'id', desc: false, filter: '', _open: true}\">"
        "<main data-init=\"@get('/bench/live/table/updates')\"></main></body>"
    ),
    "/bench/live/counter": "<main>no stream here</main>",
}


class Pages(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = PAGES.get(self.path)
        self.send_response(200 if body else 404)
        self.end_headers()
        self.wfile.write((body or "").encode())

    def log_message(self, *args):
        pass


class RecipeFromPage(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = http.server.HTTPServer(("127.0.0.1", 0), Pages)
        cls.port = cls.server.server_address[1]
        threading.Thread(target=cls.server.serve_forever, daemon=True).start()

    @classmethod
    def tearDownClass(cls):
        cls.server.shutdown()
        cls.server.server_close()

    def test_dioxus_recipe_upgrades_the_path_in_the_glue(self):
        recipe = live_peers.dioxus_recipe(self.port, "chat")
        self.assertEqual(recipe.mode, "ws")
        self.assertIsNone(recipe.hello)
        head = recipe.request.decode()
        self.assertTrue(head.startswith("GET /bench/live/chat/ws HTTP/1.1\r\n"))
        self.assertIn("Upgrade: websocket\r\n", head)
        self.assertIn(f"Sec-WebSocket-Key: {live_peers.WS_KEY}\r\n", head)
        self.assertTrue(head.endswith("\r\n\r\n"))

    def test_datastar_recipe_sends_the_pages_signals_but_local_ones(self):
        recipe = live_peers.datastar_recipe(self.port, "table")
        self.assertEqual((recipe.mode, recipe.hello), ("sse", None))
        line, *headers = recipe.request.decode().split("\r\n")
        method, target, _ = line.split(" ")
        path, query = target.split("?")
        self.assertEqual((method, path), ("GET", "/bench/live/table/updates"))
        signals = urllib.parse.parse_qs(query)["datastar"][0]
        self.assertEqual(signals, '{"sort":"id","desc":false,"filter":""}')
        self.assertEqual(json.loads(signals), {"sort": "id", "desc": False, "filter": ""})
        self.assertIn("Datastar-Request: true", headers)
        self.assertIn("Accept: text/event-stream, text/html, application/json", headers)

    def test_a_page_without_its_stream_is_an_error(self):
        with self.assertRaisesRegex(RuntimeError, "data-init"):
            live_peers.datastar_recipe(self.port, "counter")


class Registration(unittest.TestCase):
    def test_both_peers_registered_for_the_live_workloads_only(self):
        names = [s.name for s in live_peers.SERVERS]
        self.assertEqual(names, ["dioxus-liveview", "datastar"])
        self.assertEqual(set(live_peers.RECIPES), set(names))
        for server in live_peers.SERVERS:
            self.assertEqual(server.workloads, live_peers.LIVE_WORKLOADS)

    def test_datastar_builds_and_is_given_its_client(self):
        datastar = live_peers.SERVERS[1]
        paths = Paths(Path("/checkout"))
        steps = datastar.build(paths)
        self.assertEqual(steps[0].argv[:3], ["cargo", "build", "--release"])
        self.assertTrue(steps[1].argv[1].endswith("peers/datastar/fetch-client.sh"))
        launch = datastar.launch(paths, 8123, Options())
        self.assertEqual(launch.env["PORT"], "8123")
        self.assertEqual(launch.env["DATASTAR_JS"], "/checkout/bench/.build/datastar/datastar.js")
        self.assertEqual(launch.argv, ["/checkout/bench/.build/datastar/release/peer-datastar"])


class CheckHelpers(unittest.TestCase):
    def test_ws_payloads_reads_short_and_16_bit_lengths(self):
        long = bytes(300)
        raw = b"\x82\x03\x01ab" + b"\x82\x7e" + len(long).to_bytes(2, "big") + long
        self.assertEqual(live_peers.ws_payloads(raw), [b"\x01ab", long])

    def test_expected_values_follow_the_contracts_triggers(self):
        self.assertEqual(live_peers._expected("dioxus-liveview", "counter", 41), (b"", b"42"))
        # the 231st change (n = 230) is row 31's third: 31 + 3
        self.assertEqual(live_peers._expected("dioxus-liveview", "table", 230), (b"", b"34"))
        self.assertEqual(live_peers._expected("datastar", "table", 230), (b"", b"<td>34</td>"))
        said, shown = live_peers._expected("datastar", "chat", 0)
        self.assertEqual(said, shown)


if __name__ == "__main__":
    unittest.main()
