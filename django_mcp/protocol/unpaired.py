"""Unpaired UTF-16 surrogates in a request's params, found so admission can refuse them.

Why: JSON's ``\\uXXXX`` escape can spell half of a surrogate pair on its own
(``"\\ud800"``), and Python's parser turns it into a string that is not Unicode text:
UTF-8 cannot encode it. Passed on, it fails deep inside whatever encodes it (a database
query, a cache key, a hash), as an internal error (-32603) where the client's input was at
fault. I-JSON (RFC 7493, section 2.1) forbids such strings. Admission refuses them in
``params`` with -32602, naming where, before any handler sees them.

``_meta`` is not looked at: its keys have rules of their own (:mod:`.meta`), what the
request log keeps of it (the client's name and version) is made storable where it is
stored, and a task, which keeps all of it, refuses one there
(:func:`django_mcp.tasks.store.require_storable`).

Cheap for every other request: every such escape starts ``\\ud`` or ``\\uD`` in the raw
body, so only a body holding one of those (a byte search in C) is checked, first in C
(:func:`unpaired_in_params`), and walked only when it holds one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from .strings import first_match, may_hold

#: A character in U+D800..U+DFFF: after parsing, a valid pair is one character above U+FFFF,
#: so any of these left in a string is unpaired.
_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def may_hold_unpaired(body: bytes) -> bool:
    """Whether ``body`` has a ``\\ud``/``\\uD`` escape at all (else no walk is needed)."""
    return b"\\ud" in body or b"\\uD" in body


def unpaired_in_params(params: Mapping[str, Any]) -> str | None:
    """Where a string of ``params`` (a value or a key, ``_meta`` aside) holding an unpaired
    surrogate is, as ``params.arguments.text``, or None.

    First in C (:func:`.strings.may_hold`), then, only if one may be there, the walk that
    names the place.
    """
    own = {key: value for key, value in params.items() if key != "_meta"}
    found = first_match(own, "params", _SURROGATE) if may_hold(own, nul=False) else None
    return found[0] if found is not None else None
