"""Return a str for text, content classes for anything else, or a list mixing them."""

import base64

import django_mcp
from django_mcp import Annotations, Image, ResourceLink, Text, ToolResult

# A 1x1 transparent PNG.
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


@django_mcp.tool(read_only=True)
def logo() -> Image:
    """The shop's logo."""
    return Image(PIXEL, mime_type="image/png")


@django_mcp.tool(read_only=True)
def reading_list() -> list[str | ResourceLink]:
    """A short reading list: text, then links the client can read as resources."""
    return [
        "Two classics to start with:",
        ResourceLink("books://9780141439518", name="Pride and Prejudice"),
        ResourceLink("books://9780441172719", name="Dune", mime_type="application/json"),
    ]


@django_mcp.tool(read_only=True)
def stock_report() -> ToolResult:
    """Full control: content for the model, annotations, and isError."""
    return ToolResult(
        content=[
            Text("3 titles are low on stock.", annotations=Annotations(audience=["user"])),
            Text("Low: 9780141439518, 9780441172719, 9780262510875", meta={"source": "erp"}),
        ],
        is_error=False,
    )
