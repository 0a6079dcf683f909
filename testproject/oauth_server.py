"""A co-hosted OAuth 2.1 authorization server: django-oauth-toolkit set up for MCP clients.

``testproject.settings`` adds ``oauth2_provider`` to ``INSTALLED_APPS`` and these settings
when django-oauth-toolkit is installed (``DJANGO_MCP_OAUTH_SERVER=0`` leaves it out);
``testproject.urls`` then mounts ``testproject.oauth_urls``. What an MCP client of 2026-07-28
needs from the authorization server (``basic/authorization.mdx``):

* RFC 8414 metadata at the origin's ``/.well-known/oauth-authorization-server``, with
  ``code_challenge_methods_supported`` (clients refuse to proceed without it) and
  ``client_id_metadata_document_supported``;
* the authorization code flow with PKCE ``S256`` for public clients;
* client ID metadata documents (an https URL as ``client_id``), the registration clients
  try first; dynamic client registration is deprecated and stays off;
* RFC 8707 ``resource`` recorded on the grant and the token, which
  ``django_mcp.auth.oauth.dot.DOTAuthenticator`` checks against ``RESOURCE``;
* RFC 9207 ``iss`` in authorization responses (mix-up defence).
"""

from __future__ import annotations

# [docs:settings]
OAUTH2_PROVIDER = {
    "PKCE_REQUIRED": True,
    "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,  # S256 only: "plain" is refused
    "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": True,  # RFC 9207 "iss" parameter
    "CIMD_ENABLED": True,  # client ID metadata documents
    "DCR_ENABLED": False,  # deprecated for MCP clients
    "SCOPES": {"mcp": "Use the MCP server", "books:write": "Change the catalogue"},
    "DEFAULT_SCOPES": ["mcp"],
    "ACCESS_TOKEN_EXPIRE_SECONDS": 3600,
    # DOT's own protected views: exact RFC 8707 matching instead of a URL prefix.
    "RESOURCE_SERVER_TOKEN_RESOURCE_VALIDATOR": "django_mcp.auth.oauth.dot.resource_validator",
}
LOGIN_URL = "/admin/login/"
# [/docs:settings]
