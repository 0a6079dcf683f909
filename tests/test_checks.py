"""System checks (django_mcp/checks.py): stable ids, called directly under override_settings."""

from __future__ import annotations

import threading
from typing import Any
from unittest import mock

import pytest
from django.core import checks
from django.test import override_settings
from django.test.utils import isolate_apps

from django_mcp.checks import (
    MIDDLEWARE_PATH,
    check_middleware,
    check_model_tools_lookups,
    check_settings,
)
from django_mcp.middleware import MCPMiddleware
from django_mcp.tasks import store
from tests.helpers import call_tool, override_mcp
from tests.tasks.support import declaring, start, tasks_call


def ids(messages: list[checks.CheckMessage]) -> list[str]:
    return [message.id for message in messages if message.id is not None]


def settings_errors(value: Any) -> list[checks.CheckMessage]:
    with override_settings(DJANGO_MCP=value):
        return check_settings(None)


def test_the_checks_are_registered():
    registered = checks.registry.registry.get_checks()
    assert check_middleware in registered
    assert check_settings in registered
    assert check_model_tools_lookups in registered


def test_the_test_project_passes_every_check():
    assert check_middleware(None) == []
    assert check_settings(None) == []


def test_e001_when_the_middleware_is_missing(settings):
    settings.MIDDLEWARE = [m for m in settings.MIDDLEWARE if m != MIDDLEWARE_PATH]
    messages = check_middleware(None)
    assert ids(messages) == ["django_mcp.E001"]
    assert messages[0].level == checks.ERROR
    assert messages[0].hint


class ProjectMCPMiddleware(MCPMiddleware):
    """A project's own subclass, as a team adding behaviour around admission would write."""


def test_a_subclass_of_the_middleware_satisfies_e001(settings):
    settings.MIDDLEWARE = [
        *(m for m in settings.MIDDLEWARE if m != MIDDLEWARE_PATH),
        f"{__name__}.ProjectMCPMiddleware",
    ]
    assert check_middleware(None) == []


def test_an_unrelated_or_unimportable_middleware_does_not_satisfy_e001(settings):
    settings.MIDDLEWARE = [
        *(m for m in settings.MIDDLEWARE if m != MIDDLEWARE_PATH),
        "django.middleware.common.CommonMiddleware",
        "no.such.Middleware",
    ]
    assert ids(check_middleware(None)) == ["django_mcp.E001"]


def test_e002_when_the_setting_is_not_a_dict():
    assert ids(settings_errors(["SERVER_NAME"])) == ["django_mcp.E002"]


def test_an_absent_setting_is_fine(settings):
    del settings.DJANGO_MCP
    assert check_settings(None) == []


