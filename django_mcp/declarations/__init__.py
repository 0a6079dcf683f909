"""What a decorated function becomes: tools, resources, prompts and their building blocks
(signatures and schemas, content, completion, permissions, calling user code). Nothing
here knows about HTTP, the request log or how requests are dispatched."""

from django_mcp._compat import moved

# ``django_mcp.declarations`` was one module (now :mod:`django_mcp.declarations.tools`).
__getattr__ = moved(
    __name__,
    "django_mcp.declarations.tools",
    frozenset({"ToolAnnotations", "ToolSpec", "describe", "describe_errors", "structured_result"}),
)
