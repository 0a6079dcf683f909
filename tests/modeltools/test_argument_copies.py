"""``ModelTools`` actions get a copy of the request's arguments, as hand-schema tools do.

basic/patterns/mrtr.mdx: the client retries with "the same method and params", and the
server binds ``requestState`` to "the originating request". The state is sealed when the
round ends, after the action ran; an action that edited the arguments it was handed (a
value normalised in place, a default filled into a nested object) before asking for input
sealed a state bound to arguments the client never sent, and every retry was refused
(-32602). The module is its own URLconf: a site at /mcp with one ModelTools over ``Book``.
"""

# ModelTools options are class attributes read once, like ModelAdmin's.
# ruff: noqa: RUF012

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from django.urls import path

import django_mcp
from django_mcp import Context
from django_mcp.sites import MCPSite
from testproject.books.models import Author, Book
from tests.helpers import input_required, mcp_post, request_meta, result_of

if TYPE_CHECKING:
    from django.test import Client

site = MCPSite(name="modeltools-argument-copies")


@django_mcp.register(Book, site=site)
class ConfirmedBookTools(django_mcp.ModelTools):
    fields = ["id", "isbn", "title", "author"]
    actions = ["create"]

    def create_action(self, arguments: Any, ctx: Context) -> Any:
        arguments["title"] = arguments["title"].strip()  # tidied in place, then confirmed
        ctx.elicit(f"Add {arguments['title']!r}?", {"ok": bool}, key="confirm")
        return super().create_action(arguments, ctx)


urlpatterns = [path("mcp", site.urls)]

pytestmark = [pytest.mark.urls(__name__), pytest.mark.django_db]

META = request_meta(capabilities={"elicitation": {}})
YES = {"confirm": {"action": "accept", "content": {"ok": True}}}


def test_an_action_that_edits_its_arguments_can_still_ask_for_input(
    client: Client, django_user_model: Any
) -> None:
    """basic/patterns/mrtr.mdx: a retry with the same params and the echoed state
    completes: the state is bound to the arguments the client sent, not to the action's
    edit of them."""
    client.force_login(django_user_model.objects.create(username="ada", is_superuser=True))
    author = Author.objects.create(name="Frank Herbert")
    arguments = {"isbn": "9780441013593", "title": "  Dune  ", "author": author.pk}
    params = {"name": "book_create", "arguments": arguments}
    state = input_required(mcp_post(client, "tools/call", params, meta=META))["requestState"]
    retry = {**params, "requestState": state, "inputResponses": YES}

    result = result_of(mcp_post(client, "tools/call", retry, meta=META, id=2))

    assert result.get("isError") is not True, result
    assert result["structuredContent"]["title"] == "Dune"
    assert Book.objects.get(isbn="9780441013593").title == "Dune"
