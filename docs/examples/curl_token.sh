# Call the token-gated set_price tool with a bearer token from mcp_create_token.
TOKEN=$(DJANGO_MCP_DEMO=1 .venv/bin/python manage.py mcp_create_token admin --scope books:write --expires 1d)
curl -s http://127.0.0.1:8000/mcp \
  -H "Authorization: Bearer $TOKEN" \
  -H 'Content-Type: application/json' \
  -H 'Accept: application/json, text/event-stream' \
  -H 'MCP-Protocol-Version: 2026-07-28' \
  -H 'Mcp-Method: tools/call' \
  -H 'Mcp-Name: set_price' \
  -d '{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
       "params": {"name": "set_price", "arguments": {"isbn": "9780441172719", "price": "12.50"},
                  "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                            "io.modelcontextprotocol/clientCapabilities": {},
                            "io.modelcontextprotocol/clientInfo": {"name": "curl", "version": "8"}}}}'
