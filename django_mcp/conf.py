"""The ``DJANGO_MCP`` settings dict: every key has a documented default (docs/settings.md).

Settings are read lazily through :data:`mcp_settings` and cached; the cache is cleared on
``setting_changed`` so ``override_settings`` works in tests. Nothing reads settings at import
time.
"""

from __future__ import annotations

import threading
from functools import cached_property
from typing import Any, Final

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.utils.module_loading import import_string

from django_mcp._version import __version__
from django_mcp.protocol.revisions import CURRENT_REVISION, RevisionPolicy, RevisionPolicyMode

SETTINGS_NAME: Final = "DJANGO_MCP"

DEFAULTS: Final[dict[str, Any]] = {
    # Identity reported in every result's _meta["io.modelcontextprotocol/serverInfo"].
    "SERVER_NAME": "django-mcp",
    "SERVER_VERSION": None,  # None: the django-mcp package version
    "SERVER_TITLE": None,
    "INSTRUCTIONS": None,
    "INCLUDE_SERVER_INFO": True,
    # Revisions (docs/adr/0001-revision-policy.md).
    "SUPPORTED_REVISIONS": [CURRENT_REVISION],
    "REVISION_POLICY": "best-effort",  # or "strict"
    "BEST_EFFORT_REVISIONS": None,  # None: any dated revision newer than ours
    # HTTP transport.
    "ALLOWED_ORIGINS": None,  # None: derived from ALLOWED_HOSTS plus loopback
    "MAX_REQUEST_BYTES": 4 * 1024 * 1024,
    # Worker threads of the native ASGI path (NativeMCP), shared by its requests' sync code.
    "NATIVE_WORKER_THREADS": 64,
    # Threads that run progress/log-streamed requests live under ASGI, at once per process;
    # past it such requests are answered buffered, as under WSGI (0: always buffered).
    "MAX_LIVE_STREAMS": 64,
    # Of those, at most this many for one caller (a user, a token's client, else an address).
    "MAX_LIVE_STREAMS_PER_CALLER": 8,
    # Fewest seconds between two notifications/progress of one request (or two status
    # messages of one task); reports in between are held, the newest sent later (0: off).
    "PROGRESS_INTERVAL": 0.05,
    # stdio (manage.py mcp_stdio): requests read and waiting for a worker; when that many
    # wait, stdin is read no further until one starts (backpressure, never a drop).
    "STDIO_MAX_QUEUED_REQUESTS": 32,
    # Rate limits ("COUNT/PERIOD", e.g. "120/m"; None: off) per signed-in user, per
    # credential and per client address, counted in the cache RATE_LIMIT_CACHE.
    "RATE_LIMIT_USER": None,
    "RATE_LIMIT_TOKEN": None,
    "RATE_LIMIT_IP": None,
    "RATE_LIMIT_CACHE": "default",
    "TRUSTED_PROXY_HOPS": 0,  # X-Forwarded-For entries appended by proxies you run
    # Per-address limits count an IPv6 client by its network of this many bits.
    "IPV6_PREFIX": 64,
    # Hardening (docs/guides/hardening.md): deepest JSON nesting a request may have, the
    # largest tools/call arguments (bytes of JSON) and a per-call time limit in seconds
    # (None: no limit).
    "MAX_JSON_DEPTH": 64,
    "MAX_TOOL_ARGUMENT_BYTES": 1024 * 1024,
    "TOOL_TIMEOUT": None,
    # Lists and caching.
    "PAGE_SIZE": 100,
    "CURSOR_MAX_AGE": 86_400,  # seconds a pagination cursor stays valid
    "DISCOVER_TTL_MS": 300_000,
    "LIST_TTL_MS": 60_000,
    "RESOURCE_TTL_MS": 0,  # default for resources/read; per-declaration ttl_ms overrides
    # Largest file directory_resource / field_file_contents serve (bytes); bigger: -32602.
    "RESOURCE_FILE_MAX_BYTES": 10 * 1024 * 1024,
    # Multi round-trip requests: how long a requestState stays valid, in seconds.
    "REQUEST_STATE_MAX_AGE": 600,
    # subscriptions/listen (docs/guides/subscriptions.md): keep-alive comment interval (also
    # on live progress streams, and how long a streamed call's quiet handler may go before
    # its answer becomes a stream) and the longest life of a stream (the server then sends
    # the closing result; always bounded).
    "LISTEN_KEEPALIVE_SECONDS": 15.0,
    "LISTEN_MAX_SECONDS": 300.0,
    # How often an open listen stream asks again whether its caller may still listen
    # (token revoked or deleted, user deleted or deactivated, session signed out); it ends
    # when not.
    "LISTEN_RECHECK_SECONDS": 30.0,
    # Open listen streams one process holds at once, in all and per caller.
    "LISTEN_MAX_STREAMS": 500,
    "LISTEN_MAX_STREAMS_PER_CALLER": 5,
    # Listen streams a threaded WSGI worker process may hold (0: listen refused under WSGI).
    "LISTEN_WSGI_STREAMS": 0,
    # MCP tasks (docs/guides/tasks.md): the TASKS backend alias that runs them, how long
    # a task is kept (ms from creation; None: until purged by hand), the poll interval
    # suggested to clients, the hook that decides whether an optional tool becomes a task,
    # how often a worker records that it is alive, and after how many seconds without that
    # heartbeat a running task is failed (None: never).
    "TASK_BACKEND": "default",
    "TASK_TTL_MS": 3_600_000,
    "TASK_POLL_INTERVAL_MS": 1_000,
    "TASK_POLICY": "django_mcp.server.tasking.always",
    "TASK_HEARTBEAT_SECONDS": 10.0,
    "TASK_WORKER_TIMEOUT": 60.0,
    # Errors.
    "EXCEPTION_HANDLER": "django_mcp.exceptions.exception_handler",
    # Request log (docs/guides/records.md).
    "REQUEST_LOG": "all",  # "all", "errors" or "off"
    "REQUEST_LOG_SAMPLE_RATE": 1.0,
    "REQUEST_LOG_PARAMS": False,
    "REQUEST_LOG_PARAMS_MAX_CHARS": 2000,
    "REQUEST_LOG_BUFFER_SIZE": 10_000,
    "REQUEST_LOG_BATCH_SIZE": 500,
    "REQUEST_LOG_FLUSH_INTERVAL": 1.0,  # seconds between background flushes
    "REQUEST_LOG_REMOTE_ADDR": True,  # record the client address (personal data: see docs)
    "REQUEST_LOG_USER_AGENT": True,  # record the User-Agent header
    "REQUEST_LOG_SUMMARY_DAYS": 400,  # mcp_prune_logs keeps this many days of hourly summaries
    "REQUEST_LOG_BACKGROUND": True,  # False: no thread; call django_mcp.requestlog.recorder.flush()
    # OAuth 2.1 resource server: the token validators of django_mcp.auth.oauth
    # (docs/guides/oauth.md lists the keys of this dict and their defaults).
    "OAUTH": {},
    # Authentication (docs/guides/authentication.md): tried in order, once per request.
    "AUTHENTICATORS": [
        "django_mcp.auth.tokens.TokenAuthenticator",
        "django_mcp.auth.session.SessionAuthenticator",
    ],
    "REQUIRE_AUTHENTICATION": False,  # per site: MCPSite(require_authentication=...)
    "DRF_AUTHENTICATION_CLASSES": None,  # None: DRF's DEFAULT_AUTHENTICATION_CLASSES
    "TOKEN_LAST_USED_INTERVAL": 60,  # seconds between writes of AccessToken.last_used_at
    # Protected resource metadata (RFC 9728).
    "RESOURCE": None,  # None: the endpoint's absolute URL
    "RESOURCE_NAME": None,
    "AUTHORIZATION_SERVERS": [],
    "SCOPES_SUPPORTED": None,  # None: every scope a declaration requires
    # A broader scope -> the narrower scopes it implies (transitively), e.g.
    # {"books:admin": ["books:write"], "books:write": ["books:read"]}.
    "SCOPE_HIERARCHY": {},
    # Registry.
    "AUTODISCOVER_MODULE": "mcp",
    "SITE_CLASS": "django_mcp.sites.MCPSite",
}

