"""The classic peers' entries: the configs they render, how they start, what they build and install.

The servers themselves are not started here (they are heavy and installed on demand); where the
server is installed, its own config check (`lighttpd -tt`, `apache2 -t`) reads what was rendered.
"""

import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kilnbench import peers_classic  # noqa: E402
from kilnbench.servers import Options, Paths, Unsupported  # noqa: E402

BENCH = Path(__file__).resolve().parents[1]
ENTRIES = {s.name: s for s in peers_classic.SERVERS}
PORT = 18123


class ScratchCheckout(unittest.TestCase):
    """A checkout of its own in a temporary folder (bench/peers linked to the real one), so that
    rendering writes into a throwaway bench/.build."""

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        root = Path(self._tmp.name)
        (root / "bench").mkdir()
        (root / "bench" / "peers").symlink_to(BENCH / "peers")
        (root / "app" / "public").mkdir(parents=True)
        (root / "app" / "public" / "hello.txt").write_text("Hello, World!")
        self.paths = Paths(root)

    def tearDown(self):
        self._tmp.cleanup()

    def launch(self, name, database_url=None):
        return ENTRIES[name].launch(self.paths, PORT, Options(database_url))


class RegistryTest(unittest.TestCase):
    def test_the_names_the_report_tables_use(self):
        expected = {
            "lighttpd-fcgi-1", "lighttpd-fcgi-20", "lighttpd", "cgi-c", "cgi-perl", "cgi-python", "apache-php",
            "apache", "rails-puma", "rails-thin", "rails-webrick", "twisted", "eventmachine", "ruby-em-pg",
        }  # fmt: skip
        self.assertEqual(set(ENTRIES), expected)
        self.assertEqual(len(ENTRIES), len(peers_classic.SERVERS))

    def test_only_the_cgi_entries_limit_their_workloads_and_to_a_family(self):
        # The report tables add workloads (hello-ab, bigtable-ab, ...) of a family named after the
        # contract workload; elsewhere a 404 decides what an entry runs.
        for server in peers_classic.SERVERS:
            expected = frozenset({"bigtable"}) if server.name.startswith("cgi-") else None
            self.assertEqual(server.workloads, expected, server.name)
            self.assertTrue(server.description, server.name)

    def test_each_says_its_process_count(self):
        for server in peers_classic.SERVERS:
            self.assertRegex(server.description, r"process|reactor", server.name)


class LighttpdTest(ScratchCheckout):
    def test_fastcgi_entries_start_the_report_process_counts(self):
        for name, procs in (("lighttpd-fcgi-1", 1), ("lighttpd-fcgi-20", 20)):
            launch = self.launch(name)
            conf = Path(launch.argv[-1])
            self.assertEqual(launch.argv[1:3], ["-D", "-f"], "lighttpd stays in the foreground, in the runner's group")
            text = conf.read_text()
            self.assertIn(f'"max-procs" => {procs},', text)
            self.assertIn(f'"min-procs" => {procs},', text)
            self.assertIn(f'"bin-path" => "{self.paths.build / "lighttpd" / "fastcgi-app"}"', text)
            self.assertIn("server.max-worker = 0", text)
            self.assertIn(f"server.port = {PORT}", text)
            self.assertNotIn("$", text)

    def test_the_fastcgi_app_is_built_once_for_both(self):
        one, twenty = (ENTRIES[n].build(self.paths) for n in ("lighttpd-fcgi-1", "lighttpd-fcgi-20"))
        self.assertEqual([s.argv for s in one], [s.argv for s in twenty])
        self.assertEqual(one[0].argv[-3:], ["-m", "kilnbench.install", "libfcgi-dev"])
        self.assertIn("-lfcgi", one[1].argv)

    def test_the_file_entry_serves_the_static_folder_and_nothing_else(self):
        text = Path(self.launch("lighttpd").argv[-1]).read_text()
        self.assertIn(f'alias.url = ( "/static/" => "{self.paths.static}/" )', text)
        self.assertNotIn("fastcgi", text)

    def test_cgi_entries_map_bigtable_to_their_program(self):
        for name, program, interpreter in (
            ("cgi-c", self.paths.build / "cgi-c" / "bigtable.cgi", '""'),
            ("cgi-perl", self.paths.peers / "cgi-bigtable" / "bigtable.pl", "perl"),
            ("cgi-python", self.paths.peers / "cgi-bigtable" / "bigtable.py", "python3"),
        ):
            text = Path(self.launch(name).argv[-1]).read_text()
            self.assertIn(f'alias.url = ( "/bigtable" => "{program}" )', text)
            self.assertIn('"mod_cgi"', text)
            assign = next(line for line in text.splitlines() if line.startswith("cgi.assign"))
            self.assertIn(interpreter, assign)
        (compile_c,) = ENTRIES["cgi-c"].build(self.paths)
        self.assertEqual(compile_c.argv[:2], ["gcc", "-O2"])
        self.assertEqual(ENTRIES["cgi-perl"].build(self.paths), [])

    def test_room_for_the_idle_connections_within_the_descriptor_limit(self):
        with mock.patch("resource.getrlimit", return_value=(1024, 20000)):
            text = Path(self.launch("lighttpd").argv[-1]).read_text()
        self.assertIn("server.max-fds = 20000", text)
        self.assertIn("server.max-connections = 10000", text)

    @unittest.skipUnless(shutil.which("lighttpd", path="/usr/sbin:/usr/bin"), "lighttpd is not installed")
    def test_lighttpd_accepts_every_rendered_config(self):
        for name in ("lighttpd-fcgi-20", "lighttpd", "cgi-python"):
            argv = self.launch(name).argv
            done = subprocess.run([argv[0], "-tt", "-f", argv[-1]], capture_output=True, text=True, timeout=30)
            self.assertEqual(done.returncode, 0, f"{name}: {done.stdout}{done.stderr}")


