"""The request log, its hourly and daily summaries and the best-effort revision tally
(docs/guides/records.md).

Both tables are written only by :mod:`django_mcp.requestlog.recorder`, in bulk and off the request
path; the admin shows them read-only. ``RequestLog`` is an append-only, write-heavy table,
so it carries few indexes: each one costs every INSERT. ``ServedRevision`` stays small (one
row per revision/client/version triple) and exists so that serving a revision we do not
implement is never silent, even when the request log is sampled or kept for errors only.
"""

from __future__ import annotations

from typing import Final

from django.conf import settings
from django.db import models

from django_mcp.protocol.revisions import ServedHow
from django_mcp.requestlog import histogram
from django_mcp.requestlog.indexes import PartialIndex


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


#: The index of a time window: ``started_at`` leads (the admin's newest-first list and
#: its windows), then the columns the summaries group and aggregate, so a window's figures
#: need no table row (``mcp_rebuild_log_summaries --since``; the dashboard itself reads
#: the summaries, :class:`RequestLogHour` and :class:`RequestLogDay`).
WINDOW_INDEX: Final = "django_mcp_rl_window_idx"
WINDOW_INDEX_FIELDS: Final = (
    "started_at",
    "site",
    "method",
    "target",
    "outcome",
    "error_code",
    "duration_ms",
)


class RequestLog(models.Model):
    """One MCP exchange over HTTP, as the middleware saw it after the response."""

    # Indexed by django_mcp_rl_window_idx, which leads with it (Meta.indexes).
    started_at = models.DateTimeField("started at")
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
    error_message = models.CharField(
        "error message",
        max_length=500,
        blank=True,
        help_text="The JSON-RPC error message as sent to the client (internal errors masked).",
    )
    permission_denied = models.BooleanField(
        "permission denied",
        default=False,
        help_text="The named tool, prompt or resource exists but the caller may not use it; "
        "the client was answered exactly as for an unknown name.",
    )
    remote_addr = models.GenericIPAddressField(
        "remote address",
        null=True,
        blank=True,
        help_text="The client address (REQUEST_LOG_REMOTE_ADDR; X-Forwarded-For only "
        "behind TRUSTED_PROXY_HOPS proxies).",
    )
    user_agent = models.CharField(
        "user agent", max_length=300, blank=True, help_text="REQUEST_LOG_USER_AGENT."
    )
    # None means "not recorded" (REQUEST_LOG_PARAMS off), which differs from empty params.
    params = models.TextField(  # noqa: DJ001
        null=True,
        blank=True,
        help_text="Truncated request params, only when REQUEST_LOG_PARAMS is on.",
    )

    class Meta:
        verbose_name = "request log entry"
        verbose_name_plural = "request log entries"
        ordering = ("-started_at",)
        get_latest_by = "started_at"
        # One index per question the admin asks (docs/guides/records.md, "At scale"): the
        # newest rows and a time window (the window index: ``started_at`` first, then
        # every column the summaries aggregate, so a window reads the index alone), the
        # newest rows of one method, outcome or serving, the rare refusals for
        # permissions (a partial index where the database has them: see ``indexes``),
        # and a name prefix (``varchar_pattern_ops`` on PostgreSQL lets ``LIKE 'prefix%'``
        # use the index whatever the collation; other databases ignore the operator
        # class). Each costs every INSERT, so no more.
        indexes = (
            models.Index(fields=WINDOW_INDEX_FIELDS, name=WINDOW_INDEX),
            models.Index(fields=("outcome", "-started_at"), name="django_mcp_rl_outcome_idx"),
            models.Index(fields=("method", "-started_at"), name="django_mcp_rl_method_idx"),
            models.Index(fields=("served_how", "-started_at"), name="django_mcp_rl_served_how_idx"),
            PartialIndex(
                fields=("-started_at",),
                name="django_mcp_rl_denied_idx",
                where=models.Q(permission_denied=True),
            ),
            models.Index(
                fields=("target",),
                name="django_mcp_rl_target_idx",
                opclasses=("varchar_pattern_ops",),
            ),
            models.Index(
                fields=("client_name",),
                name="django_mcp_rl_client_idx",
                opclasses=("varchar_pattern_ops",),
            ),
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


class LogSummary(models.Model):
    """What the dashboard sums over a span of time for one (site, method, target, error
    code): counters and a latency histogram, added to by every flush of the recorder
    (:mod:`.summaries`). ``error_code`` 0 stands for "no error code" (it is part of the
    unique key, where NULLs would never conflict). The histogram's columns ``b00`` ..
    ``b63`` count durations per bucket of :mod:`.histogram`.
    """

    site = models.CharField("MCP site", max_length=100)
    method = models.CharField(max_length=100, blank=True)
    target = models.CharField(max_length=255, blank=True)
    error_code = models.IntegerField("error code", default=0, help_text="0: none.")
    count = models.PositiveBigIntegerField(default=0)
    errors = models.PositiveBigIntegerField(default=0)
    duration_sum = models.FloatField("total duration (ms)", default=0.0)

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return f"{self.method} {self.target}".strip() or "(unparsed)"


# Before the concrete models, which copy the abstract model's fields when they are made.
for _column in histogram.COLUMNS:
    LogSummary.add_to_class(_column, models.PositiveBigIntegerField(default=0))


class RequestLogHour(LogSummary):
    """One hour of requests (the 24-hour window reads these: one row per hour and key)."""

    hour = models.DateTimeField(help_text="The start of the hour (UTC).")

    class Meta:
        verbose_name = "request log hour"
        verbose_name_plural = "request log hours"
        ordering = ("-hour",)
        constraints = (
            # The upsert's conflict target, and the index of a window (``hour`` leads).
            models.UniqueConstraint(
                fields=("hour", "site", "method", "target", "error_code"),
                name="django_mcp_rlhour_key",
            ),
        )


class RequestLogDay(LogSummary):
    """One UTC day of requests (the 7- and 30-day windows read these: a day's hours summed,
    so a month is 30 rows per key rather than 720)."""

    day = models.DateTimeField(help_text="The start of the day (UTC).")

    class Meta:
        verbose_name = "request log day"
        verbose_name_plural = "request log days"
        ordering = ("-day",)
        constraints = (
            models.UniqueConstraint(
                fields=("day", "site", "method", "target", "error_code"),
                name="django_mcp_rlday_key",
            ),
        )


def column_length(model: type[models.Model], name: str) -> int | None:
    """The longest text ``model``'s column ``name`` holds, None when unbounded (a
    ``TextField``). Every place that must know a column's size (the record's gate, the
    summaries' keys, the admin's search and filters) reads it here, from the model, so a
    migration that widens a column needs no other change."""
    field = model._meta.get_field(name)
    return field.max_length if isinstance(field, models.CharField) else None
