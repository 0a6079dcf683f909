"""ASGI applications as projects write them, for check ``django_mcp.W004``
(tests/test_deploy_checks.py): each module-level name is an ``ASGI_APPLICATION`` value."""

from __future__ import annotations

from typing import Any

from channels.auth import AuthMiddlewareStack
from channels.routing import ProtocolTypeRouter
from channels.security.websocket import AllowedHostsOriginValidator
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.core.asgi import get_asgi_application
from django.core.handlers.asgi import ASGIHandler

from django_mcp.http.asgi import BodyLimit
from django_mcp.http.native import NativeMCP

django_alone = get_asgi_application()
bounded = BodyLimit(get_asgi_application())
native = NativeMCP(get_asgi_application())
channels_unbounded = ProtocolTypeRouter({"http": get_asgi_application()})
channels_bounded = ProtocolTypeRouter({"http": BodyLimit(get_asgi_application())})
# Django's static files handler subclasses its ASGI handler and keeps what it wraps.
static_over_bounded = ASGIStaticFilesHandler(BodyLimit(get_asgi_application()))
static_over_django = ASGIStaticFilesHandler(get_asgi_application())


class LifespanHandler(ASGIHandler):
    """Django's handler extended in place, wrapping nothing (as lifespan add-ons do)."""


lifespan_django = LifespanHandler()


class LabelledHandler(ASGIHandler):
    """Django's handler with an ``app`` that is a label, not an application."""

    app = "shop"


labelled_django = LabelledHandler()


class BoundingHandler(ASGIHandler):
    """Django's handler reading bodies its own way: the project's business."""

    async def read_body(self, receive: Any) -> Any:
        return await super().read_body(receive)


bounding_django = BoundingHandler()
# Channels' own wrappers keep what they wrap as ``application`` or ``inner``.
channels_stack_over_django = ProtocolTypeRouter(
    {"http": AllowedHostsOriginValidator(AuthMiddlewareStack(get_asgi_application()))}
)
channels_stack_over_bounded = ProtocolTypeRouter(
    {"http": AllowedHostsOriginValidator(AuthMiddlewareStack(BodyLimit(get_asgi_application())))}
)


class Middleware:
    """An ASGI middleware of the usual shape: it keeps what it wraps as ``app``."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.app(scope, receive, send)


middleware_over_django = Middleware(get_asgi_application())
middleware_over_bounded = Middleware(BodyLimit(get_asgi_application()))


async def unknown(scope: Any, receive: Any, send: Any) -> None:
    """A function application: nothing to follow, so nothing is said."""
