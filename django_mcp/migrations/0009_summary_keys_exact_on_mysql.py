"""On MySQL and MariaDB, the summaries' key columns compare text exactly.

Why: their default collations (``utf8mb4_general_ci``, ``utf8mb4_0900_ai_ci``) ignore case
and accents, and MariaDB's pad trailing spaces, so the unique key of the hourly and daily
summaries took ``Tool`` and ``tool`` (tool names are case-sensitive) for one key, and
``ON DUPLICATE KEY UPDATE`` added the counts of one to the row of the other. A binary
collation without padding compares as Python does. PostgreSQL and SQLite compare text
exactly already: nothing to do there. Reversing leaves the columns as they are (exact
comparison is never wrong for these keys).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.db import migrations

if TYPE_CHECKING:
    from django.db.backends.base.base import BaseDatabaseWrapper
    from django.db.backends.base.schema import BaseDatabaseSchemaEditor

#: The key's text columns, in both summary tables.
KEY_TEXT = ("site", "method", "target")


def exact_collation(connection: BaseDatabaseWrapper) -> str:
    """The server's binary utf8mb4 collation that does not pad: MariaDB's, MySQL 8's, or
    (older servers, which pad) plain ``utf8mb4_bin``."""
    with connection.cursor() as cursor:
        for name in ("utf8mb4_nopad_bin", "utf8mb4_0900_bin"):
            cursor.execute("SHOW COLLATION LIKE %s", [name])
            if cursor.fetchone() is not None:
                return name
    return "utf8mb4_bin"


def exact_keys(apps: Any, schema_editor: BaseDatabaseSchemaEditor) -> None:
    connection = schema_editor.connection
    if connection.vendor != "mysql":
        return
    collation = exact_collation(connection)
    quote = schema_editor.quote_name
    for name in ("RequestLogHour", "RequestLogDay"):
        model = apps.get_model("django_mcp", name)
        changes = []
        for column in KEY_TEXT:
            field = model._meta.get_field(column)
            changes.append(
                f"MODIFY {quote(field.column)} {field.db_type(connection)} "
                f"CHARACTER SET utf8mb4 COLLATE {collation} NOT NULL"
            )
        schema_editor.execute(f"ALTER TABLE {quote(model._meta.db_table)} {', '.join(changes)}")


class Migration(migrations.Migration):
    dependencies = [
        ("django_mcp", "0008_mcptask_heartbeat_help"),
    ]

    operations = [
        # Not atomic: MySQL commits DDL at once, and Django refuses it inside a transaction.
        migrations.RunPython(exact_keys, migrations.RunPython.noop, atomic=False),
    ]
