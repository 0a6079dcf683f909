"""Shared helpers for talking MCP 2026-07-28 to the test server and checking what comes back.

``mcp_post`` builds a well-formed request (body, ``_meta`` and the mirrored HTTP headers) and
lets a test break exactly one thing; ``validate_mcp_response`` checks a response against the
official JSON Schema (``tests/spec/2026-07-28/schema.json``, vendored: see its README). The
``conftest`` runs that validation on every response the Django test client receives from an
MCP endpoint, so individual tests only assert the behaviour they are about.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.test import override_settings
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from django_mcp.protocol import errors, jsonrpc

if TYPE_CHECKING:
    from django.http import HttpResponse
    from django.test import Client

PROTOCOL_VERSION = "2026-07-28"
MCP_PATH = "/mcp"
SCHEMA_PATH = Path(__file__).resolve().parent / "spec" / PROTOCOL_VERSION / "schema.json"
_SCHEMA_URI = "urn:mcp:schema:2026-07-28"

VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"


class _Omit:
    def __repr__(self) -> str:
        return "OMIT"


#: Pass as ``meta=`` (or as a value inside ``meta``/``params``) to leave the key out.
OMIT: Any = _Omit()

#: Methods whose ``Mcp-Name`` header mirrors a body field (streamable-http.mdx).
NAME_FIELDS = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}


def request_meta(
    *,
    version: str = PROTOCOL_VERSION,
    capabilities: Mapping[str, Any] | None = None,
    client_info: Mapping[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A valid request ``_meta``; ``extra`` adds or (with ``OMIT``) removes keys."""
    meta: dict[str, Any] = {
        VERSION_KEY: version,
        CAPABILITIES_KEY: dict(capabilities or {}),
        CLIENT_INFO_KEY: dict(client_info or {"name": "pytest", "version": "1.0"}),
    }
    meta.update(extra)
    return _drop_omitted(meta)


def _drop_omitted(mapping: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in mapping.items() if value is not OMIT}


def override_mcp(**values: Any) -> override_settings:
    """``override_settings`` for ``DJANGO_MCP`` keys, merged over the current dict."""
    return override_settings(DJANGO_MCP={**getattr(settings, "DJANGO_MCP", {}), **values})


def b64_sentinel(text: str) -> str:
    """``=?base64?...?=``: how a header carries a value that is not plain ASCII."""
    return "=?base64?" + base64.b64encode(text.encode("utf-8")).decode("ascii") + "?="


def mcp_body(
    method: str,
    params: Mapping[str, Any] | None = None,
    *,
    id: Any = 1,
    meta: Any = None,
) -> dict[str, Any]:
    """A JSON-RPC request object; ``id=OMIT`` makes it a notification."""
    body_params = dict(params or {})
    if meta is not OMIT:
        body_params["_meta"] = request_meta() if meta is None else meta
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    body["params"] = _drop_omitted(body_params)
    return _drop_omitted(body)


def mcp_headers(body: Mapping[str, Any]) -> dict[str, str]:
    """The headers a conforming client mirrors from ``body`` (no ``Mcp-Param-*``)."""
    headers = {"Accept": "application/json, text/event-stream"}
    params = body.get("params") if isinstance(body.get("params"), Mapping) else {}
    meta = params.get("_meta") if isinstance(params.get("_meta"), Mapping) else {}
    version = meta.get(VERSION_KEY)
    if isinstance(version, str):
        headers["MCP-Protocol-Version"] = version
    method = body.get("method")
    if isinstance(method, str):
        headers["Mcp-Method"] = method
        name_field = NAME_FIELDS.get(method)
        name = params.get(name_field) if name_field else None
        if isinstance(name, str):
            headers["Mcp-Name"] = name if _is_plain(name) else b64_sentinel(name)
    return headers


def mcp_environ(message: Mapping[str, Any], stream: Any, length: int) -> dict[str, Any]:
    """A WSGI environ for POSTing ``message`` to ``/mcp`` with its MCP headers, reading the
    body from ``stream`` (``length`` bytes declared): for tests that drive a WSGI
    application without a client."""
    environ: dict[str, Any] = {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": "/mcp",
        "SERVER_NAME": "testserver",
        "SERVER_PORT": "80",
        "HTTP_HOST": "testserver",
        "REMOTE_ADDR": "127.0.0.1",
        "wsgi.url_scheme": "http",
        "wsgi.input": stream,
        "CONTENT_TYPE": "application/json",
        "CONTENT_LENGTH": str(length),
    }
    for name, value in mcp_headers(message).items():
        environ["HTTP_" + name.upper().replace("-", "_")] = value
    return environ


