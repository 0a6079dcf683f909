"""Old import paths that keep working, with a :class:`DeprecationWarning`, after a move.

The modules that moved into the layered packages (``declarations``, ``server``, ``http``,
``listen``, ``requestlog``) are listed once in :data:`MOVED`. A finder on ``sys.meta_path``
(installed when ``django_mcp`` is imported) serves each old path as a small module whose
attributes forward to the new home and warn, so ``from django_mcp.content import Text``
keeps working until 1.0 without a stub file per old name cluttering the package.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types
import warnings
from collections.abc import Callable, Sequence
from importlib import import_module
from typing import Any, Final

#: Old module path -> new module path.
MOVED: Final[dict[str, str]] = {
    "django_mcp.completion": "django_mcp.declarations.completion",
    "django_mcp.content": "django_mcp.declarations.content",
    "django_mcp.files": "django_mcp.declarations.files",
    "django_mcp.invoke": "django_mcp.declarations.invoke",
    "django_mcp.permissions": "django_mcp.declarations.permissions",
    "django_mcp.prompts": "django_mcp.declarations.prompts",
    "django_mcp.resources": "django_mcp.declarations.resources",
    "django_mcp.schema": "django_mcp.declarations.signature",
    "django_mcp.context": "django_mcp.server.context",
    "django_mcp.mrtr": "django_mcp.server.input_requests",
    "django_mcp.pagination": "django_mcp.server.pagination",
    "django_mcp.origins": "django_mcp.http.origins",
    "django_mcp.streaming": "django_mcp.http.streaming",
    "django_mcp.views": "django_mcp.http.views",
    "django_mcp.shutdown": "django_mcp.listen.shutdown",
    "django_mcp.subscriptions": "django_mcp.listen.fanout",
    "django_mcp.watch": "django_mcp.listen.watch",
    "django_mcp.recorder": "django_mcp.requestlog.recorder",
    "django_mcp.records": "django_mcp.requestlog.records",
    "django_mcp.requestlog.pagination": "django_mcp.admin_pagination",
}


def moved(old: str, new: str, names: frozenset[str] | None = None) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``old`` forwarding public names to ``new``: all of them,
    or only ``names`` (for a module that became a package, whose submodules must stay
    importable under their own names)."""

    def __getattr__(name: str) -> Any:
        if name.startswith("__") or (names is not None and name not in names):
            raise AttributeError(f"module {old!r} has no attribute {name!r}")
        value = getattr(import_module(new), name)
        warnings.warn(
            f"{old}.{name} moved to {new}.{name}; the old path will be removed in 1.0",
            DeprecationWarning,
            stacklevel=2,
        )
        return value

    return __getattr__


class _MovedModuleLoader(importlib.abc.Loader):
    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = types.ModuleType(spec.name, f"Deprecated: moved to {MOVED[spec.name]}.")
        module.__getattr__ = moved(spec.name, MOVED[spec.name])  # type: ignore[method-assign]
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        """Nothing to run: every attribute is looked up on use."""


class MovedModuleFinder(importlib.abc.MetaPathFinder):
    """Finds the old paths in :data:`MOVED`, and nothing else."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: types.ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(fullname, _MovedModuleLoader())


def install() -> None:
    """Put the finder on ``sys.meta_path`` once."""
    if not any(isinstance(finder, MovedModuleFinder) for finder in sys.meta_path):
        sys.meta_path.append(MovedModuleFinder())
