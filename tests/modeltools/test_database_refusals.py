"""Writes the database refuses are tool errors, never -32603 (server/tools.mdx, "Error
Handling": input the server cannot act on is a result with ``isError`` the model can
correct).

A DRF ``ModelSerializer`` validates what it knows of the model (``max_length``, unique
fields, a number's range) but never a ``CheckConstraint``; and a unique value it checked
can be saved by another caller before this one's ``INSERT`` (the race's loser meets the
database's unique index, as a serializer without the unique validator does every time).
The ``IntegrityError`` escaped the action and was answered -32603 "Internal error", with
a traceback logged for what is a bad input.
"""

# ModelTools options are class attributes read once, like ModelAdmin's.
# ruff: noqa: RUF012

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
from django.apps.registry import Apps
from django.db import connection, models
from django.urls import path
from rest_framework import serializers

import django_mcp
from django_mcp.sites import MCPSite
from testproject.books.models import Book
from tests.helpers import call_tool, result_of

if TYPE_CHECKING:
    from django.test import Client

site = MCPSite(name="modeltools-database-refusals")


class RaceLoserSerializer(serializers.ModelSerializer[Book]):
    """Checks no uniqueness, as if another caller saved the ISBN just after the check."""

    class Meta:
        model = Book
        fields = ["id", "isbn", "title", "author"]
        extra_kwargs = {"isbn": {"validators": []}}


@django_mcp.register(Book, site=site)
class BookTools(django_mcp.ModelTools):
    serializer_class = RaceLoserSerializer
    actions = ["create", "update"]


#: A model with a check the database enforces and DRF does not know of, in an app
#: registry of its own (its table is made by the fixture).
isolated = Apps(["testproject.books"])


class Stock(models.Model):
    quantity = models.IntegerField()

    class Meta:
        app_label = "books"
        apps = isolated
        db_table = "books_test_stock"
        constraints = (
            models.CheckConstraint(
                condition=models.Q(quantity__gte=0), name="books_test_stock_not_negative"
            ),
        )

    def __str__(self) -> str:
        return str(self.quantity)


class StockTools(django_mcp.ModelTools):
    fields = ["id", "quantity"]
    actions = ["create", "update"]


urlpatterns = [path("mcp", site.urls)]
pytestmark = pytest.mark.urls(__name__)


def errors_logged(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]


def refusal(response: Any) -> str:
    result = result_of(response)
    assert result["isError"] is True, result
    return str(result["content"][0]["text"])


@pytest.mark.django_db
def test_a_unique_value_taken_since_the_check_is_a_tool_error(
    client: Client, catalogue: Any, caplog: pytest.LogCaptureFixture
) -> None:
    dune, messiah = catalogue["books"][:2]
    new = {"isbn": dune.isbn, "title": "Dune again", "author": dune.author_id}
    assert "Invalid book" in refusal(call_tool(client, "book_create", new))
    changed = {"id": messiah.pk, "isbn": dune.isbn}
    assert "Invalid book" in refusal(call_tool(client, "book_update", changed))
    assert Book.objects.filter(isbn=dune.isbn).count() == 1
    assert Book.objects.get(pk=messiah.pk).isbn == messiah.isbn
    # The action's transaction was undone and the connection still works.
    created = call_tool(client, "book_create", {**new, "isbn": "1" * 13})
    assert result_of(created)["structuredContent"]["isbn"] == "1" * 13
    assert errors_logged(caplog) == []


@pytest.fixture
def stock_site(transactional_db: None) -> Iterator[None]:
    """``Stock``'s table, and its tools on the module's site, for the test."""
    with connection.schema_editor() as editor:
        editor.create_model(Stock)
    site.register(Stock, StockTools)
    try:
        yield
    finally:
        site.unregister(Stock)
        with connection.schema_editor() as editor:
            editor.delete_model(Stock)


@pytest.mark.usefixtures("stock_site")
def test_a_check_constraint_the_serializer_does_not_know_is_a_tool_error(
    client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    text = refusal(call_tool(client, "stock_create", {"quantity": -1}))
    assert text.startswith("Invalid stock: the database refused it")
    assert "books_test_stock" not in text  # the database's own words stay in the server
    row = result_of(call_tool(client, "stock_create", {"quantity": 3}))["structuredContent"]
    assert "Invalid stock" in refusal(call_tool(client, "stock_update", {**row, "quantity": -5}))
    assert list(Stock.objects.values_list("quantity", flat=True)) == [3]
    assert errors_logged(caplog) == []


@pytest.mark.django_db
def test_the_database_refusal_is_logged_for_the_developer_on_one_line(
    client: Client, catalogue: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """A hook that leaves a required column empty is a bug: the client reads a tool
    error, the server log keeps the database's words (quoted, so a newline in a value
    cannot forge a line)."""
    dune = catalogue["books"][0]
    new = {"isbn": dune.isbn, "title": "Dune\nagain", "author": dune.author_id}
    refusal(call_tool(client, "book_create", new))
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert warnings[0].startswith("The database refused a write of books.Book: ")
    assert "\n" not in warnings[0]


class MySQLdbOperationalError(Exception):
    """What mysqlclient raises for a value its column cannot store (1366 "Incorrect string
    value": an emoji in a ``utf8mb3`` column), and for a lost connection (2006) alike;
    Django re-raises it as its own ``OperationalError`` with the same arguments."""


@pytest.mark.django_db
def test_a_value_mysql_refuses_as_an_operational_error_is_a_tool_error(
    client: Client, catalogue: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The request log's writer already tells MySQL's refusal of a value (an
    ``OperationalError``, 1366) from a lost connection; a ModelTools write did not, and
    answered -32603. A lost connection (2006) is still no tool error."""
    from django.db import OperationalError

    code = {"value": 1366}

    def refused(self: Any, serializer: Any, ctx: Any) -> None:
        message = "Incorrect string value: '\\xF0\\x9F\\x98\\x80' for column `title` at row 1"
        cause = MySQLdbOperationalError(code["value"], message)
        raise OperationalError(code["value"], message) from cause

    monkeypatch.setattr(BookTools, "perform_create", refused)
    dune = catalogue["books"][0]
    new = {"isbn": "2" * 13, "title": "Dune \U0001f600", "author": dune.author_id}
    text = refusal(call_tool(client, "book_create", new))
    assert text == "Invalid book: a value does not fit its column in the database."
    assert "title" not in text

    code["value"] = 2006  # "MySQL server has gone away"
    message = call_tool(client, "book_create", new).json()
    assert message["error"]["code"] == -32603
