from django.conf import settings
from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("mcp", include("django_mcp.urls")),
]

if settings.OAUTH_SERVER:
    from testproject.oauth_urls import urlpatterns as oauth_server_urls

    urlpatterns += oauth_server_urls
