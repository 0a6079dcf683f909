"""The exchange's start stamp follows ``USE_TZ`` although the setting is read once per change
(:attr:`~django_mcp.conf.MCPSettings.use_tz`), like :func:`django.utils.timezone.now`."""

from __future__ import annotations

from django.test import override_settings

from django_mcp.http import exchange


def test_the_start_stamp_follows_a_use_tz_change():
    with override_settings(USE_TZ=True):
        assert exchange.now().tzinfo is not None
        with override_settings(USE_TZ=False):
            assert exchange.now().tzinfo is None
        assert exchange.now().tzinfo is not None
