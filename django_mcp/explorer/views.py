"""The explorer and dashboard pages; :mod:`django_mcp.explorer.admin` wraps each in
``AdminSite.admin_view`` (staff only, login redirect, no caching)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone
from django.utils.safestring import mark_safe

from django_mcp.explorer import catalogue, stats, svg
from django_mcp.protocol.revisions import CURRENT_REVISION

if TYPE_CHECKING:
    from django.contrib.admin import AdminSite


def explorer(request: HttpRequest, admin_site: AdminSite, site_name: str) -> HttpResponse:
    """Every declaration of one site, with forms that call it through its endpoint."""
    target = catalogue.find(site_name)
    if target is None:
        raise Http404(f"No MCP site named {site_name!r}")
    report = catalogue.entries(target)
    config = {
        "endpoint": catalogue.endpoint_path(target),
        "revision": CURRENT_REVISION,
        "site": target.name,
    }
    context = {
        **admin_site.each_context(request),
        "title": f"MCP explorer: {target.name}",
        "site_report": report,
        "sites": catalogue.sites(),
        "current": target,
        "config_json": config,
        "endpoint": config["endpoint"],
        "revision": CURRENT_REVISION,
    }
    return TemplateResponse(request, "django_mcp/explorer/explorer.html", context)


def time_label(at: datetime, bucket: str) -> str:
    """A bucket's label: an hour in the local time, a day as the summaries' UTC day.

    Without ``USE_TZ`` the summaries hold naive wall-clock hours and days of
    ``TIME_ZONE``, labelled as they stand: ``localtime`` refuses a naive time (the page
    was a 500) and ``astimezone`` would read it as the process's local time."""
    if timezone.is_aware(at):
        at = timezone.localtime(at) if bucket == "hour" else at.astimezone(UTC)
    return at.strftime("%H:%M" if bucket == "hour" else "%m-%d")


def dashboard(request: HttpRequest, admin_site: AdminSite) -> HttpResponse:
    """Requests, errors and latency over a bounded window of the request log."""
    if not request.user.has_perm("django_mcp.view_requestlog"):
        raise PermissionDenied
    now = timezone.now()
    name, since, bucket = stats.window(request.GET.get("window"), now)
    site_name = request.GET.get("site") or None
    rows = stats.in_window(since, site_name, bucket)
    timeline = stats.fill(stats.buckets(rows, bucket), since, bucket, now)
    targets = stats.per_target(rows)
    labels = [time_label(item.at, bucket) for item in timeline]
    by_calls = [(item.label, float(item.calls)) for item in targets[: stats.TOP]]
    with_p95 = [item for item in targets if item.p95_ms is not None]
    by_p95 = sorted(with_p95, key=lambda item: -(item.p95_ms or 0))[: stats.TOP]
    by_error = sorted((item for item in targets if item.errors), key=lambda i: -i.errors / i.calls)[
        : stats.TOP
    ]
    charts = {
        "timeline": svg.stacked_bars(
            "Requests and errors",
            labels,
            [
                svg.Series("ok", [float(i.total - i.errors) for i in timeline]),
                svg.Series("errors", [float(i.errors) for i in timeline]),
            ],
        ),
        "calls": svg.horizontal_bars("Top targets by calls", by_calls),
        "p95": svg.horizontal_bars(
            "Top targets by p95 latency (≈)",
            [(i.label, i.p95_ms or 0.0) for i in by_p95],
            unit=" ms",
            colour=svg.PALETTE[3],
        ),
        "errors": svg.horizontal_bars(
            "Error rate by target",
            [(i.label, 100.0 * i.errors / i.calls) for i in by_error],
            unit="%",
            colour=svg.PALETTE[1],
        ),
    }
    total = sum(item.total for item in timeline)
    errors = sum(item.errors for item in timeline)
    may_see_revisions = request.user.has_perm("django_mcp.view_servedrevision")
    context = {
        **admin_site.each_context(request),
        "title": "MCP dashboard",
        "charts": {key: mark_safe(value) for key, value in charts.items()},
        "window": name,
        "windows": list(stats.WINDOWS),
        "site_name": site_name or "",
        "sites": catalogue.sites(),
        "total": total,
        "errors": errors,
        "error_rate": (100.0 * errors / total) if total else 0.0,
        "targets": targets[: stats.TOP],
        "error_codes": stats.error_codes(rows),
        # Served revisions have a permission of their own: a holder of the request log's
        # may lack it, and then sees no table rather than rows the admin hides from them.
        "may_see_revisions": may_see_revisions,
        "revisions": stats.best_effort_revisions(since) if may_see_revisions else [],
        "since": since,
    }
    return TemplateResponse(request, "django_mcp/explorer/dashboard.html", context)
