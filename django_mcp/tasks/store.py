"""Reading and changing task rows, with the rules of the Tasks extension built in.

- A task is found only by its owner on its site; anyone else, and an expired or purged
  id, gets the same -32602 as an unknown id (ext-tasks ``tasks.md``, "Protocol Errors").
- Terminal states never change: every transition is a conditional ``UPDATE`` on an
  active status, so a worker finishing late cannot overwrite a cancellation.
- A task whose worker stopped heart-beating is failed with a clear error on the next
  read, so nothing stays ``working`` forever.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any, Final

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from django_mcp.protocol import tasks as proto
from django_mcp.protocol.errors import INTERNAL_ERROR, InvalidParams
from django_mcp.protocol.strings import first_match, may_hold
from django_mcp.tasks.models import MCPTask
from django_mcp.tasks.wire import WAITING_FOR_WORKER as WAITING_FOR_WORKER  # read from here too
from django_mcp.tasks.wire import iso as iso
from django_mcp.tasks.wire import shown_message as shown_message
from django_mcp.tasks.wire import to_wire as to_wire

WORKER_LOST = (
    "The worker running this task stopped before it finished (no heartbeat); start the call again"
)
#: The error of a task whose TTL passed before its run finished (:func:`expire`).
EXPIRED = "The task's TTL passed before it finished; start the call again"
#: The error of a task whose job the task backend refused (its ``enqueue`` raised): no
#: worker would ever pick it up, so it is failed at once rather than left "waiting".
NOT_QUEUED = "The task could not be queued for a worker; start the call again"


def create(
    *,
    site: str,
    owner: str,
    tool: str,
    arguments: Mapping[str, Any],
    request_meta: Mapping[str, Any],
    ttl_ms: int | None,
    answers: Mapping[str, Any] | None = None,
    scopes: Iterable[str] | None = None,
    credential: str | None = None,
    auth_method: str = "",
    tool_scopes: Iterable[str] = (),
) -> MCPTask:
    """A new ``working`` task. ``scopes`` (None: not limited by scopes), ``credential`` and
    ``auth_method`` describe the creating credential, which the task's runs act with;
    ``tool_scopes`` are the tool's ``scopes_required``, which acting on the task needs even
    once the tool has left the site.

    They come from a token, not from the request's own checked text: a scope no database
    can keep (NUL, an unpaired surrogate) is dropped, which only narrows what the runs may
    do, and the credential's id and method are made storable and cut to their columns."""
    now = timezone.now()
    return MCPTask.objects.create(
        site=site,
        owner=owner,
        scopes=None if scopes is None else sorted(s for s in scopes if storable(s)),
        credential=_storable_text(credential or "", "credential"),
        auth_method=_storable_text(auth_method, "auth_method"),
        tool=tool,
        tool_scopes=sorted(s for s in tool_scopes if storable(s)),
        arguments=dict(arguments),
        request_meta=dict(request_meta),
        input_responses=dict(answers or {}),
        created_at=now,
        last_updated_at=now,
        ttl_ms=ttl_ms,
        expires_at=None if ttl_ms is None else now + timedelta(milliseconds=ttl_ms),
    )


#: The longest task id the table holds (:func:`~.models.new_task_id` makes 43 characters).
MAX_TASK_ID_CHARS: Final = MCPTask._meta.get_field("id").max_length or 64
_UNSTORABLE: Final = re.compile("[\x00\ud800-\udfff]")


def could_be_task_id(value: str) -> bool:
    """Whether ``value`` could name a task at all. A longer one, or one holding NUL (which
    PostgreSQL refuses to compare with text, an error rather than "no such task"), is
    answered as unknown without a query."""
    return len(value) <= MAX_TASK_ID_CHARS and "\x00" not in value


def _storable_text(text: str, field: str) -> str:
    """``text`` without what no database keeps, cut to the column ``field``."""
    limit = getattr(MCPTask._meta.get_field(field), "max_length", None) or len(text)
    return _UNSTORABLE.sub("", text)[:limit]


def storable(value: Any) -> bool:
    """Whether a task can keep ``value`` on every database: no NUL and no unpaired
    surrogate in a string or a key (what :func:`require_storable` refuses in a request)."""
    return not may_hold(value, nul=True) or first_match(value, "", _UNSTORABLE) is None


def require_storable(value: Any, path: str) -> None:
    """-32602 when ``value`` holds, in a string or a key, what PostgreSQL keeps in no
    ``jsonb`` (nor text): NUL, or an unpaired surrogate (admission refuses those in
    ``params``, but not in ``_meta``, which a task keeps too). Refused on every database
    alike, naming where; first checked in C on the value's JSON text, then walked only if
    it holds one."""
    if not may_hold(value, nul=True):
        return
    found = first_match(value, path, _UNSTORABLE)
    if found is None:
        return
    where, text_found = found
    what = "a NUL character (\\u0000)" if text_found == "\x00" else "an unpaired UTF-16 surrogate"
    raise InvalidParams(f"{where} holds {what}, which a task cannot keep")


