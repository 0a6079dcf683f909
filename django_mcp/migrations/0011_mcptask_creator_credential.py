"""A task keeps its creator's credential: the scopes it granted, its id, how it signed in.

Why: a task's run rebuilds the creating call's caller, so a tool that checks
``ctx.caller.has_scopes(...)`` decides the same way when it runs as a task, and
``ctx.user`` is the creator. Rows made before this migration have no scopes (null: not
limited by scopes), as their runs had before.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("django_mcp", "0010_request_log_denied_index_without_w037"),
    ]

    operations = [
        migrations.AddField(
            model_name="mcptask",
            name="auth_method",
            field=models.CharField(blank=True, max_length=40, verbose_name="authenticated by"),
        ),
        migrations.AddField(
            model_name="mcptask",
            name="credential",
            field=models.CharField(
                blank=True,
                help_text="The creating credential's id (never a secret).",
                max_length=255,
            ),
        ),
        migrations.AddField(
            model_name="mcptask",
            name="scopes",
            field=models.JSONField(
                blank=True,
                help_text="The scopes the creating credential granted, which the run keeps; null when it was not limited by scopes (a Django session, a DRF authentication).",
                null=True,
            ),
        ),
    ]
