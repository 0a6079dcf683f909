"""A throwaway app for the autodiscover tests: ``mcp.py`` breaks half-way, ``mcp_ok.py``
(used with ``AUTODISCOVER_MODULE="mcp_ok"``) works. Both register on :data:`registry.site`."""
