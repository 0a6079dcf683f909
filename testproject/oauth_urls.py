"""The co-hosted authorization server's endpoints (see ``testproject/oauth_server.py``)."""

from __future__ import annotations

# [docs:urls]
from django.urls import include, path
from oauth2_provider import views

# One namespace, so DOT's reverse("oauth2_provider:...") finds every endpoint; the metadata
# document sits at the origin's root, so the issuer is the origin (RFC 8414 section 3).
authorization_server = (
    [
        path(
            ".well-known/oauth-authorization-server",
            views.OAuthServerMetadataView.as_view(),
            name="oauth-server-metadata",
        ),
        path("o/authorize/", views.AuthorizationView.as_view(), name="authorize"),
        path("o/token/", views.TokenView.as_view(), name="token"),
        path("o/revoke_token/", views.RevokeTokenView.as_view(), name="revoke-token"),
        path("o/introspect/", views.IntrospectTokenView.as_view(), name="introspect"),
    ],
    "oauth2_provider",
)
urlpatterns = [path("", include(authorization_server))]
# [/docs:urls]