REQUEST_LOG_MODES: Final = ("all", "errors", "off")


class MCPSettings:
    """Typed access to ``settings.DJANGO_MCP`` merged over :data:`DEFAULTS`."""

    @cached_property
    def user_settings(self) -> dict[str, Any]:
        value = getattr(settings, SETTINGS_NAME, {})
        return dict(value) if isinstance(value, dict) else {}

    def __getattr__(self, name: str) -> Any:
        if name not in DEFAULTS:
            raise AttributeError(f"Unknown django-mcp setting: {name}")
        value = self.user_settings.get(name, DEFAULTS[name])
        self.__dict__[name] = value
        return value

    @cached_property
    def revision_policy(self) -> RevisionPolicy:
        best_effort = self.BEST_EFFORT_REVISIONS
        return RevisionPolicy(
            supported=tuple(self.SUPPORTED_REVISIONS),
            mode=RevisionPolicyMode(self.REVISION_POLICY),
            best_effort=frozenset(best_effort) if best_effort is not None else None,
        )

    @cached_property
    def server_version(self) -> str:
        if self.SERVER_VERSION:
            return str(self.SERVER_VERSION)
        return __version__

    @cached_property
    def exception_handler(self) -> Any:
        return import_string(self.EXCEPTION_HANDLER)

    @cached_property
    def implied_scopes(self) -> dict[str, frozenset[str]]:
        """Each scope of ``SCOPE_HIERARCHY`` and every scope it implies, directly or
        through others (basic/authorization/index.mdx: "Servers MUST account for scope
        hierarchies, where a broader scope implies narrower ones"), worked out once per
        settings change rather than at every scope check."""
        hierarchy = self.SCOPE_HIERARCHY
        if not isinstance(hierarchy, dict):  # system check E004 reports it
            return {}
        # Only what E004 accepts counts (a list or tuple of strings): a malformed entry in
        # a process that never ran the checks (gunicorn does not) implies nothing, rather
        # than failing every scope check or reading "books:write" as seven scopes.
        edges = {
            broader: [n for n in narrower if isinstance(n, str)]
            for broader, narrower in hierarchy.items()
            if isinstance(broader, str) and isinstance(narrower, list | tuple)
        }
        closure: dict[str, frozenset[str]] = {}
        for broader in edges:
            seen: set[str] = set()
            pending = [broader]
            while pending:
                for narrower in edges.get(pending.pop(), ()):
                    if narrower not in seen:
                        seen.add(narrower)
                        pending.append(narrower)
            closure[broader] = frozenset(seen)
        return closure

    @cached_property
    def use_tz(self) -> bool:
        """Django's ``USE_TZ``, read once per change: every exchange stamps its start, and
        each read through Django's lazy settings object costs a proxy call."""
        return bool(settings.USE_TZ)

    def number(
        self,
        name: str,
        *,
        at_least: float | None = None,
        above: float | None = None,
        integer: bool = False,
    ) -> Any:
        """Setting ``name`` when it is a number (an ``int`` when ``integer``; never a bool)
        in range, else its default. For the bounds code relies on even in a process that
        never ran the checks, which refuse such a value (E004): a thread count, an
        interval, a stream's life is never unbounded or nonsense. NaN is out of range, and
        so is an interval past ``threading.TIMEOUT_MAX`` (infinity too): the longest wait
        a thread takes (a longer one raises OverflowError in it). A count (``integer``)
        is never waited for, so that bound (4,294,967 on Windows) is not its."""
        value: Any = getattr(self, name)
        numeric = isinstance(value, int) if integer else isinstance(value, int | float)
        in_range = (
            numeric
            and not isinstance(value, bool)
            and (integer or -threading.TIMEOUT_MAX <= value <= threading.TIMEOUT_MAX)
            and (at_least is None or value >= at_least)
            and (above is None or value > above)
        )
        return value if in_range else DEFAULTS[name]

    def reload(self) -> None:
        """Forget every cached value; the next access reads settings again."""
        self.__dict__.clear()


mcp_settings = MCPSettings()


@receiver(setting_changed)
def _reload_settings(*, setting: str, **kwargs: Any) -> None:
    if setting in (SETTINGS_NAME, "DEBUG", "ALLOWED_HOSTS", "USE_TZ"):
        mcp_settings.reload()


def require_installed(what: str) -> None:
    """Refuse, in words, a project that uses ``what`` without ``"django_mcp"`` in
    ``INSTALLED_APPS``: importing it loads the request-log models, and Django's own error
    for a model outside any installed app names the model, not the missing app.

    Says nothing while the app registry is still loading (nothing to compare yet)."""
    from django.apps import apps
    from django.core.exceptions import ImproperlyConfigured

    if apps.apps_ready and not apps.is_installed("django_mcp"):
        raise ImproperlyConfigured(
            f"{what} needs 'django_mcp' in INSTALLED_APPS: add it (the request log, its "
            "admin and the system checks live in the app; see the README's Install)."
        )
