"""``tasks/get``, ``tasks/update`` and ``tasks/cancel`` of the Tasks extension
(ext-tasks ``specification/draft/tasks.md``).

Each checks first that the request declared the extension (-32021 otherwise, before any
lookup, so an undeclared request learns nothing about task ids), then finds the task
among the caller's own: another caller's task, an unknown id and an expired one all get
the same -32602. Every answer carries ``resultType: "complete"``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from django.db import transaction

from django_mcp.protocol import tasks as proto
from django_mcp.protocol.errors import InvalidParams
from django_mcp.server import tasking
from django_mcp.server.input_requests import shape_of
from django_mcp.tasks import store

if TYPE_CHECKING:
    from django_mcp.server.context import Context
    from django_mcp.server.dispatch import MCPServer

#: Marks the tasks methods: they exist when the site offers the extension.
TASKS_CAPABILITY = "extensions/" + proto.EXTENSION


def get_task(server: MCPServer, params: dict[str, Any], context: Context) -> dict[str, Any]:
    """The detailed task: ``inputRequests``, ``result`` or ``error`` by status."""
    proto.require(context.meta)
    return tasking.task_wire(tasking.lookup(params.get("taskId"), context))


def update_task(server: MCPServer, params: dict[str, Any], context: Context) -> dict[str, Any]:
    """Deliver answers; keys that are not outstanding are ignored. The answered keys are
    gone from the very next ``tasks/get``; the last answer resumes the task."""
    proto.require(context.meta)
    task = tasking.lookup(params.get("taskId"), context)
    responses = params.get("inputResponses")
    if not isinstance(responses, Mapping):  # required (ext-tasks UpdateTaskRequest)
        raise InvalidParams("params.inputResponses is required and must be an object")
    answered: list[str] = []

    def check(key: str, asked: Any, response: Any) -> None:
        # Checked against what is outstanding with the row locked, not as the task was
        # read above: a worker may have asked meanwhile, and a client may know the keys.
        if not isinstance(response, Mapping):
            raise InvalidParams(f"inputResponses.{key} must be an object", data={"key": key})
        # An answer of the wrong shape is refused now, as in a synchronous round, rather
        # than failing the task when it resumes.
        shape = shape_of(asked)
        if shape is not None:
            shape.parse(key, response)
        store.require_storable(response, f"params.inputResponses.{key}")
        answered.append(key)

    with transaction.atomic():
        resumed = store.answer(task.id, responses, check)
        if resumed:
            tasking.enqueue(task.id)
    if answered:
        tasking.announce(task.id)
    return {}


def cancel_task(server: MCPServer, params: dict[str, Any], context: Context) -> dict[str, Any]:
    """Cancel cooperatively; the same empty ack for a task that already ended."""
    proto.require(context.meta)
    task = tasking.lookup(params.get("taskId"), context)
    if store.cancel(task.id):
        tasking.announce(task.id)
    return {}
