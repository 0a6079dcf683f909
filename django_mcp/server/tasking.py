"""Turning a ``tools/call`` into an MCP task, and telling listeners how tasks change.

The server decides (ext-tasks ``tasks.md``, "Capability Negotiation"): a tool declared
``task="required"`` runs only as a task, and a request that did not declare the extension
gets -32021; a tool declared ``task="optional"`` becomes a task for a declaring request
when the ``TASK_POLICY`` hook agrees, and runs synchronously otherwise. A request that did
not declare the extension never receives a ``CreateTaskResult``.

The task row is committed before the ``CreateTaskResult`` is returned, so a ``tasks/get``
for the id succeeds from the first poll ("Task Creation"). With the database backend the
job is enqueued in the same transaction as the row; with any other backend, after commit,
and a job that backend refuses fails the committed task at once (:func:`enqueue`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any

from django.db import transaction
from django.utils.module_loading import import_string

from django_mcp.auth.revocation import user_is_stored
from django_mcp.conf import mcp_settings
from django_mcp.exceptions import ToolError
from django_mcp.listen.fanout import publish_task
from django_mcp.listen.limits import release_connections
from django_mcp.protocol import tasks as proto
from django_mcp.tasks import engine, store
from django_mcp.tasks.models import MCPTask

if TYPE_CHECKING:
    from django_mcp.declarations.tools import ToolSpec
    from django_mcp.protocol.subscriptions import SubscriptionFilter
    from django_mcp.server.context import Context
    from django_mcp.sites import MCPSite

logger = logging.getLogger("django_mcp")


#: The tool error of a required task whose caller a worker could not act as (``%s``: the
#: tool's name): a user the authentication class built from its token, not a user row.
UNSTORED_CALLER = (
    "Tool %s runs only as a task, and a task cannot act as this caller: its user was "
    "built by the authentication from its credential, not read from the user table, so "
    "the worker that runs the task could not act as it"
)


#: The tool error of a required task on a server without a Tasks framework (``%s``: the
#: tool's name): no task can be created or run there.
NO_TASKS_FRAMEWORK = (
    "Tool %s runs only as a task, and this server has no Tasks framework to run it "
    "(Django 6, or the django-tasks backport)"
)


def always(spec: ToolSpec, arguments: Mapping[str, Any], context: Context) -> bool:
    """The default ``TASK_POLICY``: every optional tool is a task for a declaring client."""
    return True


def supports_tasks(site: MCPSite) -> bool:
    """Whether ``site`` offers the extension: some tool may run as a task. The registry
    says, unless the site's own tool lookups may serve tools it does not hold: asked
    with no caller, whether one of those runs as a task is unknown, so it is offered."""
    if not engine.available():
        return False
    return "tools" in site.own_lookups or any(spec.task for spec in site.registry.tools.values())


def runs_as_task(spec: ToolSpec, arguments: Mapping[str, Any], context: Context) -> bool:
    """Whether this call becomes a task; -32021 for a required task without the extension.

    Never without a Tasks framework (:func:`supports_tasks` is False, so the extension is
    not offered): an optional task runs synchronously, and a required one is a tool error.

    Never for a caller a worker could not act as (see ``user_is_stored`` in
    :mod:`django_mcp.auth.revocation`): an optional task runs synchronously, and a
    required one is a tool error.
    """
    if spec.task is None:
        return False
    if not proto.declares(context.meta):
        if spec.task == "required":
            raise proto.missing_extension(
                f"Tool {spec.name} runs only as a task: declare the {proto.EXTENSION} extension"
            )
        return False
    if not engine.available():
        # The site does not offer the extension (server/discover leaves it out, the tasks
        # methods are -32601): an optional tool runs now, as for a non-declaring request,
        # instead of failing with -32603 on a job nothing can enqueue or run.
        if spec.task == "required":
            raise ToolError(NO_TASKS_FRAMEWORK % spec.name)
        return False
    if not user_is_stored(context.caller):
        # A worker rebuilds a task's caller from the database: it would run as the user
        # row sharing this user's pk, which may hold more permissions than this caller.
        if spec.task == "required":
            raise ToolError(UNSTORED_CALLER % spec.name)
        return False  # an optional task runs now, as this caller
    if spec.task == "required":
        return True
    policy = import_string(mcp_settings.TASK_POLICY)
    return bool(policy(spec, arguments, context))


def start(spec: ToolSpec, arguments: Mapping[str, Any], context: Context) -> dict[str, Any]:
    """Create the task (after any synchronous input rounds) and return ``CreateTaskResult``."""
    spec.validate(arguments)
    store.require_storable(arguments, "params.arguments")
    store.require_storable(context.meta.raw, "params._meta")
    answers: dict[str, Any] = {}
    if spec.task_inputs:
        answers = pre_task_answers(spec.task_inputs, context)
        store.require_storable(answers, "params.inputResponses")
    with transaction.atomic():
        task = store.create(
            site=context.site.name,
            owner=context.principal,
            scopes=context.caller.scopes,
            credential=context.caller.credential,
            auth_method=context.caller.method,
            tool=spec.name,
            tool_scopes=spec.scopes_required,
            arguments=arguments,
            request_meta=context.meta.raw,
            ttl_ms=mcp_settings.TASK_TTL_MS,
            answers=answers,
        )
        enqueue(task.id)
    if not engine.is_database_backend(mcp_settings.TASK_BACKEND):
        # Enqueued on commit: a backend that runs the job at once (ImmediateBackend, in
        # tests) has run it by now, so the row may be past "working".
        task.refresh_from_db()
    return proto.create_result(store.to_wire(task, mcp_settings.TASK_POLL_INTERVAL_MS))


def pre_task_answers(requests: Mapping[str, Any], context: Context) -> dict[str, Any]:
    """The raw answers to ``requests``, or ``input_required`` (a synchronous round): the
    ones :meth:`~django_mcp.server.input_rounds.Inputs.collect` took, so a sealed earlier
    answer wins over this round's for the same key (it is final, and this round's was
    never checked)."""
    context.request_input(requests)  # raises InputRequired until every key is answered
    assert context.inputs is not None
    received = {**context.inputs.current, **context.inputs.earlier}
    return {key: received[key] for key in requests}


def enqueue(task_id: str) -> None:
    """Queue a run of the task; call inside the transaction that made it runnable."""
    from django_mcp.server.task_job import run_mcp_task

    alias = mcp_settings.TASK_BACKEND

    def send(committed: bool) -> None:
        try:
            job = run_mcp_task.using(backend=alias).enqueue(task_id)
        except Exception:
            if committed:  # the row is there for good: not left "waiting for a worker"
                fail_unqueued(task_id)
            raise  # the request that queued it still answers -32603
        # Only a refused enqueue fails the task: once the job is queued, it runs it.
        MCPTask.objects.filter(pk=task_id).update(job_id=str(job.id))

    if engine.is_database_backend(alias):
        # In the transaction: a refusal rolls the row (or the answers) back with it.
        send(committed=False)
    else:
        transaction.on_commit(partial(send, committed=True))


def fail_unqueued(task_id: str) -> None:
    """Fail the task whose job the backend refused (:data:`~django_mcp.tasks.store.NOT_QUEUED`,
    -32603) and announce it, unless a worker picked the job up after all
    (:func:`~django_mcp.tasks.store.fail_unqueued`). Best-effort: a failure here is logged,
    so the backend's own exception is the one the request reports."""
    try:
        if store.fail_unqueued(task_id):
            announce(task_id)
    except Exception:
        logger.exception("Task %s: its job was not queued, and it could not be failed", task_id)


