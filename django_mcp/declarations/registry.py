"""The tables of one site's declarations, by kind and name.

A plain container: :class:`~django_mcp.sites.MCPSite` decides what goes in, and copies it
to roll back a failed import or registration.
"""

from __future__ import annotations

import copy
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
