from __future__ import annotations

from django.apps import AppConfig, apps


class DjangoMCPConfig(AppConfig):
    """Registers system checks, connects change announcements (and a deleted user's tasks
    to their deletion) and imports every app's ``mcp.py`` when Django is ready; with
    Daphne installed, bounds the bodies its ``runserver`` receives
    (``django_mcp.http.daphne``)."""

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
        if apps.is_installed("django.contrib.auth"):
            forget_tasks_of_deleted_users()
        if apps.is_installed("daphne"):
            # Daphne's app has already imported its server (and installed its reactor).
            from django_mcp.http.daphne import serve_runserver

            serve_runserver()


def forget_tasks_of_deleted_users() -> None:
    """A deleted user's tasks go with them (:func:`django_mcp.tasks.store.forget_deleted_user`)."""
    from django.contrib.auth import get_user_model
    from django.db.models.signals import post_delete

    from django_mcp.tasks.store import forget_deleted_user

    post_delete.connect(
        forget_deleted_user, sender=get_user_model(), dispatch_uid="django_mcp.tasks.forget"
    )
