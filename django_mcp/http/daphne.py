"""Daphne with MCP request bodies bounded while they arrive.

Daphne (through Twisted) receives a request's whole body before the application runs: into
``Request.content`` (a ``BytesIO``, or a temporary file from 100 kB), then, in
``WebRequest.process``, into the application's queue all at once. ``BodyLimit`` cannot help
there, since the memory is taken before it runs: a 380 MB chunked POST grew Daphne's
memory by as much (docs/security.md, finding 8). Run Daphne through this module instead::

    python -m django_mcp.http.daphne -b 127.0.0.1 -p 8000 mysite.asgi:application

It takes Daphne's arguments and serves the same way, except that for a request to an MCP
endpoint (a path that resolves to an ``MCPView``, as ``BodyLimit`` decides) the server
keeps at most ``MAX_REQUEST_BYTES + 1`` bytes of the body and discards the rest as it
arrives, counting it. Django then holds more than the limit, so ``MCPMiddleware`` answers
its usual 413 with the JSON-RPC error and records the exchange in the request log. Other
paths are untouched. The body is still received to its end (Twisted answers only then);
what it no longer does is take memory or disk.

Nor does Twisted read an MCP body as a form. It parses every POST sent as
``multipart/form-data`` or ``application/x-www-form-urlencoded`` into ``Request.args``
(which Daphne never reads), and answers a body that is not the multipart it claims with a
bare 400 of its own before the application runs: an MCP request the request log never
heard of, refused only under Daphne. MCP bodies are JSON whatever their ``Content-Type``
says (servers are lenient, as every other server here is), so for an MCP endpoint the
parse is turned off and the body reaches Django as sent.

With ``"daphne"`` in ``INSTALLED_APPS``, django_mcp's ``ready()`` calls
:func:`serve_runserver`, so ``manage.py runserver`` (Daphne's command) uses the same server.

Daphne is an optional dependency (the ``channels`` extra): only this module imports it.
"""

from __future__ import annotations

from io import BytesIO
from typing import Any
from urllib.parse import unquote

from daphne.cli import CommandLineInterface as DaphneCommandLineInterface
from daphne.http_protocol import HTTPFactory, WebRequest
from daphne.server import Server as DaphneServer

from django_mcp.conf import mcp_settings
from django_mcp.http.asgi import is_mcp_path


def request_target(request: WebRequest) -> bytes | None:
    """The request target (path and query) while the headers are being parsed, or None.

    Twisted sets ``Request.path`` only once the whole body has arrived; until then the
    HTTP/1.1 channel keeps the target in ``_path`` (and an HTTP/2 stream in ``path``).
    """
    for name in ("_path", "path"):
        target = getattr(request.channel, name, None)
        if isinstance(target, bytes):
            return target
    return None


def body_cap(request: WebRequest) -> int | None:
    """How many body bytes to keep for ``request``: ``MAX_REQUEST_BYTES + 1`` if it goes to
    an MCP endpoint, None (keep everything) otherwise or when that cannot be told."""
    target = request_target(request)
    if target is None:
        return None
    root_path = request.server.root_path
    header = request.requestHeaders.getRawHeaders(b"daphne-root-path")
    try:
        path = unquote(target.split(b"?", 1)[0].decode("ascii"))
        if header:  # Daphne lets this header override the server's root path
            root_path = unquote(header[-1].decode("ascii"))
    except UnicodeDecodeError:
        return None  # Daphne answers 400 for such a request without running the application
    if not is_mcp_path({"path": path, "root_path": root_path}):
        return None
    return int(mcp_settings.MAX_REQUEST_BYTES) + 1


class BoundedRequest(WebRequest):
    """Daphne's request, keeping at most ``body_cap`` bytes of an MCP request's body."""

    cap: int | None = None
    #: Body bytes received past the cap and dropped.
    discarded = 0

    def gotLength(self, length: int | None) -> None:
        """Called by the channel once the headers are in, before any body byte."""
        self.cap = body_cap(self)
        if self.cap is None:
            super().gotLength(length)
        else:
            self.content = BytesIO()
            # What ``parsePOSTFormSubmission=False`` sets (Twisted's Request takes it when
            # built, before the path is known): no form parse of an MCP body.
            self._parsePOSTFormSubmission = False

    def handleContentChunk(self, data: bytes) -> None:
        """Keep what fits under the cap; count the rest."""
        if self.cap is None:
            super().handleContentChunk(data)
            return
        room = max(self.cap - self.content.tell(), 0)
        if len(data) > room:
            self.discarded += len(data) - room
            data = data[:room]
        if data:
            self.content.write(data)


class BoundedHTTPFactory(HTTPFactory):
    """Daphne's HTTP factory, building channels whose requests are ``BoundedRequest``."""

    def buildProtocol(self, addr: Any) -> Any:
        protocol = super().buildProtocol(addr)
        protocol.requestFactory = BoundedRequest
        return protocol


class Server(DaphneServer):
    """Daphne's server, serving HTTP through ``BoundedHTTPFactory``.

    ``Server.run()`` builds its factory inline (``self.http_factory = HTTPFactory(self)``)
    and listens with it a few lines later. Rather than copy ``run()`` and drift from
    Daphne's releases, this property's setter swaps the plain factory for ours as ``run()``
    assigns it; everything else ``run()`` does stays Daphne's.
    """

    _http_factory: HTTPFactory

    @property
    def http_factory(self) -> HTTPFactory:
        return self._http_factory

    @http_factory.setter
    def http_factory(self, factory: HTTPFactory) -> None:
        if not isinstance(factory, BoundedHTTPFactory):
            factory = BoundedHTTPFactory(self)
        self._http_factory = factory


class CommandLineInterface(DaphneCommandLineInterface):
    """``daphne``'s command line, serving with :class:`Server`."""

    server_class = Server


def serve_runserver() -> None:
    """Make Daphne's ``runserver`` command use :class:`Server`, unless a project already
    gave it a server class of its own.

    Daphne's ``runserver`` wins over any django_mcp command of that name when ``"daphne"``
    comes first in ``INSTALLED_APPS`` (as it must, before ``staticfiles``), so this sets the
    class attribute Daphne provides for it, ``Command.server_cls``.
    """
    from daphne.management.commands.runserver import Command

    if Command.server_cls is DaphneServer:
        Command.server_cls = Server


if __name__ == "__main__":
    CommandLineInterface.entrypoint()
