from __future__ import annotations

from django.apps import AppConfig


class DjangoMCPConfig(AppConfig):
    """Registers system checks and imports every app's ``mcp.py`` when Django is ready."""

    name = "django_mcp"
    verbose_name = "MCP"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django_mcp.sites import autodiscover

        autodiscover()
