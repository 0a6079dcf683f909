"""The buffered, bounded, bulk writer of the request log (docs/guides/records.md).

Why buffered: a synchronous INSERT per MCP request would put the log on the hot path (one
more round trip, one more chance for a slow or locked database to stall a tool call). So
:func:`submit` only decides whether to keep a record and appends it to an in-memory buffer,
under a lock held for microseconds; it never touches the database and never blocks. A
daemon thread writes the buffer every ``REQUEST_LOG_FLUSH_INTERVAL`` seconds (sooner when the
buffer is a quarter full) in bulk (:mod:`.writer`: ``COPY`` on PostgreSQL, a multi-row ``INSERT``
elsewhere), and an ``atexit`` hook writes what is left at shutdown.

Why bounded: if the database is slow or down, memory must not grow with traffic. The buffer
holds ``REQUEST_LOG_BUFFER_SIZE`` records; when full, the oldest record is dropped and
counted, and the next flush logs how many were lost.

Why every record is accounted for: :func:`flush` first makes each record storable (see
:mod:`.sanitise`: NUL, lone surrogates and other control characters are replaced; done in
the writer thread, so the request pays nothing for it), and a
batch the database still refuses is retried row by row (:mod:`.writer`); each record ends
up either ``written`` or ``failed`` in :func:`stats`, and a failed one is logged. Nothing is
retried forever: a failed record is counted and dropped.

What is kept (``REQUEST_LOG``): ``"off"`` writes nothing at all; ``"errors"`` keeps tool
errors, protocol errors and HTTP errors; ``"all"`` keeps every error and samples the rest
at ``REQUEST_LOG_SAMPLE_RATE`` (errors are rare and precious, successes are plentiful).
Independently of sampling, every best-effort serve of a revision we do not implement is
tallied per (revision, client name, client version) and upserted into ``ServedRevision``
(:mod:`.served`), so the admin's counts are exact even when the log itself is sampled.

The hourly summaries (:mod:`.summaries`) count every request, logged or not: one the log
leaves out waits in a second bounded buffer, and each flush adds both to the summaries
after writing the rows (a failure is counted in ``summary_failed``, never costs a row).

``REQUEST_LOG_BACKGROUND = False`` starts no thread and registers no shutdown hook: records
wait in the buffer until someone calls :func:`flush` (test suites, or a project that drives
flushing itself). See docs/guides/records.md.
"""

from __future__ import annotations

import atexit
import logging
import os
import random
import threading
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from django.conf import settings
from django.db import connections, router

from django_mcp.conf import mcp_settings
from django_mcp.protocol.revisions import ServedHow
from django_mcp.requestlog import drain
from django_mcp.requestlog.models import RequestLog
from django_mcp.requestlog.records import FIELD_INDEX, RequestRecord, Row, is_error
from django_mcp.requestlog.served import ServedKey, ServedTally, tally_serve

if TYPE_CHECKING:
    from collections.abc import Callable

logger = logging.getLogger("django_mcp")

_SHUTDOWN_JOIN_SECONDS: Final = 5.0

_BEST_EFFORT: Final = ServedHow.BEST_EFFORT.value
_SERVED_HOW: Final = FIELD_INDEX["served_how"]

# Sampling draws through this name so tests can make it deterministic.
sample: Callable[[], float] = random.random


@dataclass(frozen=True, slots=True)
class RecorderStats:
    """Counters since the process started (or since :func:`discard`)."""

    pending: int
    dropped: int
    written: int
    failed: int
    #: Requests a flush could not add to the hourly summaries (their rows are unaffected).
    summary_failed: int = 0


