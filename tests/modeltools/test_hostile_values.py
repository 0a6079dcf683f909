"""Values a column cannot hold, given to ModelTools: a tool error naming the argument,
never -32603.

server/tools.mdx, "Error Handling": an input the server cannot act on is a tool
execution error (``isError: true``) the model can correct. A filter or a write whose
value the database refuses (a datetime with no UTC instant, an address PostgreSQL cannot
read as ``inet``, a NUL PostgreSQL refuses in any text) failed in the database instead,
and was answered as an internal error. The bookshop has no such columns, so the module
serves the package's own request log and task rows on a site of its own at ``/mcp``.
"""

# ModelTools options are class attributes read once, like ModelAdmin's.
# ruff: noqa: RUF012

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Any

import pytest
from django.db import models
from django.urls import path
from django.utils import timezone
from rest_framework import serializers

import django_mcp
from django_mcp.exceptions import ToolError
from django_mcp.modeltools.arguments import check_valid, field_value, key_spelling
from django_mcp.requestlog.models import RequestLog
from django_mcp.sites import MCPSite
from django_mcp.tasks.models import MCPTask
from tests.helpers import call_tool, result_of

if TYPE_CHECKING:
    from django.test import Client

site = MCPSite(name="modeltools-hostile-values")


@django_mcp.register(RequestLog, site=site)
class LogTools(django_mcp.ModelTools):
    """A datetime, an address and a text column, filtered and written."""

    fields = ["id", "started_at", "site", "outcome", "http_status", "duration_ms", "params"]
    actions = ("list", "create", "update")
    list_filter = ("started_at", "remote_addr", "params", "http_status")
    permission_required = None


@django_mcp.register(MCPTask, site=site)
class TaskTools(django_mcp.ModelTools):
    """A JSON column, written."""

    fields = ["id", "site", "owner", "tool", "arguments", "created_at", "last_updated_at"]
    actions = ("create", "update")
    permission_required = None


urlpatterns = [path("mcp", site.urls)]

pytestmark = [pytest.mark.urls(__name__), pytest.mark.django_db]


def tool_error(response: Any) -> str:
    result = result_of(response)
    assert result.get("isError") is True, result
    text: str = result["content"][0]["text"]
    return text


def a_log_row() -> RequestLog:
    return RequestLog.objects.create(
        started_at=timezone.now(),
        site="default",
        outcome="ok",
        http_status=200,
        duration_ms=1.0,
        remote_addr="192.0.2.1",
    )


@pytest.mark.parametrize(
    "value",
    [
        "9999-12-31T23:59:59-01:00",  # past datetime.max once in UTC
        "0001-01-01T00:30:00+01:00",  # before datetime.min once in UTC
    ],
)
def test_a_datetime_filter_with_no_utc_instant_is_a_tool_error(client: Client, value: str) -> None:
    """A datetime Django must convert to UTC for the query, and Python cannot (SQLite
    raised OverflowError, answered -32603)."""
    a_log_row()
    message = tool_error(call_tool(client, "requestlog_list", {"started_at": value}))

    assert message == "started_at: must be a date and time between years 1 and 9999 in UTC"


def test_a_datetime_filter_in_range_still_filters(client: Client) -> None:
    row = a_log_row()
    at = row.started_at.astimezone(datetime.timezone(datetime.timedelta(hours=2))).isoformat()
    found = result_of(call_tool(client, "requestlog_list", {"started_at": at}))

    assert [r["id"] for r in found["structuredContent"]["results"]] == [row.pk]


def test_a_naive_datetime_filter_read_in_a_zone_west_of_utc_is_checked_too(
    client: Client, settings: Any
) -> None:
    """Django reads a naive datetime in the default time zone, then converts it to UTC:
    the last hour of 9999 in New York has no UTC instant either."""
    settings.TIME_ZONE = "America/New_York"
    a_log_row()
    arguments = {"started_at": "9999-12-31T23:00:00"}
    message = tool_error(call_tool(client, "requestlog_list", arguments))

    assert message == "started_at: must be a date and time between years 1 and 9999 in UTC"


