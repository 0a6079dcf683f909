"""Which database errors say that a value was refused, not that the database is gone.

Both the request log's writer (a refused row is counted alone, the rest of its batch is
still written) and ``ModelTools`` writes (a refused value is a tool error, not -32603)
must tell the two apart, and on MySQL the error class does not: mysqlclient raises some
refusals of a value as ``OperationalError``, as it does a lost connection.
"""

from __future__ import annotations

from typing import Final

#: MySQL's errors for a value its column cannot store, which mysqlclient raises as an
#: ``OperationalError`` (it maps only a few data errors to ``DataError``): 1292 and 1366
#: "Incorrect ... value" (an emoji in a ``utf8mb3`` column, any non-Latin-1 text in a
#: ``latin1`` one: the defaults of MySQL before 8.0 and of MariaDB before 11.6), 1300
#: "Invalid ... character string", 1367 "Illegal ... value".
MYSQL_REFUSED_VALUE: Final = frozenset({1292, 1300, 1366, 1367})


def mysql_refused_value(exc: BaseException) -> bool:
    """Whether ``exc`` (or the driver's error it was raised from) is MySQL refusing a
    value (:data:`MYSQL_REFUSED_VALUE`); Django keeps the driver's error code."""
    cause = exc.__cause__ or exc
    code = cause.args[0] if cause.args else None
    return isinstance(code, int) and code in MYSQL_REFUSED_VALUE
