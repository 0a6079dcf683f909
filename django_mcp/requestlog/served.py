"""Best-effort serves of revisions we do not implement, tallied per (revision, client name,
client version) and added to ``ServedRevision`` rows by the request-log writer.

Why a tally and an upsert rather than a row per request: the admin's counts must be exact
even when the request log itself is sampled, and one UPDATE per triple per flush costs the
database almost nothing. The upsert is portable and race-safe (see :func:`upsert_served`).
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from django.db import IntegrityError, transaction
from django.db.models import DateTimeField, F, Value
from django.db.models.functions import Greatest, Least

from django_mcp.requestlog.models import ServedRevision, column_length
from django_mcp.requestlog.sanitise import clean_text

if TYPE_CHECKING:
    from django.db.models import QuerySet

    from django_mcp.requestlog.records import RequestRecord

ServedKey = tuple[str, str, str]  # (revision, client name, client version)
#: The key's columns' lengths: a key is stored as tallied, so it is made storable first.
_KEY_LIMITS: Final = tuple(
    column_length(ServedRevision, name) for name in ("revision", "client_name", "client_version")
)


@dataclass
class ServedTally:
    """Best-effort serves of one triple seen since the last flush."""

    count: int
    first_seen: datetime.datetime
    last_seen: datetime.datetime

    def add(self, when: datetime.datetime) -> None:
        self.count += 1
        self.first_seen = min(self.first_seen, when)
        self.last_seen = max(self.last_seen, when)


def tally_serve(served: dict[ServedKey, ServedTally], record: RequestRecord, limit: int) -> bool:
    """Count one best-effort serve into ``served`` (at most ``limit`` triples); False
    when a new triple found it full (the caller counts the loss)."""
    key = (
        clean_text(record.declared_revision, _KEY_LIMITS[0]),
        clean_text(record.client_name, _KEY_LIMITS[1]),
        clean_text(record.client_version, _KEY_LIMITS[2]),
    )
    tally = served.get(key)
    if tally is not None:
        tally.add(record.started_at)
    elif len(served) < limit:
        served[key] = ServedTally(1, record.started_at, record.started_at)
    else:
        return False
    return True


def served_rows(key: ServedKey, alias: str) -> QuerySet[ServedRevision]:
    revision, client_name, client_version = key
    return ServedRevision.objects.using(alias).filter(
        revision=revision, client_name=client_name, client_version=client_version
    )


def update_served(key: ServedKey, tally: ServedTally, alias: str) -> int:
    """Add ``tally`` to an existing row in one UPDATE (F() increments: no lost updates)."""
    return served_rows(key, alias).update(
        count=F("count") + tally.count,
        first_seen=Least(F("first_seen"), Value(tally.first_seen, output_field=DateTimeField())),
        last_seen=Greatest(F("last_seen"), Value(tally.last_seen, output_field=DateTimeField())),
    )


def upsert_served(key: ServedKey, tally: ServedTally, alias: str) -> None:
    """UPDATE, else INSERT; if another process inserted first, the UPDATE is retried.

    Portable (SQLite, PostgreSQL, MySQL) and race-safe against the unique constraint: the
    INSERT runs in a savepoint, so losing the race rolls back only that savepoint.
    """
    revision, client_name, client_version = key
    for _attempt in range(3):
        if update_served(key, tally, alias):
            return
        try:
            with transaction.atomic(using=alias):
                ServedRevision.objects.using(alias).create(
                    revision=revision,
                    client_name=client_name,
                    client_version=client_version,
                    count=tally.count,
                    first_seen=tally.first_seen,
                    last_seen=tally.last_seen,
                )
            return
        except IntegrityError:
            continue
    raise IntegrityError(f"Could not upsert the served revision {key!r}.")