def test_a_naive_datetime_filter_is_read_in_the_default_time_zone_without_a_warning(
    client: Client, settings: Any
) -> None:
    """A naive value (``2030-05-01T09:30:00``, or a bare date) means the default time zone,
    as Django's ``DateTimeField`` reads it; it is made aware before the query, so Django
    logs no "received a naive datetime" ``RuntimeWarning`` for every such call (this
    suite turns warnings into errors, so the call failed with -32603 before)."""
    settings.TIME_ZONE = "Asia/Tokyo"
    row = a_log_row()
    row.started_at = datetime.datetime(2030, 5, 1, 0, 30, tzinfo=datetime.UTC)  # 09:30 Tokyo
    row.save()
    found = result_of(call_tool(client, "requestlog_list", {"started_at": "2030-05-01T09:30:00"}))

    assert [r["id"] for r in found["structuredContent"]["results"]] == [row.pk]


def test_an_aware_datetime_filter_without_use_tz_is_read_as_the_wall_clock(
    client: Client, settings: Any
) -> None:
    """With ``USE_TZ = False`` rows hold wall-clock times in ``TIME_ZONE``, and SQLite and
    MySQL refuse an aware value in a query (-32603 before); an offset in the filter is
    converted to that wall clock, so ``10:30+02:00`` finds the row at 09:30 in London."""
    settings.USE_TZ = False
    settings.TIME_ZONE = "Europe/London"
    row = a_log_row()
    row.started_at = datetime.datetime(2030, 5, 1, 9, 30)  # BST: 08:30 UTC
    row.save()
    found = result_of(
        call_tool(client, "requestlog_list", {"started_at": "2030-05-01T10:30:00+02:00"})
    )

    assert [r["id"] for r in found["structuredContent"]["results"]] == [row.pk]


def test_an_integer_filter_given_a_string_is_a_tool_error(client: Client) -> None:
    """server/tools.mdx, "Error Handling": the filter's schema says integer, so ``"200"``
    (or ``"2_00"``, which ``int()`` reads as 200) is an argument error, as a ``@tool``
    validating strictly says; the number filters."""
    row = a_log_row()
    for text in ("200", "2_00"):
        message = tool_error(call_tool(client, "requestlog_list", {"http_status": text}))
        assert message == "http_status: must be an integer, not a string"
    found = result_of(call_tool(client, "requestlog_list", {"http_status": 200}))

    assert [r["id"] for r in found["structuredContent"]["results"]] == [row.pk]


@pytest.mark.parametrize("value", ["not-an-ip", "999.1.1.1", "1.2.3"])
def test_an_address_filter_that_is_no_address_is_a_tool_error(client: Client, value: str) -> None:
    """A GenericIPAddressField's value is cast to ``inet`` on PostgreSQL, which fails on
    anything but an address (-32603); SQLite merely found nothing."""
    a_log_row()
    message = tool_error(call_tool(client, "requestlog_list", {"remote_addr": value}))

    assert message == "remote_addr: Enter a valid IPv4 or IPv6 address."


@pytest.mark.parametrize("value", ["192.0.2.1", "::ffff:192.0.2.1"])
def test_an_address_filter_still_filters(client: Client, value: str) -> None:
    row = a_log_row()
    found = result_of(call_tool(client, "requestlog_list", {"remote_addr": value}))

    expected = [row.pk] if value == "192.0.2.1" else []
    assert [r["id"] for r in found["structuredContent"]["results"]] == expected


def a_task(**changes: Any) -> dict[str, Any]:
    now = timezone.now().isoformat()
    fields = {"site": "default", "owner": "user:1", "tool": "add"}
    return {**fields, "created_at": now, "last_updated_at": now, **changes}


@pytest.mark.parametrize(
    "value",
    [{"text": "a\x00b"}, {"a\x00": 1}, ["ok", {"deep": ["\x00"]}], "\x00"],
)
def test_a_nul_in_a_json_value_is_a_tool_error_on_create_and_update(
    client: Client, value: Any
) -> None:
    """PostgreSQL's jsonb refuses the NUL character (``\\u0000``) in any string, key or
    value, however deep: the write failed in the database (-32603). It is refused first, on
    every database, and nothing is written."""
    created = tool_error(call_tool(client, "mcptask_create", a_task(arguments=value)))
    task = MCPTask.objects.create(**a_task(arguments={"kept": True}))
    updated = tool_error(call_tool(client, "mcptask_update", {"id": task.pk, "arguments": value}))

    assert created == updated == "arguments: must not contain NUL characters"
    assert list(MCPTask.objects.values_list("arguments", flat=True)) == [{"kept": True}]


