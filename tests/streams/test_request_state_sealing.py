"""``requestState`` is encrypted and bound, and an accepted answer is final.

basic/patterns/mrtr.mdx, "Security": treat the state as attacker-controlled; protect its
integrity (HMAC or AEAD); bind the principal, a short expiry and the originating request;
encrypt it (AEAD) when it holds what the client should not read.
"""

from __future__ import annotations

import base64
import time
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import pytest

from django_mcp.server import sealing
from tests.helpers import assert_error, error_of, override_mcp

from .test_mrtr import ADA, first_state, input_required, text, tool

if TYPE_CHECKING:
    from django.test import Client

pytestmark = pytest.mark.usefixtures("streams_urls")

MULTI = "test_input_required_result_multi_round"
BLUE = {"action": "accept", "content": {"color": "blue"}}
RED = {"action": "accept", "content": {"color": "red"}}
EVE = {"action": "accept", "content": {"name": "Eve"}}


def decoded(state: str) -> bytes:
    return base64.urlsafe_b64decode(state + "=" * (-len(state) % 4))


def test_earlier_answers_cannot_be_read_from_the_state(client: Client) -> None:
    """basic/patterns/mrtr.mdx [rec]: encrypt a state that holds what the client should not
    read -- "Base64 JSON is readable by the client"."""
    first = input_required(tool(client, MULTI))
    second = input_required(
        tool(client, MULTI, responses={"step1": ADA}, state=first["requestState"], id=2)
    )

    assert b"Ada" not in decoded(second["requestState"])
    assert "Ada" not in second["requestState"]


def test_a_later_answer_does_not_replace_an_accepted_one(client: Client) -> None:
    """An answer the state carries is final: answering the same key again in a retry keeps
    the sealed answer (the handler sees Ada, not Eve)."""
    first = input_required(tool(client, MULTI))
    second = input_required(
        tool(client, MULTI, responses={"step1": ADA}, state=first["requestState"], id=2)
    )
    third = tool(
        client,
        MULTI,
        responses={"step1": EVE, "step2": BLUE},
        state=second["requestState"],
        id=3,
    )

    assert text(third) == "Ada likes blue."


def test_a_retry_without_the_state_starts_over(client: Client) -> None:
    """basic/patterns/mrtr.mdx: the server keeps nothing between rounds, so answers are
    final only while the state is used (docs/guides/input-requests.md): a call that drops
    the state and sends every answer is a new call, and the handler gets those answers."""
    first = input_required(tool(client, MULTI))
    second = input_required(
        tool(client, MULTI, responses={"step1": ADA}, state=first["requestState"], id=2)
    )
    assert set(second["inputRequests"]) == {"step2"}

    fresh = tool(client, MULTI, responses={"step1": EVE, "step2": BLUE}, id=3)

    assert text(fresh) == "Eve likes blue."


def test_a_state_sealed_under_a_fallback_secret_still_opens(client: Client, settings: Any) -> None:
    """Rotating ``SECRET_KEY`` with the old one in ``SECRET_KEY_FALLBACKS`` keeps rounds in
    flight working; without the fallback the state is refused."""
    old = settings.SECRET_KEY
    state = first_state(client)
    settings.SECRET_KEY = "a-new-secret-key-for-rotation-tests"
    retry = {"responses": {"user_name": ADA}, "state": state, "id": 2}

    settings.SECRET_KEY_FALLBACKS = [old]
    assert text(tool(client, "test_input_required_result_elicitation", **retry)) == "Hello, Ada!"

    settings.SECRET_KEY_FALLBACKS = []
    assert_error(tool(client, "test_input_required_result_elicitation", **retry), 200, -32602)


def test_the_refusals_say_why(client: Client) -> None:
    """[rec] -32602 on verification failure; the message tells a developer which check
    failed: a changed byte is tampering, a state for other arguments is foreign."""
    state = first_state(client, "two_questions", arguments={"topic": "a"}, path="/streams/mcp")
    raw = bytearray(decoded(state))
    raw[-1] ^= 1
    tampered = base64.urlsafe_b64encode(bytes(raw)).decode().rstrip("=")
    answer = {"name": ADA}

    def retry(arguments: dict[str, Any], sent: str) -> dict[str, Any]:
        response = tool(
            client, "two_questions", arguments, responses=answer, state=sent, path="/streams/mcp"
        )
        assert_error(response, 200, -32602)
        return error_of(response)

    assert retry({"topic": "a"}, tampered)["message"] == "requestState failed its integrity check"
    assert retry({"topic": "b"}, state)["message"] == FOREIGN


