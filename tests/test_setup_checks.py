"""The system checks that teach (django_mcp/setup_checks.py): each names the fix."""

from __future__ import annotations

import builtins
import sys
import typing
from typing import Any

import pydantic
import pytest
from django.conf.urls.i18n import i18n_patterns
from django.core import checks
from django.db import connection
from django.urls import include, path

import django_mcp
from django_mcp import sites
from django_mcp.exceptions import AlreadyRegistered, InvalidDeclaration
from django_mcp.http.auth import protected_resource_urls
from django_mcp.setup_checks import (
    check_an_endpoint_is_routed,
    check_endpoint_routes,
    check_lookups_replaced_on_classes,
    check_output_schemas,
    check_protected_resource_metadata,
    check_request_log_table,
    check_site_names_are_unique,
    check_unavailable_model_tools,
    check_unhinted_parameters,
)
from django_mcp.sites import MCPSite
from testproject.books.models import Author
from tests import urls as test_urls


def ids(messages: list[checks.CheckMessage]) -> list[str]:
    return [message.id for message in messages if message.id is not None]


def test_every_check_is_registered():
    registered = checks.registry.registry.get_checks(include_deployment_checks=True)
    for check in (
        check_an_endpoint_is_routed,
        check_endpoint_routes,
        check_protected_resource_metadata,
        check_unavailable_model_tools,
        check_unhinted_parameters,
        check_request_log_table,
        check_site_names_are_unique,
        check_lookups_replaced_on_classes,
    ):
        assert check in registered


@pytest.mark.parametrize(("route", "expected"), [("mcp/", ["django_mcp.W010"]), ("mcp", [])])
def test_w010_an_endpoint_route_that_append_slash_breaks(settings, mcp_site, route, expected):
    settings.APPEND_SLASH = True
    test_urls.urlpatterns[:] = [path(route, mcp_site.urls)]
    messages = check_endpoint_routes(None)
    assert ids(messages) == expected
    if expected:
        assert 'path("mcp", include(...))' in messages[0].hint


def test_w010_is_silent_without_append_slash(settings, mcp_site):
    settings.APPEND_SLASH = False
    test_urls.urlpatterns[:] = [path("mcp/", mcp_site.urls)]
    assert check_endpoint_routes(None) == []


def test_w010_finds_the_endpoint_under_a_nested_include(settings, mcp_site):
    test_urls.urlpatterns[:] = [path("api/", include([path("mcp/", mcp_site.urls)]))]
    assert ids(check_endpoint_routes(None)) == ["django_mcp.W010"]


def test_e014_two_served_sites_under_one_name(mcp_site):
    """server/utilities/pagination.mdx (invalid cursor: -32602) and docs/guides/resources.md,
    "Paging": a cursor names its site and is refused by another; the binding is the site's
    name, so two sites left with the default name ("mcp") would accept each other's cursors
    (and share task rows and listen groups)."""
    public, internal = MCPSite(), MCPSite()  # both named "mcp" by default
    test_urls.urlpatterns[:] = [
        path("public/mcp", public.urls),
        path("internal/mcp", internal.urls),
    ]
    try:
        [message] = check_site_names_are_unique(None)
    finally:  # live sites named "mcp" would shadow the default site for a task worker
        sites._all_sites.discard(public)
        sites._all_sites.discard(internal)

    assert message.id == "django_mcp.E014"
    assert message.msg.startswith("2 MCP sites are named 'mcp' (served at /public/mcp; ")
    assert "/internal/mcp" in message.msg
    assert 'MCPSite(name="internal")' in message.hint


def test_e014_is_silent_for_distinct_names_and_one_site_at_two_paths(mcp_site):
    """One site mounted twice is one site; differently named sites are separate."""
    other = MCPSite(name="other")
    sites._all_sites.discard(other)
    test_urls.urlpatterns[:] = [
        path("a/mcp", mcp_site.urls),
        path("b/", include([path("mcp", mcp_site.urls)])),
        path("c/mcp", other.urls),
    ]

    assert check_site_names_are_unique(None) == []


def test_w016_no_url_serves_an_endpoint(mcp_site):
    """The app installed, the middleware in place, and no route: every client gets 404."""
    test_urls.urlpatterns.clear()
    [message] = check_an_endpoint_is_routed(None)
    assert message.id == "django_mcp.W016"
    assert 'path("mcp", include("django_mcp.urls"))' in message.hint

    test_urls.urlpatterns[:] = [path("api/", include([path("mcp", mcp_site.urls)]))]
    assert check_an_endpoint_is_routed(None) == []


def test_w015_a_challenge_that_points_at_metadata_nobody_serves(mcp_site):
    """basic/authorization.mdx: a 401 names the protected resource metadata
    (``resource_metadata``), which the client reads to find where to get a token; an
    endpoint routed without it sends clients to a 404."""
    messages = check_protected_resource_metadata(None)

    assert ids(messages) == ["django_mcp.W015"]
    assert "/.well-known/oauth-protected-resource/mcp" in messages[0].msg
    # Not the default site: the metadata must name this site's scopes.
    assert "protected_resource_urls(\"mcp\", site=<the MCPSite 'test'>)" in messages[0].hint

    test_urls.urlpatterns.extend(protected_resource_urls("mcp", site=mcp_site))
    assert check_protected_resource_metadata(None) == []


