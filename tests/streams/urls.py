"""The stream tests' URLconf: the testproject (default site at ``/mcp``) plus the
``streams`` site of :mod:`tests.streams.tools_site` at ``/streams/mcp``."""

from __future__ import annotations

from django.urls import path

from testproject.urls import urlpatterns as project_urlpatterns

from .tools_site import site

urlpatterns = [*project_urlpatterns, path("streams/mcp", site.urls)]
