"""The seam to Django's Tasks framework: ``django.tasks`` on Django 6, else the
``django-tasks`` backport (Django 5.2). Every backend the project configures in
``TASKS`` works; the database backend (``django-tasks-db``) is the documented default.
"""

from __future__ import annotations

import importlib
from typing import Any


def _framework() -> Any:
    for name in ("django.tasks", "django_tasks"):  # Django 6+, then the backport
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    return None


_tasks = _framework()
#: ``@task`` and the ``task_backends`` handler of whichever framework is installed.
task: Any = getattr(_tasks, "task", None)
task_backends: Any = getattr(_tasks, "task_backends", None)

__all__ = ["available", "backend", "is_database_backend", "task", "task_backends"]


def available() -> bool:
    """Whether a Tasks framework is importable (Django 6, or the backport)."""
    return task is not None


def backend(alias: str) -> Any:
    """The configured task backend called ``alias``."""
    if task_backends is None:
        raise RuntimeError(
            "MCP tasks need Django's Tasks framework: Django 6, or `pip install django-tasks`"
        )
    return task_backends[alias]


def is_database_backend(alias: str) -> bool:
    """Whether jobs of ``alias`` are rows in the project's database (``django-tasks-db``):
    then a job is enqueued in the same transaction as its task row."""
    try:
        from django_tasks_db import DatabaseBackend
    except ImportError:
        return False
    return isinstance(backend(alias), DatabaseBackend)
