"""The ``bench-fanout`` site: what the benchmark's cross-worker check calls.

A site of its own at ``/bench/fanout/mcp`` (bench/crossworker.py), so the default site's
lists, which the main scenarios measure, do not change. ``change(tag)`` announces an update
of ``bench://changes/<tag>`` to every listener of this site, in every worker, and answers
with the id of the worker process that served it: with several workers behind one port the
harness cannot choose the worker, so it calls until the answer names another worker than
the one holding its listen stream.
"""

from __future__ import annotations

import os
from typing import Any

from django_mcp.listen.fanout import notify_resource_updated
from django_mcp.sites import MCPSite

site = MCPSite(name="bench-fanout")
CHANGES = "bench://changes/{tag}"


@site.resource(CHANGES, name="change", mime_type="application/json")
def change_resource(tag: str) -> dict[str, Any]:
    """One announced change; a listener subscribes to the template to hear of every one."""
    return {"tag": tag}


@site.tool
def change(tag: str) -> dict[str, Any]:
    """Announce an update of ``bench://changes/<tag>``; answer with this worker's pid."""
    uri = CHANGES.format(tag=tag)
    notify_resource_updated(uri, site=site)
    return {"pid": os.getpid(), "uri": uri}
