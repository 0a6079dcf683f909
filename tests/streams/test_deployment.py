"""The deployment guide's advice, checked: GZip must not buffer SSE responses.

basic/transports/streamable-http.mdx: the server sends notifications on the
response stream before the final response; a compressor that holds them back until the end
turns a live stream into a late one.
"""

from __future__ import annotations

from typing import Any

import django
import pytest
from django.http import HttpResponse, StreamingHttpResponse
from django.middleware.gzip import GZipMiddleware
from django.test import RequestFactory
from django.utils.text import compress_sequence

from django_mcp.http.streaming import event_stream_response
from docs.examples.deployment_gzip import GZipExceptEventStreams

EVENTS = [b'data: {"jsonrpc":"2.0","method":"notifications/progress"}\n\n'] * 3


def gzip_request() -> Any:
    return RequestFactory().post("/mcp", HTTP_ACCEPT_ENCODING="gzip")


@pytest.mark.skipif(django.VERSION >= (6, 0), reason="Django 6 flushes each streamed chunk")
def test_stock_gzip_would_hold_sse_events_back_until_the_stream_ends():
    """basic/transports/streamable-http.mdx, why the guide warns: on Django
    5.2 only the gzip header comes out before the last event."""
    chunks = [len(chunk) for chunk in compress_sequence(iter(EVENTS))]

    assert chunks[:-1] == [10]  # the header; every event waits for the end


@pytest.mark.skipif(django.VERSION < (6, 0), reason="Django 5.2 holds streamed chunks back")
def test_stock_gzip_of_django_6_flushes_every_event():
    """basic/transports/streamable-http.mdx: Django 6's compressor flushes
    each chunk, so events are not held back (the guide's middleware is still advised)."""
    chunks = [len(chunk) for chunk in compress_sequence(iter(EVENTS))]

    # the header, one flushed chunk per event, then the gzip trailer
    assert len(chunks) == 1 + len(EVENTS) + 1


def test_the_guide_middleware_leaves_event_streams_uncompressed():
    """basic/transports/streamable-http.mdx: the guide's GZipExceptEventStreams passes SSE
    responses through untouched."""
    middleware = GZipExceptEventStreams(lambda request: event_stream_response(iter(EVENTS)))

    response = middleware(gzip_request())

    assert isinstance(response, StreamingHttpResponse)
    assert not response.has_header("Content-Encoding")
    assert list(response.streaming_content) == EVENTS


def test_the_guide_middleware_still_compresses_json():
    """basic/transports/streamable-http.mdx: plain JSON responses are compressed as by the
    stock middleware."""
    body = b'{"jsonrpc":"2.0","id":1,"result":{}}' * 20
    make = lambda request: HttpResponse(body, content_type="application/json")  # noqa: E731

    ours = GZipExceptEventStreams(make)(gzip_request())
    stock = GZipMiddleware(make)(gzip_request())

    assert ours["Content-Encoding"] == stock["Content-Encoding"] == "gzip"
