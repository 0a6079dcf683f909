from __future__ import annotations

from django.apps import AppConfig


class DjangoMCPConfig(AppConfig):
    """Registers system checks, connects change announcements and imports every app's
    ``mcp.py`` when Django is ready."""

    name = "django_mcp"
    verbose_name = "MCP"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Registers the system checks, and those of check --deploy.
        from django_mcp import checks, deploy_checks, setup_checks  # noqa: F401
        from django_mcp.listen.fanout import announce_declarations_changed
        from django_mcp.sites import autodiscover, declarations_changed

        declarations_changed.connect(
            announce_declarations_changed, dispatch_uid="django_mcp.listen.announce"
        )
        autodiscover()
