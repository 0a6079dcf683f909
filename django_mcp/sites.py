"""``MCPSite``: the registry of one MCP endpoint, as ``AdminSite`` is for the admin.

Declarations are registered on a site (the default :data:`site` unless ``site=`` is given)
from each app's ``mcp.py``, which :func:`autodiscover` imports when the app registry is
ready. A project may run several sites, each with its own URL.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator
from importlib import import_module
from typing import TYPE_CHECKING, Any, TypeVar, Unpack, overload

from django.apps import apps
from django.db.models import Model
from django.dispatch import Signal
from django.urls import re_path
from django.utils.functional import LazyObject
from django.utils.module_loading import import_string, module_has_submodule

from django_mcp.conf import mcp_settings
from django_mcp.declarations.options import PromptOptions, ResourceOptions, ToolOptions
from django_mcp.declarations.overrides import CALLER_LOOKUPS as CALLER_LOOKUPS
from django_mcp.declarations.overrides import LookupOverrides
from django_mcp.declarations.prompts import PromptSpec
from django_mcp.declarations.registry import Registry
from django_mcp.declarations.resources import (
    ResourceSpec,
    ResourceTemplateSpec,
    resource_from_options,
)
from django_mcp.declarations.tools import ToolSpec
from django_mcp.exceptions import AlreadyRegistered, InvalidDeclaration, NotRegistered
from django_mcp.requestlog.notes import note_permission_denied

if TYPE_CHECKING:
    from django.urls import URLPattern

    from django_mcp.modeltools import ModelTools
    from django_mcp.server.context import Context

F = TypeVar("F", bound=Callable[..., Any])

_all_sites: weakref.WeakSet[MCPSite] = weakref.WeakSet()

#: Sent after every change of a site's declarations, with ``kind`` ("tools", "resources",
#: "prompts", or None for a wholesale restore). The listen package announces it to open
#: ``subscriptions/listen`` streams; the registry itself knows nothing of them.
declarations_changed = Signal()


class MCPSite(LookupOverrides):
    """One MCP endpoint: its declarations, who may see them, and its URL."""

    #: The view serving :attr:`urls`, as a dotted path (the registry does not import the
    #: HTTP layer). Point it at a subclass of ``MCPView`` to customise one site's view.
    view_class: str = "django_mcp.http.views.MCPView"
    #: The ``ModelTools`` class used when ``register(Model)`` names none.
    default_model_tools: str = "django_mcp.modeltools.ModelTools"

    def __init__(self, name: str = "mcp", *, require_authentication: bool | None = None) -> None:
        super().__init__()
        self.name = name
        #: True: anonymous requests get the 401 challenge (None: ``REQUIRE_AUTHENTICATION``).
        self.require_authentication = require_authentication
        self._registry = Registry()
        #: Incremented by every registration change: derived state is cached per value.
        self.generation = 0
        #: Models whose registration was skipped for a missing package (check E010).
        self.unavailable: dict[type[Model], str] = {}
        #: True once autodiscover has run: from then on, registry changes are announced.
        self.serving = False
        _all_sites.add(self)

    @property
    def registry(self) -> Registry:
        """The site's declarations (read them; register through the site's methods)."""
        return self._registry

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"

    # -- tools -------------------------------------------------------------------------

    @overload
    def tool(self, func: F, /) -> F: ...
    @overload
    def tool(self, func: None = None, /, **options: Unpack[ToolOptions]) -> Callable[[F], F]: ...

    def tool(
        self, func: F | None = None, /, **options: Unpack[ToolOptions]
    ) -> F | Callable[[F], F]:
        """Register a function (returned unchanged) as a tool; works bare (``@site.tool``)
        or called. Its name, docstring and type hints give the tool's name, description and
        schemas unless the options (:class:`~.declarations.options.ToolOptions`) say."""

        def decorator(target: F) -> F:
            self.add_tool(ToolSpec.from_options(target, options))
            return target

        return decorator(func) if func is not None else decorator

    def add_tool(self, spec: ToolSpec) -> ToolSpec:
        """Register a built :class:`ToolSpec`; a second tool with its name is an error."""
        self._add(self._registry.tools, spec.name, spec, "Tool")
        return spec

    def _add(self, table: dict[str, Any], key: str, spec: Any, label: str) -> None:
        """Add ``spec`` under ``key``; ``label`` ("Tool", "Prompt"...) names it in errors."""
        existing = table.get(key)
        if existing is not None:
            raise AlreadyRegistered(
                f"{label} {key!r} is already registered on {self!r} by "
                f"{existing.origin}; cannot register {spec.origin}"
            )
        table[key] = spec
        self.registry_changed(self._registry.kind_of(table))

    def get_tool(self, name: str, context: Context | None = None) -> ToolSpec | None:
        """The tool called ``name`` if it exists and the caller may use it."""
        spec = self._registry.tools.get(name)
        return spec if spec is not None and self._permitted(spec, context) else None

    def get_tools(self, context: Context | None = None) -> list[ToolSpec]:
        """The tools the caller may use, in a deterministic order (by name)."""
        return self._visible(self._registry.tools, context)

    # -- resources ----------------------------------------------------------------------

    def resource(self, uri: str, /, **options: Unpack[ResourceOptions]) -> Callable[[F], F]:
        """Register a function as the resource at ``uri``, or as a resource template when
        ``uri`` is an RFC 6570 template such as ``books://{isbn}``."""

        def decorator(target: F) -> F:
            spec = resource_from_options(uri, target, options)
            if isinstance(spec, ResourceTemplateSpec):
                self._add(self._registry.templates, uri, spec, "Resource template")
            else:
                self._add(self._registry.resources, uri, spec, "Resource")
            return target

        return decorator

    def get_resources(self, context: Context | None = None) -> list[ResourceSpec]:
        """Fixed resources the caller may read, ordered by URI."""
        return self._visible(self._registry.resources, context)

    def get_resource_templates(self, context: Context | None = None) -> list[ResourceTemplateSpec]:
        """Resource templates the caller may read, ordered by template."""
        return self._visible(self._registry.templates, context)

    def find_resource(
        self, uri: str, context: Context | None = None
    ) -> tuple[ResourceSpec | ResourceTemplateSpec, dict[str, str]] | None:
        """The declaration serving ``uri`` and its template variables, if any may."""
        # For anyone: a registered template hidden from the caller shadows later ones, on
        # every site (a site's own list, filtered for the caller, no longer holds it).
        found = self._registry.find_resource(uri)
        if found is not None and not self._permitted(found[0], context):
            return None
        if "resources" in self.own_lookups:  # its own lookup decides what else serves
            templates = self.get_resource_templates(context)
            first = None if found is None else found[0]
            if isinstance(first, ResourceTemplateSpec) and all(t is not first for t in templates):
                return None  # a registered template its own list hides shadows as well
            found = self._registry.find_resource(uri, templates)
            return found if found is None or self._permitted(found[0], context) else None
        return found

    # -- prompts ------------------------------------------------------------------------

    @overload
    def prompt(self, func: F, /) -> F: ...
    @overload
    def prompt(
        self, func: None = None, /, **options: Unpack[PromptOptions]
    ) -> Callable[[F], F]: ...

    def prompt(
        self, func: F | None = None, /, **options: Unpack[PromptOptions]
    ) -> F | Callable[[F], F]:
        """Register a function as a prompt; works bare (``@site.prompt``) or called."""

        def decorator(target: F) -> F:
            spec = PromptSpec.from_options(target, options)
            self._add(self._registry.prompts, spec.name, spec, "Prompt")
            return target

        return decorator(func) if func is not None else decorator

    def get_prompt(self, name: str, context: Context | None = None) -> PromptSpec | None:
        spec = self._registry.prompts.get(name)
        return spec if spec is not None and self._permitted(spec, context) else None

    def get_prompts(self, context: Context | None = None) -> list[PromptSpec]:
        """Prompts the caller may use, ordered by name."""
        return self._visible(self._registry.prompts, context)

    def _visible(self, table: dict[str, Any], context: Context | None) -> list[Any]:
        return [spec for _, spec in sorted(table.items()) if self.has_permission(spec, context)]

    # -- admin-like registration ----------------------------------------------------------

    def register(
        self,
        target: Any,
        tools_class: type[ModelTools] | None = None,
    ) -> Any:
        """Register like ``admin.site.register``: a model (or iterable of models) with a
        :class:`~django_mcp.modeltools.ModelTools` class, or a function as a tool."""
        if isinstance(target, type) and issubclass(target, Model):
            self.register_model(target, tools_class or import_string(self.default_model_tools))
            return target
        if isinstance(target, list | tuple):
            for model in target:
                self.register(model, tools_class)
            return target
        if tools_class is not None:
            raise TypeError("A ModelTools class goes with a model, not a function")
        return self.tool(target)

    def registered_models(self) -> dict[type[Model], ModelTools]:
        """Each registered model and its ModelTools instance."""
        return dict(self._registry.models)

    def register_model(
        self, model: type[Model], tools_class: type[ModelTools]
    ) -> ModelTools | None:
        """Expose ``model`` through an instance of ``tools_class``, all or nothing
        (:meth:`ModelTools.install`). Without an optional package it needs nothing is
        registered: :attr:`unavailable` keeps why, for check ``E010``, not a crash."""
        if model._meta.abstract:
            raise InvalidDeclaration(
                f"The model {model.__name__} is abstract and cannot be registered"
            )
        if model in self._registry.models:
            existing = type(self._registry.models[model])
            raise AlreadyRegistered(
                f"The model {model._meta.label} is already registered on {self!r} by "
                f"{existing.__module__}.{existing.__qualname__}; cannot register "
                f"{tools_class.__module__}.{tools_class.__qualname__}"
            )
        return tools_class.install(self, model)

    def add_model(self, model: type[Model], tools: ModelTools) -> None:
        """Record ``tools`` as the ``ModelTools`` of ``model`` (its tools are added apart)."""
        self._registry.models[model] = tools

    def _find(self, target: str | Callable[..., Any]) -> Iterator[tuple[dict[str, Any], str]]:
        for table in self._registry.tables():
            for key, spec in table.items():
                if key == target or spec.func is target:
                    yield table, key

    def unregister(self, target: str | Callable[..., Any] | type[Model]) -> None:
        """Remove a declaration by name, by the function that declared it, or a model."""
        if isinstance(target, type) and issubclass(target, Model):
            tools = self._registry.models.pop(target, None)
            if tools is None:
                raise NotRegistered(f"The model {target._meta.label} is not registered on {self!r}")
            tools.unregister_resources()
            table = self._registry.tools
            for name in [n for n, s in table.items() if getattr(s.func, "__self__", None) is tools]:
                del table[name]
            self.registry_changed("tools")
            return
        found = list(self._find(target))
        if not found:
            raise NotRegistered(f"{target!r} is not registered on {self!r}")
        for table, key in found:
            del table[key]
            self.registry_changed(self._registry.kind_of(table))

    def is_registered(self, target: str | Callable[..., Any] | type[Model]) -> bool:
        """Whether a declaration with this name or function, or this model, is registered."""
        if isinstance(target, type) and issubclass(target, Model):
            return target in self._registry.models
        return any(True for _ in self._find(target))

    def registry_changed(self, kind: str | None = None) -> None:
        """Called after every registration change (``kind``: tools, resources or prompts).

        Moves :attr:`generation` on, so derived state (capabilities) is recomputed, and
        sends :data:`declarations_changed`, which the listen package announces to open
        ``subscriptions/listen`` streams once the site is serving.
        """
        self.generation += 1
        self.__dict__.pop("_varies", None)
        declarations_changed.send(sender=type(self), site=self, kind=kind)

    # -- permissions --------------------------------------------------------------------

    def has_permission(self, spec: Any, context: Context | None) -> bool:
        """Whether the caller may see and use ``spec``; override to gate a whole site.

        Without a context (no caller known) only ungated declarations are visible.
        """
        check = getattr(spec, "permission", None)
        if check is None:
            return True
        return context is not None and bool(check(context))

    def _permitted(self, spec: Any, context: Context | None) -> bool:
        """:meth:`has_permission`; a refusal is noted for the log only, never answered."""
        if self.has_permission(spec, context):
            return True
        note_permission_denied(context)
        return False

    @property
    def requires_authentication(self) -> bool:
        if self.require_authentication is not None:
            return self.require_authentication
        return bool(mcp_settings.REQUIRE_AUTHENTICATION)

    def varies_by_caller(self) -> bool:
        """Whether lists may differ per caller, which makes their ``cacheScope`` private."""
        if self.decides_per_caller:
            return True
        cached: bool | None = self.__dict__.get("_varies")
        if cached is None:
            cached = self.__dict__["_varies"] = any(
                getattr(spec, "permission", None) is not None
                for table in self._registry.tables()
                for spec in table.values()
            )
        return cached

    # -- serving -----------------------------------------------------------------------

    def get_urls(self) -> list[URLPattern]:
        """The endpoint's URL pattern, served by :attr:`view_class`, with and without a
        trailing slash: clients POST to the exact URL they were given, and a POST cannot be
        redirected to add a slash (ADR 0003)."""
        view_class = import_string(self.view_class)
        return [re_path(r"^(?:/)?$", view_class.as_view(site=self), name="endpoint")]

    @property
    def urls(self) -> tuple[list[URLPattern], str, str]:
        """For ``path("mcp", site.urls)``, like ``admin.site.urls``."""
        return self.get_urls(), "django_mcp", self.name

    # -- autodiscover support -----------------------------------------------------------

    def snapshot(self) -> Registry:
        return self._registry.copy()

    def restore(self, snapshot: Registry) -> None:
        self._registry = snapshot
        self.registry_changed()