class ApacheTest(ScratchCheckout):
    def test_prefork_mod_php_has_a_process_for_every_connection(self):
        launch = self.launch("apache-php")
        self.assertEqual(launch.argv[1:], ["-f", str(self.paths.build / "apache-php" / "httpd.conf"), "-DFOREGROUND"])
        text = Path(launch.argv[2]).read_text()
        self.assertIn("mod_mpm_prefork.so", text)
        self.assertIn("libphp8.2.so", text)
        self.assertGreater(peers_classic.APACHE_PREFORK_WORKERS, 100, "the suite drives 100 keep-alive connections")
        self.assertIn(f"MaxRequestWorkers {peers_classic.APACHE_PREFORK_WORKERS}", text)
        self.assertIn(f'Alias /pong "{self.paths.peers / "apache" / "php" / "pong.php"}"', text)
        self.assertIn('<FilesMatch "\\.php$">', text)
        self.assertIn(f'Alias /static/ "{self.paths.static}/"', text, "the Snap report's Apache served the file too")

    def test_a_path_it_lacks_is_a_404_not_a_403(self):
        launch = self.launch("apache")
        text = Path(launch.argv[2]).read_text()
        self.assertIn(f'DocumentRoot "{self.paths.build / "apache" / "empty"}"', text)
        self.assertTrue((self.paths.build / "apache" / "empty").is_dir())

    def test_the_file_entry_is_one_event_process_without_php(self):
        text = Path(self.launch("apache").argv[2]).read_text()
        self.assertIn("mod_mpm_event.so", text)
        self.assertIn("ServerLimit 1\n", text)
        self.assertNotIn("php", text)
        self.assertIn(f'Alias /static/ "{self.paths.static}/"', text)

    def test_workers_drop_root(self):
        for uid, user in ((0, "User www-data"), (1000, None)):
            with mock.patch("os.geteuid", return_value=uid):
                text = Path(self.launch("apache-php").argv[2]).read_text()
            if user:
                self.assertIn(user, text)
            else:
                self.assertNotIn("User ", text)

    @unittest.skipUnless(shutil.which("apache2", path="/usr/sbin") and Path("/usr/lib/apache2/modules/libphp8.2.so").exists(),
                         "apache2 with mod_php is not installed")  # fmt: skip
    def test_apache_accepts_both_rendered_configs(self):
        for name in ("apache-php", "apache"):
            argv = self.launch(name).argv
            done = subprocess.run([argv[0], "-t", "-f", argv[2]], capture_output=True, text=True, timeout=30)
            self.assertEqual(done.returncode, 0, f"{name}: {done.stdout}{done.stderr}")


class RubyTest(ScratchCheckout):
    def test_one_rails_app_on_three_servers_in_production(self):
        config = str(self.paths.peers / "rails" / "config.ru")
        puma, thin, webrick = (self.launch(f"rails-{s}") for s in ("puma", "thin", "webrick"))
        self.assertEqual(puma.argv[0], "puma")
        self.assertIn(f"tcp://127.0.0.1:{PORT}", puma.argv)
        self.assertEqual(puma.argv[-1], config)
        self.assertEqual(thin.argv[:2], ["thin", "start"])
        self.assertIn(config, thin.argv)
        self.assertIn("--max-persistent-conns", thin.argv)  # thin's default of 100 caps keep-alive
        self.assertEqual(webrick.argv, ["ruby", str(self.paths.peers / "rails" / "webrick.rb")])
        for launch in (puma, thin, webrick):
            self.assertEqual(launch.env["RAILS_ENV"], "production")
            self.assertEqual(launch.env["PORT"], str(PORT))
            self.assertEqual(launch.env["STATIC_DIR"], str(self.paths.static))
            self.assertTrue(launch.env["RAILS_APP_ROOT"].startswith(str(self.paths.build)), "nothing written into the checkout")

    def test_the_mix_stack_needs_postgres(self):
        for url in (None, "sqlite://data/kiln.sqlite"):
            with self.assertRaises(Unsupported):
                self.launch("ruby-em-pg", url)
        url = "postgres://u:p@127.0.0.1:5432/hello_world"
        launch = self.launch("ruby-em-pg", url)
        self.assertEqual(launch.env["DATABASE_URL"], url)
        self.assertEqual(launch.argv, ["ruby", str(self.paths.peers / "ruby-em-pg" / "server.rb")])
        (step,) = ENTRIES["ruby-em-pg"].build(self.paths)
        self.assertEqual(step.argv[-3:], ["ruby-pg", "ruby-eventmachine", "ruby-http-parser.rb"])

    def test_twisted_runs_from_its_own_venv(self):
        venv = self.paths.build / "twisted" / "venv"
        create, pip = ENTRIES["twisted"].build(self.paths)
        self.assertEqual(create.argv[1:], ["-m", "venv", str(venv)])
        self.assertEqual(pip.argv[0], str(venv / "bin" / "pip"))
        self.assertEqual(self.launch("twisted").argv[0], str(venv / "bin" / "python"))


if __name__ == "__main__":
    unittest.main()
