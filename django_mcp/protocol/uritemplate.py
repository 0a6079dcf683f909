"""Matching URIs against RFC 6570 URI templates (the ``uriTemplate`` of resource templates),
and expanding them (:func:`expand`).

The server needs the reverse of expansion: given a concrete URI from ``resources/read``,
find the template it came from and the value of each variable. Supported operators: simple
``{var}``, reserved ``{+var}``, fragment ``{#var}``, label ``{.var}``, path segment
``{/var}``, and the form-style query ``{?a,b}`` / continuation ``{&c}``. Values are
percent-decoded; a URI with a value that decodes to a NUL character (``%00``) matches no
template, so it names no resource (and a NUL never reaches a resource function, where a
database query would fail on it).

RFC 6570 defines expansion only, and reversing it is ambiguous: ``{+owner}/{+name}`` can
split ``a/b/c`` two ways. A backtracking regular expression tries every split, which for
three such variables costs cubic time in the URI's length (a 3 KB URI took seconds and
stalled the worker). So the split is fixed instead: every variable but the last ends at the
first character that begins what follows it (the next literal, or the next expression's
``/``, ``.``, ``#`` or ``;``), matched possessively so nothing is ever retried; the last
variable takes the rest, less the template's literal tail. Matching is then linear in the
URI's length. Two expressions with nothing between them (``{a}{b}``) cannot be split and
are refused when the template is declared.

A URI is matched in its RFC 3986 normal form (:func:`normalised`, section 6.2.2): a
percent-encoded unreserved character is the character itself (``%61dmin`` is ``admin``)
and a triplet's hex digits are uppercase. Fixed resources are looked up in the same form,
so no spelling of a fixed resource's URI misses it and reaches a template instead. A value
decodes as UTF-8 strictly: invalid UTF-8 (``%ff``) or a ``%`` that starts no triplet
matches nothing, rather than decoding (to U+FFFD, or to itself) as other URIs' values do.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final
from urllib.parse import parse_qsl, quote, unquote_to_bytes

_EXPRESSION = re.compile(r"\{([+#./;?&]?)([A-Za-z0-9_.,%*:]+)\}")
_VARNAME = re.compile(r"\A[A-Za-z0-9_]+\Z")
#: An integer as ``str(int)`` spells it: ASCII digits, no leading zero, an optional minus.
_INTEGER = re.compile(r"0|-?[1-9][0-9]*")
#: A UUID as ``str(uuid)`` spells it: lowercase hexadecimal in groups of 8-4-4-4-12.
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


class InvalidTemplate(ValueError):
    """The template is not one this matcher understands."""


class URITemplate:
    """A compiled URI template: its variables and a matcher."""

    __slots__ = ("_pattern", "_query", "_reserved", "template", "variables")

    def __init__(self, template: str) -> None:
        pattern, variables, query, reserved = _compile(template)
        self.template = template
        self.variables: tuple[str, ...] = tuple(variables)
        self._pattern = re.compile(pattern)
        self._query: tuple[str, ...] = tuple(query)
        #: The variables of ``{+name}`` and ``{#name}``, whose values keep the triplets of
        #: reserved characters (:func:`_decoded_reserved`).
        self._reserved: frozenset[str] = frozenset(reserved)

    def __repr__(self) -> str:
        return f"URITemplate({self.template!r})"

    def match(self, uri: str) -> dict[str, str] | None:
        """The variables of ``uri`` if it matches this template, else None."""
        base, query_string = uri, ""
        if self._query:
            base, _, query_string = uri.partition("?")
        match = self._pattern.fullmatch(normalised(base))
        if match is None or _STRAY_PERCENT.search(uri):
            return None
        try:
            values = {
                name: _decoded_reserved(value) if name in self._reserved else _decoded(value)
                for name, value in match.groupdict().items()
                if value is not None
            }
            for key, value in parse_qsl(query_string, keep_blank_values=True, errors="strict"):
                if key in self._query:
                    values[key] = value
        except UnicodeDecodeError:  # not UTF-8: no value, so no resource
            return None
        if any("\x00" in value for value in values.values()):
            return None
        return values


#: RFC 3986's unreserved characters (section 2.3): percent-encoding one changes nothing.
_UNRESERVED: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_PERCENT_TRIPLET: Final = re.compile(r"%([0-9A-Fa-f]{2})")
#: A ``%`` that does not start a triplet: no URI holds one (RFC 3986, section 2.4).
_STRAY_PERCENT: Final = re.compile(r"%(?![0-9A-Fa-f]{2})")


def normalised(uri: str) -> str:
    """``uri`` with RFC 3986's percent-encoding normalisation (section 6.2.2.1 and
    6.2.2.2): a triplet that encodes an unreserved character decoded, every other
    triplet's hex digits uppercase. URIs that differ only there are the same URI, so the
    server looks resources up in this form: ``notes://%61dmin`` is ``notes://admin``."""
    if "%" not in uri:
        return uri
    return _PERCENT_TRIPLET.sub(_normal_triplet, uri)


