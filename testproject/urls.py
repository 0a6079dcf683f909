from django.conf import settings
from django.contrib import admin
from django.urls import include, path

from django_mcp.http.auth import protected_resource_urls

urlpatterns = [
    path("admin/", admin.site.urls),
    path("mcp", include("django_mcp.urls")),
    # RFC 9728 metadata at /.well-known/oauth-protected-resource[/mcp]
    *protected_resource_urls("mcp"),
]

if settings.OAUTH_SERVER:
    from testproject.oauth_urls import urlpatterns as oauth_server_urls

    urlpatterns += oauth_server_urls
