"""Protocol revisions and the revision policy (docs/adr/0001-revision-policy.md).

The server implements exactly one revision, 2026-07-28. A request declaring a string that
is not a dated revision is refused with -32022. A well-formed dated revision we do not
implement follows the policy: newer ones are served best-effort with 2026-07-28 semantics
(and recorded by the caller), older ones are refused; "strict" refuses all but ours.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property
from typing import Any, Final

from .errors import UnsupportedProtocolVersion

CURRENT_REVISION: Final = "2026-07-28"
#: ASCII digits only: ``\d`` matches any script's, and ``int`` reads them all.
_DATED = re.compile(r"\A([0-9]{4})-([0-9]{2})-([0-9]{2})\Z")


class ServedHow(StrEnum):
    """How a request's declared revision was honoured."""

    SUPPORTED = "supported"
    BEST_EFFORT = "best-effort"


class RevisionPolicyMode(StrEnum):
    BEST_EFFORT = "best-effort"
    STRICT = "strict"


@dataclass(frozen=True, slots=True)
class RevisionDecision:
    """The outcome of admitting a declared revision: what we serve and how."""

    declared: str
    served: str
    how: ServedHow


def parse_revision(value: str) -> datetime.date | None:
    """The date of a ``YYYY-MM-DD`` revision string, or None if it is not one."""
    match = _DATED.match(value)
    if match is None:
        return None
    try:
        return datetime.date(int(match[1]), int(match[2]), int(match[3]))
    except ValueError:
        return None


@dataclass(frozen=True)
class RevisionPolicy:
    """Decides, per request, whether a declared revision is served and how.

    ``best_effort`` is either None (any dated revision newer than the newest supported one)
    or an explicit collection of dated revisions to serve best-effort.
    """

    supported: Sequence[str] = (CURRENT_REVISION,)
    mode: RevisionPolicyMode = RevisionPolicyMode.BEST_EFFORT
    best_effort: Collection[str] | None = None

    def decide(self, declared: Any) -> RevisionDecision:
        """Admit ``declared`` or raise :class:`UnsupportedProtocolVersion`."""
        if isinstance(declared, str):
            decision = self._supported_decisions.get(declared)
            if decision is not None:
                return decision
        if self._serves_best_effort(declared):
            return RevisionDecision(declared, self.newest, ServedHow.BEST_EFFORT)
        raise UnsupportedProtocolVersion(declared, list(self.supported))

    @cached_property
    def _supported_decisions(self) -> dict[str, RevisionDecision]:
        """The decision for each supported revision, made once: every request declares
        one, and a decision is an immutable value."""
        return {s: RevisionDecision(s, s, ServedHow.SUPPORTED) for s in self.supported}

    @property
    def newest(self) -> str:
        """The newest supported revision: what a best-effort request is served with."""
        dated = [(date, s) for s in self.supported if (date := parse_revision(s)) is not None]
        return max(dated)[1] if dated else CURRENT_REVISION

    def _serves_best_effort(self, declared: Any) -> bool:
        """Only a dated revision newer than the newest supported one is served best-effort;
        an explicit ``best_effort`` list narrows that to its own dates and never widens it:
        an older date is the handshake era, refused with -32022 whatever the list says
        (ADR 0001). A listed older date once served a client of that era with this
        revision's rules."""
        if self.mode is RevisionPolicyMode.STRICT or not isinstance(declared, str):
            return False
        date = parse_revision(declared)
        newest = parse_revision(self.newest)
        if date is None or newest is None or date <= newest:
            return False
        return self.best_effort is None or declared in self.best_effort
