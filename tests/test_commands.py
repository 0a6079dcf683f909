"""``manage.py mcp_call`` and ``mcp_inspect``: the operator's view of a site, through the
same admission and dispatch as every transport; and bad input to the other commands, which
ends with a ``CommandError`` (a one-line message, exit status 1), never a traceback."""

from __future__ import annotations

import functools
import io
import json
from io import StringIO
from typing import Annotated, ClassVar

import pytest
from django.core.checks import Error, register
from django.core.management import call_command
from django.core.management.base import CommandError

import django_mcp.sites
from django_mcp import Context, MCPHeader, ToolError
from django_mcp.auth.models import AccessToken


@pytest.fixture
def site(mcp_site, monkeypatch):
    """The commands' default site is a fresh one."""
    monkeypatch.setattr(django_mcp.sites, "site", mcp_site)
    monkeypatch.setattr("django_mcp.cli.identity.site", mcp_site)
    monkeypatch.setattr("django_mcp.management.commands.mcp_inspect.site", mcp_site)
    return mcp_site


def run(*args: str) -> tuple[int, str, str]:
    out, err = StringIO(), StringIO()
    try:
        call_command(*args, stdout=out, stderr=err)
    except SystemExit as exit:
        return int(exit.code or 0), out.getvalue(), err.getvalue()
    return 0, out.getvalue(), err.getvalue()


def test_mcp_call_prints_the_result_and_exits_by_outcome(site):
    """server/tools.mdx: a result exits 0, ``isError`` 1, a protocol error (unknown tool,
    -32602) 2; header-bound arguments need no headers (there are none off HTTP)."""

    @site.tool
    def add(a: int, region: Annotated[str, MCPHeader("Region")] = "eu") -> str:
        return f"{a + 1} in {region}"

    @site.tool
    def fail() -> str:
        raise ToolError("no")

    status, out, _ = run("mcp_call", "add", "--arguments", '{"a": 41, "region": "Zürich"}')
    assert status == 0
    assert json.loads(out)["result"]["content"][0]["text"] == "42 in Zürich"

    status, out, _ = run("mcp_call", "fail")
    assert (status, json.loads(out)["result"]["isError"]) == (1, True)

    status, out, _ = run("mcp_call", "missing")
    assert (status, json.loads(out)["error"]["code"]) == (2, -32602)

    status, out, _ = run("mcp_call", "add", "--arguments", '{"a": "x"}')
    assert status == 1  # invalid arguments are a tool execution error

    with pytest.raises(CommandError, match="not JSON"):
        call_command("mcp_call", "add", "--arguments", "{nope")


def exit_status_from_the_command_line(*argv: str) -> int:
    """The status ``manage.py mcp_call ...`` exits with (Django's ``run_from_argv``, which
    turns a ``CommandError`` into its message on stderr and its ``returncode``)."""
    from django_mcp.management.commands.mcp_call import Command

    command = Command(stdout=StringIO(), stderr=StringIO())
    with pytest.raises(SystemExit) as exit:
        command.run_from_argv(["manage.py", "mcp_call", *argv])
    return int(exit.value.code or 0)


@pytest.mark.parametrize(
    "argv",
    [
        ("add", "--arguments", "{nope"),  # not JSON
        ("add", "--site", "nowhere"),  # no such site
        ("add", "--bogus"),  # an option argparse does not know
        (),  # no tool named
    ],
    ids=["arguments", "site", "option", "no-tool"],
)
def test_mcp_call_that_made_no_call_exits_4_not_a_tool_or_protocol_status(site, argv):
    """docs/guides/stdio.md, mcp_call's statuses: 1 is a tool error and 2 a protocol error.
    A call refused before it was made (bad --arguments, an unknown site) exited 1, and a
    usage error argparse's 2, so a script took them for the tool's or the server's answer;
    they exit 4."""
    assert exit_status_from_the_command_line(*argv) == 4


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_mcp_call_refuses_a_constant_that_is_not_json(site, constant):
    """NaN and Infinity are not JSON (RFC 8259), and the server refuses them with -32700.
    Python's lenient decoder used to take them, and the encoder then sent NaN as null: the
    tool ran with an argument the operator never gave. Now a ``CommandError``."""
    seen = []

    @site.tool
    def measure(value: float | None = 1.0) -> str:
        seen.append(value)
        return "measured"

    with pytest.raises(CommandError, match=f"--arguments is not JSON: {constant} is not"):
        run("mcp_call", "measure", "--arguments", f'{{"value": {constant}}}')
    assert seen == []


