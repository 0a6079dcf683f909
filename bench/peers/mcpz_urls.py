"""django-mcpz's server with the ``add`` tool, at ``/mcp``."""

from __future__ import annotations

import msgspec
from django.http import HttpRequest
from django.urls import path
from django_mcpz.server import MCPServer, public

server = MCPServer(name="bench-mcpz", version="1.0.0", auth=public)


class AddParams(msgspec.Struct):
    a: int
    b: int


@server.tool(description="Add two integers.", read_only=True)
def add(request: HttpRequest, params: AddParams) -> int:
    return params.a + params.b


urlpatterns = [path("mcp", server)]
