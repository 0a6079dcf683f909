"""A batch of request-log rows into PostgreSQL with one ``COPY``, in binary when it can.

Why binary: in a text ``COPY`` psycopg writes every value as text (each string escaped,
each number and timestamp formatted) and PostgreSQL parses it back; in binary it writes
each value's own representation. That halves the writer thread's CPU per row (about 4.0
to 2.3 µs on a 500-row batch; the writer's CPU is the server's CPU too). A binary
``COPY`` must name each column's type: they come from the model's fields (``db_type``),
looked up in psycopg's registry of PostgreSQL's built-in types, once per database alias
and set of columns.

When the text format stays: a column type psycopg does not know by name (a custom user
model whose primary key is of an unusual type), a table whose column types are not the
model's (read from PostgreSQL's catalogue before the first binary ``COPY``: see
:mod:`.pgcolumns`), and naive timestamps (``USE_TZ =
False``): PostgreSQL reads those in the session's time zone, which a binary value cannot
carry; and a batch holding a value the binary format would not carry as the text format
does (:meth:`BinaryLayout.binary_rows`: an integer out of its column's range, which a binary
dumper would wrap silently, or a user key left as text). The client address is stored as
text in the record (a normalised IP address) and sent to an ``inet`` column already in
``inet``'s binary form, built once per address seen (:func:`inet_binary`).
"""

from __future__ import annotations

import datetime
import ipaddress
import logging
import uuid
from collections.abc import Callable, Iterable, Sequence
from contextlib import nullcontext, suppress
from functools import lru_cache
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Final

from django.core.signals import setting_changed
from django.dispatch import receiver

from django_mcp.requestlog import pgcolumns

if TYPE_CHECKING:
    from django.db.backends.base.base import BaseDatabaseWrapper
    from django.db.models import Field

logger = logging.getLogger("django_mcp")

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

#: PostgreSQL's address families in ``inet``'s binary form (``PGSQL_AF_INET``, ``_INET6``).
_INET_FAMILIES: Final = {4: 2, 6: 3}


def inet_binary(address: str | ipaddress.IPv4Address | ipaddress.IPv6Address) -> bytes:
    """``address`` in ``inet``'s binary ``COPY`` form: family, prefix length (the whole
    address for a host, the network's for an ``ipaddress`` interface such as
    ``10.1.2.3/8``), 0 (not a ``cidr``), the address's length, its bytes; what psycopg's
    ``inet`` dumper sends, and what PostgreSQL's ``inet_recv`` reads. A zone id
    (``fe80::1%eth0``) is not part of it, as in psycopg's.

    Why built here: psycopg's ``inet`` dumper is Python, called once per row (about 1 µs a
    row, half of the binary ``COPY``'s cost of a ``tools/call`` row). These bytes go through
    the ``bytea`` dumper instead (in C, the bytes as they are): in the binary format a value
    is only its bytes, read by the column's own type.
    """
    parsed = ipaddress.ip_address(address) if isinstance(address, str) else address
    packed = parsed.packed
    prefix = (
        parsed.network.prefixlen
        if isinstance(parsed, ipaddress.IPv4Interface | ipaddress.IPv6Interface)
        else parsed.max_prefixlen
    )
    return bytes((_INET_FAMILIES[parsed.version], prefix, 0, len(packed))) + packed


#: Built once per address text seen (a server sees the same clients again and again).
_cached_address: Final = lru_cache(maxsize=1024)(inet_binary)


def _address(text: str) -> bytes:
    if len(text) <= _CACHED_ADDRESS_CHARS:
        return _cached_address(text)
    return inet_binary(text)


_NONE: Final = type(None)
_tzinfo: Final = attrgetter("tzinfo")


def _no_naive_timestamp(values: Sequence[Any]) -> bool:
    """No naive ``datetime`` among ``values`` (in C when all of them are datetimes)."""
    if set(map(type, values)) <= {datetime.datetime}:
        with suppress(TypeError):  # a time zone class that is not hashable (dateutil's)
            return None not in set(map(_tzinfo, values))
    return not any(isinstance(v, datetime.datetime) and v.tzinfo is None for v in values)


