"""The install step peers' builds run: `python3 -m kilnbench.install PACKAGE...`."""

import subprocess
import unittest
from pathlib import Path
from unittest import mock

from kilnbench import install
from kilnbench.servers import Paths, debian_packages

BENCH = Path(__file__).resolve().parents[1]


class InstallTest(unittest.TestCase):
    def test_the_install_step_runs_as_a_module_from_its_folder(self):
        step = debian_packages(Paths(BENCH.parent), "thin")
        usage = subprocess.run(step.argv[:3], cwd=step.cwd, capture_output=True, text=True, timeout=60)
        self.assertEqual(step.cwd, BENCH)
        self.assertIn("usage: python3 -m kilnbench.install PACKAGE", usage.stderr)

    def test_nothing_runs_when_every_package_is_installed(self):
        with mock.patch.object(install, "debian_installed", return_value=True), mock.patch("subprocess.run") as run:
            self.assertEqual(install.install_debian(["ruby-pg"]), 0)
        run.assert_not_called()

    def test_only_the_missing_are_installed_and_apt_waits_for_the_lock(self):
        done = subprocess.CompletedProcess([], 0)
        with (
            mock.patch.object(install, "debian_installed", side_effect=lambda p: p == "ruby-pg"),
            mock.patch("os.geteuid", return_value=0),
            mock.patch("shutil.which", return_value="/usr/bin/apt-get"),
            mock.patch("subprocess.run", return_value=done) as run,
            mock.patch("builtins.print"),
        ):
            self.assertEqual(install.install_debian(["ruby-pg", "thin"]), 0)
        argv = run.call_args_list[-1].args[0]
        self.assertEqual(argv[-1], "thin")
        self.assertNotIn("ruby-pg", argv)
        self.assertIn("DPkg::Lock::Timeout=600", argv)

    def test_without_root_it_fails_and_says_what_to_install(self):
        with (
            mock.patch.object(install, "debian_installed", return_value=False),
            mock.patch("os.geteuid", return_value=1000),
            mock.patch("builtins.print") as say,
        ):
            self.assertEqual(install.install_debian(["thin"]), 1)
        self.assertIn("thin", say.call_args.args[0])



if __name__ == "__main__":
    unittest.main()
