"""Which methods may ask for input, and what their ``requestState`` is bound to.

Only ``tools/call``, ``prompts/get`` and ``resources/read`` may return
``input_required`` (basic/patterns/mrtr.mdx); the state is bound to the caller, the method,
the tool/prompt name or resource URI, and a digest of the arguments.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from django_mcp.conf import mcp_settings
from django_mcp.protocol import methods
from django_mcp.server.input_requests import Binding, Inputs, arguments_digest

if TYPE_CHECKING:
    from django_mcp.server.context import Context

MRTR_METHODS: Final = frozenset({methods.TOOLS_CALL, methods.PROMPTS_GET, methods.RESOURCES_READ})


def inputs_for(method: str, params: dict[str, Any], context: Context) -> Inputs:
    field = methods.NAME_FIELDS[method]
    arguments = params.get("arguments") if method != methods.RESOURCES_READ else None
    binding = Binding(
        context.principal, method, str(params.get(field)), arguments_digest(arguments or {})
    )
    return Inputs.from_params(
        params, binding, context.meta, int(mcp_settings.REQUEST_STATE_MAX_AGE)
    )


def mark_uncacheable_retry(method: str, params: dict[str, Any], result: dict[str, Any]) -> None:
    """A result reached through a retry must not be cached (server/utilities/caching.mdx)."""
    if method == methods.RESOURCES_READ and (
        "inputResponses" in params or "requestState" in params
    ):
        result["ttlMs"] = 0
        result["cacheScope"] = "private"