def asgi_post_scope(
    path: str,
    headers: list[tuple[bytes, bytes]],
    *,
    query_string: bytes = b"",
    server: tuple[str, int] = ("testserver", 80),
) -> dict[str, Any]:
    """An ASGI HTTP scope for a POST to ``path`` with ``headers`` (already encoded), for
    tests that drive an ASGI application without a client."""
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": query_string,
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": server,
    }


def mcp_asgi_scope(
    message: Mapping[str, Any],
    length: int,
    content_type: str = "application/json",
    query_string: bytes = b"",
) -> dict[str, Any]:
    """An ASGI HTTP scope for POSTing ``message`` to ``/mcp`` with its MCP headers
    (``length`` bytes of body declared): :func:`mcp_environ`'s twin for tests that drive
    an ASGI application without a client."""
    headers = [(b"host", b"testserver"), (b"content-type", content_type.encode("latin-1"))]
    headers += [(k.lower().encode(), v.encode()) for k, v in mcp_headers(message).items()]
    headers.append((b"content-length", str(length).encode()))
    return asgi_post_scope("/mcp", headers, query_string=query_string)


def _is_plain(value: str) -> bool:
    return (
        value == value.strip(" \t")
        and all(0x20 <= ord(ch) <= 0x7E for ch in value)
        and not (value.startswith("=?base64?") and value.endswith("?="))
    )


def merge_headers(base: Mapping[str, str], override: Mapping[str, Any] | None) -> dict[str, str]:
    """``override`` wins case-insensitively; a value of ``None``/``OMIT`` removes the header."""
    merged = dict(base)
    for name, value in (override or {}).items():
        for existing in [key for key in merged if key.lower() == name.lower()]:
            del merged[existing]
        if value is not None and value is not OMIT:
            merged[name] = value
    return merged


def post_raw(
    client: Client,
    body: bytes | str,
    headers: Mapping[str, str] | None = None,
    *,
    path: str = MCP_PATH,
    content_type: str = "application/json",
    **kw: Any,
) -> HttpResponse:
    """POST ``body`` verbatim (for malformed input)."""
    return client.post(path, body, content_type=content_type, headers=dict(headers or {}), **kw)


def mcp_post(
    client: Client,
    method: str,
    params: Mapping[str, Any] | None = None,
    *,
    id: Any = 1,
    headers: Mapping[str, Any] | None = None,
    meta: Any = None,
    path: str = MCP_PATH,
    **kw: Any,
) -> HttpResponse:
    """POST one well-formed MCP request, with the headers a conforming client sends.

    ``meta`` replaces the whole ``_meta`` (``OMIT`` drops it); ``headers`` are merged over the
    mirrored ones (``None`` removes one); ``id=OMIT`` sends a notification; ``kw`` goes to
    ``client.post`` (e.g. ``HTTP_HOST``).
    """
    body = mcp_body(method, params, id=id, meta=meta)
    return post_raw(
        client, json.dumps(body), merge_headers(mcp_headers(body), headers), path=path, **kw
    )


def call_tool(
    client: Client,
    name: str,
    arguments: Mapping[str, Any] | None = None,
    *,
    headers: Mapping[str, Any] | None = None,
    **kw: Any,
) -> HttpResponse:
    """``tools/call`` with ``Mcp-Name`` set; add ``Mcp-Param-*`` through ``headers``."""
    params: dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = dict(arguments)
    return mcp_post(client, "tools/call", params, headers=headers, **kw)


def read_resource(client: Client, uri: str, **kw: Any) -> HttpResponse:
    """``resources/read`` of ``uri`` (``Mcp-Name`` mirrors it); ``kw`` goes to ``mcp_post``."""
    return mcp_post(client, "resources/read", {"uri": uri}, **kw)


def notify(
    client: Client,
    method: str,
    params: Mapping[str, Any] | None = None,
    *,
    headers: Mapping[str, Any] | None = None,
    **kw: Any,
) -> HttpResponse:
    """POST a notification (no id)."""
    return mcp_post(client, method, params, id=OMIT, headers=headers, **kw)