def announce(task_id: str) -> None:
    """Send ``notifications/tasks`` with the task as it is now to its listeners.

    Best-effort: the change it announces is committed already, so a failure here (the
    database gone while the task is read again) is logged, never raised into the request
    or the job that made the change."""
    try:
        task = MCPTask.objects.filter(pk=task_id).first()
        if task is not None:
            publish_task(task.site, task.id, task_wire(task))
    except Exception:
        logger.exception("Task %s: could not announce its new state", task_id)


def task_wire(task: MCPTask) -> dict[str, Any]:
    return store.to_wire(task, mcp_settings.TASK_POLL_INTERVAL_MS)


def lookup(task_id: Any, context: Context) -> MCPTask:
    """The caller's task, or -32602 as for an unknown id. A task whose tool the caller may
    no longer see (its permission check, or the site's ``has_permission``, now says no) is
    unknown to them too: the task acts with the tool's authority (ext-tasks ``tasks.md``,
    "Security Considerations"), and so is one whose tool's scopes their credential lacks
    (a tool still served answers that earlier, with its 401 or 403 challenge; one that
    left the site by the scopes the task stored). One whose tool left the site stays
    readable to a caller with those scopes, so its failure can be read."""
    timeout = mcp_settings.TASK_WORKER_TIMEOUT
    task = store.lookup(
        task_id,
        owner=context.principal,
        site=context.site.name,
        worker_timeout=None if timeout is None else float(timeout),
        on_orphan_failed=announce,
    )
    if not may_act_on(context.site, task.tool, context, task.tool_scopes):
        raise store.not_found(task.id)
    return task


