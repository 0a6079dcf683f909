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
    """One JWKS URL's keys, shared by every request of the process (thread-safe).

    One thread at a time fetches (``_fetching``), outside the lock that guards the cached
    state, and nobody waits for that fetch who does not need it: a token whose key the
    cached set holds is verified with it, stale or not, while the set is being fetched
    again. Only a caller with no key to use (no set yet, or an unknown ``kid`` that may
    mean the keys rotated) waits for the fetch in flight, then looks again. Before, every
    fetch ran under the lock: each time the set went stale, and whenever a token with a
    made-up ``kid`` asked for a rotation check, every JWT request of the process waited
    for the JWKS endpoint, up to its timeout for one that hangs.
    """

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
        self._lock = threading.Lock()  # the state above; never held during a fetch
        self._fetching = threading.Lock()  # held by the one thread that fetches

    def key_for(self, kid: str | None) -> PyJWK:
        """The key that verifies a token with header ``kid``, or raise
        :class:`AuthenticationFailed` (unknown key, or no key set could be fetched)."""
        now = self.clock()
        with self._lock:
            stale = self._keys is None or now - self._fetched_at >= self.max_age
            key = self._find(kid)
            seen = self._fetched_at
        if stale:
            # With a key in hand, a stale set is refreshed by whoever is not already at it.
            self._refresh_if(lambda: self._is_stale(now), wait=key is None)
            with self._lock:
                key = self._find(kid)
        if key is None:
            self._refresh_if(lambda: self._claim_rotation_check(now, seen), wait=True)
            with self._lock:
                key = self._find(kid)
                known = self._keys is not None
        if key is None:
            if not known:
                raise AuthenticationFailed("The authorization server's keys are unavailable.")
            raise AuthenticationFailed("The token is signed with an unknown key.")
        return key

    def _refresh_if(self, due: Callable[[], bool], *, wait: bool) -> None:
        """Fetch the set if ``due()`` still holds once this thread is the one fetching.

        ``wait=False``: if another thread is fetching, leave it to that thread. ``due`` is
        asked again under the fetch lock, because the fetch this thread waited for may
        have made its own unnecessary (a fresh set, a rotation check just done)."""
        if not self._fetching.acquire(blocking=wait):
            return
        try:
            with self._lock:
                go = due()
                if go:
                    self.fetches += 1
            if go:
                self._store(self._fetch())
        finally:
            self._fetching.release()

    def _is_stale(self, now: float) -> bool:
        """Called with the lock held: the set is missing or old, and may be fetched."""
        stale = self._keys is None or now - self._fetched_at >= self.max_age
        return stale and self._may_attempt(now)

    def _claim_rotation_check(self, now: float, seen: float) -> bool:
        """Called with the lock held: whether to fetch for an unknown ``kid`` (at most once
        per ``min_refetch_interval``, and not right after a failed fetch); if so, the check
        is recorded now, so the callers waiting behind this one do not fetch again. A set
        fetched since the caller first looked (``seen``, the fetch time it saw) is as new
        as a check would get."""
        if self._fetched_at != seen:
            return False
        if not (self._may_check_rotation(now) and self._may_attempt(now)):
            return False
        self._rotation_checked_at = now
        return True

    def _may_attempt(self, now: float) -> bool:
        """Whether the set may be fetched now: not within ``min_refetch_interval`` of a
        fetch that failed (each request past the max age asked an endpoint that is down
        again, and an unknown ``kid`` a second time)."""
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

    def _fetch(self) -> list[PyJWK] | None:
        """The URL's keys, or None (logged) when they could not be fetched or read."""
        try:
            return PyJWKSet.from_dict(get_json(self.url, timeout=self.timeout)).keys
        except (FetchError, PyJWKSetError, PyJWTError) as exc:
            logger.warning("Could not refresh the JWKS at %s: %s", self.url, exc)
            return None

    def _store(self, keys: list[PyJWK] | None) -> None:
        """Record a fetch's outcome, stamped when it ended: a failure keeps the last good
        keys, if any."""
        now = self.clock()
        with self._lock:
            if keys is None:
                self._failed_at = now
            else:
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
