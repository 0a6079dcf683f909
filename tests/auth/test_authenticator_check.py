"""Check ``django_mcp.E016``: an ``AUTHENTICATORS`` entry that is no authenticator.

``AUTHENTICATORS`` is read on the first MCP request, not at start-up: a path that does
not import (a typo), or a class that is not an authenticator (a DRF authentication class,
which belongs in ``DRF_AUTHENTICATION_CLASSES``), failed every MCP request with a 500
while ``manage.py check`` said nothing."""

from __future__ import annotations

from typing import Any

from django.core import checks
from django.db import ProgrammingError


def e016(settings: Any, *paths: str) -> list[str]:
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "AUTHENTICATORS": list(paths)}
    return [m.msg for m in checks.run_checks() if m.id == "django_mcp.E016"]


def test_a_path_that_does_not_import(settings: Any) -> None:
    (message,) = e016(settings, "django_mcp.auth.tokens.TokenAuthenticater")
    assert "django_mcp.auth.tokens.TokenAuthenticater" in message
    assert "cannot be imported" in message


def test_a_drf_class_is_no_authenticator(settings: Any) -> None:
    (message,) = e016(settings, "rest_framework.authentication.BasicAuthentication")
    assert "is not an authenticator" in message


def test_the_shipped_authenticators_pass(settings: Any) -> None:
    assert (
        e016(
            settings,
            "django_mcp.auth.tokens.TokenAuthenticator",
            "django_mcp.auth.session.SessionAuthenticator",
            "django_mcp.auth.drf.DRFAuthenticator",
            "django_mcp.auth.oauth.jwt.JWTAuthenticator",
        )
        == []
    )


def test_a_drf_class_that_does_not_import(settings: Any) -> None:
    """``DRF_AUTHENTICATION_CLASSES`` is read on each request with an ``Authorization``
    header, and by the challenge of every 401: a typo there was a 500 for both."""
    settings.DJANGO_MCP = {
        **settings.DJANGO_MCP,
        "DRF_AUTHENTICATION_CLASSES": ["rest_framework.authentication.BasicAuthenticaton"],
    }
    (message,) = e016(settings, "django_mcp.auth.drf.DRFAuthenticator")
    assert "DRF_AUTHENTICATION_CLASSES" in message
    assert "BasicAuthenticaton" in message


class WithoutChallenge:
    """Duck-typed: what :func:`resolve.authenticate` calls, but no ``challenge``, which
    :func:`resolve.challenges` calls for every 401."""

    accepts_bearer_tokens = True

    def has_credentials(self, request: Any) -> bool:
        return True

    def authenticate(self, request: Any) -> None:
        return None


def test_an_authenticator_without_challenge_is_no_authenticator(settings: Any) -> None:
    """Every 401 asks each authenticator for its ``WWW-Authenticate`` challenge: a class
    without ``challenge`` passed the check and made every 401 a 500."""
    (message,) = e016(settings, f"{__name__}.WithoutChallenge")
    assert "it has no challenge" in message


def test_a_module_that_fails_as_it_imports_is_reported_not_raised(
    settings: Any, monkeypatch: Any
) -> None:
    """A module may fail to import with more than ``ImportError`` (``ImproperlyConfigured``
    for a setting it reads, say): the check let it out, and every command that runs the
    checks (``migrate``, ``runserver``) stopped with a traceback naming no setting."""
    from django.core.exceptions import ImproperlyConfigured

    from django_mcp.auth import checks as auth_checks

    def broken(path: str) -> Any:
        raise ImproperlyConfigured("SOME_SETTING is missing")

    monkeypatch.setattr(auth_checks, "import_string", broken)
    (message,) = e016(settings, "myapp.auth.Authenticator")
    assert "cannot be imported" in message
    assert "SOME_SETTING is missing" in message


def test_drf_authenticator_without_drf_installed(settings: Any, monkeypatch: Any) -> None:
    """With ``DRF_AUTHENTICATION_CLASSES`` None, ``DRFAuthenticator`` runs DRF's own
    ``DEFAULT_AUTHENTICATION_CLASSES``: without Django REST framework installed every
    request with an ``Authorization`` header (and every 401's challenge) failed with a
    500, and the check, leaving None to DRF (which is not there to check), said nothing."""
    import sys

    from django_mcp.auth.checks import check_authenticator_classes

    settings.DJANGO_MCP = {
        **settings.DJANGO_MCP,
        "AUTHENTICATORS": ["django_mcp.auth.drf.DRFAuthenticator"],
        "DRF_AUTHENTICATION_CLASSES": None,
    }
    # Not installed (asked of this check alone: DRF's own checks would fail first here).
    monkeypatch.setitem(sys.modules, "rest_framework.settings", None)
    (message,) = [m.msg for m in check_authenticator_classes() if m.id == "django_mcp.E016"]
    assert "DRF" in message


class NeedsArguments(WithoutChallenge):
    """An authenticator whose constructor takes an argument: the resolver builds each
    entry with none (``import_string(path)()``)."""

    def __init__(self, issuer: str) -> None:
        self.issuer = issuer

    def challenge(self, request: Any) -> str | None:
        return None


class FailsAsItIsBuilt(NeedsArguments):
    def __init__(self) -> None:
        raise KeyError("AUTH_SECRET")


def test_an_authenticator_that_cannot_be_built_with_no_arguments(settings: Any) -> None:
    """It has every attribute the resolver calls, so it passed the check; every MCP request
    then failed with a 500 as the resolver built it."""
    (needs, fails) = e016(settings, f"{__name__}.NeedsArguments", f"{__name__}.FailsAsItIsBuilt")
    assert "NeedsArguments" in needs
    assert "cannot be built with no arguments (TypeError" in needs
    assert "FailsAsItIsBuilt" in fails
    assert "AUTH_SECRET" in fails


class ReadsItsKeysFromTheDatabase(NeedsArguments):
    """An authenticator that loads its keys from a table as it is built."""

    def __init__(self) -> None:
        raise ProgrammingError('relation "app_signingkey" does not exist')


def test_an_authenticator_whose_database_is_not_there_yet_is_no_error(settings: Any) -> None:
    """Checks run before ``migrate`` does (an E016 stops it) and in build steps with no
    database (``check --deploy``): an authenticator that reads a table as it is built,
    whose table ``migrate`` is about to create, is not one that cannot be built."""
    assert e016(settings, f"{__name__}.ReadsItsKeysFromTheDatabase") == []
