"""``ModelTools``: expose a Django model as MCP tools the way ``ModelAdmin`` exposes it.

Register with ``@django_mcp.register(Book)`` on a ``ModelTools`` subclass. Reads (``list``,
``get``) are on by default; writes (``create``, ``update``, ``delete``) are opt-in through
``actions``. Schemas and validation come from a DRF ``ModelSerializer`` (generated from
``fields``/``exclude`` unless ``serializer_class`` is given), as ``ModelAdmin`` builds a
``ModelForm``.
"""

from __future__ import annotations

from django_mcp.modeltools.options import DEFAULT_PERMISSIONS, ModelTools

__all__ = ["DEFAULT_PERMISSIONS", "ModelTools"]
