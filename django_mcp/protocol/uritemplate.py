"""Matching URIs against RFC 6570 URI templates (the ``uriTemplate`` of resource templates).

The server needs the reverse of expansion: given a concrete URI from ``resources/read``,
find the template it came from and the value of each variable. Supported operators: simple
``{var}``, reserved ``{+var}``, fragment ``{#var}``, label ``{.var}``, path segment
``{/var}``, and the form-style query ``{?a,b}`` / continuation ``{&c}``. Values are
percent-decoded.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, unquote

_EXPRESSION = re.compile(r"\{([+#./;?&]?)([A-Za-z0-9_.,%*:]+)\}")
_VARNAME = re.compile(r"\A[A-Za-z0-9_]+\Z")


class InvalidTemplate(ValueError):
    """The template is not one this matcher understands."""


class URITemplate:
    """A compiled URI template: its variables and a matcher."""

    __slots__ = ("_pattern", "_query", "template", "variables")

    def __init__(self, template: str) -> None:
        pattern, variables, query = _compile(template)
        self.template = template
        self.variables: tuple[str, ...] = tuple(variables)
        self._pattern = re.compile(pattern)
        self._query: tuple[str, ...] = tuple(query)

    def __repr__(self) -> str:
        return f"URITemplate({self.template!r})"

    def match(self, uri: str) -> dict[str, str] | None:
        """The variables of ``uri`` if it matches this template, else None."""
        base, query_string = uri, ""
        if self._query:
            base, _, query_string = uri.partition("?")
        match = self._pattern.fullmatch(base)
        if match is None:
            return None
        values = {
            name: unquote(value) for name, value in match.groupdict().items() if value is not None
        }
        for key, value in parse_qsl(query_string, keep_blank_values=True):
            if key in self._query:
                values[key] = value
        return values


def is_template(uri: str) -> bool:
    """Whether ``uri`` contains a template expression."""
    return _EXPRESSION.search(uri) is not None


def _compile(template: str) -> tuple[str, list[str], list[str]]:
    parts: list[str] = []
    variables: list[str] = []
    query: list[str] = []
    position = 0
    for match in _EXPRESSION.finditer(template):
        literal = template[position : match.start()]
        if "{" in literal or "}" in literal:
            raise InvalidTemplate(f"Unbalanced braces in URI template {template!r}")
        parts.append(re.escape(literal))
        operator, names = match.group(1), match.group(2).split(",")
        for name in names:
            if not _VARNAME.match(name):
                raise InvalidTemplate(f"Unsupported variable {name!r} in URI template {template!r}")
        if operator in ("?", "&"):
            if match.end() != len(template):
                raise InvalidTemplate("Query expressions must end the URI template")
            query.extend(names)
            variables.extend(names)
        elif len(names) != 1:
            raise InvalidTemplate(f"Use one variable per expression in {template!r}")
        else:
            name = names[0]
            parts.append(_variable_pattern(operator, name))
            variables.append(name)
        position = match.end()
    tail = template[position:]
    if "{" in tail or "}" in tail:
        raise InvalidTemplate(f"Unbalanced braces in URI template {template!r}")
    parts.append(re.escape(tail))
    if len(set(variables)) != len(variables):
        raise InvalidTemplate(f"A variable appears twice in URI template {template!r}")
    return "".join(parts), variables, query


def _variable_pattern(operator: str, name: str) -> str:
    if operator == "":
        return f"(?P<{name}>[^/?#&]+)"
    if operator == "+":
        return f"(?P<{name}>[^?#]+)"
    if operator == "#":
        return f"#(?P<{name}>.+)"
    if operator == ".":
        return rf"\.(?P<{name}>[^/?#.]+)"
    if operator == "/":
        return f"/(?P<{name}>[^/?#]+)"
    if operator == ";":
        return f";{name}=(?P<{name}>[^/?#;]*)"
    raise InvalidTemplate(f"Unsupported operator {operator!r}")
