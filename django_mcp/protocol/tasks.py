"""The Tasks extension (``io.modelcontextprotocol/tasks``), without storage or Django.

Names, statuses and wire shapes of the extension's specification (ext-tasks
``specification/draft/tasks.md``; SEP-2663): a ``tools/call`` may answer with a flat
``CreateTaskResult`` (``resultType: "task"``), which the client polls with ``tasks/get``,
feeds with ``tasks/update`` and stops with ``tasks/cancel``. Every tasks request is judged
on its own ``_meta``: a request that does not declare the extension never gets a task and
gets -32021 from the tasks methods.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from . import jsonrpc
from .errors import MissingRequiredClientCapability
from .meta import SUBSCRIPTION_ID_KEY, RequestMeta

EXTENSION: Final = "io.modelcontextprotocol/tasks"

TASKS_GET: Final = "tasks/get"
TASKS_UPDATE: Final = "tasks/update"
TASKS_CANCEL: Final = "tasks/cancel"
METHODS: Final = frozenset({TASKS_GET, TASKS_UPDATE, TASKS_CANCEL})
NOTIFICATION: Final = "notifications/tasks"

WORKING: Final = "working"
INPUT_REQUIRED: Final = "input_required"
COMPLETED: Final = "completed"
FAILED: Final = "failed"
CANCELLED: Final = "cancelled"
STATUSES: Final = (WORKING, INPUT_REQUIRED, COMPLETED, FAILED, CANCELLED)
ACTIVE: Final = frozenset({WORKING, INPUT_REQUIRED})
TERMINAL: Final = frozenset({COMPLETED, FAILED, CANCELLED})

#: ``resultType`` of a ``CreateTaskResult``; nothing else may carry it.
RESULT_TYPE_TASK: Final = "task"


def declares(meta: RequestMeta) -> bool:
    """Whether this request declared the extension in its client capabilities."""
    extensions = meta.client_capabilities.get("extensions")
    return isinstance(extensions, Mapping) and isinstance(extensions.get(EXTENSION), Mapping)


def missing_extension(message: str | None = None) -> MissingRequiredClientCapability:
    """-32021 naming the extension in ``data.requiredCapabilities``."""
    return MissingRequiredClientCapability(
        {"extensions": {EXTENSION: {}}},
        message or f"This request requires the client to declare the {EXTENSION} extension",
    )


def require(meta: RequestMeta) -> None:
    """Raise -32021 unless the request declared the extension."""
    if not declares(meta):
        raise missing_extension()


def create_result(task: Mapping[str, Any]) -> dict[str, Any]:
    """The flat ``CreateTaskResult`` for a new task: the ``Task`` fields only, never a
    ``result``, ``error``, ``inputRequests`` or ``requestState``."""
    fields = ("taskId", "status", "statusMessage", "createdAt", "lastUpdatedAt", "ttlMs")
    result = {key: task[key] for key in fields if key in task}
    if "pollIntervalMs" in task:
        result["pollIntervalMs"] = task["pollIntervalMs"]
    result["resultType"] = RESULT_TYPE_TASK
    return result


def notification(subscription_id: jsonrpc.RequestId, task: Mapping[str, Any]) -> dict[str, Any]:
    """``notifications/tasks`` carrying the detailed task, tagged with the subscription."""
    params = {**task, "_meta": {SUBSCRIPTION_ID_KEY: subscription_id}}
    return jsonrpc.notification(NOTIFICATION, params)