def test_e003_for_each_unknown_key():
    messages = settings_errors({"SERVER_NAME": "x", "PAGESIZE": 10, "TTL": 1})
    assert ids(messages) == ["django_mcp.E003", "django_mcp.E003"]
    assert "'PAGESIZE'" in messages[0].msg
    assert "'TTL'" in messages[1].msg


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("REVISION_POLICY", "lenient"),
        ("REVISION_POLICY", None),
        ("SUPPORTED_REVISIONS", "2026-07-28"),
        ("SUPPORTED_REVISIONS", ["latest"]),
        ("SUPPORTED_REVISIONS", ["2026-02-30"]),
        ("BEST_EFFORT_REVISIONS", ["v999.0.0"]),
        ("BEST_EFFORT_REVISIONS", "2027-01-01"),
        ("REQUEST_LOG", "everything"),
        ("REQUEST_LOG_SAMPLE_RATE", 1.5),
        ("REQUEST_LOG_SAMPLE_RATE", -0.1),
        ("REQUEST_LOG_SAMPLE_RATE", "0.5"),
        ("PAGE_SIZE", 0),
        ("PAGE_SIZE", True),
        ("PAGE_SIZE", "10"),
        ("MAX_REQUEST_BYTES", -1),
        ("REQUEST_LOG_BUFFER_SIZE", 0),
        ("REQUEST_LOG_BATCH_SIZE", 1.5),
        ("REQUEST_LOG_FLUSH_INTERVAL", 0),
        ("REQUEST_LOG_FLUSH_INTERVAL", True),
        ("REQUEST_LOG_BACKGROUND", "yes"),
        ("DISCOVER_TTL_MS", -1),
        ("LIST_TTL_MS", 1.5),
        ("LIST_TTL_MS", False),
        ("RESOURCE_TTL_MS", "0"),
        ("RATE_LIMIT_USER", "lots"),
        ("RATE_LIMIT_TOKEN", 100),
        ("RATE_LIMIT_IP", "0/m"),
        ("RATE_LIMIT_CACHE", "nowhere"),
        ("TRUSTED_PROXY_HOPS", -1),
        ("TRUSTED_PROXY_HOPS", True),
        ("LISTEN_RECHECK_SECONDS", 0),
        ("LISTEN_RECHECK_SECONDS", None),
        ("LISTEN_RECHECK_SECONDS", "30"),
        ("STDIO_MAX_QUEUED_REQUESTS", 0),
        ("STDIO_MAX_QUEUED_REQUESTS", None),
        ("MAX_LIVE_STREAMS", -1),
        ("MAX_LIVE_STREAMS", None),
        ("MAX_LIVE_STREAMS", "64"),
        ("MAX_LIVE_STREAMS_PER_CALLER", 0),
        ("MAX_LIVE_STREAMS_PER_CALLER", "8"),
        ("PROGRESS_INTERVAL", -0.1),
        ("PROGRESS_INTERVAL", float("nan")),
        ("PROGRESS_INTERVAL", float("inf")),
        ("LISTEN_MAX_SECONDS", float("inf")),
        ("LISTEN_MAX_SECONDS", float("nan")),
        ("LISTEN_KEEPALIVE_SECONDS", float("inf")),
        ("LISTEN_RECHECK_SECONDS", float("inf")),
        ("PROGRESS_INTERVAL", None),
        ("PROGRESS_INTERVAL", "0.05"),
        ("PROGRESS_INTERVAL", True),
    ],
)
def test_e004_for_an_invalid_value(key, value):
    messages = settings_errors({key: value})
    assert ids(messages) == ["django_mcp.E004"]
    assert repr(key) in messages[0].msg
    assert messages[0].hint


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("REVISION_POLICY", "strict"),
        ("SUPPORTED_REVISIONS", ("2026-07-28",)),
        ("BEST_EFFORT_REVISIONS", ["2027-01-01"]),
        ("BEST_EFFORT_REVISIONS", None),
        ("REQUEST_LOG", "errors"),
        ("REQUEST_LOG_SAMPLE_RATE", 0),
        ("PAGE_SIZE", 1),
        ("DISCOVER_TTL_MS", 0),
        ("REQUEST_LOG_FLUSH_INTERVAL", 0.25),
        ("RATE_LIMIT_USER", "120/m"),
        ("RATE_LIMIT_TOKEN", None),
        ("RATE_LIMIT_IP", "10/30s"),
        ("RATE_LIMIT_CACHE", "default"),
        ("TRUSTED_PROXY_HOPS", 2),
        ("LISTEN_RECHECK_SECONDS", 0.5),
        ("MAX_LIVE_STREAMS", 0),
        ("PROGRESS_INTERVAL", 0),
        ("PROGRESS_INTERVAL", 1),
    ],
)
def test_valid_values_pass(key, value):
    assert settings_errors({key: value}) == []


@pytest.mark.django_db
@pytest.mark.parametrize("ttl", [10**15, 2**63])
def test_e004_for_a_task_ttl_no_expiry_date_can_hold(ttl, client):
    """A ``TASK_TTL_MS`` past what a date holds (10**15 ms is 31,700 years: year 9999 is
    passed) passed the check, and then every task creation was -32603 (an
    ``OverflowError`` computing the expiry). The check refuses it; 100 years passes."""
    assert ids(settings_errors({"TASK_TTL_MS": ttl})) == ["django_mcp.E004"]
    assert settings_errors({"TASK_TTL_MS": 100 * 365 * 86_400_000}) == []
    with override_mcp(TASK_TTL_MS=ttl):
        response = call_tool(client, "slow_compute", {"seconds": 1}, meta=declaring())
    assert response.json()["error"]["code"] == -32603  # what the check now prevents


def test_several_invalid_values_give_one_error_each():
    messages = settings_errors({"PAGE_SIZE": 0, "LIST_TTL_MS": -5, "REQUEST_LOG": "x"})
    assert ids(messages) == ["django_mcp.E004"] * 3


