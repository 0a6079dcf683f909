"""Input rounds (basic/patterns/mrtr.mdx): carrying answers from one round to the next.

When an answer a handler asked for is not in this request, :class:`InputRequired` stops the
handler and the server returns ``resultType: "input_required"`` with the
``inputRequests`` and a ``requestState``. The client retries the same call with
``inputResponses``; the handler runs again from the top and, this time, gets its answers.

Only ``tools/call``, ``prompts/get`` and ``resources/read`` may return
``input_required``. The server keeps nothing between rounds: answers from earlier rounds
travel inside the ``requestState``, encrypted and authenticated (AES-GCM, see
:mod:`.sealing`), time-limited, and bound to the site, the caller, the method, the tool or prompt
name or resource URI, and a digest of the arguments. A state that fails any of these checks is
refused with -32602.

An answer carried by the state is final while the state is used: a retry that sends the
state and answers the same key again does not replace it (the sealed answer is the one the
handler gets). To ask again, use a new key. A client that drops the state starts over: the
server keeps nothing, so a call carrying every answer and no state is a new call.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Final

from django_mcp.conf import mcp_settings
from django_mcp.protocol import methods
from django_mcp.protocol.errors import InvalidParams, MissingRequiredClientCapability
from django_mcp.protocol.meta import RequestMeta
from django_mcp.server import sealing
from django_mcp.server.input_requests import InputRequest

if TYPE_CHECKING:
    from django_mcp.server.context import Context

INPUT_METHODS: Final = frozenset({methods.TOOLS_CALL, methods.PROMPTS_GET, methods.RESOURCES_READ})
#: The ``resultType`` of a round that stopped on missing input (``InputRequiredResult``).
INPUT_REQUIRED_RESULT: Final = "input_required"


def attach_inputs(method: str, params: Mapping[str, Any], context: Context) -> None:
    """Give ``context`` the inputs of this round. A request that carries answers or a state
    gets them at once (the state is verified now: a bad one is refused before the handler
    runs); one that carries neither, which is most calls, gets them built only if its
    handler asks for input: they cannot fail then, and usually are never needed.

    The caller's principal, which the inputs are bound to, is read now in both cases: a
    caller that cannot be resolved (the database is down) fails the request before its
    handler runs, whether or not the handler would ask for input.
    """
    if "inputResponses" in params or "requestState" in params:
        context.inputs = inputs_for(method, params, context)
    else:
        context.defer_inputs(method, params, context.principal)


def inputs_for(
    method: str, params: Mapping[str, Any], context: Context, principal: str | None = None
) -> Inputs:
    """The inputs of this round, bound to ``principal`` (by default the context's)."""
    field = methods.NAME_FIELDS[method]
    arguments = params.get("arguments") if method != methods.RESOURCES_READ else None
    if principal is None:
        principal = context.principal
    target = str(params.get(field))
    binding = Binding(principal, method, target, arguments or {}, context.site.name)
    return Inputs.from_params(
        params, binding, context.meta, float(mcp_settings.REQUEST_STATE_MAX_AGE)
    )


def mark_uncacheable_retry(method: str, params: dict[str, Any], result: dict[str, Any]) -> None:
    """A result reached through a retry must not be cached (server/utilities/caching.mdx)."""
    if method == methods.RESOURCES_READ and (
        "inputResponses" in params or "requestState" in params
    ):
        result["ttlMs"] = 0
        result["cacheScope"] = "private"


class InputRequired(BaseException):
    """Raised inside a handler to end this round with ``resultType: input_required``.

    A ``BaseException``, as ``asyncio.CancelledError`` is and for the same reason: it is
    no error of the handler's but the server unwinding it, and a handler's broad ``try:
    ... except Exception:`` around an ask swallowed it (the round completed with whatever
    the handler did next, the question never sent). The server catches it by name before
    its ``except Exception`` boundaries (dispatch, the native ASGI path, the task worker);
    asgiref and asyncio carry a ``BaseException`` through ``async_to_sync`` and tasks.
    """

    def __init__(self, requests: Mapping[str, InputRequest]) -> None:
        super().__init__(", ".join(requests))
        self.requests = dict(requests)


@dataclass
class Binding:
    """What a ``requestState`` is bound to: who asked, for what, with which arguments, on
    which site. The site matters because two sites may declare the same name with different
    questions: a state answered on one must not answer the other's.

    The arguments' digest is computed only when a state is read or written: most calls
    carry none and ask for no input, so the hot path never hashes their arguments.
    """

    principal: str
    method: str
    target: str
    arguments: Any
    site: str

    @cached_property
    def arguments_digest(self) -> str:
        return arguments_digest(self.arguments)

    def as_list(self) -> list[str]:
        return [self.site, self.principal, self.method, self.target, self.arguments_digest]

    def as_bytes(self) -> bytes:
        """The associated data that binds a sealed state to this request."""
        return json.dumps(self.as_list(), separators=(",", ":")).encode("utf-8")


def arguments_digest(arguments: Any) -> str:
    canonical = json.dumps(
        arguments if arguments is not None else {}, sort_keys=True, separators=(",", ":")
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class Inputs:
    """The answers available to a handler in this round: earlier rounds' (from the signed
    state) plus this request's ``inputResponses``."""

    def __init__(
        self,
        binding: Binding,
        meta: RequestMeta,
        earlier: Mapping[str, Any],
        current: Mapping[str, Any],
        *,
        earlier_taken: bool = False,
        issued: float | None = None,
    ) -> None:
        self.binding = binding
        self.meta = meta
        self.earlier = dict(earlier)
        self.current = dict(current)
        self.used: set[str] = set()  # keys of ``current`` the handler asked for
        #: The request first asked under each key in this handler execution (its
        #: question is built only when the key is asked again: most keys are asked once).
        self.asked: dict[str, InputRequest] = {}
        #: Whether every earlier answer was parsed by the question asked under its key (a
        #: sealed state's were; a task's stored answers were only checked for their shape).
        self.earlier_taken = earlier_taken
        #: When the state this round opened was first sealed (``None``: no state, so the
        #: exchange starts now). The next state keeps it, so that ``REQUEST_STATE_MAX_AGE``
        #: bounds the whole exchange: sealed afresh each round, an early answer lived on
        #: for as long as the caller kept asking.
        self.issued = issued

    @classmethod
    def from_params(
        cls, params: Mapping[str, Any], binding: Binding, meta: RequestMeta, max_age: float
    ) -> Inputs:
        """Verify ``requestState`` and read ``inputResponses``; -32602 on anything wrong."""
        responses = params.get("inputResponses", {})
        if "inputResponses" in params and not isinstance(responses, Mapping):
            raise InvalidParams("params.inputResponses must be an object")
        earlier: Mapping[str, Any] = {}
        issued: float | None = None
        if "requestState" in params:  # a string (schema.json): null is refused, not absent
            earlier, issued = load_state(params["requestState"], binding, max_age)
        return cls(binding, meta, earlier, responses, earlier_taken=True, issued=issued)

    def answer(self, key: str, request: InputRequest) -> tuple[bool, Any]:
        """``(True, parsed answer)`` when ``key`` was answered, else ``(False, None)``."""
        if key in self.earlier:  # answered in an earlier round: final
            return True, self._parse(key, request, self.earlier[key], self.earlier_taken)
        if key in self.current:
            value = self._parse(key, request, self.current[key], key in self.used)
            self.used.add(key)
            return True, value
        return False, None

    @staticmethod
    def _parse(key: str, request: InputRequest, value: Any, taken: bool) -> Any:
        """``value`` parsed as the answer to ``request``. An answer already ``taken`` (it
        fitted the question first asked under ``key``) that does not fit this one means
        the handler asked another question under the same key: the server's error
        (-32603, logged), not the client's, which answered what it was asked."""
        try:
            return request.parse(key, value)
        except InvalidParams as exc:
            if not taken:
                raise
            raise RuntimeError(
                f"The handler asked {key!r} again as a {request.method} request that the "
                "answer to its first question under that key does not fit: ask a new "
                "question under a new key"
            ) from exc

    def collect(self, requests: Mapping[str, InputRequest]) -> dict[str, Any]:
        """Answers for every key, or raise :class:`InputRequired` for the missing ones.

        A request type the client did not declare on this request is never sent: the call
        fails with -32021 naming every capability the round needs and the client left out.
        """
        for key, request in requests.items():
            self._check_same_question(key, request)
        answers: dict[str, Any] = {}
        missing: dict[str, InputRequest] = {}
        for key, request in requests.items():
            found, value = self.answer(key, request)
            if found:
                answers[key] = value
            else:
                missing[key] = request
        undeclared = [r for r in missing.values() if not r.is_declared(self.meta)]
        if undeclared:
            raise MissingRequiredClientCapability(required_capabilities(undeclared))
        if missing:
            raise InputRequired(missing)
        return answers

    def _check_same_question(self, key: str, request: InputRequest) -> None:
        """A key asked again in this execution with another question (another kind or
        mode, another form or URL, another sampling prompt) is the handler's bug, whether
        or not the answer would fit both: one answer cannot answer two questions. The
        usual cause is two asks left on a default key (``elicit`` and ``elicit_url`` both
        default to ``"elicitation"``). -32603, logged, before anything is sent."""
        first = self.asked.setdefault(key, request)
        if first is not request and first.question() != request.question():
            raise RuntimeError(
                f"The handler asked {key!r} twice with different questions in one run: "
                "pass a distinct key= to each ask (one answer cannot answer both)"
            )

    def next_state(self) -> str:
        """The state for the next round: the earlier answers plus this round's answers to
        questions the handler asked, sealed again (an earlier answer is never replaced by a
        later one) with the first round's issue time. A key the handler never asked for is
        ignored, so an answer sent before its question cannot win later and junk keys do
        not grow the state."""
        asked = {key: self.current[key] for key in self.used}
        answered = {**asked, **self.earlier}
        return dump_state(answered, self.binding, self.issued)


def required_capabilities(requests: Iterable[InputRequest]) -> dict[str, Any]:
    """One ``ClientCapabilities`` object naming what every request in ``requests`` needs
    (the ``data.requiredCapabilities`` of -32021). Two needs of one capability are merged;
    ``elicitation: {}`` means form only (client/elicitation.mdx, "Capabilities"), so it is
    spelled ``{"form": {}}`` once another mode joins it."""
    merged: dict[str, Any] = {}
    for request in requests:
        for name, need in request.required_capability().items():
            held = merged.setdefault(name, need)
            if held != need and isinstance(held, Mapping) and isinstance(need, Mapping):
                merged[name] = {**_explicit(name, held), **_explicit(name, need)}
    return merged


def _explicit(name: str, need: Mapping[str, Any]) -> Mapping[str, Any]:
    return {"form": {}} if name == "elicitation" and not need else need


def dump_state(answers: Mapping[str, Any], binding: Binding, issued: float | None = None) -> str:
    """``answers`` sealed for ``binding``, issued at ``issued`` (by default, now)."""
    return sealing.seal({"a": dict(answers)}, binding.as_bytes(), issued)


def load_state(state: Any, binding: Binding, max_age: float) -> tuple[dict[str, Any], float]:
    """The answers ``state`` carries and when its exchange was first sealed; -32602 for a
    state that is not a string or fails any check."""
    if not isinstance(state, str):
        raise InvalidParams("params.requestState must be a string")
    try:
        payload, issued = sealing.unseal(state, binding.as_bytes(), max_age)
    except sealing.StateError as exc:
        raise InvalidParams(_STATE_ERRORS[exc.reason]) from exc
    answers = payload.get("a")
    return (dict(answers) if isinstance(answers, dict) else {}), issued


_STATE_ERRORS: Final = {
    "expired": "requestState has expired; start the request again",
    "tampered": "requestState failed its integrity check",
    # The keyed hint matched no key held now: another request's state, or one sealed under
    # a secret since dropped from SECRET_KEY_FALLBACKS (the hint cannot tell which).
    "foreign": (
        "requestState belongs to another request or caller, or was sealed under a secret "
        "this server no longer holds"
    ),
}


def input_required_result(error: InputRequired, inputs: Inputs) -> dict[str, Any]:
    """The ``InputRequiredResult`` for a round that stopped on missing input."""
    return {
        "resultType": INPUT_REQUIRED_RESULT,
        "inputRequests": {key: request.to_dict() for key, request in error.requests.items()},
        "requestState": inputs.next_state(),
    }