def result_of(response: HttpResponse) -> dict[str, Any]:
    """The ``result`` of a 200 JSON-RPC result response (fails loudly otherwise)."""
    assert response.status_code == 200, (response.status_code, response.content[:500])
    message = response.json()
    assert "result" in message, message
    result: dict[str, Any] = message["result"]
    return result


def input_required(response: HttpResponse) -> dict[str, Any]:
    """The result of a 200 response that asks for input (``resultType: input_required``)."""
    result = result_of(response)
    assert result["resultType"] == "input_required", result
    return result


def error_of(response: HttpResponse) -> dict[str, Any]:
    """The ``error`` member of a JSON-RPC error response."""
    message = response.json()
    assert "error" in message, message
    error: dict[str, Any] = message["error"]
    return error


def assert_error(response: HttpResponse, status: int, code: int) -> dict[str, Any]:
    """Assert the HTTP status and JSON-RPC error code; return the error member."""
    assert response.status_code == status, (response.status_code, response.content[:500])
    error = error_of(response)
    assert error["code"] == code, error
    return error


# -- schema validation ------------------------------------------------------------------------

#: method -> (response type, complete result type) in schema.json.
RESULT_TYPES: dict[str, tuple[str, str]] = {
    "server/discover": ("DiscoverResultResponse", "DiscoverResult"),
    "tools/list": ("ListToolsResultResponse", "ListToolsResult"),
    "tools/call": ("CallToolResultResponse", "CallToolResult"),
    "resources/list": ("ListResourcesResultResponse", "ListResourcesResult"),
    "resources/templates/list": (
        "ListResourceTemplatesResultResponse",
        "ListResourceTemplatesResult",
    ),
    "resources/read": ("ReadResourceResultResponse", "ReadResourceResult"),
    "prompts/list": ("ListPromptsResultResponse", "ListPromptsResult"),
    "prompts/get": ("GetPromptResultResponse", "GetPromptResult"),
    "completion/complete": ("CompleteResultResponse", "CompleteResult"),
}
#: JSON-RPC error code -> its named type in schema.json.
ERROR_TYPES: dict[int, str] = {
    errors.PARSE_ERROR: "ParseError",
    errors.INVALID_REQUEST: "InvalidRequestError",
    errors.METHOD_NOT_FOUND: "MethodNotFoundError",
    errors.INVALID_PARAMS: "InvalidParamsError",
    errors.INTERNAL_ERROR: "InternalError",
    errors.HEADER_MISMATCH: "HeaderMismatchError",
    errors.MISSING_REQUIRED_CLIENT_CAPABILITY: "MissingRequiredClientCapabilityError",
    errors.UNSUPPORTED_PROTOCOL_VERSION: "UnsupportedProtocolVersionError",
}
#: Statuses the spec mandates for these codes on HTTP (streamable-http.mdx).
MANDATED_STATUS: dict[int, int] = {
    errors.METHOD_NOT_FOUND: 404,
    errors.HEADER_MISMATCH: 400,
    errors.MISSING_REQUIRED_CLIENT_CAPABILITY: 400,
    errors.UNSUPPORTED_PROTOCOL_VERSION: 400,
}


@cache
def _schema() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return document


@cache
def schema_validator(definition: str) -> Draft202012Validator:
    """A 2020-12 validator for ``$defs/<definition>``; refs resolve locally, never remotely."""
    schema = _schema()
    if definition not in schema["$defs"]:
        raise KeyError(f"schema.json has no $defs/{definition}")
    registry: Registry[Any] = Registry().with_resource(
        _SCHEMA_URI, Resource.from_contents(schema, default_specification=DRAFT202012)
    )
    return Draft202012Validator({"$ref": f"{_SCHEMA_URI}#/$defs/{definition}"}, registry=registry)


def assert_valid(instance: Any, definition: str) -> None:
    """Fail with every schema violation of ``instance`` against ``$defs/<definition>``."""
    problems = [
        f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}"
        for e in schema_validator(definition).iter_errors(instance)
    ]
    assert not problems, f"not a valid {definition}: {problems}\n{instance!r}"


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} overflows")
    return value


