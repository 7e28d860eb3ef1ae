"""The SQLite database peer and the run's `--database sqlite://PATH`: who gets which file, who starts first."""

import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kilnbench.load import Settings  # noqa: E402
from kilnbench.runner import Plan, kiln_first_on_a_new_sqlite_file  # noqa: E402
from kilnbench.registry import BY_NAME as SERVERS  # noqa: E402
from kilnbench.servers import DB_WORKLOADS, Options, Paths, Unsupported, _locked_version, sqlite_path  # noqa: E402

PATHS = Paths(Path("/nonexistent"))


class SqlitePathTest(unittest.TestCase):
    def test_absolute_and_relative_paths_name_the_file_kiln_opens(self):
        root = Path("/repo")
        self.assertEqual(sqlite_path("sqlite:///tmp/kiln-bench.sqlite", root), Path("/tmp/kiln-bench.sqlite"))
        self.assertEqual(sqlite_path("sqlite://data/kiln.sqlite", root), Path("/repo/data/kiln.sqlite"))

    def test_other_urls_and_an_empty_path_name_no_file(self):
        for url in (None, "", "sqlite://", "postgres://u:p@127.0.0.1:5432/hello_world", "/tmp/x.sqlite"):
            self.assertIsNone(sqlite_path(url, Path("/repo")), url)


class AxumSqlitePeerTest(unittest.TestCase):
    def test_it_runs_only_the_database_workloads_and_needs_an_sqlite_url(self):
        peer = SERVERS["axum-sqlite"]
        self.assertEqual(peer.workloads, DB_WORKLOADS)
        for url in (None, "postgres://u:p@127.0.0.1:5432/hello_world", "sqlite://"):
            with self.assertRaises(Unsupported):
                peer.launch(PATHS, 8080, Options(url))

    def test_it_gets_the_run_url_and_starts_in_the_checkout_as_kiln_does(self):
        launch = SERVERS["axum-sqlite"].launch(PATHS, 8080, Options("sqlite://data/kiln.sqlite"))
        self.assertEqual(launch.env["DATABASE_URL"], "sqlite://data/kiln.sqlite")
        self.assertEqual(launch.env["PORT"], "8080")
        self.assertEqual(launch.cwd, PATHS.root)
        self.assertTrue(launch.argv[0].endswith("axum-sqlite/release/peer-axum-sqlite"))

    def test_it_is_built_into_its_own_folder_and_links_the_sqlite_kiln_links(self):
        (step,) = SERVERS["axum-sqlite"].build(PATHS)
        self.assertIn(str(PATHS.build / "axum-sqlite"), step.argv)
        self.assertIn(str(PATHS.peers / "axum-sqlite" / "Cargo.toml"), step.argv)
        bench = Path(__file__).resolve().parents[1]
        peer_lock, kiln_lock = bench / "peers" / "axum-sqlite" / "Cargo.lock", bench.parent / "Cargo.lock"
        self.assertEqual(_locked_version(peer_lock, "libsqlite3-sys"), _locked_version(kiln_lock, "libsqlite3-sys"))


class KilnFirstTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        self.order = [SERVERS["axum-sqlite"], SERVERS["actix-pg"], SERVERS["kiln"]]

    def tearDown(self):
        self.tmp.cleanup()

    def first(self, url):
        plan = Plan(self.order, [], Settings(), 1, self.root, Paths(self.root), Options(url))
        return [s.name for s in kiln_first_on_a_new_sqlite_file(self.order, plan)]

    def test_on_a_new_file_kiln_starts_first_and_the_rest_keep_their_order(self):
        self.assertEqual(self.first("sqlite://bench.sqlite"), ["kiln", "axum-sqlite", "actix-pg"])
        (self.root / "empty.sqlite").touch()
        self.assertEqual(self.first("sqlite://empty.sqlite"), ["kiln", "axum-sqlite", "actix-pg"])

    def test_an_existing_file_or_another_database_keeps_the_order_asked_for(self):
        (self.root / "bench.sqlite").write_bytes(b"SQLite format 3\0")
        self.assertEqual(self.first("sqlite://bench.sqlite"), ["axum-sqlite", "actix-pg", "kiln"])
        self.assertEqual(self.first("postgres://u:p@127.0.0.1:5432/hello_world"), ["axum-sqlite", "actix-pg", "kiln"])
        self.assertEqual(self.first(None), ["axum-sqlite", "actix-pg", "kiln"])


if __name__ == "__main__":
    unittest.main()
