"""``Host`` validated against ``ALLOWED_HOSTS`` once per distinct header, not per request.

Why: where nothing upstream validated ``Host`` (the native paths, or a stack without
``CommonMiddleware``), :func:`~django_mcp.http.middleware.before_admission` must, against
DNS rebinding; ``request.get_host()`` costs about 5 µs (three reads of Django's lazy
settings, the host split by a regular expression, a walk of ``ALLOWED_HOSTS``), about 5%
of a ``tools/call`` on the native WSGI path, while a server sees the same ``Host`` on
nearly every request. When the request carries a ``Host`` header its answer depends only
on that header, ``X-Forwarded-Host``, and the settings ``ALLOWED_HOSTS``, ``DEBUG`` and
``USE_X_FORWARDED_HOST``: a pair of headers that passed once passes again until one of
those settings changes (``setting_changed`` forgets them all).

What is not remembered: a refused host (Django refuses it again each time, with its own
message), a request without ``Host`` (its host is rebuilt from the server's name, port and
scheme), and a request class that overrides ``get_host``. Bounded: forged ``Host`` values
cannot grow the set past :data:`LIMIT` entries (it starts afresh when full).
"""

from __future__ import annotations

from typing import Final

from django.core.signals import setting_changed
from django.dispatch import receiver
from django.http import HttpRequest

#: The most header pairs remembered at once.
LIMIT: Final = 64
#: The settings ``HttpRequest.get_host`` reads.
SETTINGS: Final = frozenset({"ALLOWED_HOSTS", "DEBUG", "USE_X_FORWARDED_HOST"})

_passed: set[tuple[str | None, str]] = set()


def check_host(request: HttpRequest) -> None:
    """What ``request.get_host()`` checks: raises ``DisallowedHost`` (Django answers 400)
    for a host ``ALLOWED_HOSTS`` refuses."""
    meta = request.META
    host = meta.get("HTTP_HOST")
    if host is None or type(request).get_host is not HttpRequest.get_host:
        request.get_host()
        return
    key = (meta.get("HTTP_X_FORWARDED_HOST"), host)
    if key in _passed:
        return
    request.get_host()
    if len(_passed) >= LIMIT:
        _passed.clear()
    _passed.add(key)


@receiver(setting_changed)
def _forget_hosts(*, setting: str, **kwargs: object) -> None:
    if setting in SETTINGS:
        _passed.clear()
