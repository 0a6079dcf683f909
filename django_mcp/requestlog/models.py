"""The request log and the best-effort revision tally (docs/guides/records.md).

Both tables are written only by :mod:`django_mcp.requestlog.recorder`, in bulk and off the request
path; the admin shows them read-only. ``RequestLog`` is an append-only, write-heavy table,
so it carries few indexes: each one costs every INSERT. ``ServedRevision`` stays small (one
row per revision/client/version triple) and exists so that serving a revision we do not
implement is never silent, even when the request log is sampled or kept for errors only.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from django_mcp.protocol.revisions import ServedHow


class Outcome(models.TextChoices):
    """How an exchange ended (mirrors :data:`django_mcp.requestlog.records.Outcome`)."""

    OK = "ok", "OK"
    TOOL_ERROR = "tool_error", "Tool error"
    PROTOCOL_ERROR = "protocol_error", "Protocol error"
    NOTIFICATION = "notification", "Notification"


class ServedHowChoices(models.TextChoices):
    """How the declared revision was honoured; blank when the request was not admitted."""

    SUPPORTED = ServedHow.SUPPORTED.value, "Supported"
    BEST_EFFORT = ServedHow.BEST_EFFORT.value, "Best effort"


class RequestLog(models.Model):
    """One MCP exchange over HTTP, as the middleware saw it after the response."""

    started_at = models.DateTimeField("started at", db_index=True)
    site = models.CharField("MCP site", max_length=100)
    method = models.CharField(max_length=100, blank=True)
    target = models.CharField(
        max_length=255, blank=True, help_text="The tool, prompt or resource the request named."
    )
    request_id = models.CharField("request id", max_length=100, blank=True)
    declared_revision = models.CharField("declared revision", max_length=50, blank=True)
    served_revision = models.CharField("served revision", max_length=50, blank=True)
    served_how = models.CharField(
        "served how", max_length=20, choices=ServedHowChoices.choices, blank=True
    )
    client_name = models.CharField("client name", max_length=200, blank=True)
    client_version = models.CharField("client version", max_length=100, blank=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name="user",
    )
    username = models.CharField(
        max_length=150, blank=True, help_text="The username when the request was made."
    )
    outcome = models.CharField(max_length=20, choices=Outcome.choices)
    error_code = models.IntegerField("error code", null=True, blank=True)
    http_status = models.PositiveSmallIntegerField("HTTP status")
    duration_ms = models.FloatField("duration (ms)")
    # None means "not recorded" (REQUEST_LOG_PARAMS off), which differs from empty params.
    params = models.TextField(  # noqa: DJ001
        null=True,
        blank=True,
        help_text="Truncated request params, only when REQUEST_LOG_PARAMS is on.",
    )

    class Meta:
        verbose_name = "request log entry"
        verbose_name_plural = "request log"
        ordering = ("-started_at",)
        get_latest_by = "started_at"
        indexes = (
            # "Recent errors" and "recent calls of tools/call" are the questions people ask.
            models.Index(fields=("outcome", "-started_at"), name="django_mcp_rl_outcome_idx"),
            models.Index(fields=("method", "-started_at"), name="django_mcp_rl_method_idx"),
        )

    def __str__(self) -> str:
        what = f"{self.method} {self.target}".strip() or "(unparsed request)"
        return f"{what} at {self.started_at:%Y-%m-%d %H:%M:%S}"


class ServedRevision(models.Model):
    """How often a revision we do not implement was served best-effort, per client."""

    revision = models.CharField(max_length=50)
    client_name = models.CharField("client name", max_length=200, blank=True)
    client_version = models.CharField("client version", max_length=100, blank=True)
    count = models.PositiveBigIntegerField(default=0)
    first_seen = models.DateTimeField("first seen")
    last_seen = models.DateTimeField("last seen", db_index=True)

    class Meta:
        verbose_name = "best-effort revision"
        verbose_name_plural = "best-effort revisions"
        ordering = ("-last_seen",)
        constraints = (
            models.UniqueConstraint(
                fields=("revision", "client_name", "client_version"),
                name="django_mcp_servedrevision_unique",
            ),
        )

    def __str__(self) -> str:
        client = f"{self.client_name} {self.client_version}".strip() or "unnamed client"
        return f"{self.revision} for {client}"