@pytest.mark.parametrize(
    ("value", "errors"),
    [
        ({"TASK_HEARTBEAT_SECONDS": 120.0}, 1),  # the default timeout (60 s) is too short
        ({"TASK_HEARTBEAT_SECONDS": 10.0, "TASK_WORKER_TIMEOUT": 15.0}, 1),
        ({"TASK_HEARTBEAT_SECONDS": 10.0, "TASK_WORKER_TIMEOUT": 20.0}, 0),
        ({"TASK_HEARTBEAT_SECONDS": 120.0, "TASK_WORKER_TIMEOUT": None}, 0),
    ],
)
def test_e004_for_a_worker_timeout_a_heartbeat_cannot_keep_up_with(value, errors):
    """A running task whose last beat is older than TASK_WORKER_TIMEOUT is failed as
    orphaned: a timeout under twice the heartbeat fails healthy tasks."""
    messages = settings_errors(value)
    assert ids(messages) == ["django_mcp.E004"] * errors
    if errors:
        assert "'TASK_WORKER_TIMEOUT'" in messages[0].msg
        assert "twice TASK_HEARTBEAT_SECONDS" in (messages[0].hint or "")


@pytest.mark.django_db
def test_e004_for_task_seconds_no_date_or_wait_can_hold(client):
    """A ``TASK_WORKER_TIMEOUT`` of 1e11 s passed the check, and then every ``tasks/get``
    of a running task was -32603 (an ``OverflowError`` computing "now minus the timeout");
    a ``TASK_HEARTBEAT_SECONDS`` past ``threading.TIMEOUT_MAX`` killed the heartbeat
    thread at its first wait. Both are refused past 100 years."""
    for value in (
        {"TASK_WORKER_TIMEOUT": 1e11},
        {"TASK_HEARTBEAT_SECONDS": 1e10, "TASK_WORKER_TIMEOUT": None},
    ):
        assert ids(settings_errors(value)) == ["django_mcp.E004"], value
    century = 100 * 365 * 86_400
    assert settings_errors({"TASK_WORKER_TIMEOUT": century}) == []
    # Windows' thread waits end at about 49.7 days (threading.TIMEOUT_MAX): the heartbeat's
    # bound is the lower of the two there.
    with mock.patch.object(threading, "TIMEOUT_MAX", 4_294_967.0):
        days_50 = {"TASK_HEARTBEAT_SECONDS": 50 * 86_400, "TASK_WORKER_TIMEOUT": None}
        assert ids(settings_errors(days_50)) == ["django_mcp.E004"]
    assert settings_errors(days_50) == []
    task_id = start(client, "slow_compute", {"seconds": 60})["taskId"]
    assert store.pick_up(task_id)
    with override_mcp(TASK_WORKER_TIMEOUT=1e11):
        response = tasks_call(client, "tasks/get", task_id)
    assert response.json()["error"]["code"] == -32603  # what the check now prevents


def test_e004_for_an_empty_supported_revisions_list():
    assert ids(settings_errors({"SUPPORTED_REVISIONS": []})) == ["django_mcp.E004"]


@pytest.mark.parametrize(
    ("key", "settings_value", "named"),
    [
        ("SUPPORTED_REVISIONS", {"SUPPORTED_REVISIONS": ["2025-11-25", "2026-07-28"]}, None),
        ("BEST_EFFORT_REVISIONS", {"BEST_EFFORT_REVISIONS": ["2025-11-25"]}, "'2025-11-25'"),
        ("BEST_EFFORT_REVISIONS", {"BEST_EFFORT_REVISIONS": ["2026-07-28"]}, "'2026-07-28'"),
        (
            "BEST_EFFORT_REVISIONS",
            {
                "SUPPORTED_REVISIONS": ["2026-07-28", "2027-01-01"],
                "BEST_EFFORT_REVISIONS": ["2026-12-01"],
            },
            "'2026-12-01'",
        ),
    ],
)
def test_e004_for_revisions_adr_0001_never_serves(key, settings_value, named):
    """docs/adr/0001-revision-policy.md: an older dated revision is refused with -32022, and
    BEST_EFFORT_REVISIONS only narrows best-effort serving of newer ones. A supported
    revision of the handshake era, or a best-effort one not newer than the newest supported
    revision, passed the check before; the second was then served (now refused)."""
    messages = settings_errors(settings_value)
    assert ids(messages) == ["django_mcp.E004"]
    assert repr(key) in messages[0].msg
    if named:
        assert named in messages[0].hint
    assert settings_errors({"BEST_EFFORT_REVISIONS": ["2026-07-29", "2099-01-01"]}) == []
    assert settings_errors({"SUPPORTED_REVISIONS": ["2026-07-28", "2027-01-01"]}) == []