@dataclass
class RequestInfo:
    """What a test sent, as far as the response validator cares."""

    http_method: str = "POST"
    document: Any = None  # the parsed JSON body, or None if it did not parse

    @property
    def is_message(self) -> bool:
        return isinstance(self.document, dict)

    @property
    def is_notification(self) -> bool:
        return self.is_message and "id" not in self.document and "method" in self.document

    @property
    def method(self) -> str | None:
        method = self.document.get("method") if self.is_message else None
        return method if isinstance(method, str) else None

    @property
    def readable_id(self) -> str | int | float | None:
        if not self.is_message:
            return None
        value = self.document.get("id")
        # schema.json RequestId: a string or an integer, as JSON Schema 2020-12 reads one
        # (1.0 too), the server reading a written-out fraction only where a double is exact.
        whole = isinstance(value, float) and value.is_integer() and abs(value) < 2**53
        if isinstance(value, str) or whole or (type(value) is int):
            # The server does not echo an id too large to echo (jsonrpc.MAX_ID_CHARS).
            return None if len(str(value)) > jsonrpc.MAX_ID_CHARS else value
        return None

    @classmethod
    def from_body(cls, http_method: str, data: Any) -> RequestInfo:
        if isinstance(data, bytes):
            try:
                data = data.decode("utf-8")
            except UnicodeDecodeError:
                return cls(http_method)
        if not isinstance(data, str):
            return cls(http_method)
        try:
            document = json.loads(data, parse_constant=_not_json, parse_float=_finite_float)
        except (ValueError, RecursionError):
            return cls(http_method)
        return cls(http_method, document)


@dataclass
class Exchange:
    """One validated request/response pair."""

    request: RequestInfo
    status: int
    message: dict[str, Any] | None

    @property
    def error_code(self) -> int | None:
        if self.message is None or "error" not in self.message:
            return None
        code: int = self.message["error"]["code"]
        return code


@dataclass
class ExchangeLog:
    """Every MCP exchange of one test, in order."""

    exchanges: list[Exchange] = field(default_factory=list)

    @property
    def error_codes(self) -> set[int]:
        return {e.error_code for e in self.exchanges if e.error_code is not None}

    @property
    def error_statuses(self) -> set[tuple[int, int]]:
        return {(e.error_code, e.status) for e in self.exchanges if e.error_code is not None}


def validate_mcp_response(
    response: HttpResponse, request: RequestInfo, *, server_failure: bool = False
) -> Exchange:
    """Check one response from an MCP endpoint against the spec's shapes; return it parsed.

    Rules (basic/index.mdx, basic/transports/streamable-http.mdx, schema.json): never a 5xx
    but a 503 with ``Retry-After`` (a refused listen stream), or, when ``server_failure``
    (a test that breaks the server on purpose), a 500 whose body is -32603 without an id
    (the server failed before it read the request);
    405 carries ``Allow: POST``; 202 has no body and answers a notification; a body is one
    JSON-RPC response (``JSONRPCResultResponse`` + the method's result type, or
    ``JSONRPCErrorResponse`` + the code's error type) with an allowed code, the statuses the
    spec mandates for -32601/-32020/-32021/-32022, the request id echoed when it was readable,
    and never an id on an answer to a notification.
    """
    status = response.status_code
    # One 5xx is by design: 503 + Retry-After refuses a listen stream the server cannot hold.
    refused = status == 503 and response.has_header("Retry-After")
    failed = server_failure and status == 500
    assert status < 500 or refused or failed, (
        status,
        b"" if response.streaming else response.content[:500],
    )
    if response.get("Content-Type", "").startswith("text/event-stream"):
        # An SSE stream (possibly endless, like subscriptions/listen) is left unread for the
        # test; tests/streams validates each frame. It only ever answers a request.
        assert status == 200, status
        assert not request.is_notification, "a notification got a stream"
        return Exchange(request, status, None)
    if response.streaming:
        content = b"".join(response.streaming_content)
        response.streaming_content = [content]
    else:
        content = response.content
    if request.http_method != "POST":
        assert status == 405, status
        assert "POST" in response.get("Allow", ""), dict(response.items())
    if status == 202:
        assert content == b"", content[:200]
        assert request.is_notification, "202 answers only a notification"
    if not content:
        assert status in (202, 405) or (400 <= status < 500), status
        assert not response.has_header("Content-Type"), (status, response["Content-Type"])
        return Exchange(request, status, None)
    assert response["Content-Type"].split(";")[0].strip() == "application/json", response[
        "Content-Type"
    ]
    try:
        message = json.loads(content)
    except ValueError as exc:
        raise AssertionError(f"response body is not JSON: {content[:200]!r}") from exc
    assert isinstance(message, dict), message
    assert message.get("jsonrpc") == "2.0", message
    if failed:
        assert_valid(message, "JSONRPCErrorResponse")
        assert message["error"]["code"] == errors.INTERNAL_ERROR, message
        assert "id" not in message, message
    elif "error" in message:
        _validate_error(message, status, request)
    else:
        _validate_result(message, status, request)
    return Exchange(request, status, message)