def test_w015_names_no_site_for_the_default_one(mcp_site):
    test_urls.urlpatterns[:] = [path("mcp", include("django_mcp.urls"))]
    [message] = check_protected_resource_metadata(None)
    assert 'urlpatterns += protected_resource_urls("mcp") (' in message.hint


def test_w015_follows_a_nested_include(mcp_site):
    test_urls.urlpatterns[:] = [path("api/", include([path("mcp", mcp_site.urls)]))]
    [message] = check_protected_resource_metadata(None)
    assert "/.well-known/oauth-protected-resource/api/mcp" in message.msg
    assert 'protected_resource_urls("api/mcp", ' in message.hint

    test_urls.urlpatterns.extend(protected_resource_urls("api/mcp", site=mcp_site))
    assert check_protected_resource_metadata(None) == []


def test_w015_reads_the_configured_resource_path(settings, mcp_site):
    """With ``RESOURCE`` set, the challenge names that URI's path (a proxy may publish the
    endpoint elsewhere): only metadata served there counts."""
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "RESOURCE": "https://example.com/public/mcp"}
    test_urls.urlpatterns.extend(protected_resource_urls("mcp", site=mcp_site))
    [message] = check_protected_resource_metadata(None)
    assert "/.well-known/oauth-protected-resource/public/mcp" in message.msg
    assert 'protected_resource_urls("public/mcp", ' in message.hint

    test_urls.urlpatterns.extend(protected_resource_urls("public/mcp", site=mcp_site))
    assert check_protected_resource_metadata(None) == []


def test_w015_leaves_a_route_with_converters_alone(mcp_site):
    test_urls.urlpatterns[:] = [path("<slug:tenant>/mcp", mcp_site.urls)]
    assert check_protected_resource_metadata(None) == []


def test_w015_leaves_localized_routes_and_a_script_prefix_alone(settings, mcp_site):
    """Under ``i18n_patterns`` the prefix is the active language's, and under
    ``FORCE_SCRIPT_NAME`` the challenge names a path the URLconf never sees: no guess."""
    test_urls.urlpatterns[:] = i18n_patterns(path("mcp", mcp_site.urls))
    assert check_protected_resource_metadata(None) == []

    test_urls.urlpatterns[:] = [path("mcp", mcp_site.urls)]
    settings.FORCE_SCRIPT_NAME = "/app"
    assert check_protected_resource_metadata(None) == []


