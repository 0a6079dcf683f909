"""The tasks guide's examples run (docs/examples/tasks_example.py), as the guide says.

ext-tasks ``specification/2026-07-28/tasks.md``: an optional tool is synchronous without the
extension and a task with it; input asked inside a task makes it ``input_required``.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

import django_mcp
import django_mcp.sites
from tests.helpers import call_tool, mcp_post, result_of
from tests.tasks.support import declaring, get, run_worker, start, tasks_call

pytestmark = pytest.mark.django_db
EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "tasks_example.py"


@pytest.fixture
def example_site(mcp_site, monkeypatch):
    monkeypatch.setattr(django_mcp.sites, "site", mcp_site)
    monkeypatch.setattr(django_mcp, "site", mcp_site, raising=False)
    spec = importlib.util.spec_from_file_location("docs_example_tasks", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "docs_example_tasks", module)
    spec.loader.exec_module(module)
    return mcp_site


def test_optional_task_both_ways(client, example_site):
    sync = result_of(call_tool(client, "build_report", {"year": 2025}))
    assert sync["content"][0]["text"] == "Report over 12 months"
    task_id = start(client, "build_report", {"year": 2025})["taskId"]
    run_worker()
    polled = get(client, task_id)
    assert polled["result"]["content"][0]["text"] == "Report over 12 months"
    assert polled["statusMessage"] == "month 12 of 12"


def test_required_task_asks_inside_the_task(client, example_site):
    task_id = start(client, "purge_archive", {"archive": "2019"})["taskId"]
    run_worker()
    assert get(client, task_id)["inputRequests"]["confirm"]["method"] == "elicitation/create"
    answer = {"confirm": {"action": "accept", "content": {"confirm": True}}}
    result_of(tasks_call(client, "tasks/update", task_id, inputResponses=answer))
    run_worker()
    assert get(client, task_id)["result"]["content"][0]["text"] == "2019 deleted"


def test_inputs_first_then_the_task(client, example_site):
    first = result_of(call_tool(client, "migrate_region", {}, meta=declaring()))
    assert first["resultType"] == "input_required"
    params = {
        "name": "migrate_region",
        "arguments": {},
        "inputResponses": {"region": {"action": "accept", "content": {"name": "eu"}}},
        "requestState": first["requestState"],
    }
    task_id = result_of(mcp_post(client, "tools/call", params, meta=declaring()))["taskId"]
    run_worker()
    assert get(client, task_id)["result"]["content"][0]["text"] == "Migrated eu"


def test_the_testing_guides_task_snippet_runs(example_site):
    """docs/guides/testing.md, "Tools that run as tasks": the test client declaring the
    extension gets the task, and polls it with a raw request (Mcp-Name from the taskId)."""
    from django_mcp.test import MCPClient

    client = MCPClient(capabilities={"extensions": {"io.modelcontextprotocol/tasks": {}}})
    created = client.call_tool("build_report", year=2025).raw
    assert created["resultType"] == "task"
    run_worker()
    polled = client.request("tasks/get", {"taskId": created["taskId"]})
    assert polled["status"] == "completed"
    assert polled["result"]["content"][0]["text"] == "Report over 12 months"
