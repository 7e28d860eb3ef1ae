"""Fetch a missing tool before it is needed: Debian packages with apt-get (as root), Python ones with pip.

A fresh machine lacks wrk, ab, httperf, nginx...; the runner asks for each tool
it is about to use, and a tool that cannot be had becomes a row saying why. Peers that
need libraries rather than executables install them in a build step,
`python3 -m kilnbench.install PACKAGE...` (see `servers.debian_packages`).
"""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys

APT_TIMEOUT_S = 900
"""Longest an apt-get or pip call may take before it is abandoned."""

_apt_updated = False


class Missing(RuntimeError):
    """A tool is absent and could not be installed."""


def _apt_get(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    return subprocess.run(
        ["apt-get", *args], env=env, capture_output=True, text=True, timeout=APT_TIMEOUT_S, check=False
    )


def ensure_tool(executable: str, package: str, log=print) -> str:
    """Path of `executable`, installing Debian `package` first if it is missing."""
    global _apt_updated
    found = shutil.which(executable) or shutil.which(executable, path="/usr/sbin:/sbin")
    if found:
        return found
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        raise Missing(f"{executable} not found (install Debian package {package})")
    log(f"installing {package} with apt-get (for {executable})")
    if not _apt_updated:
        _apt_get("update", "-q")
        _apt_updated = True
    done = _apt_get("install", "-y", "-q", "--no-install-recommends", package)
    found = shutil.which(executable) or shutil.which(executable, path="/usr/sbin:/sbin")
    if done.returncode != 0 or not found:
        raise Missing(f"apt-get install {package} failed: {done.stderr.strip()[-300:]}")
    return found


def ensure_python_module(module: str, requirement: str, log=print) -> bool:
    """Import `module`, pip-installing `requirement` first if needed; False if it cannot be had."""
    try:
        importlib.import_module(module)
        return True
    except ImportError:
        pass
    log(f"installing {requirement} with pip (for {module})")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", requirement],
        capture_output=True,
        timeout=APT_TIMEOUT_S,
        check=False,
    )
    importlib.invalidate_caches()
    try:
        importlib.import_module(module)
        return True
    except ImportError:
        return False


def debian_installed(package: str) -> bool:
    """Whether Debian `package` is installed."""
    return _dpkg_query("${Status}", package).endswith("install ok installed")


def debian_version(package: str) -> str:
    """The installed version of Debian `package`, or "?"."""
    return _dpkg_query("${Version}", package) or "?"


def _dpkg_query(field: str, package: str) -> str:
    try:
        done = subprocess.run(
            ["dpkg-query", "-W", f"-f={field}", package], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.strip()


def install_debian(packages: list[str]) -> int:
    """Installs the missing ones of `packages` with apt-get, saying so; the exit status of a build step."""
    missing = [p for p in packages if not debian_installed(p)]
    if not missing:
        print(f"already installed: {' '.join(packages)}")
        return 0
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        print(f"missing Debian packages {' '.join(missing)}: run as root, or apt-get install them", file=sys.stderr)
        return 1
    print(f"installing {' '.join(missing)} with apt-get", flush=True)
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    lock = ["-o", "DPkg::Lock::Timeout=600"]  # other peers may be installing at the same moment
    subprocess.run(["apt-get", *lock, "update", "-q"], env=env, timeout=APT_TIMEOUT_S, check=False)
    argv = ["apt-get", *lock, "install", "-y", "-q", "--no-install-recommends", *missing]
    return subprocess.run(argv, env=env, timeout=APT_TIMEOUT_S, check=False).returncode


if __name__ == "__main__":
    if len(sys.argv) > 1:
        sys.exit(install_debian(sys.argv[1:]))
    sys.exit("usage: python3 -m kilnbench.install PACKAGE...")
