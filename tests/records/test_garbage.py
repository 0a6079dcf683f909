"""What the request log leaves to the cyclic garbage collector: as little as it can.

The collector's young collections run after a fixed number of new container objects and
traverse every one still alive, so each object a request leaves for the collector (rather
than freeing by reference counting) costs every request a little. Two things the log
added are pinned here: a buffered record is a tuple of plain values, which the collector
stops tracking the first time it sees it (an instance of a class, a named tuple
included, never is, and used to be promoted to the oldest generation while it waited for
its flush), and it stays one through the flush, to the writer and the summaries; and an
exchange lets go
of its admission and reply once it is recorded, since on Django's own path the request
object sits in Django's reference cycles and everything it references waits for the
collector with it (:meth:`~django_mcp.http.exchange.Exchange.release`).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from django_mcp.http.exchange import exchange_of
from django_mcp.protocol.admission import Admitted
from django_mcp.requestlog import recorder
from django_mcp.requestlog.models import RequestLog
from django_mcp.requestlog.records import RequestRecord
from django_mcp.server.dispatch import Reply
from tests.records.support import plain_record, search

pytestmark = pytest.mark.django_db


def test_a_buffered_record_is_not_tracked_by_the_collector_once_it_has_seen_it():
    recorder.submit(plain_record())
    gc.collect()

    [buffered] = recorder._state.records
    assert not gc.is_tracked(buffered)
    assert recorder.flush() == 1  # and it is written as submitted
    assert RequestLog.objects.get().target == "add"


def test_a_flush_hands_the_writer_and_the_summaries_plain_tuples(monkeypatch):
    """A flush of a few thousand named tuples, alive across the young collections it set
    off, was promoted whole to the oldest generation (2,624 records per 6,000 requests in
    one measurement) and brought the next full collection of the process nearer; plain
    tuples of plain values are untracked instead."""
    from django_mcp.requestlog import summaries, writer

    seen: list[type] = []
    write, add = writer.write, summaries.add

    def spy_write(records, alias):  # type: ignore[no-untyped-def]
        seen.extend(type(record) for record in records)
        return write(records, alias)

    def spy_add(records, alias):  # type: ignore[no-untyped-def]
        seen.extend(type(record) for record in records)
        return add(records, alias)

    monkeypatch.setattr(writer, "write", spy_write)
    monkeypatch.setattr(summaries, "add", spy_add)
    for _ in range(3):
        recorder.submit(plain_record())

    assert recorder.flush() == 3
    assert seen == [tuple] * 6
    assert RequestLog.objects.filter(target="add").count() == 3


def test_a_record_is_its_own_row_in_the_columns_order():
    """The writer sends the record itself as the ``COPY``/``INSERT`` row."""
    record = plain_record()

    assert RequestRecord._fields[0] == "started_at"
    assert tuple(record) == tuple(getattr(record, name) for name in RequestRecord._fields)


@pytest.fixture
def collector_off() -> Iterator[None]:
    """Only reference counting frees objects while the test runs."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def alive(kind: type) -> int:
    # type(), not isinstance(): isinstance asks a lazy object its __class__, evaluating it.
    return sum(1 for found in gc.get_objects() if type(found) is kind)


def test_a_recorded_exchange_lets_go_of_its_admission_and_reply(client, collector_off):
    """With the collector off, an admission or reply still referenced from the request
    (which Django keeps in reference cycles) would stay alive: both must be freed as
    soon as the exchange is recorded, and the record must still be complete."""
    admissions, replies = alive(Admitted), alive(Reply)

    response = search(client)

    assert response.status_code == 200
    exchange = exchange_of(response.wsgi_request)
    assert exchange is not None  # still tells an MCP request from another
    assert (exchange.admission, exchange.reply, exchange.caller) == (None, None, None)
    assert alive(Admitted) == admissions
    assert alive(Reply) == replies
    recorder.flush()
    row = RequestLog.objects.get()
    assert (row.method, row.target, row.outcome, row.client_name) == (
        "tools/call",
        "search_books",
        "ok",
        "pytest",
    )


def test_an_exchange_is_released_with_the_log_off_too(client, settings, collector_off):
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "REQUEST_LOG": "off"}
    admissions = alive(Admitted)

    response = search(client)

    assert response.status_code == 200
    assert alive(Admitted) == admissions
    assert not RequestLog.objects.exists()
