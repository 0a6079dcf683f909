"""The permission-denied index becomes a ``PartialIndex`` (``django_mcp/requestlog/indexes.py``).

Why: a Django ``Index(condition=...)`` makes ``manage.py check`` warn (``models.W037``) on
MySQL and MariaDB. The state changes; the database does not: ``PartialIndex`` builds
exactly the SQL migration 0004 built (a partial index on PostgreSQL and SQLite, the plain
index that MySQL and MariaDB made of it, ignoring the condition), so nothing is dropped
or rebuilt on a large log.
"""

from django.db import migrations, models

import django_mcp.requestlog.indexes

INDEX = "django_mcp_rl_denied_idx"


class Migration(migrations.Migration):
    dependencies = [
        ("django_mcp", "0009_summary_keys_exact_on_mysql"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveIndex(model_name="requestlog", name=INDEX),
                migrations.AddIndex(
                    model_name="requestlog",
                    index=django_mcp.requestlog.indexes.PartialIndex(
                        fields=["-started_at"],
                        name=INDEX,
                        where=models.Q(("permission_denied", True)),
                    ),
                ),
            ],
        ),
    ]
