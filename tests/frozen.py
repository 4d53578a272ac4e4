"""Freezing a process for a test (SIGSTOP) and knowing it is frozen: the signal is delivered
asynchronously, so a process signalled a moment ago may still answer (a loaded machine showed
it), and a test must wait until every one of its threads has stopped."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path


def freeze(pid: int, timeout: float = 10.0) -> None:
    """SIGSTOP ``pid``; returns once every thread of it has stopped."""
    os.kill(pid, signal.SIGSTOP)
    tasks = Path(f"/proc/{pid}/task")
    deadline = time.monotonic() + timeout
    while tasks.exists() and not all(_stopped(task) for task in tasks.iterdir()):
        if time.monotonic() > deadline:
            raise RuntimeError(f"process {pid} did not stop within {timeout:.0f}s of SIGSTOP")
        time.sleep(0.005)


def _stopped(task: Path) -> bool:
    """Whether a thread (a /proc/PID/task entry) is stopped: the state after its name's ")"."""
    try:
        stat = (task / "stat").read_text()
    except OSError:  # the thread is gone
        return True
    return stat[stat.rindex(")") + 2] in "Tt"
