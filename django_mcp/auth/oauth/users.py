"""Which Django user a token speaks for.

The claim named by ``USER_CLAIM`` (``sub`` by default) is looked up in the user model's
``USER_FIELD`` (``username``); ``CREATE_USERS`` creates a user with an unusable password on
first sight. A token that acts for no user (a ``client_credentials`` token: no ``sub``, or
a ``sub`` that is its own ``client_id``, RFC 9068 section 2.2) resolves to ``AnonymousUser``:
the Caller still carries the token's scopes and its client. A token with another ``sub``
but without ``USER_CLAIM`` is refused: taking it for the client's would merge every user of
that client into one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import FieldDoesNotExist, ValidationError

from django_mcp.auth.base import AuthenticationFailed
from django_mcp.auth.caller import Caller
from django_mcp.auth.oauth.claims import client_of, credential_id, numeric_date, scopes_of
from django_mcp.auth.oauth.config import OAuthConfig


def user_for_claims(claims: Mapping[str, Any], config: OAuthConfig) -> Any:
    """The active user the token names, AnonymousUser when it acts for no user, or raise
    :class:`AuthenticationFailed` for an unknown (and not created), ambiguous or inactive
    user, or a user's token without ``USER_CLAIM``."""
    subject = claims.get("sub")
    if subject in (None, "") or subject == client_of(claims):
        return AnonymousUser()
    value = claims.get(config.user_claim)
    if value is None or value == "":
        raise AuthenticationFailed(f"The token has no {config.user_claim!r} claim.")
    if not isinstance(value, str | int) or isinstance(value, bool):
        raise AuthenticationFailed(f"The token's {config.user_claim!r} claim is malformed.")
    model = get_user_model()
    text = str(value)
    if "\x00" in text or (config.create_users and len(text) > _stored_length(model, config)):
        # What no row can hold: PostgreSQL refuses NUL, and a new user's value past the
        # column's length, with a DataError, which would be taken for an outage.
        raise AuthenticationFailed(f"The token's {config.user_claim!r} claim names no user here.")
    lookup = {config.user_field: text}
    try:
        if config.create_users:
            # get_or_create survives two first requests racing (it re-reads on
            # IntegrityError).
            defaults = {"password": make_password(None)}  # unusable: signs in by token
            user, _ = model._default_manager.get_or_create(defaults=defaults, **lookup)
        else:
            user = model._default_manager.get(**lookup)
    except model.DoesNotExist:
        raise AuthenticationFailed("The token's user is unknown to this server.") from None
    except model.MultipleObjectsReturned:
        # A field that is not unique (``email``): which account the token speaks for
        # cannot be known, and picking one would let it act as the other.
        raise AuthenticationFailed("The token's user is ambiguous on this server.") from None
    except (ValueError, ValidationError):
        # A value the field cannot hold (``pk`` and a ``sub`` that is no number) names no
        # user of this server.
        raise AuthenticationFailed("The token's user is unknown to this server.") from None
    if not getattr(user, "is_active", True):
        raise AuthenticationFailed("The token's user is inactive.")
    return user


def _stored_length(model: Any, config: OAuthConfig) -> float:
    """The most characters ``USER_FIELD`` holds (no limit: infinity, ``pk`` and ``TextField``
    say none)."""
    try:
        limit = getattr(model._meta.get_field(config.user_field), "max_length", None)
    except FieldDoesNotExist:
        return math.inf
    return math.inf if limit is None else float(limit)


def caller_for_claims(
    kind: str, token: str, claims: Mapping[str, Any], config: OAuthConfig, *, method: str
) -> Caller:
    """The caller a validated token's claims speak for: the user it names, its scopes, and
    a credential id of ``kind`` (``jwt``, ``introspected``)."""
    return Caller(
        user=user_for_claims(claims, config),
        scopes=scopes_of(claims),
        credential=credential_id(kind, token, claims),
        method=method,
        client=client_of(claims),
        expires_at=numeric_date(claims, "exp"),
    )
