# bookshop/urls.py
from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("mcp", include("django_mcp.urls")),  # serves /mcp and /mcp/
]
