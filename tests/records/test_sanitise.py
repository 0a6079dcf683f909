"""The sanitiser's fast path must not let anything through that the slow path would fix.

:func:`~django_mcp.requestlog.sanitise.sanitised` answers most records with one search
over all their text fields joined and one length check per bounded column
(:func:`~django_mcp.requestlog.sanitise.storable`); these tests hold every field, one at a
time, to the same rules as the column-by-column cleaning, so a field the fast path forgot
(or a length it did not check) fails here.
"""

from __future__ import annotations

import datetime

import pytest

from django_mcp.requestlog.records import RequestRecord
from django_mcp.requestlog.sanitise import _LIMITS, _TEXT_FIELDS, REPLACEMENT, sanitised

CLEAN = RequestRecord(
    started_at=datetime.datetime(2026, 7, 28, tzinfo=datetime.UTC),
    site="mcp",
    method="tools/call",
    target="add",
    request_id="1",
    declared_revision="2026-07-28",
    served_revision="2026-07-28",
    served_how="supported",
    client_name="caf\u00e9 \U0001f600",
    client_version="1",
    user_id=None,
    username="",
    outcome="ok",
    error_code=None,
    http_status=200,
    duration_ms=1.0,
    params='{"a": 1}',
    error_message="",
    remote_addr="127.0.0.1",
    user_agent="agent",
)


def test_a_clean_record_is_returned_as_it_is():
    assert sanitised(CLEAN) is CLEAN
    assert sanitised(CLEAN._replace(params=None)) == CLEAN._replace(params=None)


@pytest.mark.parametrize("name", _TEXT_FIELDS)
@pytest.mark.parametrize("bad", ["\x00", "\ud800", "\u202e", "\x85"])
def test_a_hostile_character_in_any_text_field_is_replaced(name, bad):
    record = CLEAN._replace(**{name: f"a{bad}b"})  # type: ignore[arg-type]

    assert getattr(sanitised(record), name) == f"a{REPLACEMENT}b"


@pytest.mark.parametrize("name", [name for name, limit in _LIMITS.items() if limit is not None])
def test_text_longer_than_its_column_is_cut_even_when_every_character_is_fine(name):
    limit = _LIMITS[name]
    assert limit is not None
    record = CLEAN._replace(**{name: "x" * (limit + 1)})  # type: ignore[arg-type]

    assert getattr(sanitised(record), name) == "x" * limit
