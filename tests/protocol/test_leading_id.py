"""``leading_id``: the id of a request too large to read, from the part that was read.
basic/transports/stdio.mdx frames one message per line on one shared stream, so an
error is matched to its request only by its ``id`` (basic/index.mdx: a response carries
the id of the request it answers; RequestId is a string or an integer)."""

from __future__ import annotations

import pytest

from django_mcp.protocol.leading_id import LOOK_BYTES, leading_id

PARAMS_CUT = b'"params":{"arguments":{"text":"aaaaaaaaaaaaaaaa'


@pytest.mark.parametrize(
    ("prefix", "expected"),
    [
        (b'{"jsonrpc":"2.0","id":7,"method":"tools/call",' + PARAMS_CUT, 7),
        (b' { "id" : "abc" , "method":"x",' + PARAMS_CUT, "abc"),
        (b'{"jsonrpc":"2.0","method":"tools/call","id":-3,' + PARAMS_CUT, -3),
        (b'{"method":"t","params":{"id":5},"id":6,' + PARAMS_CUT, 6),  # not the nested one
        (b'{"jsonrpc":"2.0","method":"tools/call",' + PARAMS_CUT + b'","id":9}', None),
        (b'{"method":"t","params":{"id":5},' + PARAMS_CUT, None),
        (b'{"id":1.5,' + PARAMS_CUT, None),  # not a request id
        (b'{"id":true,' + PARAMS_CUT, None),
        (b'{"id":null,' + PARAMS_CUT, None),
        (b'{"id":"' + b"x" * 300 + b'",' + PARAMS_CUT, None),  # too long to echo
        (b'{"id":12', None),  # cut inside the id: 12 may be 123
        (b'{"id":"ab', None),
        (b'[{"id":1}', None),
        (b"not json", None),
        (b"", None),
        (b'{"a":' + b"[" * 100_000, None),
        # A review's findings: a number the cut may have shortened ("1." of "1.5")...
        (b'{"method":"t","id":1.', None),
        (b'{"method":"t","id":1e', None),
        (b'{"method":"t","id":1E+', None),
        # ...a second top-level id (the full parse takes the last)...
        (b'{"id":1,"method":"t","id":2,' + PARAMS_CUT, None),
        (b'{"id":1,"method":"t","params":{"id":2},' + PARAMS_CUT, 1),
        # ...what the full parse refuses: NaN, text that is not UTF-8...
        (b'{"x":NaN,"id":3,' + PARAMS_CUT, None),
        (b'{"x":1e999,"id":3,' + PARAMS_CUT, None),  # out of range, as the full parse says
        (b'{"id":"a\xffb",' + PARAMS_CUT, None),
        # ...while a character cut at the end of the look is no reason to give up.
        ('{"id":"é","p":"é'.encode()[:-1], "é"),
    ],
)
def test_the_top_level_id_is_found_only_when_whole(prefix: bytes, expected: object) -> None:
    assert leading_id(prefix) == expected


def test_only_the_beginning_is_looked_at() -> None:
    """The look is bounded (a review measured 2 s of CPU for 4 MiB of members): an id
    past :data:`LOOK_BYTES` is not found, and a long prefix costs one short look."""
    members = b"".join(b'"k%d":%d,' % (n, n) for n in range(20_000))  # about 200 KB
    assert len(members) > LOOK_BYTES
    assert leading_id(b"{" + members + b'"id":5,' + PARAMS_CUT) is None
    assert leading_id(b'{"id":5,' + members + PARAMS_CUT) == 5
    assert leading_id(b"{" + b" " * (4 << 20) + b'"id":6,' + PARAMS_CUT) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [(b"1.0", 1.0), (b"-2.0", -2.0), (b"1e2", 100.0), (b"9007199254740992.0", None)],
)
def test_an_id_with_a_zero_fraction_is_found_as_the_full_parse_reads_it(
    text: bytes, expected: object
) -> None:
    """schema.json RequestId: an integer as JSON Schema 2020-12 reads one, ``1.0`` too,
    kept as the float it was sent as (echoed ``1.0``), as :func:`parse_message` keeps it;
    beyond ±(2**53-1) it is no id, there as here."""
    found = leading_id(b'{"jsonrpc":"2.0","id":' + text + b"," + PARAMS_CUT)
    assert found == expected
    assert type(found) is type(expected)
