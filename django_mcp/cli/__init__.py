"""What the ``mcp_*`` management commands do, kept out of the thin command classes: which
site and user a command acts for, the declaration report of ``mcp_inspect`` and the one
call of ``mcp_call``."""
