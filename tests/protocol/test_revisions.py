"""The revision policy (basic/versioning.mdx; docs/adr/0001-revision-policy.md)."""

from __future__ import annotations

import datetime

import pytest

from django_mcp.protocol import errors
from django_mcp.protocol.revisions import (
    CURRENT_REVISION,
    RevisionPolicy,
    RevisionPolicyMode,
    ServedHow,
    parse_revision,
)

DEFAULT = RevisionPolicy()
STRICT = RevisionPolicy(mode=RevisionPolicyMode.STRICT)


def refusal(policy: RevisionPolicy, declared: object) -> errors.UnsupportedProtocolVersion:
    with pytest.raises(errors.UnsupportedProtocolVersion) as info:
        policy.decide(declared)
    return info.value


def test_the_current_revision_is_supported():
    decision = DEFAULT.decide(CURRENT_REVISION)
    assert (decision.declared, decision.served, decision.how) == (
        "2026-07-28",
        "2026-07-28",
        ServedHow.SUPPORTED,
    )


@pytest.mark.parametrize("declared", ["2026-07-29", "2027-01-01", "2099-01-01"])
def test_newer_dated_revisions_are_served_best_effort_as_the_current_one(declared):
    """docs/adr/0001-revision-policy.md: revisions newer than ours are served best-effort with
    2026-07-28 semantics (and recorded)."""
    decision = DEFAULT.decide(declared)
    assert (decision.declared, decision.served, decision.how) == (
        declared,
        CURRENT_REVISION,
        ServedHow.BEST_EFFORT,
    )


@pytest.mark.parametrize("declared", ["2025-11-25", "2025-06-18", "2024-11-05", "2026-07-27"])
def test_older_dated_revisions_are_refused(declared):
    """basic/versioning.mdx: a version the server does not implement gets
    UnsupportedProtocolVersion (-32022) listing the supported versions."""
    error = refusal(DEFAULT, declared)
    assert error.code == errors.UNSUPPORTED_PROTOCOL_VERSION
    assert error.data == {"supported": ["2026-07-28"], "requested": declared}


@pytest.mark.parametrize(
    "declared",
    [
        "latest",
        "v999.0.0",
        "",
        "2026-7-28",
        "2026-07-28T00:00",
        " 2026-07-28",
        "20260728",
        "\uff12\uff10\uff12\uff17-01-01",  # fullwidth digits: int() reads 2027
        "\u0662\u0660\u0662\u0667-\u0660\u0661-\u0660\u0661",  # Arabic-Indic digits
    ],
)
def test_strings_that_are_not_dated_revisions_are_refused_with_supported_and_requested(declared):
    """schema.json UnsupportedProtocolVersionError: data = {supported: string[],
    requested: string}; the official conformance suite tests discover with version v999.0.0."""
    error = refusal(DEFAULT, declared)
    assert error.to_dict() == {
        "code": -32022,
        "message": error.message,
        "data": {"supported": ["2026-07-28"], "requested": declared},
    }


@pytest.mark.parametrize("declared", ["2026-02-30", "2027-13-01", "2099-00-10", "2100-02-29"])
def test_impossible_calendar_dates_are_not_revisions(declared):
    """basic/versioning.mdx: version strings are dates (YYYY-MM-DD)."""
    assert parse_revision(declared) is None
    assert refusal(DEFAULT, declared).code == errors.UNSUPPORTED_PROTOCOL_VERSION


def test_parse_revision_reads_real_dates():
    assert parse_revision("2028-02-29") == datetime.date(2028, 2, 29)


@pytest.mark.parametrize("declared", ["2026-07-29", "2099-01-01", "2025-11-25", "latest"])
def test_strict_mode_refuses_everything_but_the_supported_revisions(declared):
    """docs/adr/0001-revision-policy.md: "strict" refuses everything but 2026-07-28."""
    assert refusal(STRICT, declared).data["requested"] == declared
    assert STRICT.decide("2026-07-28").how is ServedHow.SUPPORTED


def test_an_explicit_best_effort_list_replaces_the_newer_than_rule():
    policy = RevisionPolicy(best_effort=frozenset({"2027-03-01"}))
    assert policy.decide("2027-03-01").how is ServedHow.BEST_EFFORT
    assert refusal(policy, "2027-03-02").data["requested"] == "2027-03-02"
    assert refusal(policy, "2099-01-01").code == errors.UNSUPPORTED_PROTOCOL_VERSION


@pytest.mark.parametrize("declared", ["2025-11-25", "2024-11-05", CURRENT_REVISION])
def test_an_explicit_best_effort_list_never_serves_an_older_revision(declared):
    """docs/adr/0001-revision-policy.md: BEST_EFFORT_REVISIONS "can restrict" best-effort
    serving; an older dated revision is refused whatever the list holds."""
    policy = RevisionPolicy(supported=(CURRENT_REVISION,), best_effort=frozenset({declared}))
    if declared == CURRENT_REVISION:
        assert policy.decide(declared).how is ServedHow.SUPPORTED
    else:
        assert refusal(policy, declared).data["requested"] == declared


def test_a_best_effort_date_at_or_before_a_newer_supported_revision_is_refused():
    policy = RevisionPolicy(
        supported=("2026-07-28", "2027-01-01"), best_effort=frozenset({"2026-12-01"})
    )
    assert refusal(policy, "2026-12-01").data["supported"] == ["2026-07-28", "2027-01-01"]


def test_an_explicit_best_effort_list_still_needs_dated_revisions():
    policy = RevisionPolicy(best_effort=frozenset({"latest"}))
    assert refusal(policy, "latest").code == errors.UNSUPPORTED_PROTOCOL_VERSION


def test_strict_mode_ignores_the_best_effort_list():
    policy = RevisionPolicy(mode=RevisionPolicyMode.STRICT, best_effort=frozenset({"2027-03-01"}))
    assert refusal(policy, "2027-03-01").code == errors.UNSUPPORTED_PROTOCOL_VERSION


def test_a_policy_with_several_supported_revisions_lists_them_all():
    policy = RevisionPolicy(supported=("2026-07-28", "2027-01-01"))
    assert policy.decide("2027-01-01").how is ServedHow.SUPPORTED
    assert policy.decide("2027-06-01").how is ServedHow.BEST_EFFORT
    assert refusal(policy, "2025-11-25").data["supported"] == ["2026-07-28", "2027-01-01"]
