"""Sealing a ``requestState``: AES-256-GCM, keyed from ``SECRET_KEY``, bound to its request.

basic/patterns/mrtr.mdx asks servers to treat ``requestState`` as attacker-controlled, to
protect its integrity, bind it to the principal, a short expiry and the originating request,
and to encrypt it when it holds what the client should not read. Answers from earlier rounds
may be exactly that (a form the user filled in), and a signature alone leaves them readable.

* **Key**: HKDF-SHA256 over ``SECRET_KEY`` with a purpose label, so this key is used for
  nothing else; states sealed under a key in ``SECRET_KEY_FALLBACKS`` still open, so
  rotating the secret does not break rounds in flight.
* **Binding**: the site, caller, method, target and argument digest are the AEAD's
  associated data: a state opened for any other request fails authentication.
* **Expiry**: the issue time is inside the ciphertext, checked against ``max_age``. A
  state sealed again for a later round keeps the first round's issue time (``issued``):
  re-sealing with a fresh time let a caller that kept asking carry an early answer past
  ``max_age`` for as long as it liked, so the whole exchange is bounded, not each round.
* **Token**: ``base64url(version | hint | nonce | ciphertext)``. The 8-byte hint is a keyed
  digest of the binding, only so that a foreign state gets the message that says so; the
  AEAD, not the hint, is what refuses it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
import time
from collections.abc import Iterator
from typing import Any, Final, NamedTuple

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings

_VERSION: Final = b"\x01"
_HINT_BYTES: Final = 8
_NONCE_BYTES: Final = 12
_PURPOSE: Final = b"django_mcp.request_state.v1"


class StateError(Exception):
    """A state that cannot be opened; ``reason`` is ``tampered``, ``foreign`` or ``expired``."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Opened(NamedTuple):
    """An opened state: its payload and when the exchange it belongs to was first sealed."""

    payload: dict[str, Any]
    issued: float


def seal(payload: dict[str, Any], binding: bytes, issued: float | None = None) -> str:
    """Encrypt ``payload`` (JSON) under the current key, bound to ``binding``.

    ``issued`` is the issue time to keep (an opened state's, when a later round seals the
    exchange again); by default, now.
    """
    key = _derive(_secrets()[0])
    nonce = os.urandom(_NONCE_BYTES)
    # The issue time to the microsecond: a lifetime is "a positive number of seconds", and
    # a whole-second time would take up to a second off it.
    if issued is None:
        issued = round(time.time(), 6)
    plaintext = json.dumps({"t": issued, "p": payload}, separators=(",", ":"))
    sealed = AESGCM(key).encrypt(nonce, plaintext.encode("utf-8"), binding)
    token = _VERSION + _hint(key, binding) + nonce + sealed
    return base64.urlsafe_b64encode(token).decode("ascii").rstrip("=")


def unseal(token: str, binding: bytes, max_age: float) -> Opened:
    """The payload and issue time of ``token``; :class:`StateError` if it is not one we
    sealed for this binding within ``max_age`` seconds of its (first) issue time."""
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    except (binascii.Error, ValueError) as exc:
        raise StateError("tampered") from exc
    if base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=") != token:
        # The decoder skips what is outside its alphabet and ignores a last character's
        # unused bits: a state spelled otherwise than sealed is not the string we sent.
        raise StateError("tampered")
    header = 1 + _HINT_BYTES + _NONCE_BYTES
    if len(raw) <= header or raw[:1] != _VERSION:
        raise StateError("tampered")
    hint, nonce, sealed = raw[1 : 1 + _HINT_BYTES], raw[1 + _HINT_BYTES : header], raw[header:]
    matched = False
    for key in _keys():
        if not hmac.compare_digest(hint, _hint(key, binding)):
            continue  # sealed under another key, or for another request
        matched = True
        try:
            plaintext = AESGCM(key).decrypt(nonce, sealed, binding)
        except InvalidTag:
            continue
        return _checked(plaintext, max_age)
    raise StateError("tampered" if matched else "foreign")


def _checked(plaintext: bytes, max_age: float) -> Opened:
    document = json.loads(plaintext)
    if not isinstance(document, dict) or not isinstance(document.get("p"), dict):
        raise StateError("tampered")
    issued: Any = document.get("t")
    # A float; whole seconds in a state sealed before the issue time had a fraction.
    if isinstance(issued, bool) or not isinstance(issued, int | float):
        raise StateError("expired")
    # Also one issued further ahead than a lifetime: sealed by a server whose clock runs
    # ahead, it would stay valid that much longer here, and every round keeps the time.
    if abs(time.time() - issued) > max_age:
        raise StateError("expired")
    payload: dict[str, Any] = document["p"]
    return Opened(payload, float(issued))


def _secrets() -> list[str]:
    fallbacks = getattr(settings, "SECRET_KEY_FALLBACKS", []) or []
    return [settings.SECRET_KEY, *fallbacks]


def _keys() -> Iterator[bytes]:
    for secret in _secrets():
        yield _derive(secret)


def _derive(secret: str) -> bytes:
    """A 256-bit key for this purpose only, derived from one Django secret."""
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_PURPOSE).derive(
        secret.encode("utf-8")
    )


def _hint(key: bytes, binding: bytes) -> bytes:
    return hmac.new(key, b"hint:" + binding, hashlib.sha256).digest()[:_HINT_BYTES]
