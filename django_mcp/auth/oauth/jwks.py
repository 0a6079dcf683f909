"""The signing keys of an authorization server, fetched from its JWKS URL and cached.

Keys are fetched once and reused for ``JWKS_CACHE_SECONDS``. A token signed with a key id
(``kid``) the cached set does not have may mean the server rotated its keys, so the set is
fetched again at once, but at most once per ``JWKS_MIN_REFETCH_SECONDS``: a flood of tokens
with made-up ``kid`` values costs the JWKS endpoint one request per interval, not one per
token. When a refresh fails, the last good set stays in use, and the next attempt waits
``JWKS_MIN_REFETCH_SECONDS`` too: an endpoint that is down is not asked once per token.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from jwt import PyJWK, PyJWKSet
from jwt.exceptions import PyJWKSetError, PyJWTError

from django_mcp.auth.base import AuthenticationFailed
from django_mcp.auth.oauth.fetch import FetchError, get_json

logger = logging.getLogger("django_mcp.auth")


class KeySet:
    """One JWKS URL's keys, shared by every request of the process (thread-safe)."""

    def __init__(
        self,
        url: str,
        *,
        max_age: float,
        min_refetch_interval: float,
        timeout: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.url = url
        self.max_age = max_age
        self.min_refetch_interval = min_refetch_interval
        self.timeout = timeout
        self.clock = clock
        self.fetches = 0  # how many times the URL was requested (for logs and tests)
        self._keys: list[PyJWK] | None = None
        self._fetched_at = 0.0
        self._failed_at: float | None = None
        self._rotation_checked_at: float | None = None
        self._lock = threading.Lock()

    def key_for(self, kid: str | None) -> PyJWK:
        """The key that verifies a token with header ``kid``, or raise
        :class:`AuthenticationFailed` (unknown key, or no key set could be fetched)."""
        with self._lock:
            now = self.clock()
            stale = self._keys is None or now - self._fetched_at >= self.max_age
            if stale and self._may_attempt(now):
                self._refresh(now)
            key = self._find(kid)
            if key is None and self._may_check_rotation(now) and self._may_attempt(now):
                self._rotation_checked_at = now
                self._refresh(now)  # perhaps rotated: one bounded refetch
                key = self._find(kid)
        if key is None:
            if self._keys is None:
                raise AuthenticationFailed("The authorization server's keys are unavailable.")
            raise AuthenticationFailed("The token is signed with an unknown key.")
        return key

    def _may_attempt(self, now: float) -> bool:
        """Whether the set may be fetched now: not within ``min_refetch_interval`` of a
        fetch that failed (each request past the max age asked an endpoint that is down
        again, one at a time under the lock, and an unknown ``kid`` a second time)."""
        failed = self._failed_at
        return failed is None or now - failed >= self.min_refetch_interval

    def _may_check_rotation(self, now: float) -> bool:
        last = self._rotation_checked_at
        return last is None or now - last >= self.min_refetch_interval

    def _find(self, kid: str | None) -> PyJWK | None:
        keys = [key for key in self._keys or [] if key.public_key_use in (None, "sig")]
        if kid is None:
            return keys[0] if len(keys) == 1 else None  # ambiguous without a kid
        return next((key for key in keys if key.key_id == kid), None)

    def _refresh(self, now: float) -> None:
        self.fetches += 1
        try:
            keys = PyJWKSet.from_dict(get_json(self.url, timeout=self.timeout)).keys
        except (FetchError, PyJWKSetError, PyJWTError) as exc:
            logger.warning("Could not refresh the JWKS at %s: %s", self.url, exc)
            self._failed_at = now
            return  # keep the last good keys, if any
        self._keys = keys
        self._fetched_at = now


_key_sets: dict[tuple[str, float, float, float], KeySet] = {}
_key_sets_lock = threading.Lock()


def key_set(url: str, *, max_age: float, min_refetch_interval: float, timeout: float) -> KeySet:
    """The process-wide :class:`KeySet` of ``url`` (one per configuration)."""
    identity = (url, max_age, min_refetch_interval, timeout)
    with _key_sets_lock:
        found = _key_sets.get(identity)
        if found is None:
            found = _key_sets[identity] = KeySet(
                url, max_age=max_age, min_refetch_interval=min_refetch_interval, timeout=timeout
            )
        return found


def forget_key_sets() -> None:
    """Drop every cached key set (tests; a deliberate key revocation)."""
    with _key_sets_lock:
        _key_sets.clear()