def _integers_within(values: Sequence[Any], bound: int) -> bool:
    """Every value ``None`` or an ``int`` (not a ``bool``, not text) in ``[-bound, bound)``."""
    if not set(map(type, values)) <= {int, _NONE}:
        return False
    distinct = set(values)
    distinct.discard(None)
    return not distinct or (-bound <= min(distinct) and max(distinct) < bound)


def _uuids_or_none(values: Sequence[Any]) -> bool:
    return all(issubclass(kind, uuid.UUID) for kind in set(map(type, values)) - {_NONE})


def _parsed_addresses(values: Sequence[Any]) -> list[Any]:
    """``values`` with each address (a text or an ``ipaddress`` object) in ``inet``'s binary
    form (:func:`inet_binary`), built once per distinct value of the batch."""
    parsed = {value: _binary_address(value) for value in set(values)}
    return list(map(parsed.__getitem__, values))


def _binary_address(value: Any) -> Any:
    if isinstance(value, str):
        return _address(value)
    if isinstance(value, ipaddress.IPv4Address | ipaddress.IPv6Address):
        return inet_binary(value)
    return value  # None (NULL), or what the column's dumper refuses as it always did


class BinaryLayout:
    """What a binary ``COPY`` of one table's columns needs: the types it is told, and which
    columns hold timestamps with a time zone, addresses, integers (with their bounds)
    and UUIDs, the values :meth:`binary_rows` looks at."""

    def __init__(self, types: Sequence[str]) -> None:
        #: The types ``COPY`` is told, which pick psycopg's dumpers: an address goes as
        #: ``bytea``, already in ``inet``'s binary form (:func:`inet_binary`).
        self.dumped_types = ["bytea" if name == _INET else name for name in types]
        self.timestamps = [i for i, name in enumerate(types) if name == _TIMESTAMPTZ]
        self.addresses = [i for i, name in enumerate(types) if name == _INET]
        self.integers = [
            (i, _INTEGER_BOUNDS[name]) for i, name in enumerate(types) if name in _INTEGER_BOUNDS
        ]
        self.uuids = [i for i, name in enumerate(types) if name == _UUID]

    def binary_rows(self, rows: Sequence[Sequence[Any]]) -> Iterable[Sequence[Any]] | None:
        """``rows`` as the binary format sends them (each address in ``inet``'s binary form),
        or None when the batch must go as text: the binary format would not carry a value
        as the text format does. That is a naive timestamp (PostgreSQL reads it in the
        session's time zone), anything but an ``int`` in its range in an integer column (a
        binary dumper wraps an out-of-range value silently, and refuses a string the text
        format parses, such as a user key an authenticator left as text), or anything but
        a ``UUID`` in a ``uuid`` column.

        Column by column, on the batch transposed once by ``zip``, mostly in C: 0.5 µs a
        row on 500 ``tools/call`` rows, where a test per value of each row cost 1.0.

        With addresses, the rows are made one at a time as ``COPY`` takes them (an
        iterator), so a batch is never copied whole: each lives only while it is sent.
        """
        if not rows:
            return rows
        columns: list[Sequence[Any]] = list(zip(*rows, strict=True))
        if not (
            all(_no_naive_timestamp(columns[index]) for index in self.timestamps)
            and all(_integers_within(columns[index], bound) for index, bound in self.integers)
            and all(_uuids_or_none(columns[index]) for index in self.uuids)
        ):
            return None
        if not self.addresses:
            return rows
        for index in self.addresses:
            columns[index] = _parsed_addresses(columns[index])
        return zip(*columns, strict=True)


_layouts: dict[tuple[str, tuple[Field[Any, Any], ...]], BinaryLayout | None] = {}


