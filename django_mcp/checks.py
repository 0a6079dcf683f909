"""System checks (docs/checks.md): stable ids ``django_mcp.E00x`` / ``W00x``."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, register

from .conf import DEFAULTS, REQUEST_LOG_MODES, SETTINGS_NAME
from .protocol.revisions import RevisionPolicyMode, parse_revision

MIDDLEWARE_PATH = "django_mcp.middleware.MCPMiddleware"


@register(Tags.compatibility)
def check_middleware(app_configs: Any, **kwargs: Any) -> list[CheckMessage]:
    if MIDDLEWARE_PATH in settings.MIDDLEWARE:
        return []
    return [
        Error(
            f"'{MIDDLEWARE_PATH}' must be in MIDDLEWARE.",
            hint="It validates every MCP request before the MCP view runs.",
            id="django_mcp.E001",
        )
    ]


@register(Tags.compatibility)
def check_settings(app_configs: Any, **kwargs: Any) -> list[CheckMessage]:
    value = getattr(settings, SETTINGS_NAME, {})
    if not isinstance(value, dict):
        return [Error(f"{SETTINGS_NAME} must be a dict.", id="django_mcp.E002")]
    messages: list[CheckMessage] = []
    for key in sorted(set(value) - set(DEFAULTS)):
        messages.append(
            Error(
                f"Unknown {SETTINGS_NAME} key {key!r}.",
                hint="See docs/settings.md for the keys django-mcp reads.",
                id="django_mcp.E003",
            )
        )
    messages.extend(_value_errors(value))
    return messages


def _value_errors(value: dict[str, Any]) -> list[CheckMessage]:
    errors: list[CheckMessage] = []

    def bad(key: str, hint: str) -> None:
        errors.append(Error(f"{SETTINGS_NAME}[{key!r}] is invalid.", hint=hint, id="django_mcp.E004"))

    policy = value.get("REVISION_POLICY", DEFAULTS["REVISION_POLICY"])
    if policy not in {mode.value for mode in RevisionPolicyMode}:
        bad("REVISION_POLICY", "Use 'best-effort' or 'strict'.")
    for key in ("SUPPORTED_REVISIONS", "BEST_EFFORT_REVISIONS"):
        revisions = value.get(key, DEFAULTS[key])
        if revisions is None and key == "BEST_EFFORT_REVISIONS":
            continue
        if not isinstance(revisions, list | tuple) or not all(
            isinstance(item, str) and parse_revision(item) for item in revisions
        ):
            bad(key, "Use a list of dated revisions such as '2026-07-28'.")
    if value.get("REQUEST_LOG", DEFAULTS["REQUEST_LOG"]) not in REQUEST_LOG_MODES:
        bad("REQUEST_LOG", "Use 'all', 'errors' or 'off'.")
    rate = value.get("REQUEST_LOG_SAMPLE_RATE", DEFAULTS["REQUEST_LOG_SAMPLE_RATE"])
    if not isinstance(rate, int | float) or not 0 <= rate <= 1:
        bad("REQUEST_LOG_SAMPLE_RATE", "Use a number between 0 and 1.")
    for key in ("PAGE_SIZE", "MAX_REQUEST_BYTES", "REQUEST_LOG_BUFFER_SIZE", "REQUEST_LOG_BATCH_SIZE"):
        number = value.get(key, DEFAULTS[key])
        if not isinstance(number, int) or isinstance(number, bool) or number < 1:
            bad(key, "Use a positive integer.")
    interval = value.get("REQUEST_LOG_FLUSH_INTERVAL", DEFAULTS["REQUEST_LOG_FLUSH_INTERVAL"])
    if not isinstance(interval, int | float) or isinstance(interval, bool) or interval <= 0:
        bad("REQUEST_LOG_FLUSH_INTERVAL", "Use a positive number of seconds.")
    if not isinstance(value.get("REQUEST_LOG_BACKGROUND", True), bool):
        bad("REQUEST_LOG_BACKGROUND", "Use True or False.")
    for key in ("DISCOVER_TTL_MS", "LIST_TTL_MS", "RESOURCE_TTL_MS"):
        number = value.get(key, DEFAULTS[key])
        if not isinstance(number, int) or isinstance(number, bool) or number < 0:
            bad(key, "Use an integer number of milliseconds, 0 or more.")
    return errors
