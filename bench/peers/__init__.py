"""Other MCP servers measured in the same run, serving the same ``add`` tool."""
