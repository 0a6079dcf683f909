from django.apps import AppConfig


class ConformanceConfig(AppConfig):
    """The fixtures the official MCP conformance suite calls (see docs/conformance.md)."""

    name = "testproject.conformance"
    label = "conformance"
    verbose_name = "MCP conformance fixtures"
