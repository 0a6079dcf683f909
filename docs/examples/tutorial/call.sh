python manage.py mcp_call search_books --arguments '{"query": "dune"}'
