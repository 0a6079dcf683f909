"""The two outbound calls a resource server makes: GET a JWKS, POST an introspection.

Standard library only (``urllib``), a timeout on every call and a cap on the body read, so
a slow or hostile endpoint can neither stall a worker for long nor fill its memory. Every
failure is one :class:`FetchError`; callers turn it into a clear 401, never a 500.
"""

from __future__ import annotations

import http.client
import json
import urllib.error
import urllib.request
from typing import Any, Final
from urllib.parse import urlencode

MAX_BODY_BYTES: Final = 1024 * 1024


class FetchError(Exception):
    """The endpoint could not be reached or answered something that is not a JSON object."""


def _json_object(request: urllib.request.Request, timeout: float) -> dict[str, Any]:
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = response.read(MAX_BODY_BYTES + 1)
    except urllib.error.HTTPError as exc:
        exc.close()  # an error answer holds its connection open until closed
        raise FetchError(f"{request.full_url}: HTTP {exc.code}") from None
    except (urllib.error.URLError, OSError, ValueError, http.client.HTTPException) as exc:
        # HTTPException: an answer that is not HTTP (no status line, a header line past
        # http.client's limit, a body cut short), which is no OSError.
        raise FetchError(f"{request.full_url}: {exc}") from exc
    if len(body) > MAX_BODY_BYTES:
        raise FetchError(f"{request.full_url}: the response is larger than {MAX_BODY_BYTES} bytes")
    try:
        data = json.loads(body)
    except (ValueError, RecursionError) as exc:  # RecursionError: nested past the decoder
        raise FetchError(f"{request.full_url}: the response is not JSON") from exc
    if not isinstance(data, dict):
        raise FetchError(f"{request.full_url}: the response is not a JSON object")
    return data


def get_json(url: str, *, timeout: float) -> dict[str, Any]:
    """GET ``url`` and return its JSON object."""
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    return _json_object(request, timeout)


def post_form(
    url: str, form: dict[str, str], *, headers: dict[str, str], timeout: float
) -> dict[str, Any]:
    """POST ``form`` (``application/x-www-form-urlencoded``) and return the JSON object."""
    request = urllib.request.Request(
        url,
        data=urlencode(form).encode(),
        method="POST",
        headers={
            "Accept": "application/json",
            "Content-Type": "application/x-www-form-urlencoded",
            **headers,
        },
    )
    return _json_object(request, timeout)
