"""``gated_work``: a task that runs until the test opens its gate (bounded).

The gate is a file name in the directory ``LIVE_TASKS_GATES`` names; the test creates the
file to let the task finish. Until then the tool reports progress every 0.1 s, which is
also where it notices ``tasks/cancel``. ``statusMessage`` "started" tells the test that a
worker has picked the task up (its heartbeat is recorded before the tool runs).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import django_mcp
from django_mcp import Context, ToolError

#: 0.1 s steps: the tool gives up after 30 s, so a lost test never leaves a worker busy.
MAX_STEPS = 300


@django_mcp.tool(task="required")
def gated_work(ctx: Context, gate: str) -> str:
    """Work until the gate file ``gate`` exists, then complete."""
    if Path(gate).name != gate:
        raise ToolError("gate is a plain file name")
    path = Path(os.environ["LIVE_TASKS_GATES"]) / gate
    ctx.report_progress(0, message="started")
    for step in range(1, MAX_STEPS + 1):
        if path.exists():
            return f"{gate} opened"
        ctx.report_progress(step)  # raises once the task is cancelled
        time.sleep(0.1)
    raise ToolError(f"{gate} never opened")
