"""A server's CPU time as the suite reads it from /proc."""

import os
import subprocess
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kilnbench.procfs import cpu_seconds  # noqa: E402

# Burns CPU for a fixed amount of work, not a fixed time, then waits to be told to exit.
BUSY_CHILD = "n = 0\nfor i in range(5_000_000): n += i\nimport sys; sys.stdin.read()"


class CpuSecondsTest(unittest.TestCase):
    def test_the_cpu_of_a_child_that_exits_is_not_lost(self):
        # A CGI server forks a process per request: once reaped, a child's time is its
        # parent's cutime/cstime. Counting only live processes, the tree's total fell
        # when a child exited, and a run's CPU per request came out negative.
        child = subprocess.Popen([sys.executable, "-c", BUSY_CHILD], stdin=subprocess.PIPE)
        try:
            while _own_cpu(child.pid) < 0.05:  # the child has done work worth a few ticks
                if child.poll() is not None:
                    self.fail("the busy child exited early")
                os.sched_yield()
            with_child_alive = cpu_seconds(os.getpid())
        finally:
            child.communicate(b"", timeout=60)  # tells it to exit, and reaps it
        self.assertGreaterEqual(cpu_seconds(os.getpid()), with_child_alive)


def _own_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


if __name__ == "__main__":
    unittest.main()
