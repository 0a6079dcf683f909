"""Keep the code in README.md and docs/ identical to the files the tests run.

Two kinds of generated blocks:

* A fenced code block right after ``<!-- example: PATH -->`` (or ``PATH#NAME`` for the
  lines between ``# [docs:NAME]`` and ``# [/docs:NAME]`` in that file) holds that file's
  text. ``# [docs:...]`` marker lines are never shown. PATH is relative to the repository.
* The lines between ``<!-- settings-table -->`` and ``<!-- /settings-table -->`` hold the
  table of every ``DJANGO_MCP`` key, generated from ``django_mcp.conf.DEFAULTS`` and the
  meanings below.
* The lines between ``<!-- error-table -->`` and ``<!-- /error-table -->`` hold the table
  of every error class in ``django_mcp.protocol.errors.ERROR_CLASSES``: its code, its HTTP
  status from ``django_mcp.http.responses.STATUS_BY_ERROR`` and the first paragraph of its
  docstring.

    python scripts/sync_docs.py           # rewrite stale blocks
    python scripts/sync_docs.py --check   # exit 1 and name the stale blocks

tests/docs/test_examples.py runs the check, so a stale block fails the suite.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent

#: One line per DJANGO_MCP key. A key in DEFAULTS without a meaning here fails the check.
SETTING_MEANINGS: dict[str, str] = {
    "SERVER_NAME": "`name` of the server's `Implementation`, sent in every result's "
    '`_meta["io.modelcontextprotocol/serverInfo"]`.',
    "SERVER_VERSION": "Its `version`; `None` uses the installed django-mcp version.",
    "SERVER_TITLE": "Its optional human-readable `title`.",
    "INSTRUCTIONS": "`instructions` returned by `server/discover`: how a model should use "
    "this server.",
    "INCLUDE_SERVER_INFO": "Add `serverInfo` to the `_meta` of every result (not only "
    "`server/discover`).",
    "SUPPORTED_REVISIONS": "Revisions served as is, listed in `supportedVersions` and in "
    "-32022 errors. django-mcp implements only 2026-07-28.",
    "REVISION_POLICY": '`"best-effort"` serves newer dated revisions with 2026-07-28 '
    'semantics (and records them); `"strict"` refuses every other revision with -32022.',
    "BEST_EFFORT_REVISIONS": "Revisions served best-effort; `None` means any dated revision "
    "newer than the newest supported one. A list narrows that to its own dates; an older "
    "date is always refused with -32022.",
    "ALLOWED_ORIGINS": 'Origins (`https://app.example.com`, or `"*"`) allowed in an `Origin` '
    "header; `None` checks the origin's host against `ALLOWED_HOSTS`. Loopback origins and "
    "requests without `Origin` are always allowed.",
    "MAX_REQUEST_BYTES": "Largest request body accepted; bigger bodies get HTTP 413.",
    "NATIVE_WORKER_THREADS": "Worker threads of the native ASGI path (`NativeMCP`): sync "
    "tools and admission that may query the database run there, so this many slow calls at "
    "once make the next ones wait. Size it as a threaded server's thread count.",
    "MAX_LIVE_STREAMS": "Requests streamed live at once in one ASGI process (a `progressToken` "
    "or `logLevel` from a client accepting `text/event-stream`), each running its handler in "
    "a thread of its own (which may hold database connections). One more is not refused: it "
    "runs in the thread serving its view and gets its notifications buffered before the "
    "reply, as under WSGI, not cancelled by a disconnect. On the native ASGI path these "
    "threads come on top of `NATIVE_WORKER_THREADS`. `0`: never live.",
    "MAX_LIVE_STREAMS_PER_CALLER": "Of `MAX_LIVE_STREAMS`, how many one caller (a signed-in "
    "user, a token acting for no user by its client, else a client address as the rate "
    "limits count it) runs live at once in one process; its next one is answered buffered, "
    "not refused, so one client's slow streamed calls leave everyone else their live "
    "progress.",
    "STDIO_MAX_QUEUED_REQUESTS": "Requests `manage.py mcp_stdio` holds read and waiting for "
    "a worker (8 run at once; listen streams are bounded apart). With that many waiting it "
    "reads no more of stdin until one starts, so a client that writes faster "
    "than it is served is held back (its writes block) instead of growing the server's "
    "memory; no request is dropped. A `notifications/cancelled` written meanwhile is read "
    "in its turn; a client must read answers while it writes (see the stdio guide).",
    "RATE_LIMIT_USER": "Requests one signed-in user (or one OAuth client acting for itself) "
    'may make, as `"COUNT/PERIOD"` '
    '(`"120/m"`, `"5000/h"`, `"10/30s"`); over it: HTTP 429 with `Retry-After` and error '
    "-31429. `None`: no limit (the default; see the security guide).",
    "RATE_LIMIT_TOKEN": "The same, per credential (token) id.",
    "RATE_LIMIT_IP": "The same, per client address (every request, signed in or not).",
    "RATE_LIMIT_CACHE": "Alias in `CACHES` of the cache that holds the counters; use one "
    "shared by every worker (Redis) in production.",
    "TRUSTED_PROXY_HOPS": "`0`: the client address is `REMOTE_ADDR`. `N`: the N-th entry from "
    "the right of `X-Forwarded-For`, for N reverse proxies of yours that append to it. "
    "Too high, and clients choose their own address.",
    "IPV6_PREFIX": "The per-address limits (`RATE_LIMIT_IP`, and listen streams of anonymous "
    "callers) count an IPv6 client by its network of this many bits: a subscriber is usually "
    "given a whole /64, and could otherwise take a new address for every request. `128`: "
    "each address on its own.",
    "MAX_JSON_DEPTH": "Deepest nesting of arrays and objects a request may have; deeper "
    "bodies get -32600 before any handler runs.",
    "MAX_TOOL_ARGUMENT_BYTES": "Largest `tools/call` arguments, in bytes of JSON (None: no "
    "limit); larger ones are a tool execution error before the tool runs.",
    "PROGRESS_INTERVAL": "Fewest seconds between two `notifications/progress` of one request "
    "(the spec asks senders to rate-limit them), and between two status messages a task "
    "stores. A report sooner than that is held; the newest held one is sent once the interval "
    "has passed, or just before the reply (a task: stored at its next heartbeat, or when the "
    "tool returns). `0`: every rising report is sent.",
    "TOOL_TIMEOUT": "Seconds a tool call may run (None: no limit). An async tool is cancelled "
    "at the limit; a sync tool is told to stop at its next cancellation check and its late "
    "result is discarded. Either way the client gets a tool execution error. Not applied to "
    "a tool running as a task (the tasks guide says what bounds a run).",
    "PAGE_SIZE": "Items per page of `tools/list`, `resources/list`, "
    "`resources/templates/list` and `prompts/list`.",
    "DISCOVER_TTL_MS": "`ttlMs` of `server/discover` results: how long clients may cache them.",
    "LIST_TTL_MS": "`ttlMs` of the list results.",
    "RESOURCE_TTL_MS": "Default `ttlMs` of `resources/read` results; a resource's own "
    "`ttl_ms` wins.",
    "RESOURCE_FILE_MAX_BYTES": "Largest file `directory_resource` and "
    "`field_file_contents` serve, in bytes; a bigger file is refused with -32602 "
    "(`ResourceTooLarge`, `data.maxBytes`) before it is read, and no more than this many "
    "bytes plus one are ever read.",
    "CURSOR_MAX_AGE": 'Seconds a signed pagination cursor stays valid (`float("inf")`: no '
    "limit); cursors are also bound to the site, the list method and the caller, and name "
    "the last item of their page.",
    "REQUEST_STATE_MAX_AGE": "Seconds a sealed (encrypted, authenticated) `requestState` "
    "(multi-round-trip `input_required` results) stays valid, counted from the exchange's "
    "first round.",
    "LISTEN_KEEPALIVE_SECONDS": "Seconds between keep-alive comments on a quiet "
    "`subscriptions/listen` stream, and on a live progress stream whose handler is quiet; "
    "a streamed call's handler still quiet after this long gets its stream opened with one "
    "(a reply within it is plain JSON).",
    "LISTEN_MAX_SECONDS": "Longest life of a listen stream before the server sends the closing "
    "result and ends it (sooner when the caller's token expires); always bounded (`None` is "
    "refused by check E004).",
    "LISTEN_RECHECK_SECONDS": "How often an open listen stream asks the database again whether "
    "its caller may still listen: its token (this site's or django-oauth-toolkit's) revoked or "
    "deleted, its user deleted or deactivated, its Django session signed out end the stream "
    "with its closing result; otherwise the stream goes on with the caller re-read (its user's "
    "permissions, its token's scopes and expiry as they are now). One to three primary-key "
    "lookups per stream per interval, off "
    "the event loop; an anonymous stream is never asked, and of a JWT or introspected token "
    "only its user (such a token ends the stream at its expiry).",
    "LISTEN_MAX_STREAMS": "Listen streams one process holds at once; one more is refused with "
    "HTTP 503 and error -31000.",
    "LISTEN_MAX_STREAMS_PER_CALLER": "Listen streams one caller (a signed-in user, a token acting "
    "for no user by its client, else a client address as the rate limits count it) holds at "
    "once in one process; one more is refused with HTTP 429 and error -31000.",
    "LISTEN_WSGI_STREAMS": "Listen streams a threaded WSGI worker process may hold, each one a "
    "worker thread; 0 refuses listen under WSGI (HTTP 503), and a WSGI worker's "
    "`server/discover` then offers no `listChanged` or `subscribe`. Keep it below the threads "
    "per worker (docs/deployment.md).",
    "TASK_BACKEND": "Alias in Django's `TASKS` setting of the backend that runs MCP tasks "
    "(see the tasks guide).",
    "TASK_TTL_MS": "`ttlMs` of new tasks: milliseconds from creation until a task expires and "
    "`mcp_purge_tasks` may delete it; `None`: never expires. At most 100 years.",
    "TASK_POLL_INTERVAL_MS": "`pollIntervalMs` suggested to clients polling an active task.",
    "TASK_POLICY": "Dotted path of `policy(spec, arguments, context) -> bool`: whether a "
    '`task="optional"` tool becomes a task for a client that declared the extension.',
    "TASK_HEARTBEAT_SECONDS": "Seconds between a worker's heartbeats while it runs a task. "
    "At most 100 years, and at most `threading.TIMEOUT_MAX` (about 49 days on Windows).",
    "TASK_WORKER_TIMEOUT": "Seconds without a heartbeat after which a running task is failed "
    "(its worker died); `None`: never. At least twice `TASK_HEARTBEAT_SECONDS` (check `E004`). "
    "At most 100 years. Not a time limit: a live worker beats however long its tool runs.",
    "EXCEPTION_HANDLER": "Dotted path of `handler(exc, context) -> MCPError` for exceptions "
    "from your code; the default masks details as -32603 unless `DEBUG`.",
    "REQUEST_LOG": '`"all"`, `"errors"` or `"off"`: which MCP requests are recorded in the '
    "database.",
    "REQUEST_LOG_SAMPLE_RATE": 'With `"all"`, the fraction (0 to 1) of successful requests '
    "recorded; errors are always kept.",
    "REQUEST_LOG_PARAMS": "Also record request params (truncated). Off by default: "
    "arguments may hold personal data.",
    "REQUEST_LOG_PARAMS_MAX_CHARS": "Longest recorded params, in characters of JSON.",
    "REQUEST_LOG_BUFFER_SIZE": "Records held in memory until written; when full, the oldest "
    "is dropped and counted, so a slow database never blocks a request.",
    "REQUEST_LOG_BATCH_SIZE": "Records written per `COPY` (PostgreSQL) or per transaction of "
    "multi-row `INSERT`s.",
    "REQUEST_LOG_FLUSH_INTERVAL": "Seconds between writes of the buffer by the background writer; "
    "it writes sooner when the buffer is a quarter full.",
    "REQUEST_LOG_REMOTE_ADDR": "Record the client address (`REMOTE_ADDR`, or `X-Forwarded-For` "
    "behind `TRUSTED_PROXY_HOPS` proxies). On by default, as in a web server's access log; "
    "an address is personal data: turn it off, or prune the log (`mcp_prune_logs`).",
    "REQUEST_LOG_USER_AGENT": "Record the `User-Agent` header (cut to 300 characters). On by "
    "default; turn it off with the address if the log must not help identify people.",
    "REQUEST_LOG_SUMMARY_DAYS": "Days of the log's hourly summaries (what the admin's "
    "dashboard reads) that `mcp_prune_logs` keeps; longer than the log itself by default, "
    "since they hold no personal data and take a row per hour and target.",
    "REQUEST_LOG_BACKGROUND": "Write the log from a background thread (and at exit); `False` "
    "leaves records in the buffer until `django_mcp.requestlog.recorder.flush()` is called.",
    "OAUTH": "The OAuth token validators' configuration (`RESOURCE`, `ISSUER`, `JWKS_URL`, "
    "`INTROSPECTION_URL`, `USER_CLAIM`, ...); the OAuth guide (`docs/guides/oauth.md`) lists "
    "every key and its default.",
    "AUTHENTICATORS": "Dotted paths of the authenticator classes tried in order on every "
    "request; the first that recognises credentials wins, invalid credentials are a 401 "
    "(see the authentication guide).",
    "REQUIRE_AUTHENTICATION": "Answer anonymous requests with the 401 challenge; "
    "`MCPSite(require_authentication=...)` decides per site.",
    "DRF_AUTHENTICATION_CLASSES": "Authentication classes (dotted paths) `DRFAuthenticator` "
    "runs; `None`: DRF's `DEFAULT_AUTHENTICATION_CLASSES`.",
    "TOKEN_LAST_USED_INTERVAL": "Seconds between two writes of an access token's "
    "`last_used_at`, so a burst of requests costs one write.",
    "RESOURCE": "Canonical URI of the MCP endpoint (RFC 8707), e.g. `https://example.com/mcp`: "
    "the metadata's `resource`, the base of `resource_metadata` and the OAuth validators' "
    'audience unless `OAUTH["RESOURCE"]` is set; `None`: `OAUTH["RESOURCE"]`, else the '
    "request's own URL.",
    "RESOURCE_NAME": "`resource_name` of the protected resource metadata; `None` leaves it out.",
    "AUTHORIZATION_SERVERS": "Issuer URLs of the OAuth authorization servers, listed as "
    "`authorization_servers` in the protected resource metadata.",
    "SCOPES_SUPPORTED": "`scopes_supported` of the protected resource metadata; `None`: every "
    "scope a declaration of the site requires.",
    "SCOPE_HIERARCHY": "Scope hierarchies: each broader scope and the narrower scopes it "
    'implies, transitively (`{"books:admin": ["books:write"]}`): a token granted the '
    "broader scope passes a check for a narrower one. Challenges still name the scopes a "
    "declaration requires.",
    "AUTODISCOVER_MODULE": "Module imported from every installed app at startup, like `admin.py`.",
    "SITE_CLASS": "Dotted path of the class of the default site (`django_mcp.site`).",
}

EXAMPLE = re.compile(
    r"(?P<marker><!-- example: (?P<path>[^#\s]+)(?:#(?P<name>[\w-]+))? -->\n)"
    r"(?P<fence>```[\w-]*\n)(?P<body>.*?)(?P<close>^```$)",
    re.S | re.M,
)
TABLE = re.compile(r"(<!-- settings-table -->\n)(.*?)(^<!-- /settings-table -->$)", re.S | re.M)
ERROR_TABLE = re.compile(r"(<!-- error-table -->\n)(.*?)(^<!-- /error-table -->$)", re.S | re.M)
CHECKS_TABLE = re.compile(r"(<!-- e004-table -->\n)(.*?)(^<!-- /e004-table -->$)", re.S | re.M)
DOCS_MARKER = re.compile(r"^\s*# \[/?docs:[\w-]+\]\s*$")


def markdown_files() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def example_text(path: str, name: str | None) -> str:
    """The text of ``path`` (or of its ``[docs:name]`` region), without marker lines."""
    source = (REPO / path).read_text(encoding="utf-8")
    lines = source.splitlines()
    if name is not None:
        start, end = f"# [docs:{name}]", f"# [/docs:{name}]"
        stripped = [line.strip() for line in lines]
        if start not in stripped or end not in stripped:
            raise ValueError(f"{path} has no region {name!r}")
        lines = lines[stripped.index(start) + 1 : stripped.index(end)]
        indent = min((len(x) - len(x.lstrip()) for x in lines if x.strip()), default=0)
        lines = [line[indent:] for line in lines]
    lines = [line for line in lines if not DOCS_MARKER.match(line)]
    while lines and not lines[-1].strip():
        lines.pop()
    while lines and not lines[0].strip():
        lines.pop(0)
    return "".join(line + "\n" for line in lines)


def _format_default(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int):
        return f"{value:_}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_format_default(item) for item in value) + "]"
    if isinstance(value, str):
        return '"' + value + '"'
    return repr(value)


def settings_table() -> str:
    sys.path.insert(0, str(REPO))
    from django_mcp.conf import DEFAULTS

    unknown = sorted(set(SETTING_MEANINGS) - set(DEFAULTS))
    missing = [key for key in DEFAULTS if key not in SETTING_MEANINGS]
    if missing or unknown:
        raise ValueError(
            f"scripts/sync_docs.py SETTING_MEANINGS is out of date with DEFAULTS: "
            f"add {missing}, remove {unknown}"
        )
    rows = ["| Key | Default | Meaning |", "| --- | --- | --- |"]
    for key, value in DEFAULTS.items():
        rows.append(f"| `{key}` | `{_format_default(value)}` | {SETTING_MEANINGS[key]} |")
    return "\n".join(rows) + "\n"


def error_table() -> str:
    """Every error class the server emits: code, HTTP status (``STATUS_BY_ERROR``), when."""
    sys.path.insert(0, str(REPO))
    import inspect

    from django_mcp.protocol.errors import ERROR_CLASSES

    try:
        from django_mcp.http.responses import status_for
    except Exception:  # django_mcp.http.responses imports Django; configure it if needed
        import django
        from django.conf import settings

        if not settings.configured:
            settings.configure()
            django.setup()
        from django_mcp.http.responses import status_for

    rows = ["| Code | Class | HTTP status | When |", "| --- | --- | --- | --- |"]
    for cls in ERROR_CLASSES:
        error = cls.__new__(cls)  # status_for only looks at the class
        when = " ".join((inspect.getdoc(cls) or "").split("\n\n")[0].split()).replace("``", "`")
        rows.append(f"| {cls.code} | `{cls.__name__}` | {status_for(error)} | {when} |")
    return "\n".join(rows) + "\n"


def e004_table() -> str:
    """What system check E004 accepts for each setting (``django_mcp.checks.VALIDATORS``)."""
    sys.path.insert(0, str(REPO))
    from django_mcp.checks import VALIDATORS

    rows = ["| Key | Valid values |", "| --- | --- |"]
    for key, (_, hint) in VALIDATORS.items():
        rows.append(f"| `{key}` | {hint.removeprefix('Use ').rstrip('.')} |")
    return "\n".join(rows) + "\n"


def render(text: str) -> str:
    """``text`` with every generated block brought up to date."""

    def example(match: re.Match[str]) -> str:
        body = example_text(match["path"], match["name"])
        return match["marker"] + match["fence"] + body + match["close"]

    text = EXAMPLE.sub(example, text)
    if TABLE.search(text):
        table = settings_table()
        text = TABLE.sub(lambda m: m[1] + table + m[3], text)
    if ERROR_TABLE.search(text):
        errors = error_table()
        text = ERROR_TABLE.sub(lambda m: m[1] + errors + m[3], text)
    if CHECKS_TABLE.search(text):
        checks = e004_table()
        text = CHECKS_TABLE.sub(lambda m: m[1] + checks + m[3], text)
    return text


def stale_files() -> list[Path]:
    return [
        path
        for path in markdown_files()
        if path.exists()
        and render(path.read_text(encoding="utf-8")) != path.read_text(encoding="utf-8")
    ]


def referenced_examples() -> set[str]:
    """Every file that some generated block shows."""
    found: set[str] = set()
    for path in markdown_files():
        if path.exists():
            found.update(match["path"] for match in EXAMPLE.finditer(path.read_text("utf-8")))
    return found


def main(argv: list[str]) -> int:
    stale = stale_files()
    if "--check" in argv:
        for path in stale:
            print(f"stale generated block in {path.relative_to(REPO)}", file=sys.stderr)
        if stale:
            print("run: python scripts/sync_docs.py", file=sys.stderr)
        return 1 if stale else 0
    for path in stale:
        path.write_text(render(path.read_text(encoding="utf-8")), encoding="utf-8")
        print(f"updated {path.relative_to(REPO)}")
    return 0


def setup_django() -> None:
    """The tables read ``django_mcp`` modules that need configured Django apps."""
    import os

    import django

    sys.path.insert(0, str(REPO))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "testproject.settings")
    os.environ.setdefault("DJANGO_MCP_INSECURE", "1")  # the testproject's local-use key
    django.setup()


if __name__ == "__main__":
    setup_django()
    sys.exit(main(sys.argv[1:]))
