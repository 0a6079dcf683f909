"""The shape every list method shares (server/utilities/pagination.mdx, caching.mdx):
one page of definitions, a signed ``nextCursor`` when more remain, and cache hints with
the same ``cacheScope`` on every page."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from django_mcp.conf import mcp_settings
from django_mcp.server.pagination import NO_CURSOR, paginate

if TYPE_CHECKING:
    from django_mcp.server.context import Context
    from django_mcp.server.dispatch import MCPServer


#: The field of each list's items that names them, and orders them (``MCPSite`` lists
#: by it): a cursor resumes after the item it names.
_KEY_FIELDS: Final = {
    "tools": "name",
    "prompts": "name",
    "resources": "uri",
    "resourceTemplates": "uriTemplate",
}


def listing(
    server: MCPServer,
    params: dict[str, Any],
    context: Context,
    method: str,
    key: str,
    specs: Sequence[Any],
) -> dict[str, Any]:
    """The result of a list method: ``{key: [...definitions], ttlMs, cacheScope}``."""
    field = _KEY_FIELDS[key]

    def key_of(spec: Any) -> str:
        return str(spec.definition[field])

    # MCPSite returns its lists in this order already (sorting sorted input is one pass);
    # a subclass may not, and a cursor resumes by searching for its item in this order.
    page, next_cursor = paginate(
        sorted(specs, key=key_of),
        params.get("cursor", NO_CURSOR),  # a string (schema.json): null is an invalid one
        key=key_of,
        site_name=server.site.name,
        method=method,
        page_size=int(mcp_settings.PAGE_SIZE),
        principal=context.principal,
        max_age=float(mcp_settings.CURSOR_MAX_AGE),
    )
    result: dict[str, Any] = {
        key: [spec.definition for spec in page],
        "ttlMs": int(mcp_settings.LIST_TTL_MS),
        "cacheScope": server.cache_scope(),
    }
    if next_cursor is not None:
        result["nextCursor"] = next_cursor
    return result