def assert_same_id(echoed: Any, sent: Any) -> None:
    """JSON-RPC 2.0, "Response object": the id is "the same value" the request sent, in
    the same form too (``1.0`` is not answered as ``1``: a client whose JSON keeps floats
    apart from integers would not match them)."""
    assert echoed == sent, (echoed, sent)
    assert type(echoed) is type(sent), (echoed, sent)


def _validate_error(message: dict[str, Any], status: int, request: RequestInfo) -> None:
    assert_valid(message, "JSONRPCErrorResponse")
    code = message["error"]["code"]
    assert errors.is_allowed_code(code), f"code {code} breaks the allocation policy"
    named = ERROR_TYPES.get(code)
    if named is not None:
        # Some named types are whole responses, some only the error member.
        is_response = "error" in _schema()["$defs"][named].get("properties", {})
        assert_valid(message if is_response else message["error"], named)
    if code in MANDATED_STATUS:
        assert status == MANDATED_STATUS[code], (code, status)
    elif code == errors.LISTEN_LIMIT_REACHED:
        assert status in (429, 503), (code, status)
    else:
        assert status == 200 or 400 <= status < 500, (code, status)
    if request.is_notification:
        assert "id" not in message, "an error about a notification carries no id"
        assert status >= 400, status
    elif "id" in message:
        assert_same_id(message["id"], request.readable_id)
    elif request.readable_id is not None and status not in (401, 403, 413):
        # 403 (Origin), 413 (size) and 401 (credentials: basic/authorization.mdx puts
        # authentication before the body) are decided before the body is read.
        raise AssertionError(f"error response dropped the readable id {request.readable_id!r}")


#: ``Task`` of the Tasks extension (ext-tasks ``schema/draft/schema.ts``): required keys.
TASK_REQUIRED = ("taskId", "status", "createdAt", "lastUpdatedAt", "ttlMs")
TASK_STATUSES = ("working", "input_required", "completed", "failed", "cancelled")


def assert_create_task_result(result: Mapping[str, Any]) -> None:
    """A flat ``CreateTaskResult``: the ``Task`` fields, no envelope (ext-tasks schema)."""
    missing = [key for key in TASK_REQUIRED if key not in result]
    assert not missing, (missing, result)
    assert result["status"] in TASK_STATUSES, result
    ttl = result["ttlMs"]
    assert ttl is None or (isinstance(ttl, int) and ttl > 0), result
    forbidden = {"task", "result", "error", "inputRequests", "requestState"} & set(result)
    assert not forbidden, (forbidden, result)


def _validate_result(message: dict[str, Any], status: int, request: RequestInfo) -> None:
    assert status == 200, status
    assert not request.is_notification, "a notification got a result"
    assert_valid(message, "JSONRPCResultResponse")
    assert_same_id(message["id"], request.readable_id)
    types = RESULT_TYPES.get(request.method or "")
    if types is None:
        return
    response_type, result_type = types
    assert_valid(message, response_type)
    result = message["result"]
    # schema.json's response unions cannot catch a missing field (each result is a union with
    # InputRequiredResult, whose resultType is any string), so a complete result is also
    # checked against its own type.
    if result.get("resultType") == "complete":
        assert_valid(result, result_type)
    elif result.get("resultType") == "task" and request.method == "tools/call":
        assert_create_task_result(result)
    else:
        assert result.get("resultType") == "input_required", result
        assert_valid(result, "InputRequiredResult")


def admission_threads(monkeypatch: Any) -> list[int]:
    """The ids of the threads ``MCPServer.admit`` runs on from now on, in call order: to
    tell whether admission stayed on the event loop or moved to a thread."""
    import threading

    from django_mcp.server.dispatch import MCPServer

    seen: list[int] = []
    original = MCPServer.admit

    def admit(self: MCPServer, *args: Any, **kwargs: Any) -> Any:
        seen.append(threading.get_ident())
        return original(self, *args, **kwargs)

    monkeypatch.setattr(MCPServer, "admit", admit)
    return seen
