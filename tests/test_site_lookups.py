"""A site subclass that decides in its own lookups what each caller sees.

The tools guide lets a project override ``get_tools``/``get_tool`` (and the prompt and
resource lookups) to decide "what a caller may see". Only an overridden
``has_permission`` or a declaration's ``permission`` made a site count as varying by
caller, so such a site's lists were cached as ``public`` (one caller's list, shared with
every other by any cache honouring the hint), and admission looked its tools up without
the caller (the lookup got ``context=None``). server/utilities/caching.mdx: a result that
depends on who asks is ``private``.
"""

from __future__ import annotations

import json
from typing import Any
from unittest import mock

import pytest
from django.test import Client
from django.urls import path

from django_mcp import Context
from django_mcp.protocol.admission import Admitted
from django_mcp.protocol.headers import normalise
from django_mcp.server.authorization import gated
from django_mcp.server.dispatch import MCPServer
from django_mcp.sites import MCPSite
from tests.helpers import call_tool, mcp_body, mcp_headers, mcp_post, result_of


class StaffToolsSite(MCPSite):
    """Tools whose names start with ``staff_`` are for staff only, decided in the lookups."""

    asked_without_caller: list[str]

    def get_tools(self, context: Context | None = None) -> list[Any]:
        return [s for s in super().get_tools(context) if self._may_see(s.name, context)]

    def get_tool(self, name: str, context: Context | None = None) -> Any:
        if context is None:
            self.asked_without_caller.append(name)
        found = super().get_tool(name, context)
        return found if found is not None and self._may_see(name, context) else None

    @staticmethod
    def _may_see(name: str, context: Context | None) -> bool:
        staff = context is not None and getattr(context.user, "is_staff", False)
        return staff or not name.startswith("staff_")


site = StaffToolsSite(name="test-site-lookups")
site.asked_without_caller = []


@site.tool
def hello() -> str:
    return "hello"


hello_spec = site.registry.tools["hello"]


@site.tool
def staff_report() -> str:
    return "the report"


urlpatterns = [path("mcp", site.urls)]
pytestmark = [pytest.mark.urls(__name__), pytest.mark.django_db]


def test_lists_of_a_site_deciding_in_its_lookups_are_private(
    client: Client, django_user_model: Any
) -> None:
    anonymous = result_of(mcp_post(client, "tools/list"))
    client.force_login(django_user_model.objects.create_user("boss", is_staff=True))
    staff = result_of(mcp_post(client, "tools/list"))

    assert [tool["name"] for tool in anonymous["tools"]] == ["hello"]
    assert [tool["name"] for tool in staff["tools"]] == ["hello", "staff_report"]
    assert (anonymous["cacheScope"], staff["cacheScope"]) == ("private", "private")


def test_its_tools_answer_each_caller_as_its_lookups_decide(
    client: Client, django_user_model: Any
) -> None:
    hidden = call_tool(client, "staff_report", {})
    client.force_login(django_user_model.objects.create_user("boss", is_staff=True))
    served = result_of(call_tool(client, "staff_report", {}))

    assert hidden.json()["error"]["code"] == -32602
    assert served["content"] == [{"type": "text", "text": "the report"}]


def test_no_tool_is_looked_up_without_the_caller_to_serve_it_on_the_event_loop() -> None:
    """The native ASGI path asks whether a call may run on the loop by looking its tool up
    with no caller; for this site that answer means nothing (and its lookup may query the
    database), so the call goes to a thread, where the caller is known."""
    site.asked_without_caller.clear()
    body = mcp_body("tools/call", {"name": "hello", "arguments": {}})
    server = MCPServer(site)
    admitted = server.admit(json.dumps(body).encode(), normalise(mcp_headers(body)))
    assert isinstance(admitted, Admitted)

    assert server.runs_on_loop(admitted) is False
    assert site.asked_without_caller == []


class OrderedSite(MCPSite):
    """Overrides a lookup only to order it, and says it decides nothing per caller."""

    decides_per_caller = False

    def get_tools(self, context: Context | None = None) -> list[Any]:
        return sorted(super().get_tools(context), key=lambda spec: spec.name, reverse=True)


class DecidingSite(MCPSite):
    """Decides per caller in code the lookups list does not name, and says so."""

    decides_per_caller = True


def test_a_site_saying_whether_it_decides_per_caller_is_taken_at_its_word() -> None:
    """A class that declares ``decides_per_caller`` itself keeps it: a site overriding a
    lookup only to order it need not make every list private (and every authenticated
    request load the caller's permissions), and one deciding elsewhere is not public."""

    class Subclassed(OrderedSite):
        pass

    class Reordered(DecidingSite):
        def get_tools(self, context: Context | None = None) -> list[Any]:
            return list(reversed(super().get_tools(context)))

    class Deciding(OrderedSite):
        def get_tool(self, name: str, context: Context | None = None) -> Any:
            return super().get_tool(name, context)

    assert OrderedSite.decides_per_caller is False
    assert Subclassed.decides_per_caller is False
    assert OrderedSite("ordered").varies_by_caller() is False
    assert DecidingSite.decides_per_caller is True
    assert Reordered.decides_per_caller is True
    assert DecidingSite("deciding").varies_by_caller() is True
    assert Deciding.decides_per_caller is True  # a lookup of its own, not declared
    assert StaffToolsSite.decides_per_caller is True