class DefaultMCPSite(LazyObject):  # type: ignore[type-arg]
    """The default site, built on first use from the ``SITE_CLASS`` setting."""

    def _setup(self) -> None:
        site_class = import_string(mcp_settings.SITE_CLASS)
        self._wrapped = site_class()

    def __repr__(self) -> str:
        return repr(self._wrapped)


site: MCPSite = DefaultMCPSite()  # type: ignore[assignment]


def all_sites() -> list[MCPSite]:
    """Every live site, for autodiscover's rollback and system checks."""
    return list(_all_sites)


def autodiscover() -> None:
    """Import ``<app>.mcp`` for every installed app, like ``admin.autodiscover``: a broken
    ``mcp.py`` leaves every site as it was and re-raises (nothing is half-registered)."""
    module_name = mcp_settings.AUTODISCOVER_MODULE
    site.name  # noqa: B018 - build the lazy default site so rollbacks include it
    for app_config in apps.get_app_configs():
        if not module_has_submodule(app_config.module, module_name):
            continue
        snapshots = {target: target.snapshot() for target in all_sites()}
        try:
            import_module(f"{app_config.name}.{module_name}")
        except Exception:
            for target, snapshot in snapshots.items():
                target.restore(snapshot)
            raise
    for target in all_sites():
        target.serving = True
