"""The tutorial (docs/tutorial.md), followed as a newcomer would, in an empty folder.

In a temporary directory with nothing but the test virtualenv, plus what
``pip install -e /path/to/django-mcp`` gives (this checkout's ``django_mcp`` package on
``PYTHONPATH`` and a ``.dist-info`` with the entry points ``pyproject.toml`` declares, so
the ``mcp_client`` pytest plugin loads as after a real install), the test runs
the tutorial's commands and writes its files exactly as ``docs/examples/tutorial/`` holds
them (the Markdown shows those files: ``tests/docs/test_examples.py``). Then it runs the
tutorial's pytest test, ``manage.py mcp_call``, ``runserver`` (Daphne, as the settings ask)
with the SDK client of the tutorial, ``manage.py mcp_stdio`` launched from the desktop
client configuration through the official SDK's stdio client, and the admin in headless
Chromium: log in as the superuser the tutorial creates, open the explorer from the admin
index, call ``search_books`` with its form and find the call in the request log. Every
process has a bounded time and is stopped at the end, also when the test fails.

Only the ``pip install`` lines are not run: the virtualenv already holds what they
install, and a test checks that the extras they name exist. ``createsuperuser`` runs
without its prompts (``--noinput`` and ``DJANGO_SUPERUSER_PASSWORD``, Django's own
non-interactive form of the same command): its password prompt reads the terminal.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters

from tests.explorer.test_browser import CHROMIUM, CHROMIUM_ARGS
from tests.live import LiveServer, free_port, stop, wait_until_ready

REPO = Path(__file__).resolve().parents[2]
TUTORIAL = REPO / "docs" / "examples" / "tutorial"
BIN = Path(sys.executable).parent
COMMAND_TIMEOUT = 180  # seconds for one command of the tutorial
DEADLINE = 60  # seconds for the stdio session

#: Files of the tutorial written into the project: example file -> path in the project.
FILES = {
    "urls.py": "bookshop/urls.py",
    "books/models.py": "books/models.py",
    "books/mcp.py": "books/mcp.py",
    "books/fixtures/books.json": "books/fixtures/books.json",
    "books/test_mcp.py": "books/test_mcp.py",
    "pytest.ini": "pytest.ini",
}

DUNE = {"isbn": "9780441172719", "title": "Dune", "author": "Frank Herbert", "price": "10.99"}
ADMIN = ("admin", "a-tutorial-password")  # the superuser step 12 creates
LOG_DEADLINE = 30  # seconds for the explorer's call to reach the request log


def commands(name: str) -> list[list[str]]:
    """The command lines of a tutorial shell file, with ``python`` and ``django-admin``
    those of the virtualenv."""
    programs = {"python": sys.executable, "django-admin": str(BIN / "django-admin")}
    lines = []
    for line in (TUTORIAL / name).read_text(encoding="utf-8").splitlines():
        argv = shlex.split(line, comments=True)
        if argv:
            lines.append([programs.get(argv[0], argv[0]), *argv[1:]])
    return lines


def run(argv: list[str], project: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT,
        check=False,
        stdin=subprocess.DEVNULL,
    )


def run_ok(argv: list[str], project: Path, env: dict[str, str]) -> str:
    done = run(argv, project, env)
    assert done.returncode == 0, f"{shlex.join(argv)}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def install_metadata(packages: Path) -> None:
    """The ``.dist-info`` an install of this checkout writes: its name, version and the
    entry points of ``pyproject.toml`` (the ``pytest11`` plugin among them)."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    info = packages / f"django_mcp-{project['version']}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n"
    )
    groups = [
        f"[{group}]\n" + "".join(f"{name} = {target}\n" for name, target in points.items())
        for group, points in project.get("entry-points", {}).items()
    ]
    (info / "entry_points.txt").write_text("\n".join(groups))


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """An empty folder and an environment with nothing but the virtualenv and this
    checkout's package; the tutorial's project is built in it."""
    packages = tmp_path / "checkout"
    packages.mkdir()
    (packages / "django_mcp").symlink_to(REPO / "django_mcp")
    install_metadata(packages)
    folder = tmp_path / "bookshop"
    folder.mkdir()
    env = {
        "PATH": os.pathsep.join([str(BIN), "/usr/bin", "/bin"]),
        "HOME": str(tmp_path),
        "LANG": "C.UTF-8",
        "PYTHONPATH": str(packages),
        "PYTHONUNBUFFERED": "1",
    }
    return folder, env


