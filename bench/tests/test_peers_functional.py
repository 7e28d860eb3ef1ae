"""The functional and JVM peers' registry entries: how each is built and started (argv, env,
rendered config), not the servers themselves, which need GHC, OCaml, Erlang and a JVM."""

import os
import stat
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path
from unittest import mock

BENCH = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(BENCH))

from kilnbench import peers_functional  # noqa: E402
from kilnbench.servers import ACCESS_LOG_WORKLOADS, Options, Paths  # noqa: E402
from kilnbench.workloads import BY_NAME as WORKLOADS  # noqa: E402

ENTRIES = {s.name: s for s in peers_functional.SERVERS}
HASKELL = ("warp", "yesod", "snap", "snap+log", "happstack")


class Checkout:
    """A scratch checkout: the real peers/ folder, its own .build and static folder, so that
    launching an entry renders its config without touching the real bench/.build."""

    def __enter__(self) -> Paths:
        self._dir = tempfile.TemporaryDirectory()
        root = Path(self._dir.name)
        (root / "bench").mkdir()
        (root / "bench" / "peers").symlink_to(BENCH / "peers")
        (root / "app" / "public").mkdir(parents=True)
        return Paths(root)

    def __exit__(self, *exc) -> None:
        self._dir.cleanup()


class RegistryTest(unittest.TestCase):
    def test_every_system_of_the_brief_has_one_entry(self):
        expected = {"ocsigen", "ocsigen-standalone", "warp", "yesod", "snap", "snap+log", "happstack", "yaws", "jetty"}
        self.assertEqual(set(ENTRIES), expected)
        self.assertEqual(len(peers_functional.SERVERS), len(expected))

    def test_every_build_installs_its_packages_first(self):
        with Checkout() as paths:
            for name, server in ENTRIES.items():
                if name == "jetty":  # Maven fetches its own dependencies
                    continue
                first = server.build(paths)[0]
                self.assertEqual(first.argv[1:3], ["-m", "kilnbench.install"], name)
                self.assertEqual(first.cwd, paths.bench, name)  # where `kilnbench` imports from


class HaskellTest(unittest.TestCase):
    def test_each_runs_on_one_capability_with_the_contract_env(self):
        with Checkout() as paths:
            for name in HASKELL:
                launch = ENTRIES[name].launch(paths, 8123, Options())
                self.assertEqual(launch.argv[1:], ["+RTS", "-N1", "-RTS"], name)
                self.assertEqual(launch.env["PORT"], "8123")
                self.assertEqual(launch.env["STATIC_DIR"], str(paths.static))

    def test_they_are_built_optimised_threaded_and_with_rts_options(self):
        with Checkout() as paths:
            for name in HASKELL:
                compile_ = ENTRIES[name].build(paths)[-1].argv
                self.assertEqual(compile_[:4], ["ghc", "-O2", "-threaded", "-rtsopts"], name)
                self.assertTrue(compile_[-1].endswith("/Main.hs"))
                self.assertTrue(Path(compile_[-1]).exists(), compile_[-1])

    def test_snap_with_and_without_its_access_log_share_one_build(self):
        with Checkout() as paths:
            self.assertEqual(ENTRIES["snap"].build(paths), ENTRIES["snap+log"].build(paths))
            off = ENTRIES["snap"].launch(paths, 8123, Options())
            on = ENTRIES["snap+log"].launch(paths, 8123, Options())
            self.assertEqual(off.argv, on.argv)
            self.assertEqual(off.env["ACCESS_LOG"], "off")
            log = Path(on.env["ACCESS_LOG"])
            self.assertEqual(log.parent, paths.build / "logs")
            self.assertEqual(on.cleanup, (log,))

    def test_snap_with_its_log_runs_the_snap_reports_workloads_only(self):
        only = ENTRIES["snap+log"].workloads
        self.assertLessEqual(ACCESS_LOG_WORKLOADS, only)
        self.assertTrue(all(name in WORKLOADS for name in only))
        self.assertIsNone(ENTRIES["snap"].workloads)