@dataclass
class _State:
    """Everything :func:`submit` and :func:`flush` share, guarded by ``lock``."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    flush_lock: threading.Lock = field(default_factory=threading.Lock)
    #: The records as plain tuples (:data:`~.records.Row`), see :func:`submit`.
    records: deque[Row] = field(default_factory=deque)
    unlogged: deque[Row] = field(default_factory=deque)  # summaries only
    served: dict[ServedKey, ServedTally] = field(default_factory=dict)
    dropped: int = 0
    dropped_unreported: int = 0
    written: int = 0
    failed: int = 0
    summary_failed: int = 0
    thread: threading.Thread | None = None
    #: True from the thread's start until its end (or :func:`stop`): :func:`submit` reads
    #: this flag rather than ask ``Thread.is_alive()``, four Python calls, per request.
    thread_running: bool = False
    wake: threading.Event = field(default_factory=threading.Event)
    stop: threading.Event = field(default_factory=threading.Event)
    atexit_registered: bool = False
    #: The databases the settings named when the first buffered record arrived (see
    #: :func:`_databases_named`); None while the buffers are empty.
    databases: tuple[tuple[str, object], ...] | None = None


_state = _State()


def keeps(record: Row) -> bool:
    """Whether the ``REQUEST_LOG`` mode and sample rate keep ``record`` (a
    :class:`~.records.RequestRecord` or its :data:`~.records.Row`) in the log."""
    mode = mcp_settings.REQUEST_LOG
    if mode == "off":
        return False
    if mode == "errors":
        return is_error(record)
    rate = float(mcp_settings.REQUEST_LOG_SAMPLE_RATE)  # every record kept at 1.0: no test
    return rate >= 1.0 or is_error(record) or sample() < rate


def submit(record: Row) -> None:
    """Queue ``record`` (a :class:`~.records.RequestRecord` or its :data:`~.records.Row`,
    as :meth:`~django_mcp.http.exchange.Exchange.record` makes it) for the log; called by
    the middleware after each MCP response.

    Never touches the database and never blocks beyond a short lock: the request that
    produced the record must not pay for logging it.

    The buffer holds the record's values as a plain ``tuple``: the cyclic garbage
    collector stops tracking a tuple of plain values the first time it sees one, but
    never an instance of a class (a named tuple included), and a record waits for up to a
    flush interval, long enough to be traversed by young collections and promoted to the
    oldest generation, where each one counted towards the next full collection of the
    whole process (tens of milliseconds in a Django process).

    Why it reads like this: it runs once per request, and each Python call it makes (a
    property, a helper) cost more than the test it wraps; so the common case (everything
    kept, the thread running) is tested inline, and :func:`keeps` decides the rest.
    """
    mode = mcp_settings.REQUEST_LOG
    if mode == "off":
        return
    if mode == "all" and float(mcp_settings.REQUEST_LOG_SAMPLE_RATE) >= 1.0:
        keep = True  # what keeps() says, without its call
    else:
        keep = keeps(record)
    buffered = record if type(record) is tuple else tuple(record)
    size = int(mcp_settings.REQUEST_LOG_BUFFER_SIZE)
    if size < 1:  # not max(1, ...): a builtin's call costs more than the test
        size = 1
    state = _state
    with state.lock:
        if state.databases is None:  # once per flush, not per request
            state.databases = _databases_named()
        if keep:
            pending = state.records
            while len(pending) >= size:
                pending.popleft()
                state.dropped += 1
                state.dropped_unreported += 1
            pending.append(buffered)
        else:  # left out of the log: counted by the summaries only
            _keep_unlogged(buffered, size)
            pending = state.unlogged
        if buffered[_SERVED_HOW] == _BEST_EFFORT:
            _tally(RequestRecord._make(buffered), size)
        # The writer wakes before its interval once the buffer this record joined is a
        # quarter full, so a burst cannot fill it between two ticks. Not at every full
        # batch: under steady load it then flushes once per interval, and a flush's fixed
        # cost (its transactions and the summaries' upserts, about 0.9 ms of CPU) is paid
        # once a second rather than once per REQUEST_LOG_BATCH_SIZE requests.
        wake_early = len(pending) >= (size // 4 or 1)
    if mcp_settings.REQUEST_LOG_BACKGROUND:
        if not state.thread_running:
            _ensure_thread()
        if wake_early:
            state.wake.set()


def _keep_unlogged(buffered: Row, limit: int) -> None:
    """Append to the summaries-only buffer (caller holds the lock); bounded like the log's."""
    while len(_state.unlogged) >= limit:
        _state.unlogged.popleft()
        _state.summary_failed += 1
    _state.unlogged.append(buffered)


def _tally(record: RequestRecord, limit: int) -> None:
    """Count one best-effort serve (caller holds the lock); bounded like the buffer."""
    if not tally_serve(_state.served, record, limit):
        _state.dropped += 1
        _state.dropped_unreported += 1


def flush() -> int:
    """Write every buffered record and tally now; return how many log rows were written.

    A record the database refuses is logged on the ``django_mcp`` logger, counted as
    failed and dropped: the log is best-effort and must never take the server down with it.
    """
    with _state.flush_lock:
        return _flush_holding_lock()


def _flush_holding_lock() -> int:
    """:func:`flush`'s work, for a caller that holds ``flush_lock``."""
    with _state.lock:
        # Plain tuples all the way to the database (see :data:`~.records.Row`): a flush of a
        # few thousand named tuples, alive across the young collections it set off, was
        # promoted whole to the oldest generation and brought the next full collection
        # of the process nearer (three more per 60,000 requests, about 2.6 µs a request).
        records: list[Row] = list(_state.records)
        _state.records.clear()
        unlogged: list[Row] = list(_state.unlogged)
        _state.unlogged.clear()
        served, _state.served = _state.served, {}
        dropped, _state.dropped_unreported = _state.dropped_unreported, 0
        recorded_under, _state.databases = _state.databases, None
    if dropped:
        logger.warning("django-mcp request log buffer was full: %d records dropped.", dropped)
    if recorded_under is not None and recorded_under != _databases_named():
        # Kept for databases the settings no longer name (a test run's, destroyed before
        # the writer came round): never written to the ones named now (the project's own).
        logger.info(
            "django-mcp discarded %d request-log records, %d summaries-only records and %d "
            "best-effort tallies kept for databases the settings no longer name (a test "
            "run's, destroyed before they were written).",
            len(records),
            len(unlogged),
            len(served),
        )
        with _state.lock:
            _state.failed += len(records) + len(served)
            _state.summary_failed += len(records) + len(unlogged)
        return 0
    counts = drain.Drained()
    try:
        drain.write(records, unlogged, served, router.db_for_write(RequestLog), counts)
    finally:
        with _state.lock:
            _state.written += counts.written
            _state.failed += counts.failed
            _state.summary_failed += counts.summary_failed
    return counts.written