def not_found(task_id: Any) -> InvalidParams:
    return InvalidParams("Task not found", data={"taskId": task_id})


def lookup(
    task_id: Any,
    *,
    owner: str,
    site: str,
    worker_timeout: float | None,
    on_orphan_failed: Callable[[str], None] | None = None,
) -> MCPTask:
    """The caller's live task ``task_id``, or -32602 exactly as for an unknown id. An
    orphaned task is failed on the way (``on_orphan_failed`` is told, to announce it)."""
    if not isinstance(task_id, str):
        raise InvalidParams("params.taskId is required and must be a string")
    if not could_be_task_id(task_id):
        raise not_found(task_id)
    task = MCPTask.objects.filter(pk=task_id, owner=owner, site=site).first()
    if task is None:
        raise not_found(task_id)
    now = timezone.now()
    if has_expired(task, now):
        raise InvalidParams("Task has expired", data={"taskId": task_id})
    if worker_timeout is not None and is_orphaned(task, now, worker_timeout):
        if fail(task.id, {"code": INTERNAL_ERROR, "message": WORKER_LOST}) and on_orphan_failed:
            on_orphan_failed(task.id)
        try:
            task.refresh_from_db()
        except MCPTask.DoesNotExist:  # purged meanwhile: gone, as for any unknown id
            raise not_found(task_id) from None
    return task


def has_expired(task: MCPTask, now: datetime) -> bool:
    """Whether the task's TTL has passed: it answers "Task has expired" from then on."""
    return task.expires_at is not None and task.expires_at <= now


def is_orphaned(task: MCPTask, now: datetime, worker_timeout: float) -> bool:
    """Started by a worker that has not beaten within ``worker_timeout`` seconds."""
    return (
        task.status == proto.WORKING
        and task.heartbeat_at is not None
        and task.heartbeat_at < now - timedelta(seconds=worker_timeout)
    )


def _transition(task_id: str, statuses: Iterable[str], **fields: Any) -> bool:
    """Apply ``fields`` if the task is still in one of ``statuses``; whether it was."""
    changed = MCPTask.objects.filter(pk=task_id, status__in=list(statuses)).update(
        last_updated_at=timezone.now(), **fields
    )
    return changed == 1


def complete(task_id: str, result: Mapping[str, Any]) -> bool:
    return _transition(
        task_id, proto.ACTIVE, status=proto.COMPLETED, result=dict(result), input_requests={}
    )


def fail(task_id: str, error: Mapping[str, Any]) -> bool:
    return _transition(
        task_id, proto.ACTIVE, status=proto.FAILED, error=dict(error), input_requests={}
    )


def fail_unqueued(task_id: str) -> bool:
    """Fail a task whose job the backend refused (:data:`NOT_QUEUED`), if it is still
    waiting for a worker (``working``, never picked up); whether it was. A backend can
    raise after it took the job (a timeout after the write, a ``task_enqueued`` receiver):
    a worker that picked it up, or a run that asked for input, keeps the task."""
    return (
        MCPTask.objects.filter(pk=task_id, status=proto.WORKING, heartbeat_at__isnull=True).update(
            last_updated_at=timezone.now(),
            status=proto.FAILED,
            error={"code": INTERNAL_ERROR, "message": NOT_QUEUED},
            input_requests={},
        )
        == 1
    )


def expire(task_id: str) -> bool:
    """Fail an active task whose TTL has passed (ext-tasks ``tasks.md``, "Task Polling":
    a server MAY mark it ``failed`` then); whether it was one. A worker calls it instead
    of running the tool, or when the tool stopped (:func:`should_stop`): its client, told
    "Task has expired", can neither see nor cancel the run any more, and may have called
    again."""
    return (
        expired()
        .filter(pk=task_id, status__in=list(proto.ACTIVE))
        .update(
            last_updated_at=timezone.now(),
            status=proto.FAILED,
            error={"code": INTERNAL_ERROR, "message": EXPIRED},
            input_requests={},
        )
        == 1
    )


def need_input(task_id: str, requests: Mapping[str, Any]) -> bool:
    return _transition(
        task_id, [proto.WORKING], status=proto.INPUT_REQUIRED, input_requests=dict(requests)
    )