def may_see(site: MCPSite, tool: str, context: Context) -> bool:
    """Whether the caller may see their task of ``tool``: not once the tool's permission
    check (or the site's ``has_permission``) hides it from them. A task whose tool left the
    site stays visible, so its failure can be read; on a site whose own tool lookup serves
    its tools, that lookup alone says, and a tool it no longer serves is one it hides."""
    if "tools" in site.own_lookups:
        return site.get_tool(tool, context) is not None
    return tool not in site.registry.tools or site.get_tool(tool, context) is not None


def may_act_on(site: MCPSite, tool: str, context: Context, stored: Any = ()) -> bool:
    """:func:`may_see`, and the caller's credential grants the tool's scopes (``stored``,
    the task's, once the tool has left the site): what a listen stream's ``taskIds``
    need, whose notifications carry the task's result, as ``tasks/get`` does (which
    answers a missing scope with its 401 or 403 challenge)."""
    if "tools" in site.own_lookups:  # the lookup, not the registry, serves the tool
        served = site.get_tool(tool, context)
        return served is not None and not context.caller.lacks(served.scopes_required)
    spec = site.registry.tools.get(tool)
    scopes = (stored or ()) if spec is None else spec.scopes_required
    return may_see(site, tool, context) and not context.caller.lacks(scopes)


def may_follow(site: MCPSite, context: Context, task_id: str) -> bool:
    """Whether a listen stream may carry one more ``notifications/tasks`` of ``task_id``
    (they carry its result): what :func:`listen_filter` asked as the stream opened, asked
    of its caller as the stream's recheck last read it, so a permission or scope taken
    away since stops them as it makes ``tasks/get`` answer "not found". Runs in a worker
    thread; a failing check withholds the notification, never the stream."""
    try:
        found = (
            store.live()
            .filter(pk=task_id, owner=context.principal, site=site.name)
            .values_list("tool", "tool_scopes")
            .first()
        )
        return found is not None and may_act_on(site, found[0], context, found[1])
    except Exception:
        logger.exception("Could not decide whether a listener may follow task %s", task_id)
        return False
    finally:
        release_connections()


def listen_filter(
    site: MCPSite, wanted: SubscriptionFilter, context: Context
) -> SubscriptionFilter:
    """Keep only the caller's own live tasks among ``taskIds`` (the acknowledgement lists
    them): not another's, not one whose tool they may no longer act on, and not one whose
    TTL has passed (``tasks/get`` answers that "Task has expired"; a purge would delete it
    under the stream). -32021 when ``taskIds`` comes without the extension. A site that
    does not offer the extension leaves ``taskIds`` out (basic/patterns/subscriptions.mdx:
    the acknowledgement omits what the server does not support), and needs no declaration."""
    if wanted.task_ids is None:
        return wanted
    if not supports_tasks(site):
        return replace(wanted, task_ids=None)
    if not proto.declares(context.meta):
        raise proto.missing_extension()
    candidates = [task_id for task_id in wanted.task_ids if store.could_be_task_id(task_id)]
    owned = store.live().filter(pk__in=candidates, owner=context.principal, site=site.name)
    own = {
        task_id
        for task_id, tool, stored in owned.values_list("pk", "tool", "tool_scopes")
        if may_act_on(site, tool, context, stored)
    }
    return replace(wanted, task_ids=tuple(task_id for task_id in wanted.task_ids if task_id in own))
