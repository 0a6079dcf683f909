"""Placeholder: replaced by the buffered bulk writer."""

from __future__ import annotations

from .records import RequestRecord


def submit(record: RequestRecord) -> None:
    """Queue one record for the request log."""
