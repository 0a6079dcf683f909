"""The sanitiser's fast path must not let anything through that the slow path would fix.

:func:`~django_mcp.requestlog.sanitise.sanitised` answers most records with one search
over all their text fields joined and one length check per bounded column
(:func:`~django_mcp.requestlog.sanitise.storable`); these tests hold every field, one at a
time, to the same rules as the column-by-column cleaning, so a field the fast path forgot
(or a length it did not check) fails here.
"""

from __future__ import annotations

import tracemalloc

import pytest

from django_mcp.requestlog.models import RequestLog, column_length
from django_mcp.requestlog.sanitise import (
    _LIMITS,
    _TEXT_FIELDS,
    REPLACEMENT,
    all_sanitised,
    all_storable,
    sanitised,
    storable,
)
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


# -- the batch's test: the same rules, over the whole batch at once --------------------------


def test_a_clean_batch_is_returned_as_it_is():
    batch = [CLEAN, CLEAN._replace(params=None, request_id="2"), CLEAN._replace(username="ann")]

    assert all_storable(batch)
    assert all_sanitised(batch) is batch
    assert all_storable([])


@pytest.mark.parametrize("name", _TEXT_FIELDS)
@pytest.mark.parametrize("bad", ["\x00", "\ud800", "\u202e", "\x85"])
def test_one_hostile_character_anywhere_in_a_batch_cleans_that_record(name, bad):
    hostile = CLEAN._replace(**{name: f"a{bad}b"})  # type: ignore[arg-type]
    batch = [CLEAN, hostile, CLEAN]

    assert not all_storable(batch)
    assert all_sanitised(batch) == [CLEAN, sanitised(hostile), CLEAN]
    assert getattr(all_sanitised(batch)[1], name) == f"a{REPLACEMENT}b"


@pytest.mark.parametrize("name", [name for name, limit in _LIMITS.items() if limit is not None])
def test_one_text_longer_than_its_column_in_a_batch_is_cut(name):
    limit = _LIMITS[name]
    assert limit is not None
    at_limit = CLEAN._replace(**{name: "x" * limit})  # type: ignore[arg-type]
    too_long = CLEAN._replace(**{name: "x" * (limit + 1)})  # type: ignore[arg-type]

    assert all_storable([CLEAN, at_limit])
    assert not all_storable([at_limit, too_long, CLEAN])
    assert getattr(all_sanitised([at_limit, too_long])[1], name) == "x" * limit


def test_a_value_that_is_not_text_where_text_belongs_takes_the_per_record_path():
    odd = CLEAN._replace(request_id=7)  # type: ignore[arg-type]

    assert not all_storable([CLEAN, odd])
    assert all_sanitised([CLEAN, odd]) == [CLEAN, sanitised(odd)]


def test_a_record_with_a_value_that_is_not_text_where_text_belongs_is_left_to_the_writer():
    """Neither test raises on it (a raise in the writer thread lost the whole flush's
    records); the value stays as it is, for the database to convert or refuse."""
    odd = CLEAN._replace(request_id=7)  # type: ignore[arg-type]

    assert not storable(odd)
    assert sanitised(odd) == odd


def test_the_batch_test_joins_a_bounded_number_of_texts_at_a_time():
    """One character beyond U+FFFF makes a joined text four bytes a character: a batch of
    logged params joined whole took tens of megabytes in the writer."""
    params = "\U0001f600" + "p" * 1999
    batch = [CLEAN._replace(params=f"{i}{params}") for i in range(3000)]  # 24 MB joined

    tracemalloc.start()
    try:
        assert all_storable(batch)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()

    assert peak < 8_000_000  # joined whole: 24 MB


def test_a_hostile_character_after_the_first_chunk_of_texts_is_found():
    batch = [CLEAN._replace(request_id=str(i)) for i in range(1000)]
    batch[900] = batch[900]._replace(request_id="9\x00")

    assert not all_storable(batch)
    assert all_sanitised(batch)[900].request_id == f"9{REPLACEMENT}"


def test_column_length_reads_the_model():
    """Every size check reads a column's length from the model, via one function."""
    assert column_length(RequestLog, "method") == RequestLog._meta.get_field("method").max_length
    assert column_length(RequestLog, "params") is None  # a TextField: unbounded
    assert _LIMITS["target"] == RequestLog._meta.get_field("target").max_length
    assert _LIMITS["params"] is None
