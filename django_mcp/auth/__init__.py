"""Who is calling: the authenticators tried on every request, and the :class:`Caller`
they resolve (a Django user, the scopes the credential grants, and a stable id of the
credential). MCP 2026-07-28 has no session, so every request authenticates on its own.

Modules: ``caller`` and ``base`` (the interface), ``resolve`` (``AUTHENTICATORS``, once per
request), ``tokens`` and ``models`` (access tokens), ``session``, ``drf``, ``metadata``
(RFC 9728 and the ``WWW-Authenticate`` values), ``admin``.
"""
