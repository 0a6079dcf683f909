"""The stdio transport of MCP 2026-07-28 (basic/transports/stdio.mdx)."""
