"""Whether a listen stream's caller may still listen, asked again while the stream is open.

A stream is authorised once, when it opens; every other request is authenticated anew
(basic/authorization.mdx). So that a stream does not outlive what would refuse its caller's
next request, it asks again every ``LISTEN_RECHECK_SECONDS``
(:func:`django_mcp.auth.revocation.current`): its token revoked or deleted (this site's
``mcp_`` tokens, django-oauth-toolkit's), its user deleted or deactivated, its Django
session signed out or its password changed. The stream then
ends as at ``LISTEN_MAX_SECONDS``, with its closing result (basic/patterns/subscriptions.mdx,
"Graceful closure"), and the client, listening again, is authenticated again. A caller
still allowed comes back re-read, and the stream decides with that from then on
(:attr:`Recheck.caller`): its user's permissions and groups, its token's scopes and expiry
as they are now, so taking a permission or a scope away stops the updates it gated, and an
expiry brought forward ends the stream then.

The question is asked when it is due, never per event: the stream's loop wakes for it, and
an event that arrives once it is due waits for the answer, so an update is never delivered
more than ``LISTEN_RECHECK_SECONDS`` after its caller stopped being allowed. A caller with
nothing the database can take back (anonymous; a JWT or introspected token acting for no
user, which ends at its expiry: ``Listener.deadline``) is never asked. A question that
fails (the database is down) ends the stream too: it cannot be told that the caller may
go on.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from asgiref.sync import sync_to_async

from django_mcp.auth.revocation import can_be_withdrawn, current
from django_mcp.conf import mcp_settings
from django_mcp.listen import limits

if TYPE_CHECKING:
    from django_mcp.auth.caller import Caller

logger = logging.getLogger("django_mcp")


def recheck_seconds() -> float:
    """``LISTEN_RECHECK_SECONDS``; a value the checks refuse means the default."""
    return float(mcp_settings.number("LISTEN_RECHECK_SECONDS", above=0))


class Recheck:
    """When a stream's caller is asked about next (``due``, monotonic seconds; infinite for
    a caller nothing can be asked about), the asking, and the caller as last read."""

    def __init__(
        self, caller: Caller | None, adopt: Callable[[Caller], None] | None = None
    ) -> None:
        #: The caller as the last question read it (at first, as the stream opened).
        self.caller = caller
        #: Told of the caller each time a question re-read it: the stream decides with it.
        self.adopt = adopt
        self.interval = recheck_seconds()
        self.due = time.monotonic() + self.interval if can_be_withdrawn(caller) else math.inf

    async def allowed(self) -> bool:
        """Whether the caller may still listen: True until the next question is due; then
        the answer, from a worker thread (it queries the database), with :attr:`caller`
        re-read when it may."""
        if time.monotonic() < self.due:
            return True
        try:
            found = await sync_to_async(self.ask, thread_sensitive=False)()
        except Exception as exc:
            logger.warning("A listen stream ends: its caller could not be checked again: %r", exc)
            return False
        if isinstance(found, str):
            logger.info("A listen stream ends: %s", found)
            return False
        if found is not None:
            self.caller = found
            if self.adopt is not None:
                self.adopt(found)
        self.due = time.monotonic() + self.interval
        return True

    def ask(self) -> Caller | str | None:
        """The caller re-read, or why it may no longer listen. Runs in a worker thread,
        whose database connections are closed before it returns."""
        if self.caller is None:
            return None
        try:
            return current(self.caller)
        finally:
            limits.release_connections()
