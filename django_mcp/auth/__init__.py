"""Who is calling: the authenticators tried on every request, and the :class:`Caller`
they resolve (a Django user, the scopes the credential grants, and a stable id of the
credential). MCP 2026-07-28 has no session, so every request authenticates on its own."""
