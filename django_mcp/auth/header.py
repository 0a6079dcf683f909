"""The bearer token a request presents, read from the ``Authorization`` header only.

RFC 6750 also defines form-body and query-string tokens; ``basic/authorization.mdx``
forbids tokens in the query string, and the MCP body is JSON-RPC, so the header is the one
place a token is read from. Shared by every authenticator that takes bearer tokens and by
:func:`~django_mcp.auth.resolve.authenticate`, which refuses a bearer token that none of
them accepted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from django.http import HttpRequest


def presented(request: HttpRequest) -> str | None:
    """What follows ``Bearer`` in the ``Authorization`` header (stripped, perhaps empty or
    malformed), None when the header is absent or of another scheme (the scheme is
    case-insensitive, RFC 7235 section 2.1). Never raises and never queries: deciding
    whether a request carries credentials must cost nothing."""
    header: str = request.META.get("HTTP_AUTHORIZATION", "")
    scheme, *rest = header.split(None, 1) or [""]
    if scheme.lower() != "bearer":
        return None
    # Any whitespace after the scheme, as DRF's parser takes it: a tab must not make a
    # token invisible to the refusal while another authenticator reads it.
    return rest[0].strip() if rest else ""
