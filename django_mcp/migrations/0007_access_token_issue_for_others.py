"""A permission of its own for issuing an access token that acts as another user: "add
access token" alone now issues tokens for oneself (django_mcp/auth/admin.py)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("django_mcp", "0006_request_log_hour"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="accesstoken",
            options={
                "ordering": ["-created_at"],
                "permissions": (
                    (
                        "issue_accesstoken_for_others",
                        "Can issue MCP access tokens for other users",
                    ),
                ),
                "verbose_name": "MCP access token",
            },
        ),
    ]
