"""GZipMiddleware that leaves SSE responses alone (docs/deployment.md).

Django's GZipMiddleware compresses streaming responses too, and zlib keeps small writes in
its buffer: progress notifications and listen events would reach the client only when the
stream ends. Use this subclass in ``MIDDLEWARE`` instead of the stock one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.middleware.gzip import GZipMiddleware

if TYPE_CHECKING:
    from django.http import HttpRequest, HttpResponseBase


# [docs:middleware]
class GZipExceptEventStreams(GZipMiddleware):
    """Compress responses as usual, except ``text/event-stream`` ones."""

    def process_response(
        self, request: HttpRequest, response: HttpResponseBase
    ) -> HttpResponseBase:
        if response.get("Content-Type", "").startswith("text/event-stream"):
            return response
        return super().process_response(request, response)


# [/docs:middleware]
