"""Method handlers: one function per MCP method, looked up in :data:`HANDLERS`.

A handler receives the server, the request params and the :class:`Context`, and returns the
result dict (``resultType`` and ``serverInfo`` are added by the server). ``capability``
names the server capability that must be advertised for the method to exist.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django_mcp.protocol import methods
from django_mcp.protocol import tasks as task_methods
from django_mcp.server.handlers import (
    completion,
    discover,
    listen,
    prompts,
    resources,
    tasks,
    tools,
)
from django_mcp.server.handlers.listen import LISTEN_CAPABILITY
from django_mcp.server.handlers.tasks import TASKS_CAPABILITY

if TYPE_CHECKING:
    from django_mcp.server.context import Context
    from django_mcp.server.dispatch import MCPServer

HandlerFunc = Callable[["MCPServer", dict[str, Any], "Context"], dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Handler:
    func: HandlerFunc
    capability: str | None = None


HANDLERS: dict[str, Handler] = {
    methods.SERVER_DISCOVER: Handler(discover.discover),
    methods.TOOLS_LIST: Handler(tools.list_tools, "tools"),
    methods.TOOLS_CALL: Handler(tools.call_tool, "tools"),
    methods.RESOURCES_LIST: Handler(resources.list_resources, "resources"),
    methods.RESOURCES_TEMPLATES_LIST: Handler(resources.list_templates, "resources"),
    methods.RESOURCES_READ: Handler(resources.read_resource, "resources"),
    methods.PROMPTS_LIST: Handler(prompts.list_prompts, "prompts"),
    methods.PROMPTS_GET: Handler(prompts.get_prompt, "prompts"),
    methods.COMPLETION_COMPLETE: Handler(completion.complete, "completions"),
    # Served as a stream by the transport (MCPServer.open_listen); this entry makes the
    # method known to admission, gated on the site offering subscriptions.
    methods.SUBSCRIPTIONS_LISTEN: Handler(listen.not_streamed, LISTEN_CAPABILITY),
    # The Tasks extension: present when some tool of the site may run as a task.
    task_methods.TASKS_GET: Handler(tasks.get_task, TASKS_CAPABILITY),
    task_methods.TASKS_UPDATE: Handler(tasks.update_task, TASKS_CAPABILITY),
    task_methods.TASKS_CANCEL: Handler(tasks.cancel_task, TASKS_CAPABILITY),
}
