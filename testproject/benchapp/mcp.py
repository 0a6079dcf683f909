"""The tools the benchmark calls: ``add(1, 2)``, and ``progress_burst`` for the stream."""

from __future__ import annotations

import django_mcp
from django_mcp import Context


@django_mcp.tool(read_only=True)
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@django_mcp.tool(read_only=True)
def progress_burst(ctx: Context) -> str:
    """Report progress 0, 50 and 100 (of 100) at once, then answer: what a streamed call
    costs the server, with no sleep in it. The conformance suite's
    ``test_tool_with_progress`` waits 50 ms between its reports, which a latency figure
    would mostly measure. ``PROGRESS_INTERVAL`` paces these: 0 is sent at once, 50 is
    replaced by 100, which is sent just before the result, so the stream carries two
    notifications and the result (a client sees every report a paced server would send)."""
    for progress in (0, 50, 100):
        ctx.report_progress(progress, total=100)
    return "done"
