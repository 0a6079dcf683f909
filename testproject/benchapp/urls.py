"""URLs of the benchmark project: the test project's, plus the bare baseline views and the
cross-worker check's site (:mod:`testproject.benchapp.fanout`)."""

from django.urls import path

from testproject.benchapp import fanout, views
from testproject.urls import urlpatterns as project_urlpatterns

urlpatterns = [
    path("bench/bare", views.bare),
    path("bench/bare-async", views.bare_async),
    path("bench/fanout/mcp", fanout.site.urls),
    *project_urlpatterns,
]