def build(folder: Path, env: dict[str, str]) -> None:
    """startproject, the tutorial's settings, files and migrations, as the page says."""
    for argv in commands("startproject.sh"):
        run_ok(argv, folder, env)
    settings = folder / "bookshop" / "settings.py"
    with settings.open("a", encoding="utf-8") as generated:
        generated.write("\n" + (TUTORIAL / "settings.py").read_text(encoding="utf-8"))
    for example, target in FILES.items():
        (folder / target).parent.mkdir(parents=True, exist_ok=True)
        (folder / target).write_text((TUTORIAL / example).read_text(encoding="utf-8"))
    for argv in commands("migrate.sh"):
        run_ok(argv, folder, env)


def sdk_over_stdio(folder: Path, env: dict[str, str]) -> tuple[list[str], Any, str]:
    """Launch the server as the desktop client configuration says, with the SDK's stdio
    client: list the tools, call search_books and whoami."""
    config = json.loads((TUTORIAL / "mcp_servers.json").read_text())["mcpServers"]["bookshop"]
    assert Path(config["command"]).name == "python"
    placeholder = config["cwd"]
    parameters = StdioServerParameters(
        command=sys.executable,
        # manage.py by its full path: some clients start servers elsewhere than cwd says
        args=[arg.replace(placeholder, str(folder)) for arg in config["args"]],
        cwd="/",
        env={**env, **config["env"]},
    )

    async def main() -> tuple[list[str], Any, str]:
        with anyio.fail_after(DEADLINE):
            info = types.Implementation(name="desktop", version="1.0")
            async with Client(parameters, mode="auto", client_info=info) as client:
                tools = sorted(tool.name for tool in (await client.list_tools()).tools)
                found = await client.call_tool("search_books", {"query": "dune"})
                me = await client.call_tool("whoami", {})
                return tools, found.structured_content, me.content[0].text

    return anyio.run(main)


@pytest.mark.live
@pytest.mark.timeout(600)
def test_the_tutorial_builds_a_project_that_tests_calls_and_serves_its_tools(project):
    """basic/transports/stdio.mdx and basic/transports/streamable-http.mdx, through the
    official SDK: the project the tutorial builds answers on both transports."""
    folder, env = project
    build(folder, env)
    tools = ["author_get", "author_list", "count_books", "get_book", "search_books", "whoami"]

    tested = run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], folder, env)
    [call] = commands("call.sh")
    called = json.loads(run_ok(call, folder, env))
    stdio_tools, stdio_found, stdio_me = sdk_over_stdio(folder, env)

    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "3 passed" in tested.stdout
    assert called["result"]["structuredContent"] == [DUNE]
    assert stdio_tools == tools
    assert stdio_found == [DUNE]
    assert stdio_me == "You are desktop, speaking MCP 2026-07-28."


def createsuperuser(folder: Path, env: dict[str, str]) -> None:
    """Step 12's ``createsuperuser``, answered by options instead of prompts."""
    [argv] = commands("createsuperuser.sh")
    username, password = ADMIN
    options = ["--noinput", "--username", username, "--email", "admin@example.com"]
    run_ok([*argv, *options], folder, {**env, "DJANGO_SUPERUSER_PASSWORD": password})


