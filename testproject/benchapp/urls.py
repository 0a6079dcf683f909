"""URLs of the benchmark project: the test project's, plus the bare baseline views."""

from django.urls import path

from testproject.benchapp import views
from testproject.urls import urlpatterns as project_urlpatterns

urlpatterns = [
    path("bench/bare", views.bare),
    path("bench/bare-async", views.bare_async),
    *project_urlpatterns,
]
