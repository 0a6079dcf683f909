"""The request log: one ``RequestLog`` row per MCP exchange and one ``ServedRevision`` row
per best-effort client, buffered off the request path and written in bulk, shown
read-only in the admin and pruned by ``mcp_prune_logs``."""
