"""The package's shape, checked: imports flow one way (the import-linter contracts in
``pyproject.toml``), no module outgrows one job, and every old import path still works
with a deprecation warning (see docs/architecture.md)."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import django_mcp
from django_mcp._compat import MOVED

REPO = Path(__file__).resolve().parents[1]
PACKAGE = Path(django_mcp.__file__).resolve().parent
MAX_MODULE_LINES = 400


def test_the_import_contracts_are_kept():
    """Layers (transports > server > listen > sites > declarations/requestlog > protocol)
    and the protocol's purity, as written in pyproject.toml. A fresh interpreter, as CI
    runs ``lint-imports``: this process's warning filters must not change the analysis."""
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from importlinter.cli import lint_imports_command;"
            " sys.exit(lint_imports_command())",
            "--no-cache",
            "--config",
            "pyproject.toml",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_no_module_is_over_the_house_limit():
    sizes = {
        str(path.relative_to(REPO)): len(path.read_text().splitlines())
        for path in PACKAGE.rglob("*.py")
        if "migrations" not in path.parts
    }
    assert {name: size for name, size in sizes.items() if size > MAX_MODULE_LINES} == {}


@pytest.mark.parametrize(("old", "new"), sorted(MOVED.items()))
def test_an_old_import_path_still_works_and_warns(old, new):
    module = importlib.import_module(new)
    public = sorted(
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and getattr(value, "__module__", None) == new
    )
    assert public, f"{new} defines nothing public"
    old_module = importlib.import_module(old)
    with pytest.warns(DeprecationWarning, match=f"{old}.{public[0]} moved to {new}"):
        value = getattr(old_module, public[0])
    assert value is getattr(module, public[0])


def test_the_estimating_paginator_keeps_the_path_the_records_guide_named():
    """docs/guides/records.md named ``django_mcp/requestlog/pagination.py``, so a project
    may use its paginator for its own big tables; the move to ``admin_pagination`` made
    that import a ModuleNotFoundError rather than a deprecation."""
    from django_mcp.admin_pagination import EstimatedCountPaginator

    old_module = importlib.import_module("django_mcp.requestlog.pagination")
    with pytest.warns(DeprecationWarning, match="moved to django_mcp.admin_pagination"):
        assert old_module.EstimatedCountPaginator is EstimatedCountPaginator


def test_a_name_the_old_module_never_had_is_an_attribute_error():
    old_module = importlib.import_module("django_mcp.content")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(AttributeError):
            old_module.no_such_name  # noqa: B018


@pytest.mark.parametrize(
    ("old", "name"),
    [("django_mcp.declarations", "ToolSpec"), ("django_mcp.http", "STATUS_BY_ERROR")],
)
def test_a_module_that_became_a_package_still_serves_its_old_names(old, name):
    module = importlib.import_module(old)
    with pytest.warns(DeprecationWarning, match=f"{old}.{name} moved"):
        getattr(module, name)


def test_the_settings_paths_django_names_are_stable_and_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from django_mcp.middleware import MCPMiddleware
        from django_mcp.models import RequestLog, ServedRevision

    assert MCPMiddleware.__module__ == "django_mcp.http.middleware"
    assert RequestLog._meta.app_label == ServedRevision._meta.app_label == "django_mcp"


def _named_in(rows: list[str], module: Path) -> bool:
    """A module has a row when the row names its path, or names its folder (``cli/``,
    ``server/handlers/``) and the module by its own name."""
    relative = module.relative_to(PACKAGE).as_posix()
    folder, _, _ = relative.rpartition("/")
    for row in rows:
        if f"`{relative}`" in row:
            return True
        if folder and f"`{folder}/" in row and re.search(rf"\b{re.escape(module.stem)}\b", row):
            return True
    return False


def test_every_module_has_a_line_on_the_architecture_page():
    """README: "Architecture has one line per module"; a module added without one is the
    drift that page must not have."""
    rows = [
        line
        for line in (REPO / "docs" / "architecture.md").read_text().splitlines()
        if line.startswith("| `")
    ]
    modules = [
        path
        for path in sorted(PACKAGE.rglob("*.py"))
        if "migrations" not in path.parts and path.name != "__init__.py"
    ]
    assert len(modules) > 100
    assert [str(m.relative_to(PACKAGE)) for m in modules if not _named_in(rows, m)] == []
