"""Whether the request-log table's columns have the types the model gives them, asked of
PostgreSQL's catalogue.

Why: a binary ``COPY`` names each column's type from the ``RequestLog`` model, and
PostgreSQL reads each binary value as its column's own type. A value of another size is
refused, but one of the same size is not: an ``integer`` column made ``real`` by hand, or
left so by an upgrade whose migration was not applied, would take the integer's four bytes
as a float and store a wrong number without a word. The text format has no such hole
(PostgreSQL parses the text into whatever type the column has), so the writer reads the
table's column types before its first binary ``COPY`` and writes text when they differ.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

#: The table's live columns and their types (an OID, and its name as ``psql`` shows it).
#: ``to_regclass`` resolves the quoted name through the ``search_path``, as ``COPY`` does.
_COLUMNS_SQL: Final = (
    "SELECT attname, atttypid, format_type(atttypid, NULL) FROM pg_attribute "
    "WHERE attrelid = to_regclass(%s) AND attnum > 0 AND NOT attisdropped"
)


def differences(
    cursor: Any, table: str, expected: Mapping[str, tuple[int, str]]
) -> list[str] | None:
    """How ``table``'s columns differ from ``expected`` (column name to type OID and type
    name), one readable line per column, in ``expected``'s order: ``[]`` when every
    expected column has its type, None when the table is not found (the ``COPY`` will say
    so, as it always has).

    ``table`` is the quoted name the ``COPY`` uses; ``cursor`` a Django cursor (the query
    shows in Django's query log, like the ``COPY``). Columns the model does not name are
    not looked at: the ``COPY`` names its columns, and the others take their defaults.
    """
    cursor.execute(_COLUMNS_SQL, [table])
    found = {name: (oid, type_name) for name, oid, type_name in cursor.fetchall()}
    if not found:
        return None
    lines = []
    for column, (oid, type_name) in expected.items():
        if column not in found:
            lines.append(f"{column} is missing (the model has {type_name})")
        elif found[column][0] != oid:
            lines.append(f"{column} is {found[column][1]} (the model has {type_name})")
    return lines
