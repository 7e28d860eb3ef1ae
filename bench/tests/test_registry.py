"""The registries and the command line: mix workloads, workload groups, database-only peers."""

import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kilnbench.cli import _names  # noqa: E402
from kilnbench.registry import BY_NAME as SERVERS  # noqa: E402
from kilnbench.servers import DB_WORKLOADS, Options, Paths, Unsupported, _locked_version  # noqa: E402
from kilnbench.workloads import BY_NAME as WORKLOADS  # noqa: E402
from kilnbench.workloads import GROUPS, MIX_CONNS, MIX_EVERIES, MIX_MODES  # noqa: E402
from kilnbench.workloads import WORKLOADS as ALL  # noqa: E402

PATHS = Paths(Path("/nonexistent"))


class MixWorkloadsTest(unittest.TestCase):
    def test_the_mix_table_has_every_step_mode_and_concurrency(self):
        table = GROUPS["mix-table"]
        self.assertEqual(len(table), len(MIX_EVERIES) * len(MIX_MODES) * len(MIX_CONNS))
        seen = {(WORKLOADS[n].mix.every, WORKLOADS[n].mix.mode, WORKLOADS[n].conns) for n in table}
        self.assertEqual(len(seen), len(table))
        for name in table:
            w = WORKLOADS[name]
            self.assertEqual(w.path, f"/mix/{w.mix.mode}?every={w.mix.every}")

    def test_every_10_keeps_its_old_names_and_the_rest_run_only_when_asked(self):
        self.assertEqual(WORKLOADS["mix-async-c100"].path, "/mix/async?every=10")
        self.assertEqual(WORKLOADS["mix-blocking-e50-c1000"].path, "/mix/blocking?every=50")
        self.assertTrue(WORKLOADS["mix-async-c1000"].default)
        self.assertFalse(WORKLOADS["mix-async-e5-c10"].default)
        self.assertEqual(len({w.name for w in ALL}), len(ALL))

    def test_groups_name_existing_workloads_and_no_group_hides_one(self):
        for group, members in GROUPS.items():
            self.assertNotIn(group, WORKLOADS)
            self.assertTrue(all(m in WORKLOADS for m in members))


class NamesTest(unittest.TestCase):
    def test_a_group_expands_in_order_and_repeats_are_dropped(self):
        chosen = _names("database,mix-table,queries", WORKLOADS, "workload", GROUPS)
        names = [w.name for w in chosen]
        self.assertEqual(names[:4], ["db", "queries", "fortunes", "updates"])
        self.assertEqual(names[4:], GROUPS["mix-table"])

    def test_unknown_names_stop_the_run(self):
        with self.assertRaises(SystemExit):
            _names("db,nope", WORKLOADS, "workload", GROUPS)


class DatabasePeersTest(unittest.TestCase):
    def test_database_peers_run_only_the_database_workloads(self):
        for name in ("actix-pg", "may-minihttp-pg", "xitca-pg"):
            self.assertEqual(SERVERS[name].workloads, DB_WORKLOADS)

    def test_they_need_a_postgres_url_and_get_it_as_database_url(self):
        peer = SERVERS["actix-pg"]
        for url in (None, "sqlite://data/kiln.sqlite"):
            with self.assertRaises(Unsupported):
                peer.launch(PATHS, 8080, Options(url))
        launch = peer.launch(PATHS, 8080, Options("postgres://u:p@127.0.0.1:5432/hello_world"))
        self.assertEqual(launch.env["DATABASE_URL"], "postgres://u:p@127.0.0.1:5432/hello_world")
        self.assertEqual(launch.env["PORT"], "8080")
        self.assertTrue(launch.argv[0].endswith("actix-pg/release/peer-actix-pg"))

    def test_xitca_pg_is_built_into_its_own_folder_and_named_by_its_locked_crates(self):
        peer = SERVERS["xitca-pg"]
        with self.assertRaises(Unsupported):
            peer.launch(PATHS, 8080, Options(None))
        launch = peer.launch(PATHS, 8080, Options("postgres://u:p@127.0.0.1:5432/hello_world"))
        self.assertTrue(launch.argv[0].endswith("xitca-pg/release/peer-xitca-pg"))
        (step,) = peer.build(PATHS)
        self.assertIn(str(PATHS.build / "xitca-pg"), step.argv)
        self.assertIn(str(PATHS.peers / "xitca-pg" / "Cargo.toml"), step.argv)
        lock = Path(__file__).resolve().parents[1] / "peers" / "xitca-pg" / "Cargo.lock"
        self.assertEqual(_locked_version(lock, "xitca-postgres"), "0.4.0")
        self.assertTrue(_locked_version(lock, "xitca-http").startswith("0.8."))


if __name__ == "__main__":
    unittest.main()