def test_mcp_call_refuses_arguments_nested_too_deep_to_decode(site):
    """``json.loads`` raises RecursionError, not ValueError, on deep nesting: it was a
    traceback and exit status 1, which means "a tool error". Now a ``CommandError``."""

    @site.tool
    def echo(value: object = None) -> str:
        return "ok"

    deep = '{"value": ' + "[" * 100_000 + "]" * 100_000 + "}"
    with pytest.raises(CommandError, match="nested too deeply"):
        run("mcp_call", "echo", "--arguments", deep)


@pytest.mark.parametrize(
    ("encoding", "text"),
    [
        ("cp1252", "\u65e5\u672c\u8a9e \U0001f600"),  # Windows' pipes; CJK and an emoji
        ("ascii", "Z\u00fcrich"),  # PYTHONIOENCODING=ascii, or an old C locale
        ("utf-8", "listing-\udcff.txt"),  # a file name os.listdir() decoded with surrogateescape
    ],
)
def test_mcp_call_prints_a_response_its_stdout_cannot_encode_as_escaped_json(site, encoding, text):
    """The tool ran: its response must be printed whatever stdout's encoding, not lost to a
    ``UnicodeEncodeError`` traceback and exit status 1, which means "a tool error". What
    the encoding cannot hold is written as JSON's ``\\u`` escapes (the same JSON)."""

    @site.tool
    def name() -> str:
        return text

    raw = io.BytesIO()
    stdout = io.TextIOWrapper(raw, encoding=encoding, write_through=True)
    try:
        call_command("mcp_call", "name", stdout=stdout)
    except SystemExit as exit:
        pytest.fail(f"mcp_call exited {exit.code}")
    response = json.loads(raw.getvalue().decode(encoding))
    assert response["result"]["content"][0]["text"] == text


@pytest.mark.django_db
def test_mcp_call_runs_as_the_named_user(site, django_user_model, monkeypatch):
    """basic/authorization.mdx: off HTTP the caller comes from the environment or
    ``--user``; a gated tool is unknown to anyone else."""
    django_user_model.objects.create(username="ada", is_superuser=True)

    @site.tool(permission_required="books.add_book")
    def who(ctx: Context) -> str:
        return ctx.user.get_username()

    assert run("mcp_call", "who", "--user", "ada")[0] == 0
    monkeypatch.setenv("DJANGO_MCP_USER", "ada")
    assert json.loads(run("mcp_call", "who")[1])["result"]["content"][0]["text"] == "ada"
    monkeypatch.delenv("DJANGO_MCP_USER")
    assert run("mcp_call", "who")[0] == 2
    with pytest.raises(CommandError, match="No active user"):
        call_command("mcp_call", "who", "--user", "nobody")


@pytest.mark.django_db
@pytest.mark.parametrize("command", ["mcp_call", "mcp_stdio"])
def test_a_user_name_that_is_not_utf8_is_no_user_not_a_traceback(site, command, monkeypatch):
    """``--user`` (or ``$DJANGO_MCP_USER``) in bytes that are not UTF-8 reaches Python as
    lone surrogates (``surrogateescape``), which no database driver can encode: the query
    for that user raised ``UnicodeEncodeError``, a traceback. No user is named so."""
    name = b"ad\xffa".decode("utf-8", "surrogateescape")
    with pytest.raises(CommandError, match="No active user is named"):
        call_command(command, "--user", name, *(["tool"] if command == "mcp_call" else []))
    monkeypatch.setenv("DJANGO_MCP_USER", name)
    with pytest.raises(CommandError, match="No active user is named"):
        call_command(command, *(["tool"] if command == "mcp_call" else []))


