"""Issue 23's WebSocket echo peers: registered, run only the ws workloads, and the deflate
workload only where permessage-deflate is negotiated."""

import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kilnbench.registry import BY_NAME as SERVERS  # noqa: E402
from kilnbench.registry import UNAVAILABLE  # noqa: E402
from kilnbench.servers import Options, Paths, _locked_version  # noqa: E402
from kilnbench.workloads import BY_NAME as WORKLOADS  # noqa: E402
from kilnbench.workloads import GROUPS  # noqa: E402

PATHS = Paths(Path("/nonexistent"))
PEERS = ("axum-ws", "fastwebsockets", "actix-ws", "go-ws", "node-ws")
PEERS_DIR = Path(__file__).resolve().parents[1] / "peers"


class WsPeersTest(unittest.TestCase):
    def test_every_ws_peer_is_registered_and_runs_only_ws_workloads(self):
        self.assertNotIn("peers_ws", UNAVAILABLE)
        for name in PEERS:
            only = SERVERS[name].workloads
            self.assertIsNotNone(only, name)
            self.assertTrue(only <= set(GROUPS["ws"]), name)
            self.assertTrue(all(w in WORKLOADS for w in only), name)
            self.assertIn("ws-echo-20", only)
            self.assertIn("ws-idle-10k", only)

    def test_the_deflate_workload_runs_only_on_peers_that_negotiate_it(self):
        deflating = {name for name in PEERS if "ws-echo-16k-deflate" in SERVERS[name].workloads}
        self.assertEqual(deflating, {"go-ws", "node-ws"})

    def test_rust_peers_build_into_their_own_folders_from_their_locked_manifests(self):
        for name, binary, crate in (
            ("axum-ws", "peer-axum-ws", "axum"),
            ("fastwebsockets", "peer-fastwebsockets", "fastwebsockets"),
            ("actix-ws", "peer-actix-ws", "actix-ws"),
        ):
            peer = SERVERS[name]
            (step,) = peer.build(PATHS)
            self.assertIn(str(PATHS.build / name), step.argv)
            self.assertIn(str(PATHS.peers / name / "Cargo.toml"), step.argv)
            launch = peer.launch(PATHS, 8080, Options(None))
            self.assertTrue(launch.argv[0].endswith(f"{name}/release/{binary}"))
            self.assertEqual(launch.env["PORT"], "8080")
            self.assertNotEqual(_locked_version(PEERS_DIR / name / "Cargo.lock", crate), "?")

    def test_go_runs_on_one_thread_and_node_installs_from_its_lockfile(self):
        self.assertEqual(SERVERS["go-ws"].launch(PATHS, 8080, Options(None)).env["GOMAXPROCS"], "1")
        (step,) = SERVERS["node-ws"].build(PATHS)
        self.assertEqual(step.argv[:2], ["npm", "ci"])
        self.assertEqual(step.cwd, PATHS.peers / "node-ws")
        self.assertTrue((PEERS_DIR / "node-ws" / "package-lock.json").exists())


if __name__ == "__main__":
    unittest.main()
