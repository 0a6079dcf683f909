"""The bearer token a request presents, read from the ``Authorization`` header only.

RFC 6750 also defines form-body and query-string tokens; ``basic/authorization.mdx``
forbids tokens in the query string, and the MCP body is JSON-RPC, so the header is the one
place a token is read from. Shared by every authenticator that takes bearer tokens and by
:func:`~django_mcp.auth.resolve.authenticate`, which refuses a bearer token that none of
them accepted.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from django.http import HttpRequest


def presented(request: HttpRequest) -> str | None:
    """What follows ``Bearer`` in the ``Authorization`` header (stripped, perhaps empty or
    malformed), None when the header is absent or of another scheme (the scheme is
    case-insensitive, RFC 7235 section 2.1). Never raises and never queries: deciding
    whether a request carries credentials must cost nothing."""
    header: str = request.META.get("HTTP_AUTHORIZATION", "")
    if not header:
        return None
    scheme, *rest = _BLANKS.split(header.strip(" \t\n\r\x0b\x0c"), 1)
    if scheme.lower() != "bearer":
        return None
    return rest[0] if rest else ""


#: The blanks that separate a scheme from its credentials: HTTP's (RFC 9110 section
#: 5.6.3: spaces and tabs) and the other ASCII whitespace DRF's parser splits on
#: (``bytes.split()``), so that no character hides a token from the refusal of unclaimed
#: tokens while another parser reads it. Nothing else (a no-break space) separates.
_BLANKS: Final = re.compile(r"[ \t\n\r\x0b\x0c]+")


def has_blank(token: str) -> bool:
    """Whether ``token`` holds a blank: a malformed header, not one token."""
    return _BLANKS.search(token) is not None
