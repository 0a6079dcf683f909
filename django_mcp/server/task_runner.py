"""Running one MCP task in a worker: the tool, its context, and where its outcome goes.

Each run re-executes the tool from the top with every answer received so far, as the
synchronous input rounds do (``server/input_rounds.py``): when the tool asks for input it
does not have, the task moves to ``input_required`` with those requests and the run ends;
``tasks/update`` with the last answer queues the next run. Outcomes (ext-tasks
``tasks.md``, "Task Execution Errors"): a value or a tool error is ``completed`` (with
``isError: true`` for the latter), a JSON-RPC-level failure is ``failed`` with the error,
and a cancelled task stays ``cancelled``. A heartbeat thread records that the worker is
alive, so a task whose worker died is failed on its next poll instead of staying
``working`` forever.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser
from django.db import DatabaseError, close_old_connections, connection, transaction
from django.utils import timezone

from django_mcp.auth.caller import Caller
from django_mcp.auth.revocation import is_revoked
from django_mcp.conf import mcp_settings
from django_mcp.declarations.tools import ToolSpec
from django_mcp.exceptions import RequestCancelled, ToolError
from django_mcp.protocol import methods
from django_mcp.protocol import tasks as proto
from django_mcp.protocol.errors import InternalError, MCPError, Unauthenticated
from django_mcp.protocol.meta import complete_meta, required_meta
from django_mcp.server import tasking
from django_mcp.server.context import Context
from django_mcp.server.handlers.tools import error_result
from django_mcp.server.input_rounds import Binding, InputRequired, Inputs
from django_mcp.server.progress import Pacer, checked_progress
from django_mcp.sites import MCPSite, all_sites
from django_mcp.tasks import store
from django_mcp.tasks.models import MCPTask

logger = logging.getLogger("django_mcp")


class TaskContext(Context):
    """The :class:`Context` of a tool running as a task: its caller is the task's owner,
    cancellation is ``tasks/cancel``, and progress messages become ``statusMessage``
    (progress and log notifications are not sent for tasks)."""

    def __init__(self, task: MCPTask, site: MCPSite, **kwargs: Any) -> None:
        super().__init__(site=site, method=methods.TOOLS_CALL, request_id=None, **kwargs)
        self.task = task
        # Flushed by the task's heartbeat, not the shared flushing thread: storing is a
        # database write, and that thread holds no connection of its own.
        self._message_pacer: Pacer[str] = Pacer(self._store_message, trailing=False)

    @property
    def principal(self) -> str:
        return self.task.owner

    def check_cancelled(self) -> None:
        """Raise :class:`RequestCancelled` once the task was cancelled, its TTL passed or
        it was purged (one query): see :func:`~django_mcp.tasks.store.should_stop`."""
        if not self.cancelled and store.should_stop(self.task.id):
            self.cancel()
        super().check_cancelled()

    def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        progress, total, message = checked_progress(progress, total, message)
        self.check_cancelled()
        if message is not None:
            self._message_pacer.offer(message)

    def store_held_message(self) -> None:
        """Store the status message the ``PROGRESS_INTERVAL`` pacer holds, if any: at each
        heartbeat (so the task's ``statusMessage`` is at most a beat behind) and when the
        tool has returned, whose last word ("done, 120 rows") should be what the task says
        (:mod:`django_mcp.server.progress`)."""
        self._message_pacer.flush()

    def _store_message(self, message: str) -> None:
        if store.set_message(self.task.id, message):
            tasking.announce(self.task.id)


class Heartbeat:
    """Records, every ``TASK_HEARTBEAT_SECONDS``, that this worker still runs the task
    (:func:`~django_mcp.tasks.store.pick_up` recorded the first beat)."""

    def __init__(self, task_id: str) -> None:
        self.task_id = task_id
        #: Run after each beat, in the heartbeat's thread (the held status message).
        self.also: Callable[[], None] | None = None
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, name="mcp-task-heartbeat", daemon=True)

    def __enter__(self) -> Heartbeat:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopped.set()
        self.thread.join()

    def _run(self) -> None:
        """Beat until stopped. A failed beat (a locked SQLite, a dropped connection) is
        logged and the next one tried on a new connection: one transient error must not
        end the beats, or the next poll after ``TASK_WORKER_TIMEOUT`` fails a healthy task
        and its result is thrown away."""
        interval = float(mcp_settings.TASK_HEARTBEAT_SECONDS)
        try:
            while not self.stopped.wait(interval):
                try:
                    store.beat(self.task_id)
                    if self.also is not None:
                        self.also()
                except Exception:  # a heartbeat must never kill the worker
                    logger.exception("Task %s: heartbeat failed", self.task_id)
                    connection.close()
        finally:
            connection.close()


def context_for(task: MCPTask, site: MCPSite) -> TaskContext:
    """The context of the creating call, rebuilt from its stored ``_meta`` and caller.

    A key stored as null is left out: admission refuses one now, but a task created by an
    earlier release, which took null for absent, must still run as it was admitted."""
    version, capabilities, raw = required_meta({"_meta": task.request_meta})
    meta = complete_meta(version, capabilities, {k: v for k, v in raw.items() if v is not None})
    context = TaskContext(
        task,
        site,
        meta=meta,
        revision=mcp_settings.revision_policy.decide(version),
        caller=creator(task),
    )
    binding = Binding(task.owner, f"task:{task.id}", task.tool, task.arguments, site.name)
    context.inputs = Inputs(binding, meta, task.input_responses, {})
    return context


def creator(task: MCPTask) -> Caller:
    """The caller that created ``task``, as its runs act: the same user, read again (one
    deactivated or deleted since is refused, as Django's own authentication refuses them
    a session), with the scopes the creating credential granted, unless that credential
    was revoked since (:mod:`django_mcp.auth.revocation`). Without it a tool's own
    ``ctx.caller.has_scopes(...)`` check passed in a task that the same call refused."""
    scopes = None if task.scopes is None else frozenset(task.scopes)
    credential = task.credential or None
    if is_revoked(credential):
        raise Unauthenticated("The access token that created this task was revoked")
    if not task.owner.startswith("user:"):  # anonymous, or a token acting for no user
        method = task.auth_method or "anonymous"
        client = task.owner.removeprefix("client:") if task.owner.startswith("client:") else None
        return Caller(AnonymousUser(), scopes, credential, method, client)
    users = get_user_model()._default_manager
    user = users.filter(pk=task.owner.removeprefix("user:")).first()
    if user is None or not user.is_active:
        raise Unauthenticated("The user who created this task no longer exists or is inactive")
    return Caller(user, scopes, credential, task.auth_method or "request")


#: The error of a run whose outcome a task cannot keep (``%s``: what it was).
UNSTORABLE = (
    "The task's %s could not be stored: it holds a value no database keeps as JSON (a "
    "NUL character, an unpaired UTF-16 surrogate, NaN, or a value JSON cannot encode)"
)

#: What :func:`run` returns when it found nothing to run: the task was no longer
#: ``working`` (cancelled, finished, or waiting for input) when the job started.
NOT_RUN = "not run"
#: What it returns when the task's row was deleted (purged) before or while it ran.
DELETED = "deleted"


def run(task_id: str) -> str:
    """The body of the Django Tasks job: run the task once, record what happened.

    A task whose TTL has passed is failed instead of run (:func:`store.expire`). The
    task is picked up first (its heartbeat starts, which ends its "waiting for a
    worker" message), so anything that fails after that, finding the tool or rebuilding
    its context included, fails the task instead of leaving it waiting.

    Returns the task's status after this run (or :data:`NOT_RUN`, :data:`DELETED`), which
    the job returns too: the task backend records every job that returns as a success, a
    cancelled task's included, and its return value is where its admin and logs can tell
    them apart.
    """
    close_old_connections()
    task = MCPTask.objects.filter(pk=task_id).first()
    if task is None:
        return DELETED
    if task.status != proto.WORKING:
        return NOT_RUN  # cancelled, already finished, or waiting for input
    if store.has_expired(task, timezone.now()):  # nobody can see or cancel it any more
        return announced(task_id, store.expire(task_id), proto.FAILED)
    if not store.pick_up(task_id):  # the first heartbeat
        return status_of(task_id)  # cancelled or purged since it was read
    tasking.announce(task_id)  # no longer waiting for a worker
    with Heartbeat(task_id) as heartbeat:
        context: TaskContext | None = None
        try:
            context, spec = served(task)
            heartbeat.also = context.store_held_message
            try:
                result = spec.result(spec.call(task.arguments, context))
            finally:  # the outcome is written next: no heartbeat's message after it
                heartbeat.also = None
        except ToolError as exc:
            result = error_result(str(exc))
        except InputRequired as exc:
            requests = {key: request.to_dict() for key, request in exc.requests.items()}
            changed = _stored(store.need_input, task_id, requests)
            if changed is None:
                return settle(task_id, error=InternalError(UNSTORABLE % "input requests"))
            return announced(task_id, changed, proto.INPUT_REQUIRED)
        except RequestCancelled as exc:  # if it had ended meanwhile, that outcome stays
            if not store.should_stop(task_id):  # nobody stopped it: the tool's own failure
                return settle(task_id, error=handled(exc, context))
            if store.expire(task_id):  # stopped because its TTL passed: failed, saying so
                return announced(task_id, True, proto.FAILED)
            return announced(task_id, store.cancel(task_id), proto.CANCELLED)
        except Exception as exc:  # the worker's dispatch boundary, as in MCPServer.handle
            return settle(task_id, error=handled(exc, context))
        except BaseException as exc:  # sys.exit() in the tool, Ctrl-C: the run is over
            stopped(task_id, exc)
            raise
    store_last_message(context)
    result.setdefault("resultType", "complete")
    return settle(task_id, result=result)


def store_last_message(context: TaskContext | None) -> None:
    """Store the status message the tool reported last and the pacer still holds, before
    the outcome (a terminal task's message is not changed). Best-effort: the tool's work
    is done, and a failed write must not fail the task."""
    if context is None:
        return
    try:
        context.store_held_message()
    except Exception:
        logger.exception("Task %s: could not store its last status message", context.task.id)


#: The error of a run stopped by an exception that is not an ``Exception`` (``%s``: its
#: type): ``SystemExit`` from ``sys.exit()`` in the tool, ``KeyboardInterrupt``.
STOPPED = "The task's run was stopped before it finished (%s); start the call again"


def stopped(task_id: str, exc: BaseException) -> None:
    """Fail the task whose run ``exc`` stops, before ``exc`` goes on to the worker. The
    worker records its job as failed and never runs it again, so without this the task
    stayed ``working`` with a frozen heartbeat until a poll past ``TASK_WORKER_TIMEOUT``
    blamed a dead worker (never, with no timeout). Best-effort: a failure here must not
    replace ``exc``."""
    try:
        settle(task_id, error=InternalError(STOPPED % type(exc).__name__))
    except Exception:
        logger.exception("Task %s: could not record that its run was stopped", task_id)


def handled(exc: Exception, context: TaskContext | None) -> MCPError:
    """What the ``EXCEPTION_HANDLER`` makes of ``exc``. ``context`` is None when the run
    failed before it had one; a handler that fails itself (one written for requests,
    assuming a context), or one that returns something else than an ``MCPError``, gives
    -32603, logged, so the task still fails now instead of staying ``working`` with no
    worker until a poll finds its heartbeat stale."""
    try:
        error = mcp_settings.exception_handler(exc, context)
    except Exception:
        logger.exception("EXCEPTION_HANDLER failed on an exception from a task's run")
        return InternalError()
    if not isinstance(error, MCPError):
        logger.error(
            "EXCEPTION_HANDLER returned %s, not an MCPError, for an exception from a "
            "task's run: the task fails with -32603",
            type(error).__name__,
        )
        return InternalError()
    return error


def served(task: MCPTask) -> tuple[TaskContext, ToolSpec]:
    """The task's context and tool, as its creator may use it now: the tool's permission
    check runs with the creator's context, as for the creating call (without one, every
    gated tool looked hidden and failed). A tool gone from its site, or one the creator
    may no longer use, fails the run with -32603."""
    for site in all_sites():
        if site.name == task.site and (  # registered, or its own lookup may serve it
            task.tool in site.registry.tools or "tools" in site.own_lookups
        ):
            context = context_for(task, site)
            spec = site.get_tool(task.tool, context)
            if spec is not None:
                return context, spec
    raise InternalError(f"Tool {task.tool} is no longer served")


def settle(
    task_id: str, *, result: dict[str, Any] | None = None, error: MCPError | None = None
) -> str:
    """Record the terminal outcome (unless the task is already terminal: a cancellation
    that came first stays) and announce it; the task's status after it.

    An outcome no database could keep (a NUL or an unpaired surrogate, which PostgreSQL's
    ``jsonb`` refuses) fails the task with -32603 saying so, on every database alike:
    writing it raised out of the run and left the task ``working`` with no worker."""
    if result is not None:
        changed = _stored(store.complete, task_id, result)
        if changed is not None:
            return announced(task_id, changed, proto.COMPLETED)
        error = InternalError(UNSTORABLE % "result")
    changed = _stored(store.fail, task_id, (error or InternalError()).to_dict())
    if changed is None:
        changed = store.fail(task_id, InternalError(UNSTORABLE % "error").to_dict())
    return announced(task_id, changed, proto.FAILED)


def _stored(write: Callable[[str, Any], bool], task_id: str, value: Any) -> bool | None:
    """Whether ``write`` changed the task (False: it was terminal already), or None when
    ``value`` could not be stored: a NUL or an unpaired surrogate (PostgreSQL's ``jsonb``
    refuses them; refused here on every database alike), a value JSON cannot encode (a
    ``Decimal`` or a set in an error's ``data``), or one the database refuses (NaN, by
    SQLite's JSON check). Writing it raised out of the run and left the task ``working``
    with no worker, which the next poll past ``TASK_WORKER_TIMEOUT`` called a dead worker."""
    try:
        if not store.storable(value):  # which encodes it, so may raise too
            return None
        with transaction.atomic():  # a refused write leaves any outer transaction usable
            return write(task_id, value)
    except (TypeError, ValueError, DatabaseError):
        logger.exception("Task %s: its outcome could not be stored", task_id)
        return None


def announced(task_id: str, changed: bool, status: str) -> str:
    """After a transition to ``status``: announce it and return ``status`` if it took (no
    query needed), else the status the task already had."""
    if not changed:
        return status_of(task_id)
    tasking.announce(task_id)
    return status


def status_of(task_id: str) -> str:
    """The task's status now (:data:`DELETED` if it was purged meanwhile)."""
    status = MCPTask.objects.filter(pk=task_id).values_list("status", flat=True).first()
    return DELETED if status is None else status