def _databases_named() -> tuple[tuple[str, object], ...]:
    """The database each alias names now: a test runner points them at test databases
    and back. Every alias, not just the log's: a router may pick the log's by thread."""
    return tuple((alias, config.get("NAME")) for alias, config in settings.DATABASES.items())


def stats() -> RecorderStats:
    """Counters for monitoring and tests."""
    with _state.lock:
        counts = (_state.dropped, _state.written, _state.failed, _state.summary_failed)
        return RecorderStats(len(_state.records), *counts)


def discard() -> None:
    """Forget every buffered record, tally and counter without writing (for tests)."""
    with _state.lock:
        _state.records.clear()
        _state.unlogged.clear()
        _state.served.clear()
        _state.dropped = _state.dropped_unreported = _state.written = _state.failed = 0
        _state.summary_failed = 0
        _state.databases = None


# The background thread ------------------------------------------------------------------


def _ensure_thread() -> None:
    """Start the flushing thread on first use (lazily: no thread in processes never serving)."""
    if _state.thread_running:
        return
    with _state.lock:
        if _state.thread is not None and _state.thread.is_alive():
            # Alive with the flag clear: a thread past its loop, about to end. The flag
            # stays clear, so a submit after it has gone starts the next one.
            return
        _state.stop.clear()
        _state.thread = threading.Thread(target=_run, name="django-mcp-recorder", daemon=True)
        _state.thread_running = True  # before start: a thread ending at once clears it
        try:
            _state.thread.start()
        except BaseException:
            _state.thread_running = False
            raise
        if not _state.atexit_registered:
            atexit.register(shutdown)
            _state.atexit_registered = True


def _run() -> None:
    """Flush on every tick until stopped or until ``REQUEST_LOG_BACKGROUND`` turns off."""
    try:
        while not _state.stop.is_set():
            _state.wake.wait(float(mcp_settings.REQUEST_LOG_FLUSH_INTERVAL))
            _state.wake.clear()
            if _state.stop.is_set() or not mcp_settings.REQUEST_LOG_BACKGROUND:
                break
            _flush_in_thread()
    finally:
        if _state.thread is threading.current_thread():  # not a successor's flag
            _state.thread_running = False  # the next submit checks and starts another
        connections[router.db_for_write(RequestLog)].close()  # the thread's own


def _flush_in_thread() -> None:
    """One flush from the background thread, which must survive anything a flush raises.

    The thread owns its database connection and keeps it from one flush to the next while
    there are records to write: opening one costs about a millisecond of CPU, which every
    flush interval paid. It is checked before it is reused (a database restarted meanwhile
    must not fail a batch), and closed when a tick finds nothing to write or a flush
    fails, so an idle worker holds no connection.
    """
    connection = connections[router.db_for_write(RequestLog)]
    written = 0
    try:
        if connection.connection is not None and not connection.is_usable():
            connection.close()
        written = flush()
    except Exception:  # the thread is a boundary: an escaped error would end all logging
        logger.exception("django-mcp request log flush failed.")
    finally:
        if not written:
            connection.close()


def stop() -> None:
    """Stop the background thread (without flushing) and wait for it to finish."""
    thread = _state.thread
    _state.stop.set()
    _state.wake.set()
    if thread is not None and thread is not threading.current_thread():
        thread.join(_SHUTDOWN_JOIN_SECONDS)
    _state.thread = None
    _state.thread_running = False
    _state.wake.clear()


def shutdown() -> None:
    """Stop the thread, then write what is left; registered with ``atexit``.

    Also for servers that manage their own lifecycle (an ASGI lifespan shutdown, a
    long-running management command) and want the tail of the log written deterministically.
    """
    stop()
    # A writer stuck in a database write that never returns holds the flush lock: exit
    # must not wait on it for ever (the records are then lost, and said to be).
    if not _state.flush_lock.acquire(timeout=_SHUTDOWN_JOIN_SECONDS):
        logger.error(
            "django-mcp could not write the request log at shutdown: a flush is still "
            "running; %d buffered records were not written.",
            len(_state.records),
        )
        return
    try:
        _flush_holding_lock()
    except Exception:  # atexit: nothing left to propagate to
        logger.exception("django-mcp could not flush the request log at shutdown.")
    finally:
        _state.flush_lock.release()


def _after_fork_in_child() -> None:
    """A forked worker inherits the buffer but not the thread; start clean."""
    global _state
    _state = _State(atexit_registered=_state.atexit_registered)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
