"""The package version, in a module of its own so settings can read it without importing
the public API (and through it, the registry)."""

__version__ = "0.1.0"
