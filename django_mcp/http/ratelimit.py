"""Rate limits: fixed-window counters in Django's cache, keyed by user, credential and IP.

The limiter takes the identity as plain values (a user key, a credential id, a client
address), so it does not care where they come from: the middleware passes the user and
credential of the ``Caller`` the authenticators resolved and the client address
(``REMOTE_ADDR``, or ``X-Forwarded-For`` behind ``TRUSTED_PROXY_HOPS`` proxies; see
:mod:`django_mcp.http.throttle`).

Each configured limit is ``"COUNT/PERIOD"`` (``"120/m"``, ``"5000/h"``, ``"10/30s"``). A
request counts once against every limit whose identity it has. The counter of one window
is created with ``cache.add`` (a no-op when it exists) and raised with ``cache.incr``; both
are atomic on Redis and Memcached and under the local-memory cache's lock, so concurrent
workers never lose a count. Fixed windows are cheap and need one key per identity; their
known edge (up to twice the rate across a window boundary) is acceptable for abuse
protection. ``django-ratelimit`` was considered: its core is shaped around a request, a
view group and global Django settings, while this limiter needs plain identity inputs and
the per-site ``DJANGO_MCP`` settings, in about the same number of lines.
"""

from __future__ import annotations

import functools
import hashlib
import math
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from django.core.cache import BaseCache, caches
from django.core.signals import setting_changed
from django.dispatch import receiver

from django_mcp.conf import SETTINGS_NAME, mcp_settings

#: The settings that hold a limit, per kind of identity.
LIMIT_SETTINGS: Final = {
    "user": "RATE_LIMIT_USER",
    "credential": "RATE_LIMIT_TOKEN",
    "ip": "RATE_LIMIT_IP",
}
KEY_PREFIX: Final = "django_mcp:rl"
_UNITS: Final = {"s": 1, "m": 60, "h": 3600, "d": 86_400}
_RATE: Final = re.compile(r"^\s*(\d+)\s*/\s*(\d*)\s*([smhd])\s*$")


@dataclass(frozen=True, slots=True)
class Rate:
    """``count`` requests per ``seconds``."""

    count: int
    seconds: int


def parse_rate(value: str) -> Rate:
    """``"COUNT/PERIOD"`` as a :class:`Rate`; PERIOD is ``s``, ``m``, ``h`` or ``d``,
    optionally with a multiplier (``"10/30s"``). Raises ``ValueError`` otherwise."""
    match = _RATE.match(value) if isinstance(value, str) else None
    if match is None:
        raise ValueError(f"not a rate: {value!r} (use 'COUNT/PERIOD' such as '120/m')")
    count, multiplier, unit = int(match[1]), int(match[2] or 1), match[3]
    if count < 1 or multiplier < 1:
        raise ValueError(f"not a rate: {value!r} (count and period must be positive)")
    return Rate(count, multiplier * _UNITS[unit])


def is_rate(value: object) -> bool:
    """Whether ``value`` is None (no limit) or a valid rate string (for the system check)."""
    if value is None:
        return True
    try:
        parse_rate(value)  # type: ignore[arg-type]
    except ValueError:
        return False
    return True


@functools.cache
def configured_limits() -> Mapping[str, Rate]:
    """The limits in force, by kind of identity (empty when rate limiting is off).

    Read once per settings change (every request asks): kept until ``setting_changed``
    for ``DJANGO_MCP``, which is when :data:`mcp_settings` reads its values again. A
    setting that is not a rate raises ``ValueError`` on every call (none is kept)."""
    limits: dict[str, Rate] = {}
    for kind, setting in LIMIT_SETTINGS.items():
        value = getattr(mcp_settings, setting)
        if value is not None:
            limits[kind] = parse_rate(value)
    return MappingProxyType(limits)  # shared by every request: read-only


@receiver(setting_changed)
def _forget_limits(*, setting: str, **kwargs: object) -> None:
    if setting == SETTINGS_NAME:
        configured_limits.cache_clear()


@dataclass(frozen=True, slots=True)
class Exceeded:
    """A refused request: which limits it broke and how long until the first one resets."""

    kinds: tuple[str, ...]
    retry_after: int


def wall_clock() -> float:
    """The time the windows are counted in: seconds since the epoch."""
    return time.time()


def _key(kind: str, identity: str, rate: Rate, window: int) -> str:
    # Hashed: a credential id or an address never appears in the cache's key space as is,
    # and the key stays short and valid for Memcached whatever the identity holds.
    digest = hashlib.sha256(identity.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return f"{KEY_PREFIX}:{kind}:{rate.count}/{rate.seconds}:{window}:{digest}"


def _count(cache: BaseCache, key: str, timeout: int) -> int:
    """Add one to the counter ``key`` atomically and return its new value."""
    cache.add(key, 0, timeout=timeout)
    try:
        return int(cache.incr(key))
    except ValueError:  # expired between add and incr: this request opens a new window
        cache.add(key, 1, timeout=timeout)
        return 1


def hit(
    *,
    user: str | None,
    credential: str | None,
    ip: str | None,
    limits: Mapping[str, Rate] | None = None,
    cache: BaseCache | None = None,
    clock: Callable[[], float] | None = None,
) -> Exceeded | None:
    """Count one request against every configured limit it has an identity for.

    ``user`` is a stable key of a signed-in user (``"user:42"``; None for anonymous),
    ``credential`` the non-secret id of the credential used, ``ip`` the client address.
    Returns None when every limit still allows the request, else what it exceeded.
    ``clock`` defaults to :func:`wall_clock`, looked up on each call so a test can pin it.
    """
    limits = configured_limits() if limits is None else limits
    identities = {"user": user, "credential": credential, "ip": ip}
    store = caches[mcp_settings.RATE_LIMIT_CACHE] if cache is None else cache
    now = wall_clock() if clock is None else clock()
    exceeded: list[str] = []
    retry_after = 0
    for kind, rate in limits.items():
        identity = identities.get(kind)
        if not identity:
            continue
        window = int(now // rate.seconds)
        # The counter outlives its window by a second, so a late incr never recreates it.
        count = _count(store, _key(kind, identity, rate, window), rate.seconds + 1)
        if count > rate.count:
            exceeded.append(kind)
            reset = (window + 1) * rate.seconds - now
            retry_after = max(retry_after, max(1, math.ceil(reset)))
    if not exceeded:
        return None
    return Exceeded(tuple(exceeded), retry_after)
