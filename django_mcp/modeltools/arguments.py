"""Checking the plain arguments of model actions (lookup, search, filters, paging).

Bad values raise :class:`~django_mcp.exceptions.ToolError` naming the argument: for the
model these are tool execution errors it can correct, not protocol errors.
"""

from __future__ import annotations

import datetime
import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db.models import Field, Model
from django.utils import timezone
from django.utils.duration import duration_microseconds

from django_mcp.exceptions import ToolError
from django_mcp.protocol.uritemplate import is_integer_text, is_uuid_text
from django_mcp.server.context import Context

#: Django's integer field types (``get_internal_type``), whose ``to_python`` truncates a float.
_INTEGER_FIELDS: Final = frozenset(
    {
        "AutoField",
        "BigAutoField",
        "SmallAutoField",
        "IntegerField",
        "BigIntegerField",
        "SmallIntegerField",
        "PositiveIntegerField",
        "PositiveBigIntegerField",
        "PositiveSmallIntegerField",
    }
)

#: Field types whose validators the database enforces: a number past the column's range,
#: or an address PostgreSQL cannot cast to ``inet``, fails in the database. ``to_python``
#: of an address checks only IPv6 ones.
_VALIDATED_FIELDS: Final = _INTEGER_FIELDS | {"DecimalField", "GenericIPAddressField"}


def key_spelling(model: type[Model], name: str) -> Callable[[str], bool] | None:
    """The test of the one spelling a URI gives the value of field ``name`` (or of the
    target of a relation), for a field whose ``to_python`` reads several: an integer's
    (``int()`` reads ``007``, ``1_000``, `` 7``) or a UUID's (``UUID()`` reads uppercase,
    no hyphens, braces); None for any other field."""
    field = model._meta.get_field(name)
    if not isinstance(field, Field):
        return None
    target: Field[Any, Any] = getattr(field, "target_field", field) if field.is_relation else field
    kind = target.get_internal_type()
    if kind in _INTEGER_FIELDS:
        return is_integer_text
    return is_uuid_text if kind == "UUIDField" else None


def reject_unknown(arguments: Mapping[str, Any], allowed: Iterable[str]) -> None:
    unknown = sorted(set(arguments) - set(allowed))
    if unknown:
        raise ToolError(f"Unknown arguments: {', '.join(unknown)}")


def field_value(model: type[Model], name: str, value: Any) -> Any:
    """Convert ``value`` with the model field's own ``to_python`` (FKs use the target pk)."""
    field = model._meta.get_field(name)
    if not isinstance(field, Field):
        raise ToolError(f"{name}: not a concrete field")
    target: Field[Any, Any] = getattr(field, "target_field", field) if field.is_relation else field
    if value is None:
        if field.null:
            return None
        raise ToolError(f"{name}: may not be null")
    if isinstance(value, dict | list):
        raise ToolError(f"{name}: expected a single value")
    if isinstance(value, str):
        refuse_nul(name, value)
    kind = target.get_internal_type()
    # to_python is lenient where the schema is not: it would read true as 1 and 1.5 as 1,
    # and look up a row the model did not name.
    if isinstance(value, bool) and kind != "BooleanField":
        raise ToolError(f"{name}: must not be a boolean")
    if isinstance(value, float) and kind in _INTEGER_FIELDS and not value.is_integer():
        raise ToolError(f"{name}: must be a whole number")
    if isinstance(value, str) and kind in _INTEGER_FIELDS:  # the schema says integer
        raise ToolError(f"{name}: must be an integer, not a string")
    try:
        converted = target.to_python(value)
        if kind in _VALIDATED_FIELDS:  # what the column refuses, the database fails on
            target.run_validators(converted)
        if kind == "DateTimeField":
            converted = _in_utc(name, converted)
        if kind == "DurationField":
            _in_microseconds(name, converted)
    except ValidationError as exc:
        raise ToolError(f"{name}: {' '.join(str(m) for m in exc.messages)}") from exc
    except (TypeError, ValueError, OverflowError, ArithmeticError) as exc:
        # to_python of a date called with a number, say: a wrong value, not our failure.
        raise ToolError(f"{name}: {type(value).__name__} is not a valid value") from exc
    return converted


def _in_utc(name: str, value: Any) -> Any:
    """``value`` made aware in the default time zone when it is naive (as Django's
    ``DateTimeField`` would read it, without the ``RuntimeWarning`` it logs for every such
    query); refused when it has no UTC instant Python can hold
    (``9999-12-31T23:59-01:00``): Django converts it to UTC for the query (SQLite raised
    OverflowError). Without ``USE_TZ`` the column holds wall-clock times in ``TIME_ZONE``,
    and SQLite and MySQL refuse an aware value: it is converted to that zone's wall clock.
    """
    if not isinstance(value, datetime.datetime):
        return value
    if not settings.USE_TZ:
        if timezone.is_naive(value):
            return value
        try:
            return timezone.make_naive(value, timezone.get_default_timezone())
        except OverflowError as exc:
            raise ToolError(f"{name}: must be a date and time between years 1 and 9999") from exc
    try:
        if timezone.is_naive(value):
            value = timezone.make_aware(value, timezone.get_default_timezone())
        value.astimezone(datetime.UTC)
    except OverflowError as exc:
        raise ToolError(f"{name}: must be a date and time between years 1 and 9999 in UTC") from exc
    return value