def test_e010_model_tools_without_drf_is_a_check_error_not_a_crash(monkeypatch):
    real_import = builtins.__import__

    def no_drf(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "rest_framework" or name.startswith("rest_framework."):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    site = MCPSite(name="no-drf")
    monkeypatch.setattr(builtins, "__import__", no_drf)
    assert site.register_model(Author, django_mcp.ModelTools) is None
    monkeypatch.undo()
    assert not site.is_registered(Author)
    messages = [m for m in check_unavailable_model_tools(None) if "Author" in m.msg]
    assert ids(messages) == ["django_mcp.E010"]
    assert "pip install 'django-mcp[drf]'" in messages[0].hint
    assert "pip install -e '.[drf]'" in messages[0].hint


def test_w011_names_each_unhinted_parameter_with_its_source_line():
    site = MCPSite(name="unhinted")

    @site.tool
    def lookup(query, limit: int = 10) -> str:
        return str(query)

    messages = [m for m in check_unhinted_parameters(None) if "lookup" in m.msg]
    assert ids(messages) == ["django_mcp.W011"]
    assert "'query'" in messages[0].msg
    assert "test_setup_checks.py:" in messages[0].msg
    assert "limit" not in messages[0].msg


def test_a_django_model_as_a_type_hint_is_refused_naming_tool_parameter_and_fix():
    site = MCPSite(name="model-hint")

    def describe_author(author: Author) -> str:
        return author.name

    with pytest.raises(InvalidDeclaration) as caught:
        site.tool(describe_author)
    message = str(caught.value)
    assert "describe_author" in message
    assert "'author'" in message
    assert "primary key" in message
    assert "arbitrary_types_allowed" not in message


def test_already_registered_names_both_declarations_and_their_lines():
    site = MCPSite(name="twice")

    @site.tool(name="same")
    def first() -> str:
        return "1"

    def second() -> str:
        return "2"

    with pytest.raises(AlreadyRegistered) as caught:
        site.tool(name="same")(second)
    message = str(caught.value)
    assert "first" in message
    assert "second" in message
    assert message.count("test_setup_checks.py:") == 2


@pytest.mark.django_db
def test_w012_the_request_log_table_missing_says_run_migrate(monkeypatch):
    assert check_request_log_table(None, databases=["default"]) == []
    monkeypatch.setattr(connection.introspection, "table_names", lambda *a, **k: [])
    messages = check_request_log_table(None, databases=["default"])
    assert ids(messages) == ["django_mcp.W012"]
    assert "migrate" in messages[0].hint


def test_w012_does_not_touch_the_database_unless_asked():
    assert check_request_log_table(None, databases=None) == []


class Plain:
    """A class pydantic has no schema for."""


@pytest.mark.parametrize(
    ("returns", "fix"),
    [
        (Author, "serializer's data"),
        (list[Author], "serializer's data"),
        (Author | None, "serializer's data"),
        (Plain, "JSON-friendly type"),
    ],
)
def test_a_return_type_with_no_json_schema_is_refused_naming_tool_and_fix(returns, fix):
    """server/tools.mdx "Output Schema": the return annotation becomes ``outputSchema``, so
    a type with none stops the declaration at import, naming it and a fix, instead of
    pydantic's advice to allow arbitrary types."""
    site = MCPSite(name="model-return")

    def fetch_author(pk: int) -> Any:
        return Author.objects.get(pk=pk)

    fetch_author.__annotations__["return"] = returns
    with pytest.raises(InvalidDeclaration) as caught:
        site.tool(fetch_author)
    message = str(caught.value)
    assert "fetch_author" in message
    assert "return value" in message
    assert fix in message
    assert "arbitrary_types_allowed" not in message
    assert not site.is_registered("fetch_author")


class Point(typing.TypedDict):
    """``typing``'s, not ``typing_extensions``': pydantic takes it from Python 3.12 on."""

    x: int
    y: int


def test_a_type_pydantic_refuses_for_its_own_reason_is_named_with_it():
    """Before Python 3.12 pydantic refuses ``typing.TypedDict`` (it wants
    ``typing_extensions``'): the declaration error names the parameter and passes
    pydantic's reason on. From 3.12 the same tool is served with the dict's schema."""
    site = MCPSite(name="typed-dict")

    def locate(where: Point) -> str:
        return str(where)

    locate.__annotations__["where"] = Point  # the class, not the postponed string
    if sys.version_info >= (3, 12):
        site.tool(locate)
        schema = site.get_tool("locate").input_schema
        assert schema["properties"]["where"] == {"$ref": "#/$defs/Point"}
        assert schema["$defs"]["Point"]["required"] == ["x", "y"]
        return
    with pytest.raises(InvalidDeclaration) as caught:
        site.tool(locate)
    message = str(caught.value)
    assert "locate" in message
    assert "'where'" in message
    assert "typing_extensions.TypedDict" in message


def test_a_return_model_completed_after_the_tool_is_declared_is_served():
    """A forward reference resolved later (``model_rebuild``, as when two ``mcp.py``
    models name each other) is no declaration error: the schema is built when the tool is
    first listed, as pydantic allows."""
    site = MCPSite(name="forward-return")

    class Order(pydantic.BaseModel):
        lines: list[Line]  # not defined yet

    def get_order() -> Order:
        return Order(lines=[])

    get_order.__annotations__["return"] = Order
    site.tool(get_order)

    class Line(pydantic.BaseModel):
        sku: str

    Order.model_rebuild(_types_namespace={"Line": Line})
    schema = site.get_tool("get_order").output_schema
    assert schema["properties"]["lines"]["items"] == {"$ref": "#/$defs/Line"}


def test_e013_names_a_tool_whose_return_model_is_never_completed():
    """An incomplete return model is let through at registration (it may be rebuilt
    later); if nothing completes it, the check says so at start-up, before a
    ``tools/list`` fails."""
    site = MCPSite(name="never-completed")

    class Draft(pydantic.BaseModel):
        part: Missing  # noqa: F821 - never defined

    def draft() -> Draft:
        return Draft.model_construct()

    draft.__annotations__["return"] = Draft
    site.tool(draft)
    try:
        messages = [m for m in check_output_schemas(None) if "'draft'" in m.msg]
    finally:
        site.unregister("draft")  # no later check of this process sees it
    assert ids(messages) == ["django_mcp.E013"]
    assert "test_setup_checks.py:" in messages[0].msg
    assert "model_rebuild" in messages[0].hint


def test_w018_a_lookup_replaced_on_a_site_class_after_it_was_defined():
    """Whether a site decides per caller is read as its class is made (or as a site's
    own attribute is set): ``Class.get_tools = f`` afterwards runs, unseen by it."""

    class PatchedSite(MCPSite):
        pass

    class SubclassedSite(MCPSite):
        def get_tools(self, context=None):
            return []

    patched, subclassed, replaced = (
        PatchedSite(name="w018-patched"),
        SubclassedSite(name="w018-subclassed"),
        MCPSite(name="w018-replaced"),
    )
    PatchedSite.get_tools = lambda self, context=None: []
    replaced.get_tools = lambda context=None: []

    ours = (PatchedSite, SubclassedSite, MCPSite)
    messages = [m for m in check_lookups_replaced_on_classes(None) if m.obj in ours]
    assert ids(messages) == ["django_mcp.W018"]
    assert "PatchedSite.get_tools was replaced" in messages[0].msg
    assert messages[0].obj is PatchedSite
    assert "site.get_tools = ..." in messages[0].hint
    assert (patched.decides_per_caller, subclassed.decides_per_caller) == (False, True)
    assert replaced.decides_per_caller is True
