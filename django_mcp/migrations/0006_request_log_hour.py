"""The request log's hourly and daily summaries, which the dashboard reads instead of the
rows.

New tables only: the log itself is untouched. A log filled before this migration has no
summaries until ``manage.py mcp_rebuild_log_summaries`` counts its rows (docs/guides/records.md).
The 64 histogram columns of each are written out by a loop over a literal count, so this migration
stays what it was whatever :mod:`django_mcp.requestlog.histogram` becomes.
"""

from django.db import migrations, models


def summary_fields(time: str, help_text: str) -> list[tuple[str, models.Field]]:
    """The columns of a summary table: its time column first, then LogSummary's."""
    return [
        (
            "id",
            models.BigAutoField(
                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
            ),
        ),
        (time, models.DateTimeField(help_text=help_text)),
        ("site", models.CharField(max_length=100, verbose_name="MCP site")),
        ("method", models.CharField(blank=True, max_length=100)),
        ("target", models.CharField(blank=True, max_length=255)),
        (
            "error_code",
            models.IntegerField(default=0, help_text="0: none.", verbose_name="error code"),
        ),
        ("count", models.PositiveBigIntegerField(default=0)),
        ("errors", models.PositiveBigIntegerField(default=0)),
        ("duration_sum", models.FloatField(default=0.0, verbose_name="total duration (ms)")),
        *[(f"b{i:02d}", models.PositiveBigIntegerField(default=0)) for i in range(64)],
    ]


class Migration(migrations.Migration):
    dependencies = [
        ("django_mcp", "0005_request_log_window_index"),
    ]

    operations = [
        migrations.CreateModel(name=name, fields=summary_fields(time, help), options=options)
        for name, time, help, options in (
            (
                "RequestLogHour",
                "hour",
                "The start of the hour (UTC).",
                {
                    "verbose_name": "request log hour",
                    "verbose_name_plural": "request log hours",
                    "ordering": ("-hour",),
                    "constraints": [
                        models.UniqueConstraint(
                            fields=("hour", "site", "method", "target", "error_code"),
                            name="django_mcp_rlhour_key",
                        )
                    ],
                },
            ),
            (
                "RequestLogDay",
                "day",
                "The start of the day (UTC).",
                {
                    "verbose_name": "request log day",
                    "verbose_name_plural": "request log days",
                    "ordering": ("-day",),
                    "constraints": [
                        models.UniqueConstraint(
                            fields=("day", "site", "method", "target", "error_code"),
                            name="django_mcp_rlday_key",
                        )
                    ],
                },
            ),
        )
    ]