def test_a_json_value_without_nul_is_written(client: Client) -> None:
    value = {"text": "a\\u0000b", "list": [1, "two"]}  # an escaped backslash is no NUL
    created = result_of(call_tool(client, "mcptask_create", a_task(arguments=value)))

    assert created.get("isError") is None, created
    assert MCPTask.objects.get().arguments == value


@pytest.mark.parametrize(
    ("tool", "arguments", "name"),
    [
        ("mcptask_create", a_task(owner="user:\x00"), "owner"),
        ("requestlog_create", {"params": "a\x00b"}, "params"),
    ],
)
def test_a_nul_in_a_text_value_is_a_tool_error(
    client: Client, tool: str, arguments: dict[str, Any], name: str
) -> None:
    """PostgreSQL refuses NUL in ``varchar`` and ``text`` too; DRF's ``CharField`` refuses
    it first, naming the field."""
    log = {"started_at": timezone.now().isoformat(), "site": "s", "outcome": "ok"}
    if tool == "requestlog_create":
        arguments = {**log, "http_status": 200, "duration_ms": 1.0, **arguments}
    message = tool_error(call_tool(client, tool, arguments))

    assert message.endswith(f"{name}: Null characters are not allowed."), message


def test_a_nul_in_a_text_filter_is_a_tool_error(client: Client) -> None:
    """PostgreSQL refuses NUL in a text parameter, so in a filter on a text column."""
    message = tool_error(call_tool(client, "requestlog_list", {"params": "a\x00b"}))

    assert message == "params: must not contain NUL characters"


class Timed(models.Model):
    """A duration column (none of the project's models has one); abstract: never a table."""

    took = models.DurationField()

    class Meta:
        app_label = "books"
        abstract = True


@pytest.mark.parametrize(
    "value", ["999999999 days", "P999999999D", "-999999999 days", "106751992 00:00:00"]
)
def test_a_duration_filter_past_64_bit_microseconds_is_a_tool_error(value: str) -> None:
    """Without an interval type (SQLite, MySQL, Oracle), Django stores a duration as a
    64-bit count of microseconds; ``timedelta`` holds 999,999,999 days, so a filter of
    that many made SQLite raise OverflowError in the query (-32603). The conversion of a
    filter value refuses it, naming the argument (tested on the conversion: the test
    project has no duration column to call a tool on)."""
    with pytest.raises(ToolError) as refused:
        field_value(Timed, "took", value)

    assert str(refused.value) == "took: must be between -106751991 and 106751991 days"


@pytest.mark.parametrize(
    ("value", "days"), [("106751991 00:00:00", 106751991), ("-106751991 days", -106751991)]
)
def test_a_duration_filter_within_range_is_converted(value: str, days: int) -> None:
    assert field_value(Timed, "took", value) == datetime.timedelta(days=days)


def test_a_duration_written_past_64_bit_microseconds_is_a_tool_error() -> None:
    """DRF's ``DurationField`` bounds nothing unless told to, so ``create`` and ``update``
    would save 999,999,999 days, and SQLite raise OverflowError (-32603). The check of a
    write's validated data refuses it as a filter is refused (tested on that check: the
    test project has no duration column to write)."""

    class TimedSerializer(serializers.Serializer[Any]):
        took = serializers.DurationField()

    serializer = TimedSerializer(data={"took": "999999999 days"})
    with pytest.raises(ToolError) as refused:
        check_valid(serializer, "timing")

    assert str(refused.value) == "took: must be between -106751991 and 106751991 days"
    check_valid(TimedSerializer(data={"took": "106751991 days"}), "timing")  # within


class Keyed(models.Model):
    """A UUID key (none of the project's models has one); abstract: never a table."""

    key = models.UUIDField()

    class Meta:
        app_label = "books"
        abstract = True


def test_a_uuid_key_in_a_row_uri_has_one_spelling() -> None:
    """server/resources.mdx, "Security Considerations": a row URI names its key as
    ``str()`` spells it. ``UUIDField.to_python`` also reads uppercase, bare hex and
    braces, so a ``resource_uri`` over a UUID key accepts only the lowercase, hyphenated
    form (and an integer key only ``str(int)``'s)."""
    is_spelled = key_spelling(Keyed, "key")
    assert is_spelled is not None
    canonical = "0f8fad5b-d9cb-469f-a165-70867728950e"

    assert is_spelled(canonical)
    assert not any(
        is_spelled(text)
        for text in (canonical.upper(), canonical.replace("-", ""), "{" + canonical + "}")
    )
    assert key_spelling(RequestLog, "site") is None  # a text key: any spelling is its own
