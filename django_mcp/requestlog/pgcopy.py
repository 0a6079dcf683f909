"""A batch of request-log rows into PostgreSQL with one ``COPY``, in binary when it can.

Why binary: in a text ``COPY`` psycopg writes every value as text (each string escaped,
each number and timestamp formatted) and PostgreSQL parses it back; in binary it writes
each value's own representation. That halves the writer thread's CPU per row (about 4.0
to 2.3 µs on a 500-row batch; the writer's CPU is the server's CPU too). A binary
``COPY`` must name each column's type: they come from the model's fields (``db_type``),
looked up in psycopg's registry of PostgreSQL's built-in types, once per database alias
and set of columns.

When the text format stays: a column type psycopg does not know by name (a custom user
model whose primary key is of an unusual type), and naive timestamps (``USE_TZ =
False``): PostgreSQL reads those in the session's time zone, which a binary value cannot
carry; and a batch holding a value the binary format would not carry as the text format
does (:meth:`BinaryLayout.accepts`: an integer out of its column's range, which a binary
dumper would wrap silently, or a user key left as text). The client address is stored as
text in the record (a normalised IP address) and sent to an ``inet`` column as an
:mod:`ipaddress` object, parsed once per address seen.
"""

from __future__ import annotations

import datetime
import ipaddress
import uuid
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Final

from django.core.signals import setting_changed
from django.dispatch import receiver

if TYPE_CHECKING:
    from django.db.backends.base.base import BaseDatabaseWrapper
    from django.db.models import Field

#: PostgreSQL's address type, whose binary form psycopg dumps from an ``ipaddress`` object.
_INET: Final = "inet"
_TIMESTAMPTZ: Final = "timestamptz"


#: Longest address text whose parse is cached (as :mod:`django_mcp.http.logfacts` does: a
#: zone id can make an IPv6 address text of any length).
_CACHED_ADDRESS_CHARS: Final = 64
#: The integer types' bounds: psycopg's binary dumpers wrap an integer out of range where
#: PostgreSQL refuses it in the text format, so such a batch goes as text.
_INTEGER_BOUNDS: Final = {"int2": 2**15, "int4": 2**31, "int8": 2**63}
_UUID: Final = "uuid"

#: Parsed once per address text seen (a server sees the same clients again and again).
_cached_address: Final = lru_cache(maxsize=1024)(ipaddress.ip_address)


def _address(text: str) -> Any:
    if len(text) <= _CACHED_ADDRESS_CHARS:
        return _cached_address(text)
    return ipaddress.ip_address(text)


class BinaryLayout:
    """What a binary ``COPY`` of one table's columns needs: their type names, and which
    columns hold timestamps with a time zone, addresses, integers (with their bounds)
    and UUIDs, the values :meth:`accepts` and :meth:`converted` look at."""

    def __init__(self, types: Sequence[str]) -> None:
        self.types = list(types)
        self.timestamps = [i for i, name in enumerate(types) if name == _TIMESTAMPTZ]
        self.addresses = [i for i, name in enumerate(types) if name == _INET]
        self.integers = [
            (i, _INTEGER_BOUNDS[name]) for i, name in enumerate(types) if name in _INTEGER_BOUNDS
        ]
        self.uuids = [i for i, name in enumerate(types) if name == _UUID]

    def accepts(self, rows: Sequence[Sequence[Any]]) -> bool:
        """Whether the binary format carries every value of ``rows`` as the text format
        would; else the batch goes as text. Not when a timestamp is naive (PostgreSQL reads
        it in the session's time zone), an integer column holds anything but an ``int`` in
        its range (a binary dumper wraps an out-of-range value silently, and refuses a
        string the text format parses, such as a user key an authenticator left as
        text), or a ``uuid`` column anything but a ``UUID``."""
        for row in rows:
            for index in self.timestamps:
                value = row[index]
                if isinstance(value, datetime.datetime) and value.tzinfo is None:
                    return False
            for index, bound in self.integers:
                value = row[index]
                if value is not None and (type(value) is not int or not -bound <= value < bound):
                    return False
            for index in self.uuids:
                value = row[index]
                if value is not None and not isinstance(value, uuid.UUID):
                    return False
        return True

    def converted(self, rows: Sequence[Sequence[Any]]) -> Sequence[Sequence[Any]]:
        """``rows`` with each address as an ``ipaddress`` object (the rest as they are)."""
        if not self.addresses:
            return rows
        out: list[Sequence[Any]] = []
        for row in rows:
            values = list(row)
            for index in self.addresses:
                if isinstance(values[index], str):
                    values[index] = _address(values[index])
            out.append(values)
        return out


_layouts: dict[tuple[str, tuple[Field[Any, Any], ...]], BinaryLayout | None] = {}


@receiver(setting_changed)
def _forget_layouts(*, setting: str, **kwargs: object) -> None:
    if setting in ("DATABASES", "AUTH_USER_MODEL"):
        _layouts.clear()


def binary_layout(
    connection: BaseDatabaseWrapper, columns: Sequence[Field[Any, Any]]
) -> BinaryLayout | None:
    """The binary layout of ``columns`` on ``connection``, or None when a column's type is
    not one psycopg knows by name. Cached per database alias and columns: ``db_type``
    costs about 270 µs for the log's 21 columns, more than a 100-row batch saves."""
    key = (connection.alias, tuple(columns))
    if key in _layouts:
        return _layouts[key]
    from psycopg import postgres  # only reached on PostgreSQL with psycopg 3

    names: list[str] = []
    for field in columns:
        declared = field.db_type(connection) or ""
        info = postgres.types.get(declared.partition("(")[0].strip())
        if info is None:
            _layouts[key] = None
            return None
        names.append(info.name)
    layout = _layouts[key] = BinaryLayout(names)
    return layout


def copy_rows(
    connection: BaseDatabaseWrapper,
    cursor: Any,
    table: str,
    names: str,
    columns: Sequence[Field[Any, Any]],
    rows: Sequence[Sequence[Any]],
) -> None:
    """``rows`` into ``table``'s columns ``names`` (quoted, in order) with one ``COPY``
    through the Django ``cursor``'s psycopg cursor, shown in Django's query log."""
    layout = binary_layout(connection, columns)
    binary = layout is not None and layout.accepts(rows)
    statement = f"COPY {table} ({names}) FROM STDIN" + (" (FORMAT BINARY)" if binary else "")
    # Seen in the query log (tests, debug toolbars) like any statement of Django's.
    debug: Callable[[str], Any] | None = getattr(cursor, "debug_sql", None)
    logged = debug(statement) if debug is not None else nullcontext()
    with logged, connection.wrap_database_errors, cursor.cursor.copy(statement) as copy:
        if binary and layout is not None:
            copy.set_types(layout.types)
            rows = layout.converted(rows)
        for row in rows:
            copy.write_row(row)
