"""The Streamable HTTP transport: the middleware (admission), the view (dispatch), the
status table, SSE streaming and the ``Origin`` check. It maps the server's outcomes to HTTP
and decides no protocol rule of its own."""

from django_mcp._compat import moved

# ``django_mcp.http`` was one module (now :mod:`django_mcp.http.responses`).
__getattr__ = moved(
    __name__,
    "django_mcp.http.responses",
    frozenset(
        {"JSON_CONTENT_TYPE", "STATUS_BY_ERROR", "admission_response", "error_response"}
        | {"json_response", "method_not_allowed", "status_for"}
    ),
)
