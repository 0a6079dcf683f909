"""System checks (docs/checks.md): stable ids ``django_mcp.E00x`` / ``W00x``."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Final

from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, register
from django.core.checks import Warning as CheckWarning
from django.core.exceptions import FieldDoesNotExist
from django.db.models import Field, Model
from django.utils.module_loading import import_string

from django_mcp.auth.checks import AUTH_VALIDATORS, check_authenticator_classes
from django_mcp.auth.oauth.checks import check_authorization_servers, check_oauth_authenticators
from django_mcp.auth.oauth.config import problems as oauth_problems
from django_mcp.conf import DEFAULTS, REQUEST_LOG_MODES, SETTINGS_NAME
from django_mcp.http.middleware import MCPMiddleware
from django_mcp.http.ratelimit import is_rate
from django_mcp.listen.limits import check_wsgi_streams
from django_mcp.protocol.revisions import CURRENT_REVISION, RevisionPolicyMode, parse_revision
from django_mcp.sites import all_sites

MIDDLEWARE_PATH = "django_mcp.middleware.MCPMiddleware"


def _is_mcp_middleware(path: str) -> bool:
    """Whether the ``MIDDLEWARE`` entry ``path`` is ``MCPMiddleware`` or a subclass."""
    if path == MIDDLEWARE_PATH:
        return True
    try:
        candidate = import_string(path)
    except ImportError:
        return False  # Django reports a broken MIDDLEWARE entry itself
    return isinstance(candidate, type) and issubclass(candidate, MCPMiddleware)


@register(Tags.compatibility)
def check_middleware(app_configs: Any, **kwargs: Any) -> list[CheckMessage]:
    if any(_is_mcp_middleware(path) for path in settings.MIDDLEWARE):
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


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


#: The longest ``TASK_TTL_MS``: 100 years. A longer one (10**15 ms is 31,700 years) put
#: every new task's expiry past year 9999, so each task creation was -32603; use None.
MAX_TASK_TTL_MS: Final = 100 * 365 * 86_400_000
#: The longest ``TASK_HEARTBEAT_SECONDS`` and ``TASK_WORKER_TIMEOUT``, 100 years, for the
#: same reason: a timeout of 1e11 s made every poll of a running task -32603 ("now minus
#: the timeout" is before year 1), and a heartbeat past ``threading.TIMEOUT_MAX`` killed
#: the heartbeat thread.
MAX_TASK_SECONDS: Final = 100 * 365 * 86_400


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_wait(value: Any) -> bool:
    """A positive number of seconds a thread can wait for: at most ``threading.TIMEOUT_MAX``
    (about 49.7 days on Windows), and so never infinity. Past it ``Event.wait`` and
    ``threading.Timer`` raise OverflowError in their thread, which dies: the tool time limit
    was then never applied, the request log's writer never flushed on its own, a task's
    heartbeat stopped."""
    return _is_number(value) and 0 < value <= threading.TIMEOUT_MAX


def _revisions(value: Any, *, allow_none: bool) -> bool:
    if value is None:
        return allow_none
    return (
        isinstance(value, list | tuple)
        and bool(value)
        and all(isinstance(item, str) and parse_revision(item) for item in value)
    )


def _origins(value: Any) -> bool:
    return value is None or (
        isinstance(value, list | tuple) and all(isinstance(item, str) for item in value)
    )


#: Setting -> (is the value valid?, hint). Settings not listed accept any value.
VALIDATORS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "REVISION_POLICY": (
        lambda v: v in {mode.value for mode in RevisionPolicyMode},
        "Use 'best-effort' or 'strict'.",
    ),
    "SUPPORTED_REVISIONS": (
        lambda v: _revisions(v, allow_none=False),
        "Use a non-empty list of dated revisions such as '2026-07-28'.",
    ),
    "BEST_EFFORT_REVISIONS": (
        lambda v: _revisions(v, allow_none=True),
        "Use None (any newer dated revision) or a list of dated revisions.",
    ),
    "ALLOWED_ORIGINS": (
        _origins,
        "Use None (derived from ALLOWED_HOSTS) or a list of origins such as "
        "'https://app.example.com' (or '*').",
    ),
    **{
        key: (is_rate, "Use None (no limit) or 'COUNT/PERIOD' such as '120/m' (s, m, h, d).")
        for key in ("RATE_LIMIT_USER", "RATE_LIMIT_TOKEN", "RATE_LIMIT_IP")
    },
    "RATE_LIMIT_CACHE": (
        lambda v: isinstance(v, str) and v in settings.CACHES,
        "Use the alias of a cache in CACHES, such as 'default'.",
    ),
    "TRUSTED_PROXY_HOPS": (
        lambda v: _is_int(v) and v >= 0,
        "Use 0 (REMOTE_ADDR) or the number of proxies you run that append to X-Forwarded-For.",
    ),
    "IPV6_PREFIX": (
        lambda v: _is_int(v) and 1 <= v <= 128,
        "Use a prefix length from 1 to 128 (64: one subscriber's network).",
    ),
    "REQUEST_LOG": (lambda v: v in REQUEST_LOG_MODES, "Use 'all', 'errors' or 'off'."),
    "REQUEST_LOG_SAMPLE_RATE": (
        lambda v: _is_number(v) and 0 <= v <= 1,
        "Use a number between 0 and 1.",
    ),
    "REQUEST_LOG_FLUSH_INTERVAL": (
        _is_wait,
        "Use a positive number of seconds, at most threading.TIMEOUT_MAX (about 49 days on "
        "Windows).",
    ),
    "REQUEST_LOG_SUMMARY_DAYS": (
        lambda v: _is_int(v) and v >= 1,
        "Use a whole number of days, 1 or more.",
    ),
    "REQUEST_LOG_BACKGROUND": (lambda v: isinstance(v, bool), "Use True or False."),
    "REQUEST_LOG_REMOTE_ADDR": (lambda v: isinstance(v, bool), "Use True or False."),
    "REQUEST_LOG_USER_AGENT": (lambda v: isinstance(v, bool), "Use True or False."),
    "CURSOR_MAX_AGE": (
        lambda v: _is_number(v) and v > 0,
        "Use a positive number of seconds.",
    ),
    "REQUEST_STATE_MAX_AGE": (
        lambda v: _is_number(v) and v > 0,
        "Use a positive number of seconds.",
    ),
    "TASK_TTL_MS": (
        lambda v: (
            v is None
            or (isinstance(v, int) and not isinstance(v, bool) and 0 < v <= MAX_TASK_TTL_MS)
        ),
        "Use None (never expires) or a positive number of milliseconds, at most 100 years "
        f"({MAX_TASK_TTL_MS:_}): a task's expiry must be a date Python and the database hold.",
    ),
    "TASK_POLL_INTERVAL_MS": (
        lambda v: isinstance(v, int) and not isinstance(v, bool) and v > 0,
        "Use a positive number of milliseconds.",
    ),
    "TASK_HEARTBEAT_SECONDS": (
        lambda v: _is_wait(v) and v <= MAX_TASK_SECONDS,
        "Use a positive number of seconds, at most 100 years and at most the longest wait "
        "this platform's threads take (threading.TIMEOUT_MAX: about 49 days on Windows).",
    ),
    "TASK_WORKER_TIMEOUT": (
        lambda v: v is None or (_is_number(v) and 0 < v <= MAX_TASK_SECONDS),
        "Use None (never) or a positive number of seconds, at most 100 years "
        f"({MAX_TASK_SECONDS:_}).",
    ),
    "PROGRESS_INTERVAL": (
        lambda v: _is_number(v) and 0 <= v <= threading.TIMEOUT_MAX,
        "Use a number of seconds, 0 or more (0: every report is sent), at most "
        "threading.TIMEOUT_MAX.",
    ),
    "LISTEN_KEEPALIVE_SECONDS": (
        _is_wait,
        "Use a positive number of seconds, at most threading.TIMEOUT_MAX.",
    ),
    "LISTEN_MAX_SECONDS": (
        _is_wait,
        "Use a positive number of seconds, at most threading.TIMEOUT_MAX: every listen "
        "stream ends (None and infinity are refused).",
    ),
    "LISTEN_RECHECK_SECONDS": (
        _is_wait,
        "Use a positive number of seconds, at most threading.TIMEOUT_MAX: a listen stream "
        "asks again whether its caller may still listen.",
    ),
    "OAUTH": (
        lambda v: not oauth_problems(v),
        "Use a dict of the keys in docs/guides/oauth.md#settings: RESOURCE is the canonical "
        "https URI, the URLs are http(s), ALGORITHMS are asymmetric (RS256, ES256, ...).",
    ),
    "TOOL_TIMEOUT": (
        lambda v: v is None or _is_wait(v),
        "Use None (no limit) or a positive number of seconds, at most threading.TIMEOUT_MAX "
        "(about 49 days on Windows).",
    ),
    "MAX_TOOL_ARGUMENT_BYTES": (
        lambda v: v is None or (_is_int(v) and v >= 1),
        "Use None (no limit) or a positive integer.",
    ),
    **{
        key: (lambda v: _is_int(v) and v >= 0, "Use an integer, 0 or more.")
        for key in ("LISTEN_WSGI_STREAMS", "MAX_LIVE_STREAMS")
    },
    **AUTH_VALIDATORS,
    **{
        key: (lambda v: _is_int(v) and v >= 1, "Use a positive integer.")
        for key in (
            "PAGE_SIZE",
            "MAX_REQUEST_BYTES",
            "RESOURCE_FILE_MAX_BYTES",
            "REQUEST_LOG_BUFFER_SIZE",
            "REQUEST_LOG_BATCH_SIZE",
            "REQUEST_LOG_PARAMS_MAX_CHARS",
            "MAX_JSON_DEPTH",
            "LISTEN_MAX_STREAMS",
            "LISTEN_MAX_STREAMS_PER_CALLER",
            "MAX_LIVE_STREAMS_PER_CALLER",
            "NATIVE_WORKER_THREADS",
            "STDIO_MAX_QUEUED_REQUESTS",
        )
    },
    **{
        key: (lambda v: _is_int(v) and v >= 0, "Use an integer number of milliseconds, 0 or more.")
        for key in ("DISCOVER_TTL_MS", "LIST_TTL_MS", "RESOURCE_TTL_MS")
    },
}


def _invalid(key: str, hint: str) -> CheckMessage:
    """E004 for the ``DJANGO_MCP`` key ``key``."""
    return Error(f"{SETTINGS_NAME}[{key!r}] is invalid.", hint=hint, id="django_mcp.E004")


def _value_errors(value: dict[str, Any]) -> list[CheckMessage]:
    errors: list[CheckMessage] = []
    for key, (is_valid, hint) in VALIDATORS.items():
        if key in value and not is_valid(value[key]):
            errors.append(_invalid(key, hint))
    if not errors:
        merged = {**DEFAULTS, **value}
        errors.extend(_heartbeat_errors(merged))
        errors.extend(_revision_errors(merged))
    return errors


def _heartbeat_errors(value: dict[str, Any]) -> list[CheckMessage]:
    """E004 for a worker timeout under twice the heartbeat: a running task whose last beat
    is older than the timeout is failed as orphaned, so such a timeout fails healthy
    tasks that run longer than it, and throws their results away."""
    timeout, beat = value["TASK_WORKER_TIMEOUT"], value["TASK_HEARTBEAT_SECONDS"]
    if timeout is None or timeout >= 2 * beat:
        return []
    hint = (
        f"Use None, or at least twice TASK_HEARTBEAT_SECONDS ({beat} s): a running task "
        "whose last heartbeat is older than the timeout is failed as orphaned."
    )
    return [_invalid("TASK_WORKER_TIMEOUT", hint)]


def _revision_errors(value: dict[str, Any]) -> list[CheckMessage]:
    """E004 for revisions that contradict ADR 0001 (run once each list is valid, every
    entry a date): a supported revision older than the one django-mcp implements (the
    handshake era, whose lifecycle it does not speak), and a best-effort revision not newer
    than the newest supported one (never served: -32022 whatever the list says)."""

    supported = value["SUPPORTED_REVISIONS"]
    errors: list[CheckMessage] = []
    if min(supported) < CURRENT_REVISION:  # ISO dates compare as text
        errors.append(
            _invalid(
                "SUPPORTED_REVISIONS",
                f"Remove the revisions older than {CURRENT_REVISION!r}, the one django-mcp "
                "implements: their clients need the initialize handshake, which it does not "
                "serve.",
            )
        )
    newest = max(supported)
    stale = [item for item in value["BEST_EFFORT_REVISIONS"] or () if item <= newest]
    if stale:
        errors.append(
            _invalid(
                "BEST_EFFORT_REVISIONS",
                f"Only revisions newer than the newest supported one ({newest}) are served "
                f"best-effort; {', '.join(map(repr, stale))} would be refused with -32022.",
            )
        )
    return errors


@register(Tags.compatibility)
def check_listen_limits(app_configs: Any, **kwargs: Any) -> list[CheckMessage]:
    """django_mcp.W013: listen under WSGI holds worker threads (see listen.limits)."""
    return check_wsgi_streams()


@register(Tags.compatibility)
def check_oauth(app_configs: Any, **kwargs: Any) -> list[CheckMessage]:
    """django_mcp.E016: an AUTHENTICATORS entry that is no authenticator (auth.checks);
    django_mcp.E012: an OAuth validator without its settings; django_mcp.W014: one
    listed while the metadata names no authorization server (see auth.oauth.checks)."""
    found = check_authenticator_classes()
    return found + check_oauth_authenticators() + check_authorization_servers()


@register(Tags.models)
def check_model_tools(app_configs: Any, **kwargs: Any) -> list[CheckMessage]:
    """django_mcp.E005: a ModelTools option names a field the model does not have."""
    messages: list[CheckMessage] = []
    for target in all_sites():
        for model, tools in target.registered_models().items():
            for problem in tools.check():
                messages.append(
                    Error(
                        f"{type(tools).__qualname__} ({model._meta.label}): {problem}.",
                        obj=type(tools),
                        id="django_mcp.E005",
                    )
                )
    return messages


#: The actions that find one row by the lookup argument (a ``resource_uri`` does too).
_LOOKUP_ACTIONS = frozenset({"get", "update", "delete"})


@register(Tags.models)
def check_model_tools_lookups(app_configs: Any, **kwargs: Any) -> list[CheckMessage]:
    """django_mcp.W017: a ModelTools finds rows by a field that is not unique.

    A warning, not an error, as Django's own checks draw the line: nothing fails (a key
    naming several of a caller's rows is a tool error, and a listen stream checks the row
    that changed), and the field may be unique within every caller's ``get_queryset``
    (unique with the owner the queryset filters by), which no check can see."""
    messages: list[CheckMessage] = []
    for target in all_sites():
        for model, tools in target.registered_models().items():
            if not (_LOOKUP_ACTIONS & set(tools.actions) or tools.resource_uri is not None):
                continue
            if _is_unique(model, tools.lookup_argument):
                continue
            messages.append(
                CheckWarning(
                    f"{type(tools).__qualname__} ({model._meta.label}): lookup_field "
                    f"{tools.lookup_field!r} is not unique, so one key may name several rows.",
                    hint="Find rows by the primary key or by a field with unique=True (or "
                    "alone in a UniqueConstraint without a condition). If get_queryset keeps "
                    "the key unique for each caller, silence this check.",
                    obj=type(tools),
                    id="django_mcp.W017",
                )
            )
    return messages


def _is_unique(model: type[Model], name: str) -> bool:
    """Whether the field ``name`` of ``model`` holds each value once: the primary key, a
    field with ``unique=True`` (a one-to-one field included), or one alone in a
    ``unique_together`` entry or a ``UniqueConstraint`` without a condition or expressions
    (the rules of Django's own check ``fields.E311``)."""
    opts = model._meta
    try:
        field = opts.get_field(name)
    except FieldDoesNotExist:  # registration refuses it: nothing to warn about here
        return True
    if not isinstance(field, Field):  # a reverse relation: not a column, not unique
        return False
    if field.unique:
        return True
    sets = [*opts.unique_together, *(c.fields for c in opts.total_unique_constraints)]
    return any([opts.get_field(f).name for f in fields] == [field.name] for fields in sets)