def set_message(task_id: str, message: str) -> bool:
    """Set the tool's status message; whether it changed (the same message again is no
    change, so nothing is announced). What no database keeps (NUL, an unpaired surrogate)
    is dropped from it: refused by the write, it failed a task whose work was fine."""
    message = _UNSTORABLE.sub("", message)
    changed = (
        MCPTask.objects.filter(pk=task_id, status__in=list(proto.ACTIVE))
        .exclude(status_message=message)
        .update(last_updated_at=timezone.now(), status_message=message)
    )
    return changed == 1


def pick_up(task_id: str) -> bool:
    """A worker starts running this ``working`` task: its first heartbeat, which also ends
    its :data:`WAITING_FOR_WORKER` message (so ``lastUpdatedAt`` moves); whether it was
    still ``working``."""
    now = timezone.now()
    return (
        MCPTask.objects.filter(pk=task_id, status=proto.WORKING).update(
            heartbeat_at=now, last_updated_at=now
        )
        == 1
    )


def beat(task_id: str) -> bool:
    """Record that a worker is alive and running this task. Only a task a worker picked up
    (:func:`pick_up`) is beaten: once ``tasks/update`` queued it again (heartbeat cleared),
    the last tick of the run that asked for input must not make it look picked up."""
    return (
        MCPTask.objects.filter(pk=task_id, status=proto.WORKING, heartbeat_at__isnull=False).update(
            heartbeat_at=timezone.now()
        )
        == 1
    )


def cancel(task_id: str) -> bool:
    """Cancel an active task: terminal at once; its worker stops at its next check."""
    return _transition(
        task_id, proto.ACTIVE, status=proto.CANCELLED, cancel_requested=True, input_requests={}
    )


def should_stop(task_id: str) -> bool:
    """Whether a run of the task stops at its next check: it was cancelled, its TTL passed,
    or its row was purged. The last two answer "Task has expired" or "not found", so its
    client can no longer see or cancel the run, and its outcome would be thrown away."""
    return not live().filter(pk=task_id, cancel_requested=False).exists()


def answer(
    task_id: str,
    responses: Mapping[str, Any],
    check: Callable[[str, Any, Any], None] | None = None,
) -> bool:
    """Record the answers to outstanding requests; keys not outstanding are ignored.

    ``check(key, request, answer)`` is called for each answer recorded, with the row
    locked, and may raise to refuse them all: only then is what is outstanding known, as
    a worker may ask between a caller's read of the task and this write.

    Returns True when this answered the last outstanding request, so the task goes back
    to ``working`` and must be run again. A partial answer keeps ``input_required`` with
    the answered keys gone.
    """
    with transaction.atomic():
        task = MCPTask.objects.select_for_update().filter(pk=task_id).first()
        if task is None or task.status != proto.INPUT_REQUIRED:
            return False
        outstanding = dict(task.input_requests)
        answered = {key: value for key, value in responses.items() if key in outstanding}
        if not answered:
            return False
        for key, value in answered.items():
            if check is not None:
                check(key, outstanding[key], value)
        for key in answered:
            del outstanding[key]
        task.input_responses = {**task.input_responses, **answered}
        task.input_requests = outstanding
        task.last_updated_at = timezone.now()
        resumed = not outstanding
        if resumed:
            # Queued again: waiting for a worker, and the last run's message is stale (the
            # next run starts the tool from the top, which reports again).
            task.status = proto.WORKING
            task.heartbeat_at = None
            task.status_message = ""
        task.save(
            update_fields=[
                "input_responses",
                "input_requests",
                "last_updated_at",
                "status",
                "heartbeat_at",
                "status_message",
            ]
        )
    return resumed


def forget_deleted_user(sender: Any, instance: Any, **kwargs: Any) -> None:
    """``post_delete`` of the user model: delete the user's tasks with them, as a foreign
    key's ``CASCADE`` would. A task is owned by ``user:<pk>``, not by a foreign key, so
    they outlived the user: nobody could read them, until a new user got the same primary
    key (a natural key such as an e-mail address, or an auto-increment counter that a
    database restart reset), who then read the old user's results and answered, or had
    run as themselves, their queued tasks."""
    MCPTask.objects.filter(owner=f"user:{instance.pk}").delete()


def expired(now: datetime | None = None) -> QuerySet[MCPTask]:
    """The tasks whose TTL has passed."""
    return MCPTask.objects.filter(expires_at__lte=now or timezone.now())


def live(now: datetime | None = None) -> QuerySet[MCPTask]:
    """The tasks whose TTL has not passed (or that have none): those clients still see."""
    return MCPTask.objects.exclude(expires_at__lte=now or timezone.now())


def purge(now: datetime | None = None) -> int:
    """Delete every task whose TTL has passed; the number deleted."""
    deleted, _ = expired(now).delete()
    return deleted