def _normal_triplet(match: re.Match[str]) -> str:
    character = chr(int(match.group(1), 16))
    return character if character in _UNRESERVED else "%" + match.group(1).upper()


def _decoded(value: str) -> str:
    """``value`` percent-decoded as UTF-8, strictly: ``UnicodeDecodeError`` for bytes
    that are not UTF-8, which ``unquote`` would replace with U+FFFD (so that ``%ff`` and
    ``%fe`` named one resource)."""
    return unquote_to_bytes(value).decode("utf-8") if "%" in value else value


#: What a reserved expansion's value keeps percent-encoded: RFC 3986's reserved
#: characters (gen-delims and sub-delims, section 2.2) and ``%`` itself.
_KEPT_ENCODED: Final = frozenset(b":/?#[]@!$&'()*+,;=%")
_TRIPLET_RUN: Final = re.compile(r"(?:%[0-9A-Fa-f]{2})+")


def _decoded_reserved(value: str) -> str:
    """A ``{+name}`` or ``{#name}`` value: RFC 6570 section 3.2.3 lets reserved
    characters through such an expansion as they are and passes a percent-encoded triplet
    through unchanged, so ``a/b`` and ``a%2Fb`` are two values, as they are two URIs
    (decoded, ``files://secret%2Fplans`` reached ``files://{+path}`` with the value of
    ``files://secret/plans``, past a template gated on ``files://secret/{name}``). The
    triplets of reserved characters and of ``%`` stay encoded (uppercase, as normal form
    writes them); the others decode as UTF-8, strictly."""
    if "%" not in value:
        return value

    def run(match: re.Match[str]) -> str:
        raw = unquote_to_bytes(match.group(0))
        out: list[str] = []
        pending = bytearray()
        for byte in raw:
            if byte in _KEPT_ENCODED:
                out.append(pending.decode("utf-8"))
                pending.clear()
                out.append(f"%{byte:02X}")
            else:
                pending.append(byte)
        out.append(pending.decode("utf-8"))
        return "".join(out)

    return _TRIPLET_RUN.sub(run, value)


def is_integer_text(value: str) -> bool:
    """Whether ``value`` is an integer variable's only spelling, the one ``str(int)``
    gives: ASCII digits without leading zeros, an optional leading ``-`` (never ``-0``).
    ``int()`` also reads ``007``, ``1_000``, `` 7``, ``+7`` and non-ASCII digits such as
    ``\\u0667``, which would make many URIs name one resource."""
    return _INTEGER.fullmatch(value) is not None


def expand(template: str, values: Mapping[str, str]) -> str:
    """``template`` with its variables replaced by ``values``, as RFC 6570 (section 3.2)
    expands them, for the operators :class:`URITemplate` matches: simple ``{var}``
    percent-encodes every character but the unreserved ones (so ``AC/DC 100%`` is
    ``AC%2FDC%20100%25``), ``{+var}`` and ``{#var}`` keep reserved characters and
    percent-encoded triplets. A variable without a value expands to nothing. The URI a
    resource is read at is this expansion, so a URI the server announces must be too."""

    def expression(match: re.Match[str]) -> str:
        operator, names = match.group(1), match.group(2).split(",")
        defined = [(name, values[name]) for name in names if name in values]
        if not defined:
            return ""
        first, separator = _EXPANSION[operator]
        parts = []
        for name, value in defined:
            encoded = _encode(value, reserved=operator in ("+", "#"))
            if operator in (";", "?", "&"):
                encoded = f"{name}={encoded}" if encoded or operator != ";" else name
            parts.append(encoded)
        return first + separator.join(parts)

    return _EXPRESSION.sub(expression, template)


#: Each operator's first character and separator between values (RFC 6570, appendix A).
_EXPANSION: Final = {
    "": ("", ","),
    "+": ("", ","),
    "#": ("#", ","),
    ".": (".", "."),
    "/": ("/", "/"),
    ";": (";", ";"),
    "?": ("?", "&"),
    "&": ("&", "&"),
}
#: RFC 3986's reserved characters, which ``{+var}`` and ``{#var}`` leave as they are.
_RESERVED: Final = ":/?#[]@!$&'()*+,;="
_TRIPLET: Final = re.compile(r"%[0-9A-Fa-f]{2}")