def test_mcp_inspect_lists_every_declaration_with_access_and_annotations(site):
    """Every tool, resource, template and prompt of the site, with its schemas, its
    permissions (Django permissions and custom checks) and annotations."""

    def staff_only(ctx: Context) -> bool:
        return bool(ctx.user and ctx.user.is_staff)

    @site.tool(read_only=True)
    def search(query: str) -> str:
        return query

    @site.tool(permission_required="books.add_book", permission=staff_only)
    def add_book(title: str) -> str:
        return title

    site.resource("notes://about")(lambda: "about")
    site.resource("notes://{id}")(lambda id: id)
    site.prompt(name="greet")(lambda: "hi")

    status, out, _ = run("mcp_inspect", "--site", site.name, "--format", "json")
    [report] = json.loads(out)

    assert status == 0
    tools = {tool["name"]: tool for tool in report["tools"]}
    assert tools["search"]["annotations"] == {"readOnlyHint": True}
    assert tools["search"]["inputSchema"]["required"] == ["query"]
    assert tools["search"]["access"] == {"public": True}
    assert tools["add_book"]["access"]["permission_required"] == ["books.add_book"]
    assert tools["add_book"]["access"]["custom_check"].endswith("staff_only")
    assert [r["uri"] for r in report["resources"]] == ["notes://about"]
    assert [t["uriTemplate"] for t in report["resource_templates"]] == ["notes://{id}"]
    assert [p["name"] for p in report["prompts"]] == ["greet"]

    status, table, _ = run("mcp_inspect", "--site", site.name)
    assert "add_book" in table
    assert "perms=books.add_book" in table


def test_mcp_inspect_prints_its_table_whatever_stdouts_encoding(site):
    """A resource URI and an argument name need not be ASCII: on a stdout whose encoding
    lacks their characters (``cp1252``, a Windows pipe) the table was lost to a
    ``UnicodeEncodeError`` traceback; what the encoding cannot hold is escaped instead."""

    @site.tool
    def lookup(名前: str) -> str:  # an identifier in Japanese
        return 名前

    site.resource("notes://\u65e5\u672c")(lambda: "about")

    raw = io.BytesIO()
    stdout = io.TextIOWrapper(raw, encoding="cp1252", write_through=True)
    call_command("mcp_inspect", "--site", site.name, stdout=stdout)
    table = raw.getvalue().decode("cp1252")

    assert "notes://\\u65e5\\u672c" in table
    assert "arguments: \\u540d\\u524d" in table


def test_mcp_inspect_json_keeps_its_keys_for_each_kind_of_gate(site):
    """The JSON a script reads: ``public`` first, then ``permission_required`` and
    ``custom_check`` whenever a gate is declared (empty or null when one of them is not);
    a ``functools.partial`` check is named by its function, not its ``repr``."""

    def has_role(role: str, ctx: Context) -> bool:
        return role == "editor"

    @site.tool(permission_required="books.add_book")
    def perms_only() -> str:
        return ""

    @site.tool(permission=functools.partial(has_role, "editor"))
    def check_only() -> str:
        return ""

    _, out, _ = run("mcp_inspect", "--site", site.name, "--format", "json")
    [report] = json.loads(out)
    access = {tool["name"]: tool["access"] for tool in report["tools"]}

    assert list(access["perms_only"]) == ["public", "permission_required", "custom_check"]
    assert access["perms_only"]["custom_check"] is None
    assert access["check_only"]["permission_required"] == []
    assert access["check_only"]["custom_check"].endswith("has_role (partial)")
    assert access["check_only"]["public"] is False


def test_mcp_inspect_exits_non_zero_when_checks_report_errors(site):
    """A system check error is printed after the listing and fails the command."""

    def broken(app_configs, **kwargs):
        return [Error("broken on purpose", id="tests.E999")]

    register(broken)
    try:
        status, out, err = run("mcp_inspect", "--site", site.name)
    finally:
        from django.core.checks.registry import registry

        registry.registered_checks.discard(broken)
    assert status == 1
    assert "Site" in out
    assert "tests.E999" in err


def test_mcp_inspect_lists_the_demo_models_as_tools():
    """ModelTools: the model, its action tools and the permissions of each action."""
    status, out, _ = run("mcp_inspect", "--format", "json")
    assert status == 0
    [default] = [r for r in json.loads(out) if r["site"] == django_mcp.sites.site.name]
    [authors] = default["model_tools"]
    assert authors["model"] == "books.Author"
    assert "author_create" in authors["tools"]
    assert authors["permissions"]["create"] == ["books.add_author"]


