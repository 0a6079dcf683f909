"""The request log's window index replaces the plain ``started_at`` index.

``started_at`` first, then the columns the dashboard groups and aggregates: the admin's
newest-first list and its windows use it as they used the old index, and the dashboard's
figures come from the index alone (docs/guides/records.md, "At scale"). Built before the
old index is dropped, so ``started_at`` is never without an index; both concurrently on
PostgreSQL, so a big, busy log stays writable (hence ``atomic = False``).
"""

from django.db import migrations, models

from django_mcp.migrations._concurrently import AddIndexConcurrently, DropFieldIndexConcurrently


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("django_mcp", "0004_request_log_fields"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="requestlog",
            index=models.Index(
                fields=[
                    "started_at",
                    "site",
                    "method",
                    "target",
                    "outcome",
                    "error_code",
                    "duration_ms",
                ],
                name="django_mcp_rl_window_idx",
            ),
        ),
        DropFieldIndexConcurrently(
            model_name="requestlog",
            name="started_at",
            field=models.DateTimeField(verbose_name="started at"),
        ),
    ]