#: The refusal of a state whose keyed hint matches no current key: for another request, or
#: under a secret the server no longer holds (the hint cannot tell which).
FOREIGN = (
    "requestState belongs to another request or caller, or was sealed under a secret "
    "this server no longer holds"
)


def test_a_state_under_a_dropped_secret_says_the_secret_may_be_why(
    client: Client, settings: Any
) -> None:
    """docs/guides/input-requests.md lists the refusals: a state sealed under a secret
    that is neither ``SECRET_KEY`` nor in ``SECRET_KEY_FALLBACKS`` was documented as
    failing the integrity check, but was refused as "belongs to another request or
    caller", sending whoever rotated the key after a binding bug. The message now names
    both causes it cannot tell apart."""
    state = first_state(client)
    settings.SECRET_KEY = "a-new-secret-key-for-rotation-tests"
    settings.SECRET_KEY_FALLBACKS = []

    response = tool(
        client, "test_input_required_result_elicitation", responses={"user_name": ADA}, state=state
    )

    assert_error(response, 200, -32602)
    assert error_of(response)["message"] == FOREIGN


class Clock:
    """The sealing module's clock, moved by hand (never slept)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.now = time.time()
        monkeypatch.setattr(sealing, "time", SimpleNamespace(time=lambda: self.now))

    def at(self, start: float, seconds: float) -> None:
        self.now = start + seconds


def kept_asking(client: Client, clock: Clock, final_at: float) -> Any:
    """The multi-round tool with ``REQUEST_STATE_MAX_AGE`` 60: step1 asked at 0 s and
    answered at 30 s, step2 left unanswered at 55 s (the server asks again, sealing the
    state again), then answered at ``final_at`` seconds with the newest state."""
    start = clock.now
    with override_mcp(REQUEST_STATE_MAX_AGE=60):
        first = input_required(tool(client, MULTI))
        clock.at(start, 30)
        second = input_required(
            tool(client, MULTI, responses={"step1": ADA}, state=first["requestState"], id=2)
        )
        clock.at(start, 55)
        third = input_required(tool(client, MULTI, state=second["requestState"], id=3))
        assert set(third["inputRequests"]) == {"step2"}
        clock.at(start, final_at)
        return tool(client, MULTI, responses={"step2": BLUE}, state=third["requestState"], id=4)


def test_rounds_do_not_extend_the_state_past_its_lifetime(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """basic/patterns/mrtr.mdx, "Security": bind "a short expiry" into the state. Each
    round sealed the state again with a new issue time, so a caller that kept asking (a
    retry with no answer gets another ``input_required``) carried step1's answer past
    ``REQUEST_STATE_MAX_AGE`` for as long as it liked. The expiry counts from the first
    round: 65 s after it, a state re-sealed 10 s ago is refused."""
    response = kept_asking(client, Clock(monkeypatch), final_at=65)

    assert_error(response, 200, -32602)
    assert error_of(response)["message"] == "requestState has expired; start the request again"


def test_rounds_within_the_lifetime_still_complete(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """basic/patterns/mrtr.mdx: "It may prompt repeatedly": rounds that end within
    ``REQUEST_STATE_MAX_AGE`` of the first still complete with every answer."""
    response = kept_asking(client, Clock(monkeypatch), final_at=59)

    assert text(response) == "Ada likes blue."


def test_a_state_issued_more_than_a_lifetime_ahead_is_refused(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """basic/patterns/mrtr.mdx, "Security" ("a short expiry"): a state sealed by a server
    whose clock ran 10 minutes ahead stayed valid here for its lifetime plus the skew, and
    every later round kept that issue time. One issued more than ``REQUEST_STATE_MAX_AGE``
    ahead is refused as expired; a small skew is not."""
    clock = Clock(monkeypatch)
    start = clock.now
    with override_mcp(REQUEST_STATE_MAX_AGE=60):
        clock.at(start, 600)  # the sealing server's clock
        first = input_required(tool(client, MULTI))
        clock.at(start, 0)
        refused = tool(client, MULTI, responses={"step1": ADA}, state=first["requestState"], id=2)
        clock.at(start, 630)
        skewed = input_required(tool(client, MULTI))
        clock.at(start, 600)  # 30 s behind the sealing clock: within the lifetime
        kept = tool(client, MULTI, responses={"step1": ADA}, state=skewed["requestState"], id=3)

    assert error_of(refused)["message"] == "requestState has expired; start the request again"
    assert "step2" in input_required(kept)["inputRequests"]
