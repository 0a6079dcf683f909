"""OAuth 2.1 resource-server token validators (``basic/authorization.mdx``).

Each module is one kind of authenticator for ``DJANGO_MCP["AUTHENTICATORS"]``, configured by
``DJANGO_MCP["OAUTH"]`` (:mod:`.config`):

* :mod:`.jwt`: self-contained JWT access tokens, signatures checked against a JWKS URL.
* :mod:`.introspection`: opaque tokens checked at an RFC 7662 introspection endpoint.
* :mod:`.dot`: tokens issued by a co-hosted django-oauth-toolkit authorization server.

All three accept only tokens issued for this server (RFC 8707, :mod:`.audience`), read the
token from the ``Authorization`` header only (:mod:`.bearer`), and map the token's subject
to a Django user (:mod:`.users`). Nothing here is imported by django-mcp itself: the
optional dependencies (``pip install django-mcp[oauth]``) load only when a project names
one of these classes.
"""
