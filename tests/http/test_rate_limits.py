"""Rate limits: per user, per credential and per client address, in Django's cache.

server/tools.mdx, "Security Considerations": servers MUST rate-limit tool invocations. Over
a limit the answer is HTTP 429 with ``Retry-After`` (RFC 6585 section 4, RFC 9110 section
10.2.3) and a JSON-RPC error whose code is application-defined, outside -32768..-32000
(basic/index.mdx, "Error Codes"); a notification gets no body (basic/index.mdx,
"Notifications"). Every response below is also validated against schema.json by conftest.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model
from django.core.cache import caches
from django.db import connections
from django.test import AsyncClient, override_settings

from django_mcp.http import ratelimit
from django_mcp.http.client_ip import address_block, client_ip
from django_mcp.protocol.errors import RATE_LIMITED, is_allowed_code, is_jsonrpc_reserved
from django_mcp.requestlog import recorder
from django_mcp.requestlog.models import RequestLog
from tests.helpers import (
    assert_error,
    mcp_body,
    mcp_headers,
    mcp_post,
    notify,
    override_mcp,
    post_raw,
    result_of,
)


@pytest.fixture(autouse=True)
def _fresh_counters():
    caches["default"].clear()
    yield
    caches["default"].clear()


@pytest.fixture
def site(mcp_site):
    @mcp_site.tool
    def echo(text: str) -> str:
        return text

    return mcp_site


def test_the_code_is_application_defined():
    assert not is_jsonrpc_reserved(RATE_LIMITED)
    assert is_allowed_code(RATE_LIMITED)


@pytest.mark.django_db
def test_per_ip_limit_answers_429_with_retry_after_and_a_json_rpc_error(client, site):
    with override_mcp(RATE_LIMIT_IP="2/m"):
        for request_id in (1, 2):
            result_of(mcp_post(client, "tools/list", id=request_id))
        response = mcp_post(client, "tools/list", id=3)
    error = assert_error(response, 429, RATE_LIMITED)
    assert response.json()["id"] == 3
    retry_after = int(response["Retry-After"])
    assert 1 <= retry_after <= 60
    assert error["data"] == {"retryAfter": retry_after}


@pytest.mark.django_db
def test_a_limited_notification_gets_429_without_a_body(client, site):
    with override_mcp(RATE_LIMIT_IP="1/h"):
        assert notify(client, "notifications/cancelled", {"requestId": 1}).status_code == 202
        response = notify(client, "notifications/cancelled", {"requestId": 1})
    assert response.status_code == 429
    assert response.content == b""
    assert int(response["Retry-After"]) >= 1


@pytest.mark.django_db
def test_unparseable_bodies_count_too(client, site):
    headers = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"}
    with override_mcp(RATE_LIMIT_IP="1/h"):
        assert post_raw(client, b"{", headers).status_code == 400
        response = post_raw(client, b"{", headers)
    assert_error(response, 429, RATE_LIMITED)
    assert "id" not in response.json()


@pytest.mark.django_db
def test_limits_are_off_by_default(client, site):
    for request_id in range(1, 30):
        result_of(mcp_post(client, "tools/list", id=request_id))


@pytest.mark.django_db
def test_each_address_has_its_own_counter(client, site):
    with override_mcp(RATE_LIMIT_IP="1/h"):
        result_of(mcp_post(client, "tools/list", REMOTE_ADDR="192.0.2.1"))
        result_of(mcp_post(client, "tools/list", REMOTE_ADDR="192.0.2.2"))
        assert_error(mcp_post(client, "tools/list", REMOTE_ADDR="192.0.2.1"), 429, RATE_LIMITED)


@pytest.mark.django_db
def test_trusted_proxy_hops_take_the_client_from_x_forwarded_for(client, site):
    """Behind one proxy every request comes from the proxy's address; with
    ``TRUSTED_PROXY_HOPS=1`` each client has its own counter."""
    proxy = {"REMOTE_ADDR": "10.0.0.1"}
    with override_mcp(RATE_LIMIT_IP="1/h", TRUSTED_PROXY_HOPS=1):
        result_of(mcp_post(client, "tools/list", HTTP_X_FORWARDED_FOR="192.0.2.7", **proxy))
        result_of(mcp_post(client, "tools/list", HTTP_X_FORWARDED_FOR="192.0.2.8", **proxy))
        response = mcp_post(client, "tools/list", HTTP_X_FORWARDED_FOR="192.0.2.7", **proxy)
    assert_error(response, 429, RATE_LIMITED)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("first", "second"),
    [("192.0.2.7:50001", "192.0.2.7:50002"), ("[2001:db8::1]:50001", "[2001:db8::2]:50002")],
)
def test_a_port_in_x_forwarded_for_does_not_make_a_new_client(client, site, first, second):
    """Some proxies (Azure Application Gateway, IIS ARR) append ``address:port``. The
    client's source port is its own choice, new on every connection: counted with it, each
    connection had a fresh per-IP counter and the limit held nobody."""
    proxy = {"REMOTE_ADDR": "10.0.0.1"}
    with override_mcp(RATE_LIMIT_IP="1/h", TRUSTED_PROXY_HOPS=1):
        result_of(mcp_post(client, "tools/list", HTTP_X_FORWARDED_FOR=first, **proxy))
        response = mcp_post(client, "tools/list", HTTP_X_FORWARDED_FOR=second, **proxy)
    assert_error(response, 429, RATE_LIMITED)


@pytest.mark.django_db
def test_an_ipv6_client_is_counted_by_its_network(client, site):
    """An IPv6 subscriber usually holds a whole /64: counted one address at a time, it took
    a fresh address for every request and never met ``RATE_LIMIT_IP``. Its addresses now
    share the counter of their ``IPV6_PREFIX`` network (64 bits by default); another
    network keeps its own."""
    with override_mcp(RATE_LIMIT_IP="1/h"):
        result_of(mcp_post(client, "tools/list", REMOTE_ADDR="2001:db8:1:2::1"))
        result_of(mcp_post(client, "tools/list", REMOTE_ADDR="2001:db8:1:3::1"))
        response = mcp_post(client, "tools/list", REMOTE_ADDR="2001:db8:1:2:ffff::9")
    assert_error(response, 429, RATE_LIMITED)


@pytest.mark.django_db
def test_ipv6_prefix_128_counts_each_address(client, site):
    with override_mcp(RATE_LIMIT_IP="1/h", IPV6_PREFIX=128):
        result_of(mcp_post(client, "tools/list", REMOTE_ADDR="2001:db8:1:2::1"))
        result_of(mcp_post(client, "tools/list", REMOTE_ADDR="2001:db8:1:2::2"))
        response = mcp_post(client, "tools/list", REMOTE_ADDR="2001:db8:1:2::1")
    assert_error(response, 429, RATE_LIMITED)


@pytest.mark.parametrize(
    ("address", "prefix", "expected"),
    [
        ("192.0.2.7", 64, "192.0.2.7"),
        ("2001:DB8:1:2:3:4:5:6", 64, "2001:db8:1:2::/64"),
        ("2001:db8:1:2:3:4:5:6", 48, "2001:db8:1::/48"),
        ("2001:db8::6", 128, "2001:db8::6/128"),
        ("fe80::1%eth0", 64, "fe80::/64"),  # the zone id names no other client
        ("::ffff:192.0.2.7", 64, "192.0.2.7"),  # an IPv4 client, as a dual-stack socket says
        ("not:an:address", 64, "not:an:address"),  # still counted, as it came
    ],
)
def test_address_block(address, prefix, expected):
    assert address_block(address, prefix) == expected


@pytest.mark.parametrize(
    ("meta", "hops", "expected"),
    [
        ({"REMOTE_ADDR": "10.0.0.1", "HTTP_X_FORWARDED_FOR": "6.6.6.6"}, 0, "10.0.0.1"),
        ({"REMOTE_ADDR": "10.0.0.1", "HTTP_X_FORWARDED_FOR": "6.6.6.6, 192.0.2.7"}, 1, "192.0.2.7"),
        ({"REMOTE_ADDR": "10.0.0.2", "HTTP_X_FORWARDED_FOR": "6.6.6.6, 192.0.2.7, 10.0.0.1"}, 2,
         "192.0.2.7"),
        ({"REMOTE_ADDR": "10.0.0.1", "HTTP_X_FORWARDED_FOR": "192.0.2.7"}, 2, "10.0.0.1"),
        ({"REMOTE_ADDR": "10.0.0.1"}, 1, "10.0.0.1"),
        ({}, 0, None),
    ],
)  # fmt: skip
def test_client_ip(meta, hops, expected):
    """A forged leftmost entry (6.6.6.6) is never taken: only entries appended by trusted
    proxies count, from the right."""
    assert client_ip(meta, hops) == expected


@pytest.mark.django_db
def test_per_user_limit_counts_each_signed_in_user(client, site):
    users = [get_user_model().objects.create_user(username=f"u{n}", password="x") for n in (1, 2)]
    with override_mcp(RATE_LIMIT_USER="1/h"):
        client.force_login(users[0])
        result_of(mcp_post(client, "tools/list"))
        assert_error(mcp_post(client, "tools/list"), 429, RATE_LIMITED)
        client.force_login(users[1])
        result_of(mcp_post(client, "tools/list"))
        client.logout()  # anonymous requests have no user counter
        result_of(mcp_post(client, "tools/list"))
        result_of(mcp_post(client, "tools/list"))


@pytest.mark.django_db(transaction=True)
def test_per_user_limit_under_asgi(site):
    """Under ASGI ``request.user`` is lazy; the limiter resolves it in a thread, never on
    the event loop, so a per-user limit holds there too."""
    user = get_user_model().objects.create_user(username="asgi", password="x")
    body = mcp_body("tools/list")

    async def run() -> list[int]:
        client = AsyncClient()
        await client.aforce_login(user)
        statuses = []
        for _ in range(2):
            response = await client.post(
                "/mcp", json.dumps(body), content_type="application/json",
                headers=mcp_headers(body),
            )  # fmt: skip
            statuses.append(response.status_code)
        # The database connection opened in asgiref's thread must not outlive the test
        # (PostgreSQL refuses to drop a test database that is still in use).
        await sync_to_async(connections.close_all)()
        return statuses

    with override_mcp(RATE_LIMIT_USER="1/h"):
        assert asyncio.run(run()) == [200, 429]


@pytest.mark.django_db
def test_a_refused_request_is_in_the_request_log(client, site):
    with override_mcp(RATE_LIMIT_IP="1/h"):
        mcp_post(client, "tools/list", id=1)
        mcp_post(client, "tools/list", id=2)
    recorder.flush()
    refused = RequestLog.objects.get(http_status=429)
    assert (refused.error_code, refused.method, refused.request_id) == (
        RATE_LIMITED,
        "tools/list",
        "2",
    )


# -- the limiter on its own: plain identity inputs ---------------------------------------


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _hit(clock: Clock, **identity: Any) -> ratelimit.Exceeded | None:
    values = {"user": None, "credential": None, "ip": None, **identity}
    limits = {kind: ratelimit.parse_rate("2/m") for kind in ("user", "credential", "ip")}
    return ratelimit.hit(**values, limits=limits, cache=caches["default"], clock=clock)


def test_the_window_resets_and_retry_after_counts_down_to_it():
    clock = Clock(600.0 + 45)  # 45 s into a one-minute window
    assert _hit(clock, credential="token:1") is None
    assert _hit(clock, credential="token:1") is None
    assert _hit(clock, credential="token:1") == ratelimit.Exceeded(("credential",), 15)
    clock.now = 660.0  # the next window
    assert _hit(clock, credential="token:1") is None


def test_every_identity_is_counted_and_the_longest_wait_is_reported():
    clock = Clock(1200.0)
    for _ in range(2):
        assert _hit(clock, user="user:1", credential="token:9", ip="192.0.2.1") is None
    exceeded = _hit(clock, user="user:1", credential="token:9", ip="192.0.2.1")
    assert exceeded is not None
    assert set(exceeded.kinds) == {"user", "credential", "ip"}
    assert _hit(clock, user="user:2", credential="token:8", ip="192.0.2.2") is None


@pytest.mark.parametrize(
    ("text", "rate"),
    [("120/m", (120, 60)), ("10/30s", (10, 30)), ("5000/h", (5000, 3600)), ("1/d", (1, 86400))],
)
def test_parse_rate(text, rate):
    assert ratelimit.parse_rate(text) == ratelimit.Rate(*rate)


@pytest.mark.parametrize("text", ["", "120", "0/m", "10/0m", "ten/m", "10/w", 10])
def test_bad_rates_are_refused(text):
    assert not ratelimit.is_rate(text)


def test_a_counter_that_expires_between_add_and_incr_starts_over():
    class Expiring:
        def add(self, *args: Any, **kwargs: Any) -> bool:
            return True

        def incr(self, key: str) -> int:
            raise ValueError(key)

    assert ratelimit._count(Expiring(), "k", 61) == 1  # type: ignore[arg-type]


@pytest.mark.live
def test_counters_in_redis_are_shared_and_atomic():
    """Django's built-in RedisCache (as in production): two cache connections (two
    workers) count into one window, and concurrent hits never lose a count."""
    prefix = f"django-mcp-test-{uuid.uuid4().hex}"
    redis_cache = {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": "redis://127.0.0.1:6379",
        "KEY_PREFIX": prefix,
    }
    with override_settings(CACHES={"default": redis_cache}):
        caches_a = caches.create_connection("default")
        caches_b = caches.create_connection("default")
        try:
            limits = {"ip": ratelimit.parse_rate("5/h")}
            clock = Clock(7200.0)
            results = [
                ratelimit.hit(user=None, credential=None, ip="192.0.2.9", limits=limits,
                              cache=cache, clock=clock)
                for cache in (caches_a, caches_b) * 4
            ]  # fmt: skip
            assert [r is None for r in results] == [True] * 5 + [False] * 3
        finally:
            caches_a.clear()
            caches_b.close()
            caches_a.close()


@pytest.mark.django_db
def test_requests_are_counted_in_the_wall_clocks_windows(client, site, monkeypatch):
    """The middleware counts in ``ratelimit.wall_clock``'s windows (which the suite pins):
    the third request of a "2/m" limit is refused, and once the clock reaches the next
    minute the counter starts again."""
    clock = Clock(600.0 + 30)
    monkeypatch.setattr(ratelimit, "wall_clock", clock)
    with override_mcp(RATE_LIMIT_IP="2/m"):
        for request_id in (1, 2):
            result_of(mcp_post(client, "tools/list", id=request_id))
        error = assert_error(mcp_post(client, "tools/list", id=3), 429, RATE_LIMITED)
        assert error["data"] == {"retryAfter": 30}
        clock.now = 660.0
        result_of(mcp_post(client, "tools/list", id=4))


def test_the_limits_in_force_follow_every_settings_change() -> None:
    """Read once per settings change (every request asks), and again after each one."""
    assert dict(ratelimit.configured_limits()) == {}
    with override_mcp(RATE_LIMIT_IP="5/m", RATE_LIMIT_USER="10/30s"):
        assert dict(ratelimit.configured_limits()) == {
            "user": ratelimit.Rate(10, 30),
            "ip": ratelimit.Rate(5, 60),
        }
        with override_mcp(RATE_LIMIT_IP=None):
            assert dict(ratelimit.configured_limits()) == {"user": ratelimit.Rate(10, 30)}
    assert dict(ratelimit.configured_limits()) == {}