#: A plain site whose lookups are replaced on the site itself, serving an unregistered tool.
replaced = MCPSite(name="test-site-lookups-replaced")
seen_by_replaced: list[Context | None] = []


def _replaced_get_tool(name: str, context: Context | None = None) -> Any:
    seen_by_replaced.append(context)
    return hello_spec if name == "hello" else None


replaced.get_tools = lambda context=None: [hello_spec]  # type: ignore[method-assign]
replaced.get_tool = _replaced_get_tool  # type: ignore[method-assign]
urlpatterns.append(path("replaced/mcp", replaced.urls))


def test_a_lookup_replaced_on_a_site_is_its_own_code(client: Client) -> None:
    """``site.get_tools = f`` decides what callers see as an override in a subclass
    does: the site's lists are private, its lookups take the caller, and a tool kind its
    lookups serve is offered though nothing is registered (it was "Method not found")."""
    seen_by_replaced.clear()
    listed = result_of(mcp_post(client, "tools/list", path="/replaced/mcp"))
    called = result_of(call_tool(client, "hello", {}, path="/replaced/mcp"))

    assert (replaced.decides_per_caller, replaced.own_lookups) == (True, {"tools"})
    assert MCPSite.decides_per_caller is False  # the class is as it was
    assert ([t["name"] for t in listed["tools"]], listed["cacheScope"]) == (["hello"], "private")
    assert called["content"] == [{"type": "text", "text": "hello"}]
    assert seen_by_replaced
    assert all(context is not None for context in seen_by_replaced)


def test_a_site_of_its_own_varies_by_caller_decides_per_caller() -> None:
    """A ``varies_by_caller`` of its own (on the class or the site) says lists differ per
    caller for reasons of its own: its lookups are asked with the caller known, as
    ``authorization.gated`` decides, not only its lists made private."""

    class Varying(MCPSite):
        def varies_by_caller(self) -> bool:
            return True

    replaced = MCPSite(name="test-site-lookups-varying")
    replaced.varies_by_caller = lambda: True  # type: ignore[method-assign]

    assert Varying.decides_per_caller is True
    assert gated(Varying("varying"), None) is True
    assert gated(replaced, None) is True
    assert gated(MCPSite("plain"), None) is False


def test_a_lookup_replaced_on_a_site_makes_it_decide_per_caller() -> None:
    """``site.get_tools = f`` is code of its own, as an override in a subclass is; the
    class, and its other sites, are as they were."""
    replaced, other = MCPSite(name="test-site-lookups-unit"), MCPSite(name="other")
    listed = MCPSite(name="test-site-lookups-listed")
    replaced.get_tool = lambda name, context=None: None  # type: ignore[method-assign]
    listed.get_tools = lambda context=None: []  # type: ignore[method-assign]

    assert (replaced.decides_per_caller, replaced.own_lookups) == (True, {"tools"})
    assert (listed.decides_per_caller, listed.own_lookups) == (True, frozenset())
    assert replaced.varies_by_caller() is True
    assert (other.decides_per_caller, other.own_lookups) == (False, frozenset())
    assert (MCPSite.decides_per_caller, StaffToolsSite.own_lookups) == (False, {"tools"})
    assert OrderedSite.own_lookups == frozenset()  # a list only lists: it serves nothing


def test_a_lookup_replaced_before_the_sites_init_is_kept() -> None:
    """A subclass's ``__init__`` may replace a lookup before ``super().__init__()``: that
    failed (``AttributeError``: no ``generation`` yet), and the site's init then put back
    what the class says, forgetting the replacement."""

    class EarlySite(MCPSite):
        def __init__(self) -> None:
            self.get_tool = lambda name, context=None: None
            super().__init__(name="test-site-lookups-early")

    early = EarlySite()

    assert early.decides_per_caller
    assert early.own_lookups == {"tools"}


def test_a_replacement_removed_from_a_site_decides_nothing_any_more() -> None:
    """``mock.patch.object(site, "get_tool", ...)`` (or ``del site.get_tool``) gives the
    site its class's lookup back: it stayed private, asked for what the class never
    served, and offered the ``tools`` capability with none registered."""
    plain = MCPSite(name="test-site-lookups-restored")
    generation = plain.generation
    with mock.patch.object(plain, "get_tool", return_value=None):
        assert plain.decides_per_caller

    assert not plain.decides_per_caller
    assert plain.own_lookups == frozenset()
    assert plain.generation > generation + 1  # capabilities are derived again


class NeverReached:
    """A mixin listed after ``MCPSite``: its ``get_tool`` is never the site's."""

    def get_tool(self, name: str, context: Context | None = None) -> Any:
        return None


def test_a_mixin_after_the_site_class_is_not_taken_for_its_defaults() -> None:
    """Defining the class failed (``AttributeError``: the mixin has no ``get_prompt``):
    the first class in the MRO defining ``get_tool`` was taken for ``MCPSite``."""

    class MixedSite(MCPSite, NeverReached):
        pass

    assert not MixedSite.decides_per_caller
    assert MixedSite.own_lookups == frozenset()
