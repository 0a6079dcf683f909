"""Client input in a server log line is escaped: a newline cannot forge a log line.

An exception message often quotes what the client sent (a URI, an argument value). The
default exception handler logs the traceback with every message as a Python literal.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import pytest

from django_mcp.exceptions import escaped_traceback
from tests.helpers import assert_error, call_tool

if TYPE_CHECKING:
    from django.test import Client

    from django_mcp.sites import MCPSite

FORGED = "ERROR django.security: admin logged in"


def test_a_newline_in_an_exception_message_stays_on_its_line(
    client: Client, mcp_site: MCPSite, caplog: pytest.LogCaptureFixture
) -> None:
    """An unexpected failure is -32603 (server/tools.mdx, "Error Handling") and is logged,
    with the client's text escaped inside one line."""

    @mcp_site.tool()
    def lookup(key: str) -> str:
        try:
            raise KeyError(key)
        except KeyError as exc:
            raise RuntimeError(f"no entry {key}") from exc

    caplog.set_level(logging.ERROR, logger="django_mcp")
    assert_error(call_tool(client, "lookup", {"key": f"x\n{FORGED}"}), 200, -32603)

    lines = caplog.text.splitlines()
    assert not [line for line in lines if line.startswith(FORGED)], caplog.text
    assert "RuntimeError: 'no entry x\\nERROR django.security: admin logged in'" in caplog.text
    assert "KeyError" in caplog.text  # the cause is logged too
    assert "in lookup" in caplog.text  # with its frames


def test_the_escaped_traceback_names_each_frame() -> None:
    try:
        raise ValueError("a\nb")
    except ValueError as exc:
        text = escaped_traceback(exc)

    assert text.startswith("Traceback (most recent call last):\n")
    assert text.endswith("builtins.ValueError: 'a\\nb'")
