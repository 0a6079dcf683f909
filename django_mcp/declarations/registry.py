"""The tables of one site's declarations, by kind and name.

A plain container: :class:`~django_mcp.sites.MCPSite` decides what goes in, and copies it
to roll back a failed import or registration.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from django_mcp.declarations.prompts import PromptSpec
from django_mcp.declarations.resources import ResourceSpec, ResourceTemplateSpec
from django_mcp.declarations.tools import ToolSpec
from django_mcp.protocol.uritemplate import normalised

if TYPE_CHECKING:
    from django.db.models import Model

    from django_mcp.modeltools import ModelTools


class Registry:
    """The declarations of one site, by kind and name; copied to roll back an import."""

    def __init__(self) -> None:
        self.tools: dict[str, ToolSpec] = {}
        self.resources: dict[str, ResourceSpec] = {}
        self.templates: dict[str, ResourceTemplateSpec] = {}
        self.prompts: dict[str, PromptSpec] = {}
        self.models: dict[type[Model], ModelTools] = {}

    def fixed_resource(self, uri: str) -> ResourceSpec | None:
        """The fixed resource at ``uri`` however it is percent-encoded: looked up in the
        RFC 3986 normal form templates match in (a declared URI is in it), since a
        spelling that missed it (``notes://%61dmin``) reached a template instead, past
        the fixed resource's permission."""
        return self.resources.get(normalised(uri))

    def find_resource(
        self, uri: str, templates: Iterable[ResourceTemplateSpec] | None = None
    ) -> tuple[ResourceSpec | ResourceTemplateSpec, dict[str, str]] | None:
        """The fixed resource at ``uri`` (no values), else the first of ``templates`` that
        matches it, with its values. By default every template, in the order of
        ``resources/templates/list``, whoever asks: the caller's permission is checked on
        what this finds, so a template hidden from the caller shadows a later one
        (``notes://secret/{id}`` is not read through ``notes://{+path}``); a site whose own
        ``get_resource_templates`` decides what a caller may read passes its answer.
        Values a template also reads from a fixed resource's own URI are that fixed
        resource: another URI that normal form does not fold onto it (``notes://admin?``
        for a template with a query, an IRI percent-encoded) would hand them to the
        template instead."""
        fixed = self.fixed_resource(uri)
        if fixed is not None:
            return fixed, {}
        if templates is None:
            templates = (template for _, template in sorted(self.templates.items()))
        for template in templates:
            values = template.match(uri)
            if values is not None:
                named = (f for f in self.resources.values() if template.match(f.uri) == values)
                fixed = next(named, None)
                return (template, values) if fixed is None else (fixed, {})
        return None

    def tables(self) -> tuple[dict[str, Any], ...]:
        return (self.tools, self.resources, self.templates, self.prompts)

    def kind_of(self, table: dict[str, Any]) -> str:
        if table is self.prompts:
            return "prompts"
        if table is self.resources or table is self.templates:
            return "resources"
        return "tools"

    def copy(self) -> Registry:
        clone = Registry()
        clone.__dict__.update({key: copy.copy(value) for key, value in self.__dict__.items()})
        return clone
