"""Method and notification names of MCP 2026-07-28, as named constants."""

from __future__ import annotations

from typing import Final

SERVER_DISCOVER: Final = "server/discover"
TOOLS_LIST: Final = "tools/list"
TOOLS_CALL: Final = "tools/call"
RESOURCES_LIST: Final = "resources/list"
RESOURCES_TEMPLATES_LIST: Final = "resources/templates/list"
RESOURCES_READ: Final = "resources/read"
PROMPTS_LIST: Final = "prompts/list"
PROMPTS_GET: Final = "prompts/get"
COMPLETION_COMPLETE: Final = "completion/complete"
SUBSCRIPTIONS_LISTEN: Final = "subscriptions/listen"

INITIALIZE: Final = "initialize"

#: Methods earlier revisions had and 2026-07-28 removed: 404 / -32601 (changelog.mdx;
#: basic/transports/streamable-http.mdx, "Protocol Version Header").
REMOVED_METHODS: Final = frozenset(
    {
        INITIALIZE,
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "tasks/list",
        "tasks/result",
    }
)

#: Methods whose ``Mcp-Name`` header mirrors a body field, and which field.
#: The tasks methods of the Tasks extension mirror the task id in ``Mcp-Name``.
NAME_FIELDS: Final = {
    TOOLS_CALL: "name",
    PROMPTS_GET: "name",
    RESOURCES_READ: "uri",
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}

NOTIFICATION_PROGRESS: Final = "notifications/progress"
NOTIFICATION_MESSAGE: Final = "notifications/message"
NOTIFICATION_CANCELLED: Final = "notifications/cancelled"
