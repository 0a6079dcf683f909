"""``MCPTask``: what one MCP task is, as ``tasks/get`` shows it (docs/guides/tasks.md).

A row is created and committed before the ``CreateTaskResult`` is sent, updated by the
worker that runs the tool and by ``tasks/update`` / ``tasks/cancel``, and deleted by
``manage.py mcp_purge_tasks`` once its TTL has passed. The id is the only handle a client
has: high entropy, and every lookup is also filtered by the owner.
"""

from __future__ import annotations

import secrets
from typing import Final

from django.db import models

from django_mcp.protocol import tasks as proto

#: The index the admin's newest-first list reads (migration 0013).
CREATED_INDEX: Final = "django_mcp_task_created_idx"


def new_task_id() -> str:
    """256 random bits, URL-safe: a task id is a bearer handle (SEP-2663, "Security")."""
    return secrets.token_urlsafe(32)


class TaskStatus(models.TextChoices):
    WORKING = proto.WORKING, "Working"
    INPUT_REQUIRED = proto.INPUT_REQUIRED, "Input required"
    COMPLETED = proto.COMPLETED, "Completed"
    FAILED = proto.FAILED, "Failed"
    CANCELLED = proto.CANCELLED, "Cancelled"


class MCPTask(models.Model):
    """One task: a ``tools/call`` running in a worker, polled by its owner."""

    id = models.CharField(primary_key=True, max_length=64, default=new_task_id, editable=False)
    site = models.CharField("MCP site", max_length=100)
    owner = models.CharField(max_length=255, help_text="The caller principal that created it.")
    scopes = models.JSONField(
        null=True,
        blank=True,
        help_text="The scopes the creating credential granted, which the run keeps; null "
        "when it was not limited by scopes (a Django session, a DRF authentication).",
    )
    credential = models.CharField(
        max_length=255, blank=True, help_text="The creating credential's id (never a secret)."
    )
    auth_method = models.CharField("authenticated by", max_length=40, blank=True)
    tool = models.CharField(max_length=255)
    tool_scopes = models.JSONField(
        default=list,
        blank=True,
        help_text="The scopes the tool required when the task was created: what acting on "
        "the task needs once the tool has left the site.",
    )
    arguments = models.JSONField(default=dict)
    request_meta = models.JSONField(
        "request _meta", default=dict, help_text="The creating call's _meta (capabilities)."
    )
    status = models.CharField(max_length=20, choices=TaskStatus.choices, default=proto.WORKING)
    status_message = models.TextField("status message", blank=True)
    result = models.JSONField(null=True, blank=True)
    error = models.JSONField(null=True, blank=True)
    input_requests = models.JSONField("outstanding input requests", default=dict, blank=True)
    input_responses = models.JSONField("answers so far", default=dict, blank=True)
    cancel_requested = models.BooleanField(default=False)
    # Indexed (Meta.indexes): the admin lists tasks newest first.
    created_at = models.DateTimeField("created at")
    last_updated_at = models.DateTimeField("last updated at")
    ttl_ms = models.BigIntegerField("TTL (ms)", null=True, blank=True)
    expires_at = models.DateTimeField("expires at", null=True, blank=True, db_index=True)
    heartbeat_at = models.DateTimeField(
        "worker heartbeat",
        null=True,
        blank=True,
        help_text="The last heartbeat of the worker that ran it; empty until a worker picks "
        "it up (and again once an answer queues it for another run).",
    )
    job_id = models.CharField("job id", max_length=255, blank=True)

    class Meta:
        app_label = "django_mcp"
        verbose_name = "MCP task"
        verbose_name_plural = "MCP tasks"
        ordering = ("-created_at",)
        indexes = (models.Index(fields=("created_at",), name=CREATED_INDEX),)

    def __str__(self) -> str:
        return f"{self.tool} ({self.status}) {self.id[:8]}"

    @property
    def is_terminal(self) -> bool:
        return self.status in proto.TERMINAL
