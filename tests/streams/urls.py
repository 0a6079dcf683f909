"""The stream tests' URLconf: the testproject (default site at ``/mcp``) plus the
``streams`` site of :mod:`tests.streams.tools_site` at ``/streams/mcp`` (and its tools-only
site at ``/streams/tools-only``)."""

from __future__ import annotations

from django.urls import path

from testproject.urls import urlpatterns as project_urlpatterns

from .tools_site import site, tools_only

urlpatterns = [
    *project_urlpatterns,
    path("streams/mcp", site.urls),
    path("streams/tools-only", tools_only.urls),
]
