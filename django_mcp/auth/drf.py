"""``DRFAuthenticator``: the Django REST framework authentication a project already has.

It runs the classes of ``DRF_AUTHENTICATION_CLASSES`` (None: DRF's
``DEFAULT_AUTHENTICATION_CLASSES``) on a DRF ``Request`` wrapping the MCP request. A class
that raises ``AuthenticationFailed`` makes a 401. DRF's ``SessionAuthentication`` enforces
CSRF, which an MCP client cannot satisfy; use :class:`~.session.SessionAuthenticator` for
sessions instead. DRF is an optional extra (``django-mcp[drf]``).

A django-oauth-toolkit access token that a class accepts (DOT's ``OAuth2Authentication``,
or any class that returns DOT's token as its ``auth``) is checked and described as
:class:`~.oauth.dot.DOTAuthenticator` does (:func:`~.oauth.dot.caller_for_token`): DOT's
class checks a token's ``resource`` only against the request's URL, and takes a token
with none as unrestricted; an MCP server accepts only tokens issued for itself
(``basic/authorization.mdx``, "Token Audience Binding and Validation"), and the token's
scopes limit the caller. Any other class grants no scopes.
"""

from __future__ import annotations

import hashlib
from functools import cache
from typing import TYPE_CHECKING, Any

from django.apps import apps
from django.contrib.auth.models import AnonymousUser
from django.utils.module_loading import import_string

from django_mcp.auth.base import AuthenticationFailed, Authenticator
from django_mcp.auth.caller import Caller
from django_mcp.auth.header import presented
from django_mcp.conf import mcp_settings

if TYPE_CHECKING:
    from django.http import HttpRequest


@cache
def _no_body_parser() -> Any:
    """A DRF parser for any media type that reads nothing and gives an empty form (built
    once: DRF is an optional extra, imported only when it is used)."""
    from rest_framework.parsers import BaseParser

    class NoBody(BaseParser):
        media_type = "*/*"

        def parse(self, stream: Any, media_type: Any = None, parser_context: Any = None) -> Any:
            return {}

    return NoBody


def authentication_classes() -> list[type[Any]]:
    configured = mcp_settings.DRF_AUTHENTICATION_CLASSES
    if configured is None:
        from rest_framework.settings import api_settings

        # Typed as Any: djangorestframework-stubs before 3.18.2 declare this setting in a
        # way list() refuses, later ones accept it: mypy passes with either.
        configured_defaults: Any = api_settings.DEFAULT_AUTHENTICATION_CLASSES
        classes: list[type[Any]] = list(configured_defaults)
        return classes
    return [import_string(path) if isinstance(path, str) else path for path in configured]


class DRFAuthenticator(Authenticator):
    """The first DRF authentication class that authenticates the request wins."""

    @staticmethod
    def required_oauth_settings() -> tuple[str, ...]:
        """The ``DJANGO_MCP["OAUTH"]`` keys it needs (check ``django_mcp.E012``): ``RESOURCE``
        when one of its classes is django-oauth-toolkit's ``OAuth2Authentication`` (or a
        subclass), whose tokens are checked for this server's audience; none otherwise."""
        if not apps.is_installed("oauth2_provider"):
            return ()  # nothing imported: DOT's modules need its app
        from oauth2_provider.contrib.rest_framework import OAuth2Authentication

        dot = any(
            isinstance(cls, type) and issubclass(cls, OAuth2Authentication)
            for cls in authentication_classes()
        )
        return ("RESOURCE",) if dot else ()

    def has_credentials(self, request: HttpRequest) -> bool:
        return "HTTP_AUTHORIZATION" in request.META

    def authenticate(self, request: HttpRequest) -> Caller | None:
        from rest_framework import exceptions
        from rest_framework.authentication import SessionAuthentication
        from rest_framework.request import Request

        # A class that reads request.POST (django-oauth-toolkit's OAuth2Authentication) gets
        # an empty form: authentication must not depend on the JSON-RPC body, nor parse it
        # (a deep or malformed body would fail the sign-in, not the message).
        drf_request = Request(request, parsers=[_no_body_parser()()])
        bearer = presented(request) is not None
        for cls in authentication_classes():
            if bearer and issubclass(cls, SessionAuthentication):
                continue  # a session does not vouch for a token beside it
            try:
                found = cls().authenticate(drf_request)
            except exceptions.APIException as exc:
                # AuthenticationFailed, and PermissionDenied from SessionAuthentication's
                # CSRF check: credentials this request may not use, a 401 (never a 500).
                raise AuthenticationFailed(str(exc.detail)) from exc
            if found is not None:
                user, auth = found
                if _is_dot_token(auth):
                    from django_mcp.auth.oauth.dot import caller_for_token

                    return caller_for_token(auth, method="drf")
                if user is None:  # a class vouching for no user: Django's anonymous
                    user = AnonymousUser()
                return Caller(user=user, credential=_credential(cls, auth, user), method="drf")
        return None

    def challenge(self, request: HttpRequest) -> str | None:
        from rest_framework.request import Request

        for cls in authentication_classes():
            header: str | None = cls().authenticate_header(Request(request))
            if header:
                return header
        return None


def _is_dot_token(auth: Any) -> bool:
    """Whether ``auth`` is a row of django-oauth-toolkit's access token table (False, and
    nothing imported, where DOT is not an installed app)."""
    if auth is None or not apps.is_installed("oauth2_provider"):
        return False
    from oauth2_provider.models import get_access_token_model

    return isinstance(auth, get_access_token_model())


def _credential(cls: type[Any], auth: Any, user: Any) -> str:
    """A non-secret id: the class and the credential row's primary key, when it has one
    (a digest of a key that is not an integer); else the user's.

    DRF's own ``authtoken.Token`` is keyed by the token itself, and the id is stored on a
    task, which the task admin shows: the bearer's secret was on the page for anyone who
    may view tasks. ``BasicAuthentication`` gives no credential object, simplejwt one
    without a key: the class name alone was one credential for every user the class
    signed in, so ``RATE_LIMIT_TOKEN`` counted them all together."""
    pk = getattr(auth, "pk", None)
    if pk is not None:
        if not isinstance(pk, int):
            pk = hashlib.sha256(str(pk).encode("utf-8")).hexdigest()[:16]
        return f"drf:{cls.__name__}:{pk}"
    if getattr(user, "is_authenticated", False) and getattr(user, "pk", None) is not None:
        return f"drf:{cls.__name__}:user:{user.pk}"
    return f"drf:{cls.__name__}"
