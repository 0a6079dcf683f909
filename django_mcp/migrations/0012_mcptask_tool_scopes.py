"""A task keeps the scopes its tool required when it was created.

Why: reading, answering or cancelling a task needs what calling its tool needs. Once the
tool has left the site (a deploy removed it), the site can no longer say what that was,
and any token of the owner could read the task's result; the task now remembers. Rows
made before this migration require none, as they did.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("django_mcp", "0011_mcptask_creator_credential"),
    ]

    operations = [
        migrations.AddField(
            model_name="mcptask",
            name="tool_scopes",
            field=models.JSONField(
                blank=True,
                default=list,
                help_text="The scopes the tool required when the task was created: what "
                "acting on the task needs once the tool has left the site.",
            ),
        ),
    ]
