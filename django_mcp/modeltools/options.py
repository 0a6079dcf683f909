"""The ``ModelTools`` options class and its five actions."""

from __future__ import annotations

import functools
import operator
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Final

from django.contrib.admin.utils import lookup_spawns_duplicates
from django.db.models import Model, ProtectedError, Q, QuerySet, RestrictedError
from django.http import Http404

from django_mcp.declarations.permissions import (
    has_django_perms,
    normalise_perms,
    normalise_scopes,
)
from django_mcp.exceptions import InvalidDeclaration, MissingDependency, ToolError
from django_mcp.modeltools import arguments as args
from django_mcp.modeltools import cascades, listing, registration, writes
from django_mcp.modeltools.drf_permissions import checks_objects, drf_allows, drf_allows_object
from django_mcp.modeltools.permission_names import permission_name
from django_mcp.modeltools.spec import ModelActionSpec
from django_mcp.server.context import Context

if TYPE_CHECKING:
    from rest_framework import serializers


ACTIONS: Final = ("list", "get", "create", "update", "delete")
#: ``permission_required = DEFAULT_PERMISSIONS`` asks for the model's own view/add/change/
#: delete permissions, as the admin does.
DEFAULT_PERMISSIONS: Final = "__model__"
_DEFAULT_CODENAMES: Final = {
    "list": "view",
    "get": "view",
    "create": "add",
    "update": "change",
    "delete": "delete",
}