def test_mcp_inspect_shows_what_guards_each_model_tools_action():
    """An action no permission guards is public (the demo's reads); a guarded one names
    its permission, and ``has_permission`` only where a class overrides it."""
    status, out, _ = run("mcp_inspect", "--format", "json")
    assert status == 0
    [default] = [r for r in json.loads(out) if r["site"] == django_mcp.sites.site.name]
    access = {tool["name"]: tool["access"] for tool in default["tools"]}
    assert access["author_list"] == {"public": True}
    assert access["author_create"]["public"] is False
    assert access["author_create"]["permission_required"] == ["books.add_author"]
    assert "custom_check" not in access["author_create"]
    # The rows' resource template answers to the get action's guards: none here.
    rows = {t["uriTemplate"]: t["access"] for t in default["resource_templates"]}
    assert rows["authors://{id}"] == {"public": True}
    _, table, _ = run("mcp_inspect")
    assert "functools" not in table


def test_mcp_inspect_shows_the_guards_of_a_model_rows_resource(site):
    """The rows' resource template is guarded by the get action's permission: it says
    which, as the tool does (not the internal check's ``repr``)."""
    from testproject.books.models import Book

    class Guarded(django_mcp.ModelTools):
        actions = ("get", "create")
        lookup_field = "isbn"
        resource_uri = "shelf://{isbn}"
        permission_required: ClassVar = {"get": "books.view_book", "create": "books.add_book"}

    site.register(Book, Guarded)

    status, out, _ = run("mcp_inspect", "--site", site.name, "--format", "json")
    assert status == 0
    [report] = json.loads(out)
    [rows] = report["resource_templates"]
    assert rows["access"] == {"public": False, "permission_required": ["books.view_book"]}
    _, table, _ = run("mcp_inspect", "--site", site.name)
    assert "perms=books.view_book" in table
    assert "functools" not in table


def test_mcp_inspect_names_an_overridden_has_permission_and_permission_classes(site):
    from rest_framework.permissions import IsAuthenticated

    from testproject.books.models import Author, Book

    class Gated(django_mcp.ModelTools):
        actions = ("list",)
        permission_classes = (IsAuthenticated,)

    class Custom(django_mcp.ModelTools):
        actions = ("list",)

        def has_permission(self, ctx: Context, action: str) -> bool:
            return True

    site.register(Book, Gated)
    site.register(Author, Custom)

    status, out, _ = run("mcp_inspect", "--site", site.name, "--format", "json")
    assert status == 0
    [report] = json.loads(out)
    access = {tool["name"]: tool["access"] for tool in report["tools"]}
    assert access["book_list"] == {
        "public": False,
        "permission_classes": ["rest_framework.permissions.IsAuthenticated"],
    }
    assert access["author_list"]["public"] is False
    assert access["author_list"]["custom_check"].endswith("Custom.has_permission")
    _, table, _ = run("mcp_inspect", "--site", site.name)
    assert "classes=rest_framework.permissions.IsAuthenticated" in table


def test_composed_drf_permissions_are_named_as_written(site):
    """DRF's ``&``, ``|`` and ``~`` make class-like objects with no name of their own; the
    report writes them out instead of failing (the explorer's page would be a 500)."""
    from rest_framework.permissions import IsAdminUser, IsAuthenticated

    from django_mcp.explorer.catalogue import entries
    from testproject.books.models import Book

    class Composed(django_mcp.ModelTools):
        actions = ("list",)
        permission_classes = (IsAuthenticated & ~IsAdminUser, IsAdminUser | IsAuthenticated)

    site.register(Book, Composed)
    status, out, _ = run("mcp_inspect", "--site", site.name, "--format", "json")
    assert status == 0
    [report] = json.loads(out)
    drf = "rest_framework.permissions"
    assert report["tools"][0]["access"]["permission_classes"] == [
        f"({drf}.IsAuthenticated & ~{drf}.IsAdminUser)",
        f"({drf}.IsAdminUser | {drf}.IsAuthenticated)",
    ]
    [tool] = entries(site)["tools"]
    assert (
        tool["access_items"][0] == f"permission class ({drf}.IsAuthenticated & ~{drf}.IsAdminUser)"
    )


def test_mcp_inspect_shows_the_scopes_a_declaration_requires():
    """The demo's ``set_price`` needs the ``books:write`` scope: not public."""
    status, out, _ = run("mcp_inspect", "--format", "json")
    assert status == 0
    [default] = [r for r in json.loads(out) if r["site"] == django_mcp.sites.site.name]
    [set_price] = [tool for tool in default["tools"] if tool["name"] == "set_price"]
    assert set_price["access"]["scopes"] == ["books:write"]
    assert set_price["access"]["public"] is False


