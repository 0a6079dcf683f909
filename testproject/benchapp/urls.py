"""URLs of the benchmark project: the test project's, plus the bare baseline views and the
cross-worker check's site (:mod:`testproject.benchapp.fanout`).

The baselines and the MCP endpoint come first, side by side, so that Django resolves each
of them after the same short walk: the endpoint after two failed matches of plain routes,
where it used to come after four patterns, two of them nested URLconfs (the fan-out site and
the admin), which cost it about 9 µs a request that the bare view did not pay. What the
benchmark compares is the cost of MCP, not of where a URLconf lists it.
"""

from django.urls import path

from testproject.benchapp import fanout, views
from testproject.urls import urlpatterns as project_urlpatterns

#: The test project's endpoint, ``path("mcp", include("django_mcp.urls"))``.
(MCP_ENDPOINT,) = [pattern for pattern in project_urlpatterns if str(pattern.pattern) == "mcp"]

urlpatterns = [
    path("bench/bare", views.bare),
    path("bench/bare-async", views.bare_async),
    MCP_ENDPOINT,
    path("bench/fanout/mcp", fanout.site.urls),
    *[pattern for pattern in project_urlpatterns if pattern is not MCP_ENDPOINT],
]
