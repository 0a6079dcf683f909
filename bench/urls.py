"""URLs for the benchmark: the MCP endpoint beside a bare Django JSON view."""

from django.http import HttpRequest, JsonResponse
from django.urls import include, path
from django.views.decorators.csrf import csrf_exempt


@csrf_exempt
def bare_json(request: HttpRequest) -> JsonResponse:
    """The baseline: read a JSON body, answer JSON, nothing else."""
    import json

    payload = json.loads(request.body)
    return JsonResponse({"jsonrpc": "2.0", "id": payload.get("id"), "result": {"ok": True}})


urlpatterns = [
    path("bare", bare_json),
    path("mcp", include("django_mcp.urls")),
]