class OcsigenTest(unittest.TestCase):
    def test_the_rendered_config_is_xml_with_the_store_before_eliom(self):
        with Checkout() as paths:
            launch = ENTRIES["ocsigen"].launch(paths, 8123, Options())
            self.assertEqual(launch.argv[:2], ["ocsigenserver.opt", "-c"])
            server = ET.parse(launch.argv[2]).getroot().find("server")
            self.assertEqual(server.findtext("port"), "127.0.0.1:8123")
            # The default command pipe is under /var/run: it must be in the run folder.
            self.assertTrue(server.findtext("commandpipe").startswith(str(paths.build / "ocsigen" / "run")))
            packages = [e.get("findlib-package") for e in server.findall("extension")]
            self.assertLess(packages.index("ocsipersist.sqlite"), packages.index("eliom.server"))
            host = server.find("host")
            self.assertEqual(host.find("site").get("path"), "static")
            self.assertEqual(host.find("site/static").get("dir"), str(paths.static))
            self.assertEqual(host.find("eliommodule").get("module"), str(paths.build / "ocsigen" / "peer.cmxs"))
            for sub in ("log", "data"):
                self.assertTrue((launch.cwd / sub).is_dir())

    def test_the_standalone_executable_gets_its_run_folder(self):
        with Checkout() as paths:
            launch = ENTRIES["ocsigen-standalone"].launch(paths, 8123, Options())
            run = Path(launch.env["RUN_DIR"])
            self.assertTrue((run / "log").is_dir() and (run / "data").is_dir())
            self.assertEqual(launch.env["PORT"], "8123")
            self.assertTrue(launch.argv[0].endswith("ocsigen-standalone/peer-ocsigen-standalone"))

    def test_the_sqlite_store_links_before_eliom(self):
        """ocamlfind puts the SQLite store after Eliom's server.cmxa and the link fails with
        "No implementations provided for the following modules: Ocsipersist"; build.sh moves it."""
        with tempfile.TemporaryDirectory() as scratch:
            bin_dir, out, args = Path(scratch) / "bin", Path(scratch) / "out", Path(scratch) / "args"
            bin_dir.mkdir()
            archives = " ".join(
                [
                    "/o/threads.cmxa",
                    "/o/eliom/server/server.cmxa",
                    "/o/staticmod.cmxa",
                    "/o/sqlite3/sqlite3.cmxa",
                    "/o/ocsipersist/sqlite/ocsipersist_sqlite.cmxa",
                ]
            )
            link = f"ocamlopt -o peer {archives} peer_services.cmx standalone.cmx"
            fake = {
                "ocamlfind": f'case "$*" in *-only-show*) echo "{link}";; esac\n',
                "ocamlopt": f'echo "$@" > {args}\n',
            }
            for name, body in fake.items():
                (bin_dir / name).write_text("#!/bin/sh\n" + body)
                (bin_dir / name).chmod(stat.S_IRWXU)
            script = BENCH / "peers" / "ocsigen-standalone" / "build.sh"
            env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}")
            subprocess.run(["sh", str(script), str(out)], env=env, check=True, capture_output=True, timeout=30)
            linked = args.read_text().split()
            eliom = linked.index("/o/eliom/server/server.cmxa")
            self.assertLess(linked.index("/o/sqlite3/sqlite3.cmxa"), eliom)
            self.assertLess(linked.index("/o/ocsipersist/sqlite/ocsipersist_sqlite.cmxa"), eliom)
            self.assertEqual(len(linked), len(set(linked)))
            self.assertTrue((out / "standalone.ml").exists() and (out / "peer_services.ml").exists())


class YawsTest(unittest.TestCase):
    def test_one_scheduler_its_own_home_and_static_linked_into_the_docroot(self):
        with Checkout() as paths:
            launch = ENTRIES["yaws"].launch(paths, 8123, Options())
            self.assertEqual(launch.argv[-2:], ["--erlarg", "-noshell +S 1"])
            self.assertEqual(launch.env["HOME"], str(launch.cwd))
            conf = launch.argv[launch.argv.index("--conf") + 1]
            text = Path(conf).read_text()
            self.assertIn("port = 8123", text)
            self.assertIn("listen = 127.0.0.1", text)
            self.assertIn("access_log = false", text)
            self.assertIn("appmods = <pong, kiln_peer> <hello, kiln_peer>", text)
            docroot = launch.cwd / "docroot"
            self.assertEqual((docroot / "static").resolve(), paths.static.resolve())
            # Started again, it replaces its link rather than failing on it.
            ENTRIES["yaws"].launch(paths, 8124, Options())
            self.assertIn("port = 8124", Path(conf).read_text())


class JettyTest(unittest.TestCase):
    def test_one_processor_and_the_built_classpath(self):
        with Checkout() as paths:
            launch = ENTRIES["jetty"].launch(paths, 8123, Options())
            self.assertEqual(launch.argv[:2], ["java", "-XX:ActiveProcessorCount=1"])
            classpath = launch.argv[launch.argv.index("-cp") + 1]
            self.assertIn(str(paths.build / "jetty" / "lib") + "/*", classpath)
            self.assertEqual(launch.argv[-1], "kiln.peer.Main")
            (step,) = ENTRIES["jetty"].build(paths)
            self.assertIn(f"-Dkiln.build={paths.build / 'jetty'}", step.argv)

    def test_its_version_comes_from_the_pom(self):
        version = peers_functional._pom_property(BENCH / "peers" / "jetty" / "pom.xml", "jetty.version")
        self.assertRegex(version, r"^12\.\d+\.\d+$")


if __name__ == "__main__":
    unittest.main()
