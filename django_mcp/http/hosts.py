"""``Host`` validated against ``ALLOWED_HOSTS`` once per distinct header, not per request.

Why: where nothing upstream validated ``Host`` (the native paths, or a stack without
``CommonMiddleware``), :func:`~django_mcp.http.middleware.before_admission` must, against
DNS rebinding; ``request.get_host()`` costs about 5 µs (three reads of Django's lazy
settings, the host split by a regular expression, a walk of ``ALLOWED_HOSTS``), about 5%
of a ``tools/call`` on the native WSGI path, while a server sees the same ``Host`` on
nearly every request. When the request carries a ``Host`` header its answer depends only
on that header, ``X-Forwarded-Host``, and the settings ``ALLOWED_HOSTS``, ``DEBUG`` and
``USE_X_FORWARDED_HOST``: a pair of headers that passed once passes again while those three
are what they were (read on every request and compared, about 1 µs, so a list changed in
place or reassigned without ``setting_changed`` is seen at once).

What is not remembered: a refused host (Django refuses it again each time, with its own
message), a request without ``Host`` (its host is rebuilt from the server's name, port and
scheme), an ``ALLOWED_HOSTS`` that is not a list or tuple (an object that answers from a
database, say), and a request class that overrides ``get_host``. Bounded: forged ``Host`` values
cannot grow the set past :data:`LIMIT` entries (it starts afresh when full).
"""

from __future__ import annotations

from typing import Any, Final

from django.conf import settings
from django.http import HttpRequest

#: The most header pairs remembered at once.
LIMIT: Final = 64

_passed: set[tuple[str | None, str]] = set()
#: What the remembered pairs were checked against: the settings ``get_host`` reads.
_checked_against: list[Any] = [None]


def check_host(request: HttpRequest) -> None:
    """What ``request.get_host()`` checks: raises ``DisallowedHost`` (Django answers 400)
    for a host ``ALLOWED_HOSTS`` refuses."""
    meta = request.META
    host = meta.get("HTTP_HOST")
    allowed = settings.ALLOWED_HOSTS
    if (
        host is None
        or type(allowed) not in (list, tuple)
        or type(request).get_host is not HttpRequest.get_host
    ):
        request.get_host()
        return
    against = (tuple(allowed), settings.DEBUG, settings.USE_X_FORWARDED_HOST)
    if against != _checked_against[0]:
        _passed.clear()
        _checked_against[0] = against
    key = (meta.get("HTTP_X_FORWARDED_HOST"), host)
    if key in _passed:
        return
    request.get_host()
    if len(_passed) >= LIMIT:
        _passed.clear()
    _passed.add(key)
