"""Fetch a missing tool before it is needed: Debian packages with apt-get (as root), Python ones with pip.

A fresh machine lacks wrk, ab, httperf, nginx...; the runner asks for each tool
it is about to use, and a tool that cannot be had becomes a row saying why.
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