class ModelTools:
    """Options and behaviour for exposing one model; subclass and register it."""

    fields: ClassVar[Sequence[str] | str | None] = None
    exclude: ClassVar[Sequence[str] | None] = None
    actions: ClassVar[Sequence[str]] = ("list", "get")
    search_fields: ClassVar[Sequence[str]] = ()
    list_filter: ClassVar[Sequence[str]] = ()
    ordering: ClassVar[Sequence[str] | None] = None
    list_per_page: ClassVar[int] = 20
    list_max_page_size: ClassVar[int] = 100
    #: Bounds on list arguments, refused as tool errors before any query runs.
    list_max_page: ClassVar[int] = 10_000
    search_max_length: ClassVar[int] = 200
    list_select_related: ClassVar[Sequence[str]] = ()
    lookup_field: ClassVar[str] = "pk"
    name: ClassVar[str | None] = None
    tool_names: ClassVar[Mapping[str, str]] = {}
    descriptions: ClassVar[Mapping[str, str]] = {}
    serializer_class: ClassVar[type[serializers.ModelSerializer[Any]] | None] = None
    permission_required: ClassVar[
        str | Sequence[str] | Mapping[str, str | Sequence[str]] | None
    ] = None
    permission_classes: ClassVar[Sequence[type[Any]]] = ()
    #: Scopes the credential must grant: one set for every action, or a mapping of action
    #: to scopes (like ``permission_required``). Sessions are not limited by scopes.
    scopes_required: ClassVar[str | Sequence[str] | Mapping[str, str | Sequence[str]] | None] = None
    #: Serve each row as a resource at this RFC 6570 template (e.g. ``"books://{isbn}"``,
    #: whose one variable is the lookup argument), and announce saves and deletes to
    #: ``subscriptions/listen`` streams subscribed to it.
    resource_uri: ClassVar[str | None] = None

    def __init__(self, model: type[Model], site: Any) -> None:
        try:
            import rest_framework  # noqa: F401 - schemas and validation come from DRF
        except ImportError as exc:
            raise MissingDependency(
                f"{type(self).__qualname__} ({model._meta.label}) needs Django REST framework, "
                "which is not installed"
            ) from exc
        self.model = model
        self.site = site
        self.opts = model._meta
        #: The receiver announcing row changes, once ``register_resources`` connected it.
        self._watcher: Any = None
        unknown = sorted(set(self.actions) - set(ACTIONS))
        if unknown:
            raise InvalidDeclaration(f"{type(self).__qualname__}: unknown actions {unknown}")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.opts.label}>"

    @classmethod
    def install(cls, site: Any, model: type[Model]) -> ModelTools | None:
        """Register ``model``'s tools (and instance resource) on ``site``, all or nothing
        (see :func:`.registration.install`)."""
        return registration.install(cls, site, model)

    def check(self) -> list[str]:
        """Problems with the options, for the system check (like ModelAdmin's checks):
        misspelled fields would otherwise only fail when a tool is called."""
        problems = []
        names = {field.name for field in self.opts.get_fields()} | {"pk"}
        for option in ("search_fields", "list_filter", "list_select_related"):
            for name in getattr(self, option):
                root = name.split("__", 1)[0]
                if root not in names:
                    problems.append(
                        f"{option} names {name!r}, which is not a field of {self.opts.label}"
                    )
                elif option == "search_fields":
                    problems.extend(listing.search_path_problems(self.model, name))
        for name in self.ordering or ():
            root = name.lstrip("-?").split("__", 1)[0]
            if root and root not in names:
                problems.append(
                    f"ordering names {name!r}, which is not a field of {self.opts.label}"
                )
        return problems

    # -- hooks a subclass overrides, like ModelAdmin's ------------------------------------

    def get_queryset(self, ctx: Context) -> QuerySet[Any]:
        """The rows this caller may reach; scope by ``ctx.user`` here."""
        queryset = self.model._default_manager.all()
        if self.list_select_related:
            queryset = queryset.select_related(*self.list_select_related)
        return queryset

    def perform_create(self, serializer: Any, ctx: Context) -> None:
        """Save a new row from the validated ``serializer``, as DRF's ``perform_create``:
        override to set what the caller does not send, e.g.
        ``serializer.save(owner=ctx.user)``. Runs in the action's transaction."""
        serializer.save()

    def perform_update(self, serializer: Any, ctx: Context) -> None:
        """Save the changes of the validated ``serializer``, as DRF's ``perform_update``;
        runs in the action's transaction, with the row locked."""
        serializer.save()

    def has_permission(self, ctx: Context, action: str) -> bool:
        """Whether the caller may use ``action``; by default ``permission_required`` and
        ``permission_classes`` decide."""
        perms = self.permissions_for(action)
        if perms and not has_django_perms(ctx, perms):
            return False
        return all(
            drf_allows(permission(), self, ctx, action) for permission in self.permission_classes
        )

    def has_object_permission(self, ctx: Context, action: str, obj: Model) -> bool:
        """Whether the caller may ``action`` (``get``, ``update``, ``delete``) the row
        ``obj``, found within ``get_queryset``; a refused row is "not found", as one outside
        it. By default every ``permission_classes``' ``has_object_permission`` decides, as
        DRF's ``get_object`` asks them; a class without one of its own is not asked
        (``BasePermission``'s allows every row), so no DRF request is built for it."""
        return all(
            drf_allows_object(permission(), self, ctx, action, obj)
            for permission in self.permission_classes
            if checks_objects(permission)
        )

    def guards(self, action: str) -> dict[str, Any]:
        """What guards ``action``, for operators (``mcp_inspect``, the explorer): its Django
        permissions, its DRF permission classes, and ``has_permission`` where this class
        overrides it (the inherited one applies just the first two). Empty: public."""
        found: dict[str, Any] = {}
        perms = list(self.permissions_for(action))
        if perms:
            found["permission_required"] = perms
        classes = [permission_name(permission) for permission in self.permission_classes]
        if classes:
            found["permission_classes"] = classes
        if self._checks_permission_itself():
            kind = type(self)
            found["custom_check"] = f"{kind.__module__}.{kind.__qualname__}.has_permission"
        return found

    def _checks_permission_itself(self) -> bool:
        """Whether this class overrides ``has_permission`` with rules of its own."""
        return type(self).has_permission is not ModelTools.has_permission

    def get_serializer_class(self) -> type[serializers.ModelSerializer[Any]]:
        if self.serializer_class is not None:
            return self.serializer_class
        from rest_framework import serializers

        meta_attrs: dict[str, Any] = {"model": self.model}
        if self.exclude is not None:
            meta_attrs["exclude"] = list(self.exclude)
        else:
            meta_attrs["fields"] = self.fields if self.fields is not None else "__all__"
        meta = type("Meta", (), meta_attrs)
        return type(
            f"{self.model.__name__}MCPSerializer", (serializers.ModelSerializer,), {"Meta": meta}
        )

    # -- naming and permissions ---------------------------------------------------------

    @property
    def prefix(self) -> str:
        return self.name or str(self.opts.model_name)

    def tool_name(self, action: str) -> str:
        return self.tool_names.get(action, f"{self.prefix}_{action}")

    @property
    def lookup_argument(self) -> str:
        return self.opts.pk.name if self.lookup_field == "pk" else self.lookup_field

    def permissions_for(self, action: str) -> tuple[str, ...]:
        required = self.permission_required
        if required == DEFAULT_PERMISSIONS:
            return (f"{self.opts.app_label}.{_DEFAULT_CODENAMES[action]}_{self.opts.model_name}",)
        if isinstance(required, Mapping):
            return normalise_perms(required.get(action))
        return normalise_perms(required)

    def scopes_for(self, action: str) -> frozenset[str]:
        required = self.scopes_required
        if isinstance(required, Mapping):
            return normalise_scopes(required.get(action))
        return normalise_scopes(required)

    # -- building the tools -------------------------------------------------------------

    def get_tools(self) -> list[ModelActionSpec]:
        """One tool per enabled action (see :mod:`.definitions`)."""
        from django_mcp.modeltools.definitions import build_tools

        return build_tools(self)

    # -- instances as resources ------------------------------------------------------------

    def register_resources(self) -> None:
        """Register the instance resource template and the change watcher, if configured."""
        registration.register_resources(self)

    def unregister_resources(self) -> None:
        """Undo :meth:`register_resources` (called when the model is unregistered)."""
        registration.unregister_resources(self)

    def is_gated(self) -> bool:
        """Whether any action is permission-gated (then lists are private)."""
        return bool(
            self.permission_required is not None
            or self.permission_classes
            or self._checks_permission_itself()
        )

    # -- the actions --------------------------------------------------------------------

    def list_action(self, arguments: Mapping[str, Any], ctx: Context) -> dict[str, Any]:
        allowed = ["page", "page_size", *self.list_filter]
        if self.search_fields:
            allowed.append("search")
        args.reject_unknown(arguments, allowed)
        page = args.integer(arguments, "page", 1, low=1, high=self.list_max_page)
        size = args.integer(
            arguments, "page_size", self.list_per_page, low=1, high=self.list_max_page_size
        )
        queryset = self.get_queryset(ctx)
        search = args.text(arguments, "search", max_length=self.search_max_length)
        if search and self.search_fields:
            queryset = queryset.filter(
                functools.reduce(
                    operator.or_,
                    (Q(**{f"{field}__icontains": search}) for field in self.search_fields),
                )
            )
            if any(lookup_spawns_duplicates(self.opts, f) for f in self.search_fields):
                queryset = queryset.distinct()  # a row is listed and counted once
        for name in self.list_filter:
            if name in arguments:
                attname = getattr(self.opts.get_field(name), "attname", name)
                value = args.field_value(self.model, name, arguments[name])
                queryset = queryset.filter(**{attname: value})
        ordering = self.ordering or self.opts.ordering or ()
        queryset = queryset.order_by(*listing.total_ordering(ordering, self.opts))
        count = queryset.count()
        start = (page - 1) * size
        rows = list(queryset[start : start + size])
        serializer = self.get_serializer_class()(
            rows, many=True, context=self._serializer_context(ctx)
        )
        return {
            "results": serializer.data,
            "count": count,
            "page": page,
            "hasMore": start + len(rows) < count,
        }

    def get_object(
        self,
        arguments: Mapping[str, Any],
        ctx: Context,
        *,
        for_update: bool = False,
        action: str = "get",
    ) -> Model:
        """The row named by the lookup argument, within ``get_queryset`` and allowed by
        :meth:`has_object_permission` for ``action``; with ``for_update``, read on the
        write database and locked until the transaction ends (see :mod:`.writes`)."""
        key = self.lookup_argument
        if key not in arguments:
            raise ToolError(f"{key}: this argument is required")
        value = args.field_value(self.model, key, arguments[key])
        queryset = self.get_queryset(ctx).filter(**{key: value})
        try:
            if for_update:
                instance = writes.locked_row(queryset, writes.write_database(self.model))
            else:
                instance = writes.one_row(queryset)
        except writes.SeveralRows as exc:
            raise ToolError(
                f"{exc.count} {self.opts.verbose_name_plural} have {key} {args.shown(value)}."
            ) from exc
        except Http404 as exc:  # pragma: no cover - custom querysets may raise it
            raise ToolError(str(exc)) from exc
        if instance is None or not self.has_object_permission(ctx, action, instance):
            raise ToolError(self._not_found(arguments))
        return instance

    def get_action(self, arguments: Mapping[str, Any], ctx: Context) -> Any:
        args.reject_unknown(arguments, [self.lookup_argument])
        instance = self.get_object(arguments, ctx)
        return self.get_serializer_class()(instance, context=self._serializer_context(ctx)).data

    def create_action(self, arguments: Mapping[str, Any], ctx: Context) -> Any:
        serializer = self.get_serializer_class()(
            data=dict(arguments), context=self._serializer_context(ctx)
        )
        args.reject_unknown(arguments, args.writable(serializer))
        with writes.atomic(self.model):
            args.check_valid(serializer, self.opts.verbose_name)
            with writes.refused_as_tool_error(self.opts.verbose_name):
                self.perform_create(serializer, ctx)
        return serializer.data

    def update_action(self, arguments: Mapping[str, Any], ctx: Context) -> Any:
        key = self.lookup_argument
        changes = {name: value for name, value in arguments.items() if name != key}
        blank = self.get_serializer_class()(context=self._serializer_context(ctx))  # as create's
        args.reject_unknown(arguments, [key, *args.writable(blank)])
        try:
            with writes.atomic(self.model):
                instance = self.get_object(arguments, ctx, for_update=True, action="update")
                serializer = self.get_serializer_class()(
                    instance, data=changes, partial=True, context=self._serializer_context(ctx)
                )
                args.check_valid(serializer, self.opts.verbose_name)
                refused = writes.refused_as_tool_error(self.opts.verbose_name)
                with writes.updates_only(instance), refused:
                    self.perform_update(serializer, ctx)
        except writes.Vanished as exc:
            raise ToolError(self._not_found(arguments)) from exc
        return serializer.data

    def delete_action(self, arguments: Mapping[str, Any], ctx: Context) -> Any:
        args.reject_unknown(arguments, [self.lookup_argument])
        with writes.atomic(self.model, deleting=True):
            instance = self.get_object(arguments, ctx, for_update=True, action="delete")
            value = args.field_value(
                self.model, self.lookup_argument, arguments[self.lookup_argument]
            )
            try:
                cascades.refuse(self, ctx, instance)
                deleted = writes.delete_once(instance)
            except (ProtectedError, RestrictedError) as exc:
                raise ToolError(writes.still_referenced(self.opts.verbose_name, exc)) from exc
        if not deleted:  # another caller deleted it first: only one delete succeeds
            raise ToolError(self._not_found(arguments))
        return {"deleted": True, self.lookup_argument: value}

    def _not_found(self, arguments: Mapping[str, Any]) -> str:
        key = self.lookup_argument
        value = args.field_value(self.model, key, arguments[key])
        return f"No {self.opts.verbose_name} has {key} {args.shown(value)}."

    def _serializer_context(self, ctx: Context) -> dict[str, Any]:
        """What every action gives its serializer, reads as writes (as DRF's generic views
        do): ``request`` (None off HTTP) and ``mcp_context``, the request's Context."""
        return {"request": ctx.request, "mcp_context": ctx}
