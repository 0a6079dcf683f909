"""Protected resource metadata (RFC 9728) and the ``WWW-Authenticate`` values that point
to it (RFC 6750 section 3; basic/authorization.mdx, "Authorization Server Discovery").

The document is served at the path-inserted well-known URI
(``/.well-known/oauth-protected-resource/<mcp path>``) and at the root one, which clients
try in that order. Its ``resource`` is the ``RESOURCE`` setting, else the audience the
OAuth validators accept (``OAUTH["RESOURCE"]``), else the endpoint's own absolute URL
without a trailing slash (the canonical form the spec prefers).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Final
from urllib.parse import urlsplit, urlunsplit

from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from django.urls import path
from django.views.decorators.http import require_http_methods

from django_mcp.conf import mcp_settings

if TYPE_CHECKING:
    from django.urls import URLPattern

WELL_KNOWN: Final = "/.well-known/oauth-protected-resource"


def configured_resource() -> str | None:
    """``RESOURCE``, else the (first) audience of ``OAUTH["RESOURCE"]``: the metadata must
    name the URI the token validators accept, or clients ask for tokens that are refused."""
    configured: str | None = mcp_settings.RESOURCE
    if configured:
        return configured
    oauth = mcp_settings.OAUTH
    audience = oauth.get("RESOURCE") if isinstance(oauth, dict) else None
    if isinstance(audience, list | tuple):
        audience = audience[0] if audience else None
    return audience if isinstance(audience, str) and audience else None


def resource_uri(request: HttpRequest, mcp_path: str) -> str:
    """The canonical URI of the endpoint at ``mcp_path`` (``RESOURCE``, else
    ``OAUTH["RESOURCE"]``, else the request's own URL)."""
    configured = configured_resource()
    if configured:
        return configured
    return request.build_absolute_uri("/" + mcp_path.strip("/")).rstrip("/")


def metadata_path(resource_path: str) -> str:
    """The path of the metadata of the resource whose URI has ``resource_path``: the
    well-known prefix inserted before it (RFC 9728 section 3.1)."""
    return WELL_KNOWN + resource_path.rstrip("/")


def metadata_url(request: HttpRequest, mcp_path: str) -> str:
    """Where the metadata of the endpoint at ``mcp_path`` is: the path-inserted URI."""
    resource = urlsplit(resource_uri(request, mcp_path))
    return urlunsplit((resource.scheme, resource.netloc, metadata_path(resource.path), "", ""))


def quoted(value: str) -> str:
    """An RFC 7230 quoted-string."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def bearer_challenge(
    request: HttpRequest,
    mcp_path: str,
    *,
    scopes: Iterable[str] = (),
    error: str | None = None,
    description: str | None = None,
) -> str:
    """``Bearer resource_metadata="...", scope="...", error="...", error_description="..."``"""
    parts = [f"resource_metadata={quoted(metadata_url(request, mcp_path))}"]
    scope = " ".join(sorted(set(scopes) - {"offline_access"}))
    if scope:
        parts.append(f"scope={quoted(scope)}")
    if error:
        parts.append(f"error={quoted(error)}")
    if description:
        parts.append(f"error_description={quoted(description_text(description))}")
    return "Bearer " + ", ".join(parts)


#: What RFC 6750 section 3 lets ``error_description`` hold: visible ASCII and space, but
#: neither ``"`` nor ``\``.
_NOT_IN_DESCRIPTION: Final = re.compile(r"[^\x20\x21\x23-\x5b\x5d-\x7e]")


def description_text(description: str) -> str:
    """``description`` as RFC 6750 allows it in a challenge. Text from an authenticator
    (a DRF class's detail, say) may hold anything: a carriage return made Django refuse
    the header (a 500), and other non-ASCII text had the whole challenge MIME-encoded,
    which hid ``resource_metadata`` from clients."""
    return _NOT_IN_DESCRIPTION.sub("?", description.replace('"', "'").replace("\\", "/"))


def prefixed(request: HttpRequest, mcp_path: str) -> str:
    """``mcp_path`` (relative to the URLconf) as clients reach it: under the script prefix
    (``SCRIPT_NAME`` or ``FORCE_SCRIPT_NAME``), which ``request.path`` holds and
    ``path_info`` does not. The challenges name ``request.path``; without the prefix a
    project served under ``/app`` named ``/mcp`` as its resource, not ``/app/mcp``."""
    script_prefix = request.path.removesuffix(request.path_info)
    return script_prefix.rstrip("/") + "/" + mcp_path.strip("/")


def document(request: HttpRequest, mcp_path: str, scopes: Iterable[str]) -> dict[str, object]:
    """The RFC 9728 document for the endpoint at ``mcp_path``."""
    configured = mcp_settings.SCOPES_SUPPORTED
    supported = sorted(set(configured if configured is not None else scopes))
    data: dict[str, object] = {
        "resource": resource_uri(request, prefixed(request, mcp_path)),
        "authorization_servers": list(mcp_settings.AUTHORIZATION_SERVERS),
        "bearer_methods_supported": ["header"],
    }
    if supported:
        data["scopes_supported"] = [s for s in supported if s != "offline_access"]
    if mcp_settings.RESOURCE_NAME:
        data["resource_name"] = mcp_settings.RESOURCE_NAME
    return data


ScopeSource = Callable[[], Iterable[str]]


def preflight() -> HttpResponse:
    """The answer to a browser's CORS preflight: a browser-based client that reads the
    metadata with a header of its own (``MCP-Protocol-Version``, say) asks first, and a 405
    would fail its discovery. Any origin, any header: the document is public and read
    without credentials."""
    response = HttpResponse(status=204)
    del response["Content-Type"]  # no body to describe
    response["Access-Control-Allow-Origin"] = "*"
    response["Access-Control-Allow-Methods"] = "GET, HEAD, OPTIONS"
    response["Access-Control-Allow-Headers"] = "*"
    response["Access-Control-Max-Age"] = "86400"
    return response


def metadata_view(
    mcp_path: str, scopes: ScopeSource = tuple
) -> Callable[[HttpRequest], HttpResponseBase]:
    """A GET view serving the document of the endpoint at ``mcp_path``; ``scopes`` gives
    ``scopes_supported`` when the ``SCOPES_SUPPORTED`` setting is None."""

    @require_http_methods(["GET", "HEAD", "OPTIONS"])
    def view(request: HttpRequest) -> HttpResponseBase:
        if request.method == "OPTIONS":
            return preflight()
        response = JsonResponse(document(request, mcp_path, scopes()))
        response["Access-Control-Allow-Origin"] = "*"  # public metadata (RFC 9728 section 3)
        return response

    return view


def metadata_urlpatterns(mcp_path: str = "mcp", scopes: ScopeSource = tuple) -> list[URLPattern]:
    """Both well-known URIs of the endpoint at ``mcp_path``: add them to the root URLconf."""
    view = metadata_view(mcp_path, scopes)
    inserted = WELL_KNOWN.lstrip("/") + "/" + mcp_path.strip("/")
    return [
        path(inserted, view, name="oauth-protected-resource"),
        path(WELL_KNOWN.lstrip("/"), view, name="oauth-protected-resource-root"),
    ]