#: A duration where the database has no interval type is a 64-bit count of microseconds.
_MICROSECONDS: Final = 2**63
_DAYS: Final = _MICROSECONDS // (86_400 * 10**6)


def _in_microseconds(name: str, value: Any) -> None:
    """Refuse a duration past what a 64-bit count of microseconds holds (``timedelta``
    reaches 999,999,999 days): SQLite raised OverflowError in the query. The bound is the
    same on PostgreSQL, whose ``interval`` is wider, so a filter means the same anywhere."""
    if isinstance(value, datetime.timedelta) and not (
        -_MICROSECONDS <= duration_microseconds(value) < _MICROSECONDS
    ):
        raise ToolError(f"{name}: must be between -{_DAYS} and {_DAYS} days")


def integer(
    arguments: Mapping[str, Any], name: str, default: int, *, low: int, high: int | None
) -> int:
    value = arguments.get(name, default)
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # JSON Schema's integer: 2.0 is one
    if not isinstance(value, int) or isinstance(value, bool):
        raise ToolError(f"{name}: must be an integer")
    if value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise ToolError(f"{name}: must be {bound}")
    return value


def text(arguments: Mapping[str, Any], name: str, *, max_length: int) -> str | None:
    """A string argument of at most ``max_length`` characters, without NUL (which
    PostgreSQL refuses in any text, so it would fail in the database instead)."""
    value = arguments.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ToolError(f"{name}: must be a string")
    if len(value) > max_length:
        raise ToolError(f"{name}: must be at most {max_length} characters")
    refuse_nul(name, value)
    return value


def shown(value: Any) -> str:
    """A lookup value, as a tool error quotes it: a string or number as Python spells it
    (a string quoted and escaped, so a newline in a key forges no line), ``true``,
    ``false`` and ``null`` as JSON does, and a value its field converted (a date, a
    decimal, a UUID) as its text, quoted, the way the client sent it: ``repr`` would
    name it in Python's syntax (``datetime.date(2000, 1, 9)``), which the model never
    wrote and cannot send back."""
    if value is None or isinstance(value, bool):
        return "null" if value is None else str(value).lower()
    if isinstance(value, str | int | float):
        return repr(value)
    if isinstance(value, datetime.date | datetime.time):
        return repr(value.isoformat())
    return repr(str(value))


def refuse_nul(name: str, value: str) -> None:
    if "\x00" in value:
        raise ToolError(f"{name}: must not contain NUL characters")


def check_valid(serializer: Any, verbose_name: Any) -> None:
    """Refuse a write's input: what the serializer finds invalid, naming each field, and
    a NUL character anywhere in the validated data -- a ``JSONField``'s string, key or
    value however deep, which DRF's ``CharField`` check does not see and PostgreSQL's
    ``jsonb`` refuses (it refuses NUL in any text) -- and a duration a filter could not
    name either (:func:`_in_microseconds`)."""
    if not serializer.is_valid():
        raise ToolError(f"Invalid {verbose_name}: {serializer_errors(serializer.errors)}")
    names = {field.source: name for name, field in serializer.fields.items()}
    for source, value in serializer.validated_data.items():
        if _holds_nul(value):
            refuse_nul(names.get(source, source), "\x00")
        _in_microseconds(names.get(source, source), value)  # DRF bounds no duration


def _holds_nul(value: Any) -> bool:
    """Whether a NUL is in ``value`` or any string, key or item within it (walked without
    recursion: a deep JSON value must not exhaust the stack)."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return True
        elif isinstance(item, Mapping):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list | tuple):
            pending.extend(item)
    return False


def writable(serializer: Any) -> list[str]:
    """The fields a write may set: what the input schema lists (read-only ones are not)."""
    return [name for name, field in serializer.fields.items() if not field.read_only]


def instance_signature(key: str) -> inspect.Signature:
    """The signature of an instance resource function: the context and the lookup key."""
    return inspect.Signature(
        [
            inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=Context),
            inspect.Parameter(key, inspect.Parameter.KEYWORD_ONLY, annotation=str),
        ]
    )


def serializer_errors(errors: Any, prefix: str = "") -> str:
    """DRF ``serializer.errors`` as one line naming each field."""
    if isinstance(errors, Mapping):
        parts = [serializer_errors(value, f"{prefix}{key}.") for key, value in errors.items()]
        return "; ".join(part for part in parts if part)
    if isinstance(errors, list) and errors and all(isinstance(e, str) for e in errors):
        label = prefix.rstrip(".") or "non_field_errors"
        return f"{label}: {' '.join(errors)}"
    if isinstance(errors, list):
        return "; ".join(serializer_errors(item, prefix) for item in errors)
    return f"{prefix.rstrip('.')}: {errors}"
