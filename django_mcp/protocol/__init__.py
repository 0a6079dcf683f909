"""The pure protocol core of django-mcp: MCP revision 2026-07-28 without Django.

Nothing in this package imports Django (``tests/protocol/test_purity.py`` proves it in a
fresh interpreter), so the rules of the wire can be read, tested and reused on their own.
"""
