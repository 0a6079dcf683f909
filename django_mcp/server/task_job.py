"""The one Django Tasks job django-mcp enqueues: run an MCP task by id.

Imported only when a task is enqueued or a worker runs one, because the ``@task``
decorator validates against the configured ``TASKS`` backends.
"""

from __future__ import annotations

from django_mcp.server import task_runner
from django_mcp.tasks.engine import task


@task()  # type: ignore[untyped-decorator]
def run_mcp_task(task_id: str) -> str:
    """Run the MCP task ``task_id`` once (see :func:`task_runner.run`); the task's status
    after the run is the job's return value (``"cancelled"`` for a job the backend lists as
    successful because the tool stopped when asked)."""
    return task_runner.run(task_id)