@pytest.mark.parametrize("name", ["TOOL_TIMEOUT", "REQUEST_LOG_FLUSH_INTERVAL"])
def test_e004_for_a_wait_no_thread_can_take(name):
    """``TOOL_TIMEOUT`` arms a ``threading.Timer`` and the request log's writer waits
    ``REQUEST_LOG_FLUSH_INTERVAL`` on an ``Event``: infinity, or anything past
    ``threading.TIMEOUT_MAX``, raised OverflowError in that thread, so the time limit was
    never applied and the writer never flushed on its own. Both passed the check before."""
    assert ids(settings_errors({name: float("inf")})) == ["django_mcp.E004"]
    assert ids(settings_errors({name: threading.TIMEOUT_MAX * 2})) == ["django_mcp.E004"]
    with pytest.raises(OverflowError):  # what the check prevents
        threading.Event().wait(float("inf"))
    assert settings_errors({name: 30}) == []


def test_e004_for_a_boolean_sample_rate():
    assert ids(settings_errors({"REQUEST_LOG_SAMPLE_RATE": True})) == ["django_mcp.E004"]


def test_e004_for_allowed_origins_given_as_a_string():
    messages = settings_errors({"ALLOWED_ORIGINS": "https://app.example.com"})
    assert ids(messages) == ["django_mcp.E004"]


def test_e004_for_an_invalid_request_state_max_age():
    assert ids(settings_errors({"REQUEST_STATE_MAX_AGE": -1})) == ["django_mcp.E004"]


def test_e005_for_model_tools_options_naming_missing_fields(settings):
    """django_mcp.E005 (docs/checks.md): misspelled ModelTools options fail at startup, as
    ModelAdmin's do, not when a tool is first called."""
    from django_mcp import MCPSite, ModelTools
    from django_mcp.checks import check_model_tools
    from testproject.books.models import Book

    class Misspelled(ModelTools):
        search_fields = ("titel",)
        ordering = ("-published", "pricee")

    site = MCPSite(name="e005")
    site.register(Book, Misspelled)
    messages = [m for m in check_model_tools(None) if m.obj is Misspelled]
    assert [m.id for m in messages] == ["django_mcp.E005"] * 2
    site.unregister(Book)
    assert not [m for m in check_model_tools(None) if m.obj is Misspelled]


def test_e005_for_search_fields_that_cannot_be_searched(settings):
    """django_mcp.E005: a search path whose first part is a field but which ends at a
    relation (``author``: Django has no ``icontains`` for it), goes on past a field that
    is no relation (``title__exact``), or names nothing further on (``author__nam``)
    passed the check, and every search of the list was -32603."""
    from django_mcp import MCPSite, ModelTools
    from django_mcp.checks import check_model_tools
    from testproject.books.models import Book

    class Unsearchable(ModelTools):
        search_fields = ("author", "title__exact", "author__nam", "author__name", "pk")

    site = MCPSite(name="e005-search")
    site.register(Book, Unsearchable)
    try:
        messages = [m.msg for m in check_model_tools(None) if m.obj is Unsearchable]
    finally:
        site.unregister(Book)
    assert len(messages) == 3
    assert "'author', a relation" in messages[0]
    assert "'title' is no relation, so 'exact' cannot follow it" in messages[1]
    assert "'nam' is not a field of books.Author" in messages[2]


@pytest.mark.django_db
def test_e005_accepts_a_search_path_ending_in_a_transform(settings):
    """django_mcp.E005: ``published__year`` (a transform, as ``name__unaccent`` is on
    PostgreSQL) is searched as ``published__year__icontains``, which Django runs; the
    check refused it as a lookup after a field that is no relation, an error that stopped
    ``runserver`` and ``migrate`` for a search that worked."""
    from django.db.models import Q

    from django_mcp import MCPSite, ModelTools
    from django_mcp.checks import check_model_tools
    from testproject.books.models import Author, Book

    author = Author.objects.create(name="A")
    Book.objects.create(isbn="1", title="T", author=author, published="2020-01-02")
    assert Book.objects.filter(Q(published__year__icontains="2020")).count() == 1

    class ByYear(ModelTools):
        search_fields = ("published__year", "title__exact", "published__nope")

    site = MCPSite(name="e005-transform")
    site.register(Book, ByYear)
    try:
        messages = [m.msg for m in check_model_tools(None) if m.obj is ByYear]
    finally:
        site.unregister(Book)
    assert len(messages) == 2, messages
    assert "'exact' cannot follow it" in messages[0]
    assert "'nope' cannot follow it" in messages[1]