def _encode(value: str, *, reserved: bool) -> str:
    """``value`` percent-encoded (UTF-8): all but unreserved characters, or, with
    ``reserved``, all but unreserved and reserved ones and existing triplets."""
    if not reserved:
        return quote(value, safe="")
    pieces, position = [], 0
    for triplet in _TRIPLET.finditer(value):
        pieces.append(quote(value[position : triplet.start()], safe=_RESERVED))
        pieces.append(triplet.group())
        position = triplet.end()
    pieces.append(quote(value[position:], safe=_RESERVED))
    return "".join(pieces)


def is_uuid_text(value: str) -> bool:
    """Whether ``value`` is a UUID variable's only spelling, the one ``str(uuid)`` gives:
    lowercase, hyphenated. ``UUID()`` also reads uppercase, braces, a ``urn:uuid:``
    prefix or no hyphens, which would make many URIs name one resource (and a client
    subscribed to one of them would never hear of a change announced at another)."""
    return _UUID.fullmatch(value) is not None


def is_template(uri: str) -> bool:
    """Whether ``uri`` contains a template expression."""
    return _EXPRESSION.search(uri) is not None


#: The literal that an operator writes before its value ("" for simple and reserved).
_PREFIXES = {"": "", "+": "", "#": "#", ".": ".", "/": "/", ";": ";"}
#: The characters each operator's value may hold (a regex character class body).
_CLASSES = {"": "^/?#&", "+": "^?#", "#": "^\\n", ".": "^/?#.", "/": "^/?#", ";": "^/?#;"}


def _compile(template: str) -> tuple[str, list[str], list[str], list[str]]:
    """The template's pattern, its variables, those of its query and those of its
    reserved expansions (``+`` and ``#``)."""
    literals: list[str] = []  # literals[i] precedes expressions[i]; one more for the tail
    expressions: list[tuple[str, str]] = []
    query: list[str] = []
    position = 0
    for match in _EXPRESSION.finditer(template):
        literal = template[position : match.start()]
        _check_literal(literal, template)
        operator, names = match.group(1), match.group(2).split(",")
        for name in names:
            if not _VARNAME.match(name):
                raise InvalidTemplate(f"Unsupported variable {name!r} in URI template {template!r}")
        position = match.end()
        if operator in ("?", "&"):
            if match.end() != len(template):
                raise InvalidTemplate("Query expressions must end the URI template")
            query.extend(names)
            literals.append(literal)
            position = len(template)
            break
        if len(names) != 1:
            raise InvalidTemplate(f"Use one variable per expression in {template!r}")
        if operator not in _PREFIXES:
            raise InvalidTemplate(f"Unsupported operator {operator!r}")
        literals.append(literal)
        expressions.append((operator, names[0]))
    else:
        literals.append("")
    tail = template[position:]
    _check_literal(tail, template)
    literals[-1] += tail
    variables = [name for _, name in expressions] + query
    if len(set(variables)) != len(variables):
        raise InvalidTemplate(f"A variable appears twice in URI template {template!r}")
    reserved = [name for operator, name in expressions if operator in ("+", "#")]
    return _pattern(template, literals, expressions), variables, query, reserved


def _check_literal(literal: str, template: str) -> None:
    if "{" in literal or "}" in literal:
        raise InvalidTemplate(f"Unbalanced braces in URI template {template!r}")
    if _STRAY_PERCENT.search(literal):  # no URI holds one, so the template matches none
        raise InvalidTemplate(
            f"A '%' that starts no percent-encoded triplet in URI template {template!r} "
            "(write '%25')"
        )


def _pattern(template: str, literals: list[str], expressions: list[tuple[str, str]]) -> str:
    """The regular expression, with the fixed split described in the module docstring."""
    parts = [re.escape(literals[0])]
    for index, (operator, name) in enumerate(expressions):
        chars = _CLASSES[operator]
        value = "*" if operator == ";" else "+"
        if index + 1 < len(expressions):
            following = literals[index + 1] + _PREFIXES[expressions[index + 1][0]]
            if not following:
                raise InvalidTemplate(
                    f"Expressions with nothing between them cannot be told apart in {template!r}"
                )
            chars += re.escape(following[0])
            value += "+"  # possessive: the value can end at one place only
        prefix = re.escape(_PREFIXES[operator] + (f"{name}=" if operator == ";" else ""))
        parts.append(f"{prefix}(?P<{name}>[{chars}]{value})")
        parts.append(re.escape(literals[index + 1]))
    return "".join(parts)
