"""Python regular expressions (a Django validator's, which DRF copies into a schema) as
the ECMA-262 ones JSON Schema's ``pattern`` is (JSON Schema 2020-12, section 6.3.3), or
nothing.

A pattern a client cannot compile makes the tool unusable there (Ajv, the TypeScript SDK's
validator, compiles with the ``u`` flag, which refuses Python's identity escapes such as
``\\-``), and one it reads otherwise refuses values the server accepts. So a pattern is
kept only when it says the same thing in both languages, after three translations: the
end anchors ``\\Z``/``\\z`` and the start ``\\A`` become ``$`` and ``^``, and
``(?P<name>`` becomes ``(?<name>``. Everything else must be in the small common subset
:func:`_common` reads: classes and escapes that mean the same (not ``\\w``, ``\\d``,
``\\s``, ``\\b``, which are Unicode in Python and ASCII there: Django's username pattern
takes "José"), groups ECMA-262 knows, and quantifiers written in full. Anything else is
left out of the schema; the server still validates every value.
"""

from __future__ import annotations

import re
from typing import Final

#: ``\A`` at the start, ``\Z``/``\z`` at the end, each not itself escaped.
_START_ANCHOR: Final = re.compile(r"^\\A")
_END_ANCHOR: Final = re.compile(r"(?<!\\)((?:\\\\)*)\\[zZ]$")
#: Escapes that mean the same in both (under ECMA-262's ``u`` flag).
_SYNTAX: Final = frozenset("^$\\.*+?()[]{}|/")
_CONTROL: Final = frozenset("tnrfv")
_HEX: Final = {"x": re.compile(r"[0-9a-fA-F]{2}"), "u": re.compile(r"[0-9a-fA-F]{4}")}
#: Groups both have: non-capturing, lookaround, named (once ``(?P<`` is translated).
_GROUP: Final = re.compile(r"\((?!\?)|\(\?(?::|=|!|<=|<!|<[A-Za-z_][A-Za-z0-9_]*>)")
_QUANTIFIER: Final = re.compile(r"\{[0-9]+(?:,[0-9]*)?\}")


def ecma_pattern(pattern: str) -> str | None:
    """``pattern`` as ECMA-262 says it, or None when it cannot be said the same way."""
    translated = _END_ANCHOR.sub(r"\1$", _START_ANCHOR.sub("^", pattern)).replace("(?P<", "(?<")
    return translated if _common(translated) else None


def _common(pattern: str) -> bool:
    """Whether ``pattern`` is in the subset both languages read alike."""
    i, in_class = 0, False
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            step = _escape(pattern, i)
            if step == 0:
                return False
            i += step
            continue
        if in_class:
            in_class = char != "]"
            if char == "[" and pattern.startswith("[:", i):  # Python warns; ECMA differs
                return False
            i += 1
            continue
        if char == "[":
            in_class = True
            i += 2 if pattern.startswith("[^", i) else 1
            if pattern.startswith("]", i):  # "[]...]": a literal "]" in Python only
                return False
            continue
        if char == "(" and not _GROUP.match(pattern, i):
            return False  # (?>...), (?#...), (?(1)...), inline flags, (?P=name)
        if char == "{":
            quantifier = _QUANTIFIER.match(pattern, i)
            if quantifier is None:
                return False  # {,3}, or a lone brace: a literal in Python only
            i = quantifier.end()
            if pattern.startswith("+", i):
                return False  # possessive
            continue
        if char in "}]":
            return False  # a lone bracket: an error under the u flag
        if char in "*+?" and pattern.startswith("+", i + 1):
            return False  # possessive (Python 3.11)
        i += 1
    return not in_class


def _escape(pattern: str, i: int) -> int:
    """How many characters the escape at ``i`` spans, or 0 if it is not common."""
    following = pattern[i + 1 : i + 2]
    if following in _SYNTAX or following in _CONTROL:
        return 2 if following else 0
    digits = _HEX.get(following)
    if digits is not None and digits.fullmatch(
        pattern, i + 2, i + 2 + (2 if following == "x" else 4)
    ):
        return 4 if following == "x" else 6
    return 0
