"""The site and the caller a command acts for.

stdio has no headers, so no credentials travel with a message: the spec has a stdio
server take them from its environment (basic/authorization.mdx). The user is named by
``--user`` or, failing that, the ``DJANGO_MCP_USER`` environment variable; without either
the caller is anonymous.
"""

from __future__ import annotations

import os
from typing import Any, Final

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser
from django.core.management.base import CommandError

from django_mcp.sites import MCPSite, all_sites, site

USER_ENVIRONMENT: Final = "DJANGO_MCP_USER"


def site_named(name: str | None) -> MCPSite:
    """The site called ``name`` (the default site when None)."""
    if name is None:
        return site
    for candidate in [site, *all_sites()]:
        if candidate.name == name:
            return candidate
    known = ", ".join(sorted({s.name for s in [site, *all_sites()]}))
    raise CommandError(f"No MCP site is named {name!r} (known: {known})")


def storable(text: str) -> bool:
    """Whether ``text`` is UTF-8 text a database driver can send: a command-line argument
    or environment variable that was not UTF-8 bytes reaches Python as lone surrogates
    (``surrogateescape``), which every driver fails to encode (a traceback, not an
    error message)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def resolve_user(username: str | None) -> Any:
    """The active user named ``username`` (else ``$DJANGO_MCP_USER``), or
    ``AnonymousUser`` when neither is given. An unknown or inactive user is an error, never
    a silent fall back to anonymous."""
    name = username if username is not None else os.environ.get(USER_ENVIRONMENT) or None
    if name is None:
        return AnonymousUser()
    unknown = CommandError(f"No active user is named {name!r}")
    if not storable(name):  # no user is named so
        raise unknown
    model = get_user_model()
    user = model._default_manager.filter(**{model.USERNAME_FIELD: name}).first()
    if user is None or not user.is_active:
        raise unknown
    return user
