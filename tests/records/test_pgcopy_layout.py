"""Which batches the binary ``COPY`` takes, and what it sends (django_mcp/requestlog/pgcopy.py).

:meth:`BinaryLayout.binary_rows` decides for the whole batch, column by column, what a test
per value decided before: a batch goes as text when one value of it would not be carried by
the binary format as the text format carries it. Pure Python, no database: each case here
would be written wrong (a wrapped integer, a naive time read as UTC) or refused if the test
of its column let it through.
"""

from __future__ import annotations

import datetime
import ipaddress
import uuid

import pytest

from django_mcp.requestlog.pgcopy import BinaryLayout, inet_binary

LAYOUT = BinaryLayout(["timestamptz", "int4", "int2", "uuid", "inet", "text"])
AWARE = datetime.datetime(2026, 7, 28, 12, tzinfo=datetime.UTC)
NAIVE = datetime.datetime(2026, 7, 28, 12)
KEY = uuid.UUID(int=7)


def row(**changes: object) -> tuple[object, ...]:
    values = {"at": AWARE, "int4": 200, "int2": 1, "key": KEY, "addr": "10.0.0.1", "text": "x"}
    values.update(changes)
    return tuple(values.values())


def test_a_batch_of_plain_values_goes_binary_with_its_addresses_parsed():
    rows = [row(), row(addr="2001:db8::1", key=None, int4=None), row(addr=None)]

    made = LAYOUT.binary_rows(rows)

    assert made is not None
    assert iter(made) is made  # one row at a time, as COPY takes them (see binary_rows)
    sent = list(made)
    assert [r[4] for r in sent] == [inet_binary("10.0.0.1"), inet_binary("2001:db8::1"), None]
    assert [r[:4] + r[5:] for r in sent] == [r[:4] + r[5:] for r in rows]
    assert LAYOUT.binary_rows([]) == []
    # Each address goes through the bytea dumper, as the bytes it already is.
    assert LAYOUT.dumped_types == ["timestamptz", "int4", "int2", "uuid", "bytea", "text"]


@pytest.mark.parametrize(
    "odd",
    [
        {"at": NAIVE},  # PostgreSQL reads it in the session's time zone: text only
        {"int4": 2**31},  # a binary dumper would wrap it
        {"int4": -(2**31) - 1},
        {"int2": 2**15},
        {"int4": "42"},  # a key left as text: the text format parses it
        {"int4": True},  # a bool is an int to Python, not to the column
        {"int4": 4.0},
        {"key": str(KEY)},
        {"key": 7},
    ],
)
def test_one_value_the_binary_format_would_not_carry_sends_the_batch_as_text(odd):
    rows = [row(), row(**odd), row()]

    assert LAYOUT.binary_rows(rows) is None
    assert LAYOUT.binary_rows([row(), row()]) is not None


def test_the_bounds_themselves_go_binary():
    rows = [row(int4=2**31 - 1, int2=-(2**15)), row(int4=-(2**31), int2=2**15 - 1)]

    assert LAYOUT.binary_rows(rows) is not None


def test_a_timestamp_column_holding_something_else_is_judged_value_by_value():
    """Only naive datetimes send a batch as text (a value of another type fails its own row
    in the binary dumper, as it would in the text format)."""
    assert LAYOUT.binary_rows([row(at=None), row()]) is not None
    assert LAYOUT.binary_rows([row(at=None), row(at=NAIVE)]) is None


class UnhashableZone(datetime.tzinfo):
    """A time zone class that cannot be hashed (as dateutil's ``tzutc`` and ``tzoffset``)."""

    __hash__ = None  # type: ignore[assignment]

    def utcoffset(self, dt: datetime.datetime | None) -> datetime.timedelta:
        return datetime.timedelta(0)


def test_timestamps_in_a_time_zone_that_cannot_be_hashed_are_judged_value_by_value():
    """A raise here would fail every row of the batch and of its row-by-row retry."""
    aware = AWARE.replace(tzinfo=UnhashableZone())

    assert LAYOUT.binary_rows([row(at=aware), row(at=aware)]) is not None
    assert LAYOUT.binary_rows([row(at=aware), row(at=NAIVE)]) is None


@pytest.mark.parametrize(
    "text",
    [
        "10.0.0.1",
        "0.0.0.0",
        "255.255.255.255",
        "2001:db8::1",
        "::",
        "::ffff:10.0.0.1",
        "fe80::1%eth0",
    ],
)
def test_an_address_is_sent_in_the_bytes_psycopgs_inet_dumper_sends(text: str) -> None:
    """psycopg's own ``inet`` dumper is the reference: the bytes must be the same, from
    the text or from an ``ipaddress`` object (a zone id is dropped by both)."""
    from psycopg.types.net import InetBinaryDumper

    address = ipaddress.ip_address(text)
    expected = bytes(InetBinaryDumper(type(address)).dump(address) or b"")

    assert inet_binary(text) == expected
    assert inet_binary(address) == expected
    assert [r[4] for r in LAYOUT.binary_rows([row(addr=address)]) or []] == [expected]


@pytest.mark.parametrize("text", ["10.1.2.3/8", "10.1.2.3/32", "2001:db8::5/64", "::/0"])
def test_an_interface_keeps_its_network_prefix(text: str) -> None:
    """An ``ipaddress`` interface (an address with its network, which a caller of the
    writer may hand it) is sent with its network's prefix length, as psycopg sends it."""
    from psycopg.types.net import InetBinaryDumper

    interface = ipaddress.ip_interface(text)
    expected = bytes(InetBinaryDumper(type(interface)).dump(interface) or b"")

    assert inet_binary(interface) == expected
    assert expected[1] == interface.network.prefixlen
