"""The command lines and environment of every server the benchmark starts."""

from __future__ import annotations

import os
import secrets
import sys
from collections.abc import Callable
from pathlib import Path

from bench import procs

REPO = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
SETTINGS = "testproject.settings_bench"
#: The test project refuses to start without a key of its own outside the demo and the tests;
#: the benchmark's servers listen on 127.0.0.1 only, so one random key per run will do.
SECRET_KEY = secrets.token_urlsafe(50)


def server_env(request_log: str, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env.setdefault("DJANGO_SECRET_KEY", SECRET_KEY)
    env["DJANGO_SETTINGS_MODULE"] = SETTINGS
    env["BENCH_REQUEST_LOG"] = request_log
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra)
    return env


def gunicorn(port: int, app: str = "testproject.wsgi:application", workers: int = 1) -> list[str]:
    return [
        *(PYTHON, "-m", "gunicorn", app, "--bind", f"{procs.HOST}:{port}"),
        *("--workers", str(workers), "--worker-class", "sync"),
        *("--config", "python:bench.gunicorn_conf", "--log-level", "warning"),
    ]


#: The testproject through django-mcp's native ASGI path (``NativeMCP``).
NATIVE_APP = "testproject.asgi_native:application"
#: The testproject through django-mcp's native WSGI path (``NativeMCPWSGI``).
NATIVE_WSGI_APP = "testproject.wsgi_native:application"


def uvicorn(port: int, app: str = "testproject.asgi:application", workers: int = 1) -> list[str]:
    return [
        *(PYTHON, "-m", "uvicorn", app, "--host", procs.HOST, "--port", str(port)),
        *("--workers", str(workers), "--no-access-log", "--log-level", "warning"),
    ]


def daphne(port: int) -> list[str]:
    """Daphne as docs/deployment.md recommends running it (MCP bodies bounded)."""
    return [
        *(PYTHON, "-m", "django_mcp.http.daphne", "-b", procs.HOST, "-p", str(port), "-v", "0"),
        "testproject.asgi:application",
    ]


def uvicorn_native(port: int) -> list[str]:
    return uvicorn(port, NATIVE_APP)


def gunicorn_native(port: int) -> list[str]:
    return gunicorn(port, NATIVE_WSGI_APP)


SERVERS: dict[str, Callable[[int], list[str]]] = {
    "gunicorn": gunicorn,
    "uvicorn": uvicorn,
    "daphne": daphne,
    "uvicorn native": uvicorn_native,
    "gunicorn native": gunicorn_native,
}
