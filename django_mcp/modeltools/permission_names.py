"""Names of DRF permission classes for operators (``mcp_inspect``, the explorer), composed
ones included: DRF's ``&``, ``|`` and ``~`` make class-like objects with no name of their
own, which would otherwise print as ``<OperandHolder object at 0x...>`` or not at all."""

from __future__ import annotations

from typing import Any, Final

#: How DRF's composed permissions (``IsA & IsB``, ``IsA | IsB``, ``~IsA``) are written.
_OPERATORS: Final = {"AND": "&", "OR": "|", "NOT": "~"}


def permission_name(permission: Any) -> str:
    """A DRF permission class by its dotted path; a composition of them (DRF's
    ``OperandHolder``, a class-like object with no name of its own) as written, e.g.
    ``(rest_framework.permissions.IsAuthenticated & myapp.IsOwner)``."""
    operator = _OPERATORS.get(getattr(getattr(permission, "operator_class", None), "__name__", ""))
    first = getattr(permission, "op1_class", None)
    if operator is not None and first is not None:
        second = getattr(permission, "op2_class", None)
        if second is None:
            return f"{operator}{permission_name(first)}"
        return f"({permission_name(first)} {operator} {permission_name(second)})"
    name = getattr(permission, "__qualname__", None)
    if name is None:
        return repr(permission)
    return f"{getattr(permission, '__module__', '?')}.{name}"