def lookup_warnings(model: Any, **options: Any) -> list[checks.CheckMessage]:
    """The W017 messages of a ModelTools of ``model`` with ``options``, registered on a
    site of its own for the check and unregistered after it."""
    from django_mcp import MCPSite, ModelTools

    tools = type("LookupTools", (ModelTools,), options)
    site = MCPSite(name="w017")
    site.register(model, tools)
    try:
        return [m for m in check_model_tools_lookups(None) if m.obj is tools]
    finally:
        site.unregister(model)


def test_w017_for_a_lookup_field_that_is_not_unique():
    """django_mcp.W017 (docs/checks.md): get, update and delete find one row by
    ``lookup_field``; a field two rows may share (a book's title) may name several. A
    warning: the class works (such a key is a tool error) and may keep the key unique per
    caller in get_queryset, which the check cannot see."""
    from testproject.books.models import Book

    [message] = lookup_warnings(Book, lookup_field="title", actions=("get", "update"))
    assert message.id == "django_mcp.W017"
    assert isinstance(message, checks.Warning)
    assert message.msg == (
        "LookupTools (books.Book): lookup_field 'title' is not unique, so one key may name "
        "several rows."
    )
    # A foreign key is no more unique than its column (each author has many books).
    assert ids(lookup_warnings(Book, lookup_field="author")) == ["django_mcp.W017"]
    # A resource_uri finds its rows by the key too, whatever the actions.
    warned = lookup_warnings(
        Book, lookup_field="title", actions=("list",), resource_uri="w017://{title}"
    )
    assert ids(warned) == ["django_mcp.W017"]


def test_w017_spares_unique_keys_and_classes_that_look_nothing_up():
    """The primary key, ``unique=True`` (the ISBN) and a class whose actions find no row
    by its key (list and create, no resource_uri) raise nothing."""
    from testproject.books.models import Book

    assert lookup_warnings(Book) == []
    assert lookup_warnings(Book, lookup_field="isbn", actions=("get", "delete")) == []
    assert lookup_warnings(Book, lookup_field="title", actions=("list", "create")) == []


@isolate_apps("testproject.books")
def test_w017_follows_djangos_rules_for_unique_constraints():
    """As Django's ``fields.E311`` decides whether a foreign key's target is unique: a
    field alone in ``unique_together`` or in a ``UniqueConstraint`` without a condition is
    unique; one unique only together with another field, or only where a condition
    holds, is not."""
    from django.db import models

    def shelf(name: str, **meta: Any) -> Any:
        attrs = {
            "__module__": "testproject.books.models",
            "slug": models.CharField(max_length=20),
            "owner": models.CharField(max_length=20),
            "Meta": type("Meta", (), {"app_label": "books", **meta}),
        }
        return type(name, (models.Model,), attrs)

    alone = models.UniqueConstraint(fields=["slug"], name="slug_alone")
    pair = models.UniqueConstraint(fields=["owner", "slug"], name="slug_per_owner")
    partial = models.UniqueConstraint(
        fields=["slug"], condition=models.Q(owner="x"), name="slug_where"
    )
    unique = [shelf("Alone", constraints=[alone]), shelf("Together", unique_together=["slug"])]
    shared = [
        shelf("Pair", constraints=[pair]),
        shelf("Partial", constraints=[partial]),
        shelf("PairTogether", unique_together=[("owner", "slug")]),
    ]
    for model in unique:
        assert lookup_warnings(model, lookup_field="slug") == [], model
    for model in shared:
        assert ids(lookup_warnings(model, lookup_field="slug")) == ["django_mcp.W017"], model


@pytest.mark.django_db  # the database checks ask MySQL/MariaDB for its version and modes
def test_the_testproject_passes_every_system_check_without_a_warning():
    """docs/checks.md: a project set up as the README says passes ``manage.py check``
    cleanly; the endpoint pattern (``/mcp`` and ``/mcp/``) raises no URL warning. The
    database checks run too (Django 6 runs them by default; 5.2 with ``--database``): on
    MySQL and MariaDB a conditional index would warn (models.W037)."""
    from django.core.management import call_command

    call_command("check", fail_level="WARNING", databases=["default"])


def test_the_endpoint_reverses_and_resolves_with_and_without_a_slash():
    """docs/adr/0003-trailing-slash.md: the endpoint answers /mcp and /mcp/ and reverses."""
    from django.urls import resolve, reverse

    assert reverse("django_mcp:endpoint") == "/mcp"
    assert resolve("/mcp").url_name == resolve("/mcp/").url_name == "endpoint"
