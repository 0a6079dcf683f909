"""``manage.py mcp_stdio [--user NAME] [--site NAME]``: serve a site over stdio, the way a
desktop client launches a local MCP server (see :mod:`django_mcp.stdio.transport`).

stdout carries protocol messages only (basic/transports/stdio.mdx: the server MUST NOT
write anything to its stdout that is not a valid MCP message). Rebinding ``sys.stdout``
alone would leave file descriptor 1 the protocol pipe, where a child process a tool starts,
C code or a handler bound to the real stdout would still write; so the protocol gets a
duplicate of fd 1 of its own, and fd 1 becomes a duplicate of stderr (fd 2) while the
command serves: everything else written to stdout, ``print()`` included, goes to stderr.
Likewise the protocol reads a duplicate of fd 0, and fd 0 reads as empty meanwhile: a
child process a tool starts without a stdin of its own would otherwise read (and take) the
client's messages. The caller is ``--user``, else ``$DJANGO_MCP_USER``, else anonymous.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import sys
from typing import IO, TYPE_CHECKING, Any

from django.core.management.base import BaseCommand

from django_mcp.cli.identity import USER_ENVIRONMENT, resolve_user, site_named
from django_mcp.conf import mcp_settings
from django_mcp.server.dispatch import MCPServer
from django_mcp.stdio.lines import StoppableInput, bounded_lines
from django_mcp.stdio.transport import StdioServer

if TYPE_CHECKING:
    from argparse import ArgumentParser
    from collections.abc import Iterator
    from types import FrameType


class Command(BaseCommand):
    help = "Serve MCP over stdin/stdout (newline-delimited JSON-RPC), for local clients."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--user", help=f"Serve as this user (default: ${USER_ENVIRONMENT}, else anonymous)."
        )
        parser.add_argument("--site", help="The site's name (default: the default site).")

    def handle(self, *args: Any, **options: Any) -> None:
        site = site_named(options["site"])
        user = resolve_user(options["user"])
        with (
            protocol_stdin() as protocol_in,
            protocol_stdout() as protocol_out,
            contextlib.redirect_stdout(sys.stderr),
            stopped_by_sigterm(protocol_in.raw),
        ):
            server = StdioServer(MCPServer(site), protocol_out, user=user)
            server.serve(bounded_lines(protocol_in, int(mcp_settings.MAX_REQUEST_BYTES)))


@contextlib.contextmanager
def stopped_by_sigterm(protocol_in: StoppableInput) -> Iterator[None]:
    """Within the block, SIGTERM ends the input the way closing stdin does
    (basic/transports/stdio.mdx, "Shutdown": the client closes stdin, then sends SIGTERM
    to a server that does not exit): every request read is still answered (one waiting
    for room in the queue too), requests in progress finish, and open listen streams end
    with their result, instead of the process dying with them unanswered. It raises
    nothing: an exception would come out wherever the thread that reads stdin is, a line
    just read or a request waiting for room with it, which would never be answered; the
    input reads as ended instead (:class:`~django_mcp.stdio.lines.StoppableInput`), and
    once it has ended SIGTERM changes nothing. A second SIGTERM, or SIGKILL, still stops
    the process at once."""

    def stop(number: int, frame: FrameType | None) -> None:
        signal.signal(signal.SIGTERM, previous)  # a second SIGTERM: the usual handling
        protocol_in.stop()

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def protocol_stdin() -> Iterator[io.BufferedReader[StoppableInput]]:
    """A binary file on a duplicate of fd 0, the protocol's only way to stdin (which
    SIGTERM can end: :func:`stopped_by_sigterm`); meanwhile fd 0 is ``os.devnull``, so a
    child process a tool starts (or ``input()``) reads an empty input instead of taking
    the client's messages. On exit fd 0 is the pipe again."""
    protocol_fd = os.dup(0)
    protocol_in = io.BufferedReader(StoppableInput(protocol_fd))
    empty = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(empty, 0)
        yield protocol_in
    finally:
        os.dup2(protocol_fd, 0)
        os.close(empty)
        protocol_in.close()


@contextlib.contextmanager
def protocol_stdout() -> Iterator[IO[bytes]]:
    """A binary file on a duplicate of fd 1, the protocol's only way to stdout; meanwhile
    fd 1 is a duplicate of fd 2 (stderr). On exit fd 1 is the protocol pipe again."""
    sys.stdout.flush()
    protocol_fd = os.dup(1)
    protocol_out = os.fdopen(protocol_fd, "wb")
    try:
        os.dup2(2, 1)
        yield protocol_out
    finally:
        sys.stdout.flush()  # what was written meanwhile goes to stderr, not the protocol
        # Once the client closed its end (a write failed and StdioServer stopped), what
        # that write left in the buffer reaches nobody: flushing it again on the way out
        # must not end the command with a traceback and status 1.
        with contextlib.suppress(OSError, ValueError):
            protocol_out.flush()
        os.dup2(protocol_fd, 1)
        with contextlib.suppress(OSError):
            protocol_out.close()
