"""The runner's bookkeeping that needs no server: shared builds, failure rows."""

import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kilnbench.load import Settings  # noqa: E402
from kilnbench.runner import Plan, Runner  # noqa: E402
from kilnbench.servers import Launch, Options, Paths, Server, Step  # noqa: E402


def server(name: str, steps: list[list[str]]) -> Server:
    return Server(
        name,
        "test server",
        build=lambda paths: [Step(argv, paths.root) for argv in steps],
        launch=lambda paths, port, opts: Launch(["true"]),
        version=lambda paths: "1.0",
    )


class BuildTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        out = Path(self.tmp.name)
        self.marker = out / "runs"
        count = ["sh", "-c", f"echo x >> {self.marker}"]
        self.ok = server("ok", [count])
        self.ok_twin = server("ok+twin", [count])
        self.broken = server("broken", [["sh", "-c", "echo 'error: it broke'; exit 3"]])
        self.broken_twin = server("broken+twin", [["sh", "-c", "echo 'error: it broke'; exit 3"]])
        plan = Plan([], [], Settings(), 1, out, Paths(out), Options())
        self.runner = Runner(plan, log=lambda *a, **k: None)

    def tearDown(self):
        self.runner._csv_file.close()
        self.tmp.cleanup()

    def test_a_step_shared_by_two_servers_runs_once(self):
        self.assertTrue(self.runner.build(self.ok))
        self.assertTrue(self.runner.build(self.ok_twin))
        self.assertEqual(self.marker.read_text(), "x\n")
        self.assertEqual(self.runner.outcome.versions, {"ok": "1.0", "ok+twin": "1.0"})

    def test_a_failed_build_is_a_row_for_every_server_sharing_it(self):
        self.assertFalse(self.runner.build(self.broken))
        self.assertFalse(self.runner.build(self.broken_twin))
        rows = self.runner.outcome.rows
        self.assertEqual([r["server"] for r in rows], ["broken", "broken+twin"])
        for r in rows:
            self.assertEqual((r["workload"], r["status"]), ("(build)", "build failed"))
            self.assertIn("exit status 3: error: it broke", r["note"])

    def test_a_build_that_cannot_reach_a_git_dependency_cannot_be_had(self):
        # may-minihttp-pg's driver is a git dependency: on a machine that reaches only the
        # package registries its build fails, which is no fault of the peer's.
        git = ["sh", "-c", "echo 'failed to resolve address for github.com: Name or service not known'; exit 101"]
        self.assertFalse(self.runner.build(server("git-peer", [git])))
        row = self.runner.outcome.rows[-1]
        self.assertEqual(row["status"], "cannot be had")
        self.assertIn("outside the package registries", row["note"])


if __name__ == "__main__":
    unittest.main()