def explorer_in_a_browser(base_url: str) -> tuple[str, str, list[str]]:
    """Steps 12 and 13 in headless Chromium, as the page says: log in at /admin/, click
    "MCP explorer (mcp)", open search_books, type ``dune`` in ``query``, press Call; then
    "Request log entries" on the index. Returns the explorer's result, the request log's
    rows and the page errors."""
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            tab = browser.new_page()
            # startproject serves no favicon; its 404 is not the pages' fault.
            tab.route("**/favicon.ico", lambda route: route.fulfill(status=204))
            errors: list[str] = []
            tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            tab.on("pageerror", lambda exc: errors.append(str(exc)))
            tab.goto(f"{base_url}/admin/")
            tab.fill("#id_username", ADMIN[0])
            tab.fill("#id_password", ADMIN[1])
            tab.click("input[type=submit]")
            tab.wait_for_url(f"{base_url}/admin/")

            tab.click("text=MCP explorer (mcp)")
            tool = tab.locator('details[data-key="search_books"]')
            tool.locator("summary").click()
            tool.locator("input[name=query]").fill("dune")
            tool.locator("input[type=submit][value=Call]").click()
            result = tool.locator(".mcp-result")
            sync_api.expect(result).to_contain_text("HTTP ")
            shown = result.inner_text()

            tab.goto(f"{base_url}/admin/")
            tab.click("text=Request log entries")
            rows = tab.locator("#result_list tbody tr", has_text="django-mcp-explorer")
            for _ in range(LOG_DEADLINE * 4):  # the log is written a second or so later
                if rows.count():
                    break
                tab.wait_for_timeout(250)
                tab.reload()
            listed = "\n".join(rows.all_inner_texts())
            return shown, listed, errors
        finally:
            browser.close()


@contextmanager
def runserver(folder: Path, env: dict[str, str]) -> Iterator[LiveServer]:
    """Step 10's ``runserver`` on a free loopback port, ready, stopped at the end."""
    [argv] = commands("runserver.sh")
    port = free_port()
    log = folder / "runserver.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [*argv, "--noreload", f"127.0.0.1:{port}"],
            cwd=folder,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    server = LiveServer("runserver", f"http://127.0.0.1:{port}", port, log, process)
    try:
        state = wait_until_ready(server, "/mcp")
        assert state == "ready", server.output()
        yield server
    finally:
        stop(process)


@pytest.mark.live
@pytest.mark.timeout(600)
def test_the_tutorials_runserver_is_daphne_and_its_sdk_client_calls_a_tool(project):
    """The settings of the tutorial make ``manage.py runserver`` Daphne's ASGI server, and
    the tutorial's SDK client (basic/transports/streamable-http.mdx) calls a tool on it."""
    folder, env = project
    build(folder, env)
    (folder / "client.py").write_text((TUTORIAL / "client.py").read_text(encoding="utf-8"))
    with runserver(folder, env) as server:
        output = run_ok([sys.executable, "client.py", server.url()], folder, env)

    assert "ASGI/Daphne" in server.output()
    assert output == (TUTORIAL / "client.output.txt").read_text(encoding="utf-8")


@pytest.mark.live
@pytest.mark.browser
@pytest.mark.timeout(600)
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"needs Chromium at {CHROMIUM}")
def test_a_new_user_calls_a_tool_from_the_admins_explorer(project):
    """Steps 12 and 13: the superuser the tutorial creates logs in, the explorer's form calls
    search_books through the real endpoint, and the request log lists the call."""
    folder, env = project
    build(folder, env)
    createsuperuser(folder, env)
    with runserver(folder, env) as server:
        shown, listed, errors = explorer_in_a_browser(server.base_url)

    status, _, body = shown.partition("\n")
    assert status == "HTTP 200", shown
    assert json.loads(body)["result"]["structuredContent"] == [DUNE]
    assert "tools/call" in listed
    assert "search_books" in listed, server.output()
    assert errors == []


def test_the_tutorials_install_lines_name_extras_the_package_has():
    """``pip install -e '...[drf,channels]'`` (and the package-index form) only name extras
    of pyproject.toml, and [drf] brings DRF, which ModelTools needs."""
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    lines = (TUTORIAL / "install.sh").read_text() + (TUTORIAL / "install_index.sh").read_text()

    assert "pip install -e '/path/to/django-mcp[drf,channels]'" in lines
    assert "pip install 'django-mcp[drf,channels]'" in lines
    assert any(dependency.startswith("djangorestframework") for dependency in extras["drf"])
    assert any(dependency.startswith("daphne") for dependency in extras["channels"])
