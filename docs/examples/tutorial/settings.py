# Add these lines at the end of bookshop/settings.py.

# "daphne" first: its runserver replaces Django's, so the development server speaks ASGI
# (progress streams need it; subscriptions need it and a channel layer, see
# docs/guides/subscriptions.md). "django_mcp" keeps the request log.
INSTALLED_APPS = ["daphne", *INSTALLED_APPS, "django_mcp", "books"]
ASGI_APPLICATION = "bookshop.asgi.application"

# Admits MCP requests (method, headers, _meta, Origin) before any view runs.
MIDDLEWARE = [*MIDDLEWARE, "django_mcp.middleware.MCPMiddleware"]

# Optional: every key has a default (docs/settings.md).
DJANGO_MCP = {
    "SERVER_NAME": "bookshop",
    "INSTRUCTIONS": "Search the catalogue with search_books before answering.",
}
