"""One ``subscriptions/listen`` stream (basic/utilities/subscriptions.mdx): the
acknowledgement first, then the changes its filter asked for, with keep-alives, until the
client leaves, the stream's lifetime (``LISTEN_MAX_SECONDS``) ends, its caller is no longer
allowed (:mod:`.recheck`) or the server shuts down.

The events arrive through the site's group on the channel layer (:mod:`.fanout`), so a
change made in any process reaches a listener in every process. A
``notifications/resources/updated`` is delivered only for a URI the stream subscribed to
(exactly, or through a declared template) and that its caller may read: the same
``find_resource`` check as ``resources/read``, the resource's ``scopes_required``
granted by the caller's credential, and a template's ``visible`` check of that one
resource, run in a worker thread because a permission may query the database. A
``ModelTools`` row's change names the row itself (its primary key, internal to the
channel layer), and its template's ``row_visible`` asks ``get_queryset`` for that row, so
a listener never hears of another caller's row that shares its key.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import AsyncGenerator, Callable, Iterator
from typing import TYPE_CHECKING, Any, Literal

from asgiref.sync import sync_to_async

from django_mcp.listen import limits, shutdown
from django_mcp.listen.fanout import channel_layer, group_name
from django_mcp.listen.inbox import MAX_PENDING_EVENTS as MAX_PENDING
from django_mcp.listen.inbox import Inbox, Received, abandon, failure_of, is_timeout, iterated
from django_mcp.listen.recheck import Recheck
from django_mcp.protocol import sse
from django_mcp.protocol import subscriptions as proto
from django_mcp.protocol.tasks import TERMINAL as TERMINAL_TASK_STATUSES
from django_mcp.protocol.tasks import notification as task_notification
from django_mcp.protocol.uritemplate import is_template

if TYPE_CHECKING:
    from django_mcp.auth.caller import Caller
    from django_mcp.server.context import Context
    from django_mcp.sites import MCPSite

logger = logging.getLogger("django_mcp")
#: Longest wait of a WSGI stream's loop before it looks for events again.
WSGI_POLL_SECONDS = 0.25
#: A failed channel-layer ``receive`` is started again no sooner than this after the last
#: one started, and a timeout counts as an idle wait only after at least this long.
LAYER_RETRY_SECONDS = 1.0
#: Failures (other than idle waits) with no event between them that end the stream.
LAYER_MAX_FAILURES = 3
#: What a WSGI or stdio stream learns of its client's connection
#: (:mod:`django_mcp.http.peer`): open, closed on the client's sending side only (it may
#: still read), gone, or ending: the transport is shutting down (stdio's input ended, or
#: the process was told to stop) and the client still reads, so the stream sends its
#: closing result and ends.
PeerState = Literal["open", "half-closed", "gone", "ending"]


class Listener:
    """One ``subscriptions/listen`` stream: acknowledgement, filtered changes, keep-alives."""

    def __init__(
        self,
        site: MCPSite,
        subscription_id: Any,
        wanted: proto.SubscriptionFilter,
        context: Context | None = None,
        server_info: dict[str, Any] | None = None,
    ) -> None:
        self.site = site
        self.subscription_id = subscription_id
        self.filter = wanted
        self.context = context  # the listener's caller: what it may read
        self.group = group_name(site.name)
        #: Set when its channel layer failed (kept failing, or could not be joined) or it
        #: fell too far behind: it ends without its closing result, which a transport with
        #: no connection to drop answers.
        self.dropped = False
        #: The stream's place in the open-stream counts, given back when the stream ends.
        self.slot: limits.Slot | None = None
        #: When the stream ends (monotonic seconds): :meth:`deadline`, set as it opens.
        self.ends_at = math.inf
        #: Tasks whose terminal state this stream sent: a state published before it (by a
        #: worker or server that read the row first, and published last) is stale.
        self.ended_tasks: set[str] = set()
        self.server_info = server_info  # in the closing result's _meta, if given
        self.follows: Callable[[str], bool] | None = None  # whether a task's news may go out

    def acknowledgement(self) -> bytes:
        return sse.event(proto.acknowledgement(self.subscription_id, self.filter))

    def closing(self) -> bytes:  # the listen request's response, as the server ends it
        return sse.event(proto.closing_result(self.subscription_id, self.server_info))

    async def render(self, event: dict[str, Any]) -> bytes | None:
        """The frame for one change event, or None when this stream must not get it."""
        method, uri = event.get("method"), event.get("uri")
        if not isinstance(method, str):
            return None
        if method == proto.RESOURCE_UPDATED:
            if not isinstance(uri, str) or not self.filter.resource_subscriptions:
                return None
            readable = sync_to_async(self.may_receive_update, thread_sensitive=False)
            if not await readable(uri, event.get("row")):
                return None
        elif not self.filter.wants(method, uri):
            return None
        if method == proto.TASK_STATUS:
            if uri in self.ended_tasks:  # before the check: it costs a query
                return None
            follows = self.follows and sync_to_async(self.follows, thread_sensitive=False)
            if follows and not await follows(str(uri)):  # its caller may still read it
                return None
            return self.render_task(uri, event.get("task") or {})
        return sse.event(proto.change_notification(self.subscription_id, method, uri))

    def render_task(self, task_id: Any, task: dict[str, Any]) -> bytes | None:
        """``notifications/tasks``, unless the task already ended on this stream: a
        terminal state never changes (ext-tasks tasks.md), so nothing after it is sent."""
        if task_id in self.ended_tasks:
            return None
        if task.get("status") in TERMINAL_TASK_STATUSES:
            self.ended_tasks.add(task_id)
        return sse.event(task_notification(self.subscription_id, task))

    def may_receive_update(self, uri: str, row: Any = None) -> bool:
        """Whether ``uri`` is subscribed (exactly or by a declared template) and the
        caller may read it, as ``resources/read`` would decide. When the change names its
        ``row`` (:func:`.watch.row_of`) and the template can check rows
        (``row_visible``), the caller must see that row: another row with the same key
        does not count. Runs in a worker thread, whose database connections are closed
        before it returns."""
        try:
            templates: list[str] = []
            if any(is_template(s) for s in self.filter.resource_subscriptions or ()):
                templates = [t.uri for t in self.site.get_resource_templates(self.context)]
            if not self.filter.subscribes_to(uri, templates):
                return False
            found = self.site.find_resource(uri, self.context)
            if found is None or not self.has_scopes_for(found[0]):
                return False
            row_visible = getattr(found[0], "row_visible", None)
            if row_visible is not None and isinstance(row, dict):
                verdict = row_visible(self.context, row)
                if verdict is not None:  # None: not one of its rows; ``visible`` decides
                    return bool(verdict)
            visible = getattr(found[0], "visible", None)
            return visible is None or bool(visible(self.context, **found[1]))
        except Exception:  # a failing permission check withholds the update, never the stream
            logger.exception("Could not decide whether a listener may read %s", uri)
            return False
        finally:
            limits.release_connections()

    def has_scopes_for(self, spec: Any) -> bool:
        """Whether the caller's credential grants the resource's ``scopes_required``, as
        ``resources/read`` requires: there a caller without them gets 401 or 403 (ADR
        0005); a stream cannot answer that, so the update is simply not delivered."""
        required: frozenset[str] = getattr(spec, "scopes_required", frozenset())
        if self.context is None:
            return not required
        return not self.context.caller.lacks(required)

    def deadline(self) -> float:
        """When the stream ends (monotonic seconds): after ``LISTEN_MAX_SECONDS``, or when
        its caller's credential expires if that comes first (any token whose expiry the
        :class:`Caller` knows: this site's, django-oauth-toolkit's, a JWT's or an
        introspected one's). Ending it with the credential sends the client back through
        authentication (it refreshes the token and listens again) instead of delivering
        changes to a token no request would accept any more. A token revoked, or a user
        deleted or deactivated, before then is :mod:`.recheck`'s to notice."""
        deadline = _now() + limits.max_seconds()
        expires_at = None if self.context is None else self.context.caller.expires_at
        if expires_at is not None:
            deadline = min(deadline, _now() + max(0.0, expires_at - _wall_clock()))
        return deadline

    def adopt(self, caller: Caller) -> None:
        """Decide with ``caller`` from now on: the stream's caller as its recheck re-read
        it (:mod:`.recheck`). Its user's permissions and its credential's scopes decide
        what it may read, and an expiry brought forward ends the stream then (one pushed
        back does not lengthen it: the client listens again and is authenticated anew)."""
        if self.context is not None:
            self.context.reidentify(caller)
        self.ends_at = min(self.ends_at, self.deadline())

    async def events(
        self, poll: float | None = None, peer: Callable[[], PeerState] | None = None
    ) -> AsyncGenerator[bytes, None]:
        """The stream under ASGI; the client closing it ends the loop (cancellation).

        A keep-alive comment goes out after every ``LISTEN_KEEPALIVE_SECONDS`` without a
        frame (events this filter drops do not count). The layer is read by the stream's
        :class:`~.inbox.Inbox`, so a burst never overflows it while checks run; a stream
        that falls too far behind ends as dropped.

        A ``receive`` that fails is started again, not the stream's end (see
        :meth:`recover`); :data:`LAYER_MAX_FAILURES` with no event between them end the
        stream without its closing result, as a first join that fails ends it before its
        acknowledgement, which tells the client that it dropped and that it may reconnect
        (basic/utilities/subscriptions.mdx), perhaps to a process whose layer works.

        ``peer`` (WSGI, where no cancellation comes) is asked at every wake-up: once the client
        is gone the stream ends without a further frame, as nobody reads it. The first time
        it has only half-closed, a keep-alive goes out at once: a client that closed answers
        it with a reset (gone at the next wake-up), one that still reads takes it.

        The caller is asked about again every ``LISTEN_RECHECK_SECONDS`` (:mod:`.recheck`),
        and before an event is rendered once that is due; a caller no longer allowed ends
        the stream with its closing result, as its deadline does."""
        layer = channel_layer()
        channel = await layer.new_channel()
        keep_alive = limits.keep_alive_seconds()
        self.ends_at = self.deadline()
        recheck = Recheck(None if self.context is None else self.context.caller, self.adopt)
        inbox = Inbox(layer, channel)
        taking: asyncio.Task[Any] | None = None  # the inbox's next Received
        failures = 0
        stopping = shutdown.waiter()
        nudged = False
        try:
            # Inside the try: a stream cancelled while it joins may have joined all the same (on
            # the layer's thread, in Redis) and must leave again, or every later event goes to
            # nobody. Bounded; at a shutdown the stream gets its closing result, joined or not.
            if not await self.join_again(layer, channel, stopping) and not stopping.done():
                logger.warning("A listen stream could not join its group: it drops")
                self.dropped = True
                return
            yield self.acknowledgement()
            inbox.restart()
            last_frame = _now()
            while True:
                if peer is not None:
                    state = peer()
                    if state == "gone":
                        return
                    if state == "ending":
                        yield self.closing()
                        return
                    if state == "half-closed" and not nudged:
                        nudged = True
                        yield sse.KEEP_ALIVE
                        last_frame = _now()
                        continue
                now = _now()
                if stopping.done() or now >= self.ends_at or not await recheck.allowed():
                    yield self.closing()
                    return
                wake = min(last_frame + keep_alive, self.ends_at, recheck.due)
                if taking is None:
                    taking = asyncio.ensure_future(inbox.get())
                done, _ = await asyncio.wait(
                    {taking, stopping},
                    timeout=max(0.0, wake - now if poll is None else min(wake - now, poll)),
                    return_when=asyncio.FIRST_COMPLETED,
                )
                if taking not in done:
                    if _now() >= last_frame + keep_alive:
                        yield sse.KEEP_ALIVE
                        last_frame = _now()
                    continue
                received: Received = taking.result()
                taking = None
                if received.overflowed:  # too far behind to catch up: the client reads again
                    logger.warning("A listen stream fell %d events behind: it drops", MAX_PENDING)
                    self.dropped = True
                    return
                if received.failure is not None:
                    waited = received.waited
                    failures = await self.recover(
                        layer, channel, received.failure, waited, failures, stopping
                    )
                    if failures >= LAYER_MAX_FAILURES:
                        self.dropped = True
                        return  # dropped, not closed: the client may reconnect
                    if waited < LAYER_RETRY_SECONDS:  # not at once again, nor past a shutdown
                        await asyncio.wait({stopping}, timeout=LAYER_RETRY_SECONDS - waited)
                    inbox.restart()
                    continue
                failures = 0
                # Due: not delivered before the answer, nor past an expiry it brought forward.
                if not await recheck.allowed() or _now() >= self.ends_at:
                    yield self.closing()
                    return
                frame = await self.render(received.event or {})
                if frame is not None:
                    yield frame
                    last_frame = _now()
        finally:
            stopping.cancel()
            if self.slot is not None:
                self.slot.release()
            if taking is not None:
                await abandon(taking)
            await inbox.close()
            try:  # a layer that is down must not turn the stream's end into an error
                await asyncio.wait_for(
                    layer.group_discard(self.group, channel), LAYER_RETRY_SECONDS
                )
            except Exception as exc:
                logger.debug("A listen stream could not leave its group: %r", exc)

    async def recover(
        self,
        layer: Any,
        channel: str,
        failure: BaseException,
        waited: float,
        failures: int,
        stopping: asyncio.Future[None],
    ) -> int:
        """The stream's failure count after ``receive`` failed with ``failure`` after
        ``waited`` seconds, once the stream has joined its group again.

        It joins again after every failure: a Redis that restarted forgot the group, and
        the stream would wait for ever on a channel nobody sends to. The join is also the
        test of an idle wait that timed out: channels_redis with redis-py 8 (whose default
        socket timeout equals the layer's five-second blocking pop) times out every quiet
        wait when the configured ``socket_timeout`` that avoids it is missing
        (docs/deployment.md), which counts for nothing if the join works; a Redis that
        hangs times out too, and then the join does not. Any other failure counts; only an
        event resets the count. The join waits at most :data:`LAYER_RETRY_SECONDS`, and
        not past a shutdown, so keep-alives, the deadline and shutdown still apply."""
        idle = waited >= LAYER_RETRY_SECONDS and is_timeout(failure)
        joined = await self.join_again(layer, channel, stopping)
        if idle and joined:
            logger.debug("A listen stream's idle channel-layer receive timed out: %r", failure)
            return failures
        failures += 1
        logger.warning(
            "A listen stream's channel-layer receive failed (%d of %d): %r%s",
            failures,
            LAYER_MAX_FAILURES,
            failure,
            "" if joined else "; joining its group again failed too",
        )
        return failures

    async def join_again(self, layer: Any, channel: str, stopping: asyncio.Future[None]) -> bool:
        """Whether the stream joined its group (again) within :data:`LAYER_RETRY_SECONDS`
        (a shutdown ends the wait: the stream is about to end anyway)."""
        joining = asyncio.ensure_future(layer.group_add(self.group, channel))
        try:  # given up, or the stream cancelled: no join lands after its group_discard
            await asyncio.wait(
                {joining, stopping},
                timeout=LAYER_RETRY_SECONDS,
                return_when=asyncio.FIRST_COMPLETED,
            )
        finally:
            if not joining.done():
                await abandon(joining)
        failure = failure_of(joining, "join")
        if failure is not None:
            logger.debug("A listen stream could not join its group again: %r", failure)
        return failure is None

    def sync_events(self, peer: Callable[[], PeerState] | None = None) -> Iterator[bytes]:
        """The same stream for WSGI servers, which hold one thread per open stream.

        The generator runs on one event loop of its own for its whole life: the channel
        layer's queues and connections belong to the loop that first used them.
        ``peer`` (see :mod:`django_mcp.http.peer`) ends the stream, and frees its thread
        and its slot, within a poll or two of its client leaving, rather than at the first
        keep-alive write that fails.
        """
        # The loop wakes at least every WSGI_POLL_SECONDS to ask ``peer`` about the client.
        agen = self.events(poll=WSGI_POLL_SECONDS, peer=peer)
        limits.release_connections()  # this worker thread waits for events holding none
        yield from iterated(agen)  # its loop runs in a thread of its own, for the inbox


def _now() -> float:
    return time.monotonic()


def _wall_clock() -> float:
    return time.time()
