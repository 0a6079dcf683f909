"""An index on ``MCPTask.created_at``, which the task admin lists newest first.

Why: without it every page of the task admin read and sorted the whole table, and a busy
site keeps every task until its TTL passes (an hour by default). Built concurrently on
PostgreSQL so task workers keep writing while it builds (hence ``atomic = False``).
"""

from django.db import migrations, models

from django_mcp.migrations._concurrently import AddIndexConcurrently


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("django_mcp", "0012_mcptask_tool_scopes"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="mcptask",
            index=models.Index(fields=["created_at"], name="django_mcp_task_created_idx"),
        ),
    ]
