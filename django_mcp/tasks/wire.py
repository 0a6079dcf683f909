"""A task row as the Tasks extension shows it: the ``DetailedTask`` of its status (ext-tasks
``tasks.md``, "Task"), its timestamps and the ``statusMessage`` a client sees. Apart from
:mod:`.store`, which changes rows, so that shaping a row is one small thing."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from django_mcp.protocol import tasks as proto

if TYPE_CHECKING:
    from django_mcp.tasks.models import MCPTask

#: The ``statusMessage`` of a ``working`` task that no worker is running yet (queued, or
#: queued again after its last answer): without it a client could not tell a task stuck
#: behind a busy (or absent) worker pool from one whose tool is slow.
WAITING_FOR_WORKER = "Waiting for a worker to pick this task up"


def iso(moment: datetime) -> str:
    """ISO 8601 in UTC with a ``Z``, as ``createdAt``/``lastUpdatedAt`` need, always with
    six fractional digits: ``isoformat()`` drops a zero fraction, and a stamp on a whole
    second (``...:32Z``) then sorted after one later in that second (``...:32.48Z``) for
    a client that compares the strings."""
    return moment.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def to_wire(task: MCPTask, poll_interval_ms: int | None = None) -> dict[str, Any]:
    """The ``DetailedTask`` for the task's current status (no ``resultType``)."""
    wire: dict[str, Any] = {
        "taskId": task.id,
        "status": task.status,
        "createdAt": iso(task.created_at),
        "lastUpdatedAt": iso(task.last_updated_at),
        "ttlMs": task.ttl_ms,
    }
    message = shown_message(task)
    if message:
        wire["statusMessage"] = message
    if poll_interval_ms is not None and not task.is_terminal:
        wire["pollIntervalMs"] = poll_interval_ms
    if task.status == proto.INPUT_REQUIRED:
        wire["inputRequests"] = dict(task.input_requests)
    elif task.status == proto.COMPLETED:
        wire["result"] = task.result
    elif task.status == proto.FAILED:
        wire["error"] = task.error
    return wire


def shown_message(task: MCPTask) -> str:
    """The ``statusMessage`` a client sees: :data:`WAITING_FOR_WORKER` while the task is
    ``working`` and no worker runs it; once it ``failed``, its error's message (ext-tasks
    ``tasks.md``, "Task Execution Errors": a SHOULD, and the last progress report is no
    diagnosis); else what its tool last reported (possibly none)."""
    if task.status == proto.WORKING and task.heartbeat_at is None:
        return WAITING_FOR_WORKER
    message = task.error.get("message") if isinstance(task.error, dict) else None
    if task.status == proto.FAILED and isinstance(message, str) and message:
        return message
    return task.status_message
