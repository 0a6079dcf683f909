"""Make a :class:`RequestRecord` storable whatever the client sent.

Why: every text field of a record comes from the request (the JSON-RPC ``id``, the method,
the tool name, ``clientInfo``, the params), and some text no database will store. PostgreSQL
refuses NUL in a text column; a lone surrogate (``"\\ud800"`` is valid JSON, and Python
decodes it to a one-character string) cannot be encoded as UTF-8 for any database driver.
One such request used to fail its whole batch. So :func:`all_sanitised` runs on every
batch in :func:`~django_mcp.requestlog.recorder.flush` (the writer thread, off the request
path) before it is written, and :func:`clean_text` on every best-effort tally key as it is
counted: every record and every key passes one of the two gates.

What it does to each text field:

- replaces each lone surrogate (U+D800..U+DFFF), each control character (C0 U+0000..U+001F,
  DEL U+007F, C1 U+0080..U+009F) and each bidirectional embedding, override or isolate
  (U+202A..U+202E, U+2066..U+2069, which can make a name read differently in the admin)
  with U+FFFD, the replacement character, one for one, so lengths are unchanged and the
  admin shows that something was replaced;
- cuts the text to its column's ``max_length``, so a transport that forgot to truncate
  cannot fail a row on PostgreSQL either.

It is cheap when there is nothing to do, which is the common case: one test over the whole
batch, on each column's distinct values (:func:`all_storable`, a fifth of the cost of a test
per record, :func:`storable`); only a batch that fails it is cleaned record by record.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from itertools import islice
from operator import attrgetter, itemgetter, le
from typing import Any, Final

from django_mcp.requestlog.models import RequestLog, column_length
from django_mcp.requestlog.records import FIELD_INDEX, RequestRecord, Row

REPLACEMENT: Final = "\ufffd"

_HOSTILE: Final = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")

#: The record's text fields (each one is a column of ``RequestLog`` of the same name).
_TEXT_FIELDS: Final = (
    "site",
    "method",
    "target",
    "request_id",
    "declared_revision",
    "served_revision",
    "served_how",
    "client_name",
    "client_version",
    "username",
    "params",
    "error_message",
    "user_agent",
)


#: The longest text each column stores (None: unbounded, a ``TextField``).
_LIMITS: Final = {name: column_length(RequestLog, name) for name in _TEXT_FIELDS}


def clean_text(text: str, max_length: int | None = None) -> str:
    """``text`` with every character a database may refuse replaced, cut to ``max_length``."""
    if _HOSTILE.search(text) is not None:
        text = _HOSTILE.sub(REPLACEMENT, text)
    if max_length is not None and len(text) > max_length:
        text = text[:max_length]
    return text


#: Each field's position in a record (a record is a tuple in the columns' order).
_texts: Final = attrgetter(*_TEXT_FIELDS)
#: The bounded columns' texts, taken from :data:`_texts`' tuple, and their lengths.
_bounded: Final = itemgetter(*[i for i, limit in enumerate(_LIMITS.values()) if limit])
_BOUNDS: Final = tuple(limit for limit in _LIMITS.values() if limit)


def _has_hostile(text: str) -> bool:
    """Whether ``text`` holds a character :func:`clean_text` replaces.

    Printable ASCII (``isascii`` is a flag of the string, ``isprintable`` a table lookup
    per character) holds no hostile character, since the only ASCII ones are the C0
    controls and DEL, which are exactly ASCII's unprintable characters; any other text
    gets the regular expression's search (one character class, so testing texts joined
    changes nothing).
    """
    return not (text.isascii() and text.isprintable()) and _HOSTILE.search(text) is not None


def storable(record: RequestRecord) -> bool:
    """Whether every text field of ``record`` is storable as it is: one test over all of
    them joined (:func:`_has_hostile`) and one length comparison per bounded column, in C.
    """
    texts = _texts(record)
    try:
        if _has_hostile("".join(filter(None, texts))):
            return False
        return all(map(le, map(len, _bounded(texts)), _BOUNDS))
    except TypeError:  # not text where text belongs: :func:`sanitised` takes the slow path
        return False


#: Where each text field sits in a record, and the bounded ones with their limits.
_TEXT_INDEXES: Final = tuple(FIELD_INDEX[name] for name in _TEXT_FIELDS)
_BOUNDED_INDEXES: Final = tuple(
    (FIELD_INDEX[name], limit) for name, limit in _LIMITS.items() if limit
)


#: Values joined at once by :func:`_hostile_in`: one character beyond U+FFFF makes Python
#: store a joined text at four bytes a character, and a batch's params (2,000 characters
#: each by default, when logged) would be tens of megabytes joined whole.
_JOINED_VALUES: Final = 256


def _hostile_in(values: Iterable[str]) -> bool:
    """Whether any of ``values`` holds a character :func:`clean_text` replaces: joined a
    bounded number at a time and tested by :func:`_has_hostile`."""
    remaining = iter(values)
    while chunk := list(islice(remaining, _JOINED_VALUES)):
        if _has_hostile("".join(chunk)):
            return True
    return False


def all_storable(records: Sequence[Row]) -> bool:
    """Whether every text field of every record is storable as it is: :func:`storable`'s
    test over the whole batch at once, on each text column's distinct values (the batch
    transposed by ``zip``; a column mostly repeats a few values: the method, the site,
    the client), joined and measured in C: 0.5 µs per record where a test per record took
    2.5 (500 ``tools/call`` records, each with its own ``request_id``).
    """
    if not records:
        return True
    columns = list(zip(*records, strict=True))
    try:
        distinct = {index: set(columns[index]) for index in _TEXT_INDEXES}
        for values in distinct.values():
            values.discard(None)
            if _hostile_in(values):
                return False
        return all(
            max(map(len, distinct[index]), default=0) <= limit for index, limit in _BOUNDED_INDEXES
        )
    except TypeError:  # not text where text belongs: the per-record path sorts it out
        return False


def all_sanitised(records: list[Row]) -> list[Row]:
    """``records`` (each a :class:`RequestRecord` or its plain :data:`~.records.Row`)
    themselves when all are storable (the common case, tested for the whole batch at once
    by :func:`all_storable`), else each one through :func:`sanitised`, as a
    :class:`RequestRecord`."""
    if all_storable(records):
        return records
    return [sanitised(RequestRecord._make(record)) for record in records]


def sanitised(record: RequestRecord) -> RequestRecord:
    """``record`` itself when every text field is storable, else a cleaned copy."""
    if storable(record):
        return record
    changes: dict[str, Any] = {}
    for name, limit in _LIMITS.items():
        value = getattr(record, name)
        if isinstance(value, str):
            cleaned = clean_text(value, limit)
            if cleaned != value:
                changes[name] = cleaned
    return record._replace(**changes) if changes else record
