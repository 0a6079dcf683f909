"""The protocol package is pure Python: it never imports Django (docs/adr/0002-validate-once.md).

Each check runs in a fresh interpreter (``sys.executable``), so nothing this test process
already imported can hide an import.
"""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import django_mcp.protocol

REPO = Path(__file__).resolve().parents[2]
PACKAGE_DIR = Path(django_mcp.protocol.__file__).resolve().parent

#: Imports every ``django_mcp.protocol`` module and reports which ``django`` modules loaded.
#: With ``stub_parent`` the ``django_mcp`` package is a bare namespace, so only protocol code
#: runs; without it, ``django_mcp/__init__.py`` runs first as it does for a real user.
_PROBE = """
import importlib, json, pkgutil, sys, types
if {stub_parent!r}:
    parent = types.ModuleType("django_mcp")
    parent.__path__ = [{parent_dir!r}]
    sys.modules["django_mcp"] = parent
import django_mcp.protocol as package
names = sorted(m.name for m in pkgutil.walk_packages(package.__path__, package.__name__ + "."))
for name in names:
    importlib.import_module(name)
leaked = sorted(m for m in sys.modules if m == "django" or m.startswith("django."))
print(json.dumps({{"modules": names, "django": leaked}}))
"""


def _expected_modules() -> list[str]:
    prefix = django_mcp.protocol.__name__ + "."
    return sorted(m.name for m in pkgutil.walk_packages(django_mcp.protocol.__path__, prefix))


def _probe(*, stub_parent: bool) -> dict[str, list[str]]:
    code = _PROBE.format(stub_parent=stub_parent, parent_dir=str(PACKAGE_DIR.parent))
    result = subprocess.run(
        [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(REPO)!r})\n{code}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    report: dict[str, list[str]] = json.loads(result.stdout)
    return report


def test_protocol_modules_import_no_django_in_a_fresh_interpreter():
    report = _probe(stub_parent=True)
    assert report["modules"] == _expected_modules()
    assert {"django_mcp.protocol.admission", "django_mcp.protocol.errors"} <= set(report["modules"])
    assert report["django"] == []


def test_importing_django_mcp_protocol_as_a_user_would_imports_no_django():
    report = _probe(stub_parent=False)
    assert report["modules"] == _expected_modules()
    assert report["django"] == []
