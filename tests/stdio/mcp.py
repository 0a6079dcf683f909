"""Tools the stdio tests call in an ``mcp_stdio`` process."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import django_mcp
from django_mcp import Context

#: Upper bound on how long ``wait_for_cancel`` waits: a test that fails never hangs.
WAIT_SECONDS = 30.0


@django_mcp.tool
def wait_for_cancel(ctx: Context) -> str:
    """Report progress once, then wait until the request is cancelled."""
    cancelled = threading.Event()
    ctx.on_cancel(cancelled.set)
    ctx.report_progress(1, total=2)
    cancelled.wait(WAIT_SECONDS)
    ctx.check_cancelled()
    return "not cancelled"


@django_mcp.tool
def caller(ctx: Context) -> str:
    """The username of the caller, or ``anonymous``."""
    user = ctx.user
    return user.get_username() if user is not None and user.is_authenticated else "anonymous"


@django_mcp.tool
def noisy() -> str:
    """Print to stdout, which must never reach the protocol stream."""
    print("noise from a tool")
    return "quiet"


def still_active(ctx: Context) -> bool:
    """A permission check that asks the database (the user may have been deactivated)."""
    from django.contrib.auth import get_user_model

    user = ctx.user
    return bool(
        user is not None
        and user.is_authenticated
        and get_user_model().objects.filter(pk=user.pk, is_active=True).exists()
    )


@django_mcp.tool(permission=still_active)
def active_only() -> str:
    """Only for a user who is still active."""
    return "welcome"


@django_mcp.tool
def shell_out() -> str:
    """Run a child process that writes to its stdout, as tools that shell out do."""
    subprocess.run(["echo", "noise from a child process"], check=True)
    return "done"


@django_mcp.tool
def slow_noisy(ctx: Context, seconds: float) -> str:
    """Report progress once (it runs), work for ``seconds``, then print to stdout (which
    must never reach the protocol stream) and answer."""
    ctx.report_progress(1, total=2)
    time.sleep(seconds)
    print("noise from a slow tool")
    return "slow and quiet"


@django_mcp.tool
def shell_out_reading_stdin() -> str:
    """Run a child process that reads its stdin to the end (as ``cat``, ``sort`` or
    ``ffmpeg`` do when a tool does not give them one), and say how many bytes it got."""
    child = [sys.executable, "-c", "import sys; print(len(sys.stdin.buffer.read()))"]
    try:
        done = subprocess.run(child, stdout=subprocess.PIPE, timeout=5)
    except subprocess.TimeoutExpired:
        return "the child waited for stdin"
    return f"the child read {done.stdout.decode().strip()} bytes"


@django_mcp.tool
def pause(seconds: float) -> str:
    """Hold a worker for ``seconds``, then answer."""
    time.sleep(seconds)
    return "paused"


@django_mcp.tool
def exits() -> str:
    """Call ``sys.exit``, as a tool that wraps a command-line program's ``main`` may."""
    sys.exit(3)


def exits_when_called(ctx: Context) -> bool:
    """A permission check that calls ``sys.exit`` when the tool is called (a buggy one
    that wraps a command-line check, say); listing the tools sees it allow."""
    if ctx.method == "tools/call":
        sys.exit(4)
    return True


@django_mcp.tool(permission=exits_when_called)
def checked_by_exit() -> str:
    """Guarded by a permission check that exits."""
    return "never"