def test_the_explorer_says_who_may_use_each_model_tools_action():
    """The explorer reads the same access report: the demo's author list is open to
    anyone, its create action names the model permission."""
    from django_mcp.explorer.catalogue import entries

    tools = {tool["name"]: tool for tool in entries(django_mcp.sites.site)["tools"]}
    assert tools["author_list"]["access_items"] == ["anyone who may use the endpoint"]
    assert tools["author_create"]["access_items"] == [
        "permission books.add_author",
        "scope books:write",
    ]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("expires", "message"),
    [
        ("2024-13-45T00:00", "is not a possible date-time"),  # ValueError from parse_datetime
        ("99999999999d", "is not a possible date-time"),  # OverflowError from timedelta
        ("999999999d", "is not a possible date-time"),  # OverflowError: past year 9999
        ("2020-01-01T00:00", "is not in the future"),
        ("0m", "is not in the future"),
        # Year 10000 in UTC: PostgreSQL stored it, then every token list was a 500.
        ("9999-12-31T23:59:59-05:00", "out of the range a database can store"),
    ],
)
def test_mcp_create_token_refuses_an_impossible_or_past_expiry(django_user_model, expires, message):
    """An impossible date or a duration past the calendar's end used to be a traceback; a
    date in the past issued a token dead on arrival, printed its secret and exited 0 (the
    operator learnt only when every request got 401). Each is now a ``CommandError``, and
    no token is issued."""
    django_user_model.objects.create_user("ada")
    with pytest.raises(CommandError, match=message):
        run("mcp_create_token", "ada", "--expires", expires)
    assert AccessToken.objects.count() == 0


@pytest.mark.django_db
@pytest.mark.parametrize("where", ["username", "--name", "--scope"])
def test_mcp_create_token_refuses_text_that_is_not_utf8(django_user_model, where):
    """An argument in bytes that are not UTF-8 reaches Python as lone surrogates, which
    no database driver encodes: the command died with a ``UnicodeEncodeError`` traceback.
    It is a ``CommandError`` naming the argument, and no token is issued."""
    django_user_model.objects.create_user("ada")
    bad = b"x\xff".decode("utf-8", "surrogateescape")
    args = [bad] if where == "username" else ["ada", where, bad]
    with pytest.raises(CommandError, match="not UTF-8"):
        run("mcp_create_token", *args)
    assert AccessToken.objects.count() == 0


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--name", "n" * 101], "--name is longer than 100 characters"),
        (["--scope", " ".join(f"scope:{i:04}" for i in range(100))], "longer than 1000"),
        (["--name", "a\x00b"], "--name holds a NUL character"),
        (["--scope", "books:\x00read"], "--scope holds a NUL character"),
    ],
)
def test_mcp_create_token_refuses_what_its_columns_cannot_hold(django_user_model, args, message):
    """A ``--name`` past its 100 characters, scopes past their 1000, or a NUL made
    PostgreSQL refuse the row (a ``DataError`` or ``ValueError`` traceback) and SQLite keep
    it all. A ``CommandError`` naming the argument, and no token is issued."""
    django_user_model.objects.create_user("ada")
    with pytest.raises(CommandError, match=message):
        run("mcp_create_token", "ada", *args)
    assert AccessToken.objects.count() == 0


@pytest.mark.django_db
def test_mcp_create_token_refuses_an_inactive_user(django_user_model):
    """Every authenticator refuses an inactive user's token with 401, so the command
    printed a secret that never worked and exited 0, as it did for a past expiry."""
    django_user_model.objects.create_user("ada", is_active=False)
    with pytest.raises(CommandError, match="inactive"):
        run("mcp_create_token", "ada")
    assert AccessToken.objects.count() == 0


@pytest.mark.django_db
@pytest.mark.parametrize("option", ["--days", "--summary-days"])
def test_mcp_prune_logs_refuses_a_retention_beyond_the_calendar(option):
    """``--days 1000000`` passed the ``days < 0`` check, then ``now - timedelta(days)``
    raised OverflowError ("date value out of range"): a traceback. Now a ``CommandError``."""
    with pytest.raises(CommandError, match="out of range"):
        run("mcp_prune_logs", option, "1000000", "--dry-run")
