"""Make a :class:`RequestRecord` storable whatever the client sent.

Why: every text field of a record comes from the request (the JSON-RPC ``id``, the method,
the tool name, ``clientInfo``, the params), and some text no database will store. PostgreSQL
refuses NUL in a text column; a lone surrogate (``"\\ud800"`` is valid JSON, and Python
decodes it to a one-character string) cannot be encoded as UTF-8 for any database driver.
One such request used to fail its whole batch. So :func:`sanitised` runs once per record,
in :func:`~django_mcp.requestlog.recorder.flush` (the writer thread, off the request path)
before a batch is written, and :func:`clean_text` on every best-effort tally key as it is
counted: every record and every key passes one of the two gates.

What it does to each text field:

- replaces each lone surrogate (U+D800..U+DFFF), each control character (C0 U+0000..U+001F,
  DEL U+007F, C1 U+0080..U+009F) and each bidirectional embedding, override or isolate
  (U+202A..U+202E, U+2066..U+2069, which can make a name read differently in the admin)
  with U+FFFD, the replacement character, one for one, so lengths are unchanged and the
  admin shows that something was replaced;
- cuts the text to its column's ``max_length``, so a transport that forgot to truncate
  cannot fail a row on PostgreSQL either.

It is cheap when there is nothing to do (one test over all the fields joined, see
:func:`storable`), which is the common case.
"""

from __future__ import annotations

import re
from operator import attrgetter, itemgetter, le
from typing import TYPE_CHECKING, Any, Final

from django.db.models import CharField

from django_mcp.requestlog.models import RequestLog

if TYPE_CHECKING:
    from django_mcp.requestlog.records import RequestRecord

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


def _column_limits() -> dict[str, int | None]:
    """The longest text each column stores (None: unbounded, a ``TextField``)."""
    limits: dict[str, int | None] = {}
    for name in _TEXT_FIELDS:
        field = RequestLog._meta.get_field(name)
        limits[name] = field.max_length if isinstance(field, CharField) else None
    return limits


_LIMITS: Final = _column_limits()


def clean_text(text: str, max_length: int | None = None) -> str:
    """``text`` with every character a database may refuse replaced, cut to ``max_length``."""
    if _HOSTILE.search(text) is not None:
        text = _HOSTILE.sub(REPLACEMENT, text)
    if max_length is not None and len(text) > max_length:
        text = text[:max_length]
    return text


_texts: Final = attrgetter(*_TEXT_FIELDS)
#: The bounded columns' texts, taken from :data:`_texts`' tuple, and their lengths.
_bounded: Final = itemgetter(*[i for i, limit in enumerate(_LIMITS.values()) if limit])
_BOUNDS: Final = tuple(limit for limit in _LIMITS.values() if limit)


def storable(record: RequestRecord) -> bool:
    """Whether every text field of ``record`` is storable as it is: one test over all of
    them joined and one length comparison per bounded column, in C. The common case, so
    it is the cheap one.

    The test: printable ASCII (``isascii`` is a flag of the string, ``isprintable`` a
    table lookup per character) holds no hostile character, since the only ASCII ones
    are the C0 controls and DEL, which are exactly ASCII's unprintable characters; any
    other text gets the regular expression's search (one character class, so joining the
    fields changes nothing).
    """
    texts = _texts(record)
    joined = "".join(filter(None, texts))
    if not (joined.isascii() and joined.isprintable()) and _HOSTILE.search(joined):
        return False
    try:
        return all(map(le, map(len, _bounded(texts)), _BOUNDS))
    except TypeError:  # not text where text belongs: :func:`sanitised` takes the slow path
        return False


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
