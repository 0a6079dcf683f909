"""Forking while another thread holds a lock, for the tests of what a forked child
inherits (django_mcp/listen/limits.py, shutdown.py)."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable
from typing import Any


def fork_while_held(lock: Any, child: Callable[[], bool], within: float = 10) -> int | None:
    """Fork while a thread of this process holds ``lock``; run ``child`` in the child,
    which exits 0 if it returned true, 1 if false, 2 if it raised. Returns the child's exit
    status, or None (the child killed) if it had not ended ``within`` seconds: a child
    waiting for a lock whose holder does not exist there."""
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with lock:
            held.set()
            release.wait(30)

    holder = threading.Thread(target=hold, daemon=True)
    holder.start()
    held.wait(5)
    try:
        pid = os.fork()
        if pid == 0:  # the child: report through the exit status only
            try:
                os._exit(0 if child() else 1)
            finally:
                os._exit(2)
        return _wait_for_child(pid, within)
    finally:
        release.set()
        holder.join(5)


def _wait_for_child(pid: int, within: float) -> int | None:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return None
