"""The sanitiser's fast path must not let anything through that the slow path would fix.

:func:`~django_mcp.requestlog.sanitise.sanitised` answers most records with one search
over all their text fields joined and one length check per bounded column
(:func:`~django_mcp.requestlog.sanitise.storable`); these tests hold every field, one at a
time, to the same rules as the column-by-column cleaning, so a field the fast path forgot
(or a length it did not check) fails here.
"""

from __future__ import annotations

import pytest

from django_mcp.requestlog.sanitise import _LIMITS, _TEXT_FIELDS, REPLACEMENT, sanitised
from tests.records.support import plain_record

CLEAN = plain_record()


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
