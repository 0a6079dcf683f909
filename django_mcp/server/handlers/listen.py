"""``subscriptions/listen`` is answered by a stream the transport keeps open; see
:meth:`django_mcp.server.dispatch.MCPServer.open_listen` and :mod:`django_mcp.listen.fanout`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from django_mcp.protocol.errors import MethodNotFound

if TYPE_CHECKING:
    from django_mcp.server.context import Context
    from django_mcp.server.dispatch import MCPServer

#: Pseudo-capability: the method exists when the site can deliver change notifications.
LISTEN_CAPABILITY: Final = "subscriptions/listen"


def not_streamed(server: MCPServer, params: dict[str, Any], context: Context) -> dict[str, Any]:
    """A transport that cannot hold a stream open does not offer the method."""
    raise MethodNotFound("subscriptions/listen needs a streaming transport")