@receiver(setting_changed)
def _forget_layouts(*, setting: str, **kwargs: object) -> None:
    if setting in ("DATABASES", "AUTH_USER_MODEL"):
        _layouts.clear()


def binary_layout(
    connection: BaseDatabaseWrapper,
    columns: Sequence[Field[Any, Any]],
    *,
    cursor: Any = None,
    table: str = "",
) -> BinaryLayout | None:
    """The binary layout of ``columns`` on ``connection``, or None when the text format
    must be used: a column's type is not one psycopg knows by name, or (read through
    ``cursor`` from the catalogue, once) ``table``'s column types are not the model's.

    Cached per database alias and columns: ``db_type`` costs about 270 µs for the log's 21
    columns, more than a 100-row batch saves, and the catalogue is read once per process.
    Not cached until the table has been read (without a ``cursor``, or while the table is
    missing, which the ``COPY`` itself reports)."""
    key = (connection.alias, tuple(columns))
    if key in _layouts:
        return _layouts[key]
    from psycopg import postgres  # only reached on PostgreSQL with psycopg 3

    names: list[str] = []
    expected: dict[str, tuple[int, str]] = {}
    for field in columns:
        declared = field.db_type(connection) or ""
        info = postgres.types.get(declared.partition("(")[0].strip())
        if info is None:
            _layouts[key] = None
            return None
        names.append(info.name)
        expected[field.column or field.attname] = (info.oid, info.regtype)
    layout: BinaryLayout | None = BinaryLayout(names)
    if cursor is None:
        return layout
    drift = pgcolumns.differences(cursor, table, expected)
    if drift is None:
        return layout
    if drift:
        logger.warning(
            "django-mcp writes the request log in COPY's text format: the columns of %s "
            "do not have the types of the RequestLog model (%s). Run "
            "`python manage.py migrate django_mcp`, then restart.",
            table,
            "; ".join(drift),
        )
        layout = None
    _layouts[key] = layout
    return layout


def copies_binary(
    connection: BaseDatabaseWrapper,
    columns: Sequence[Field[Any, Any]],
    rows: Sequence[Sequence[Any]],
) -> bool:
    """Whether :func:`copy_rows` sends ``rows`` in the binary format."""
    layout = binary_layout(connection, columns)
    return layout is not None and layout.binary_rows(rows) is not None


def forget_layout(connection: BaseDatabaseWrapper, columns: Sequence[Field[Any, Any]]) -> None:
    """Read the table's column types again before the next binary ``COPY`` of ``columns``
    on ``connection`` (a binary batch was refused: the table may have changed since)."""
    _layouts.pop((connection.alias, tuple(columns)), None)


def copy_rows(
    connection: BaseDatabaseWrapper,
    cursor: Any,
    table: str,
    names: str,
    columns: Sequence[Field[Any, Any]],
    rows: Sequence[Sequence[Any]],
    *,
    binary: bool = True,
) -> None:
    """``rows`` into ``table``'s columns ``names`` (quoted, in order) with one ``COPY``
    through the Django ``cursor``'s psycopg cursor, shown in Django's query log; in the
    text format whatever the layout when ``binary`` is false."""
    layout = binary_layout(connection, columns, cursor=cursor, table=table) if binary else None
    binary_rows = layout.binary_rows(rows) if layout is not None else None
    binary = binary_rows is not None
    statement = f"COPY {table} ({names}) FROM STDIN" + (" (FORMAT BINARY)" if binary else "")
    # Seen in the query log (tests, debug toolbars) like any statement of Django's.
    debug: Callable[[str], Any] | None = getattr(cursor, "debug_sql", None)
    logged = debug(statement) if debug is not None else nullcontext()
    sent: Iterable[Sequence[Any]] = rows
    with logged, connection.wrap_database_errors, cursor.cursor.copy(statement) as copy:
        if binary_rows is not None and layout is not None:
            copy.set_types(layout.dumped_types)
            sent = binary_rows
        for row in sent:
            copy.write_row(row)
