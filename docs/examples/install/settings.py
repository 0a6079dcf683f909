# settings.py
INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_mcp",  # the request log and served revisions appear in the admin
    "books",  # your app, with its mcp.py
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_mcp.middleware.MCPMiddleware",  # validates MCP requests before the view runs
]

# [docs:django-mcp]
# Optional: every key has a default (see docs/settings.md).
DJANGO_MCP = {
    "SERVER_NAME": "bookshop",
    "INSTRUCTIONS": "Search the catalogue with search_books before answering.",
}
# [/docs:django-mcp]
