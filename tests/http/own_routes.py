"""Routes of a project's own kinds, for the tests of what the route memories
(``django_mcp.http.routes``) may remember: a converter that reads the active language, a
subclass of one of Django's converters, pattern, URL and resolver classes and a
``urlpatterns`` container of the project's own.

Importing this module registers the converters ``languagesection`` and ``ownslug`` (once:
Django 6 refuses a second registration)."""

from __future__ import annotations

from typing import Any, ClassVar

from django.http import HttpRequest, HttpResponse
from django.urls import URLPattern, URLResolver, register_converter
from django.urls.converters import SlugConverter
from django.urls.resolvers import RoutePattern
from django.utils import translation
from django.views.decorators.csrf import csrf_exempt


class SectionConverter:
    """A converter of a project's own that reads the active language: a section's slug
    exists in one language only (``rubrique`` in French, ``section`` in English)."""

    regex = "[a-z]+"
    SLUGS: ClassVar[dict[str, str]] = {"fr": "rubrique", "en": "section"}

    def to_python(self, value: str) -> str:
        if value != self.SLUGS.get((translation.get_language() or "en")[:2]):
            raise ValueError(value)
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(SectionConverter, "languagesection")


@csrf_exempt
def section_page(request: HttpRequest, section: str) -> HttpResponse:
    """Not an MCP endpoint: a page of the project's own, answered with 418 to be told apart."""
    return HttpResponse(section, status=418)


class OwnList(list[Any]):
    """A ``urlpatterns`` container of a project's own: Django iterates it per resolve."""


class OwnSlugConverter(SlugConverter):
    """A subclass of one of Django's converters: its ``to_python`` is the project's."""

    def to_python(self, value: str) -> str:
        if translation.get_language() == "fr":
            raise ValueError(value)
        return value


register_converter(OwnSlugConverter, "ownslug")


class OwnResolver(URLResolver):
    """A URL resolver class of a project's own: its ``resolve`` may read the language."""


class OwnPattern(RoutePattern):
    """A pattern class of a project's own: it may read the language as it likes."""


class OwnURLPattern(URLPattern):
    """A URL class of a project's own: its ``resolve`` may read the language."""
