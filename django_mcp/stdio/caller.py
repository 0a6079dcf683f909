"""Who a stdio process acts for, asked again for every message.

The process is started for one user (``--user`` or ``$DJANGO_MCP_USER``), or for nobody.
HTTP authenticates every request (basic/authorization.mdx), so a user an administrator
deactivates, or whose permissions change, is refused or limited at their next request;
stdio has no credentials to check, so it reads that user again for each message instead of
keeping the object it started with (whose permission cache and ``is_active`` would never
change). A user deleted or deactivated meanwhile is refused as HTTP refuses an invalid
token: -32600 ``Unauthenticated``, and the process serves on for whoever fixes it.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser

from django_mcp.protocol.errors import Unauthenticated

#: Why a message of a process whose user is gone is refused.
USER_GONE = "The user this process acts for was deleted or deactivated"


class ProcessUser:
    """The process's user, read again on demand."""

    def __init__(self, user: Any) -> None:
        self.pk = user.pk if getattr(user, "is_authenticated", False) else None

    def current(self) -> tuple[Any, Unauthenticated | None]:
        """The user as the database has it now (``AnonymousUser`` for an anonymous
        process), and the refusal of every request when that user is gone."""
        if self.pk is None:
            return AnonymousUser(), None
        model = get_user_model()
        user = model._default_manager.filter(pk=self.pk).first()
        if user is None or not getattr(user, "is_active", True):
            return AnonymousUser(), Unauthenticated(USER_GONE)
        return user, None
