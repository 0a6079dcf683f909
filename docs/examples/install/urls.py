# urls.py
from django.contrib import admin
from django.urls import include, path

from django_mcp.http.auth import protected_resource_urls

urlpatterns = [
    path("admin/", admin.site.urls),
    path("mcp", include("django_mcp.urls")),  # serves /mcp and /mcp/
    # What a 401 points MCP clients at to learn how to sign in (RFC 9728):
    *protected_resource_urls("mcp"),  # /.well-known/oauth-protected-resource[/mcp]
]
