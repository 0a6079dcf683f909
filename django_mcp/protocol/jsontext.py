"""JSON encoders built once, called with no per-call set-up.

``json.JSONEncoder.encode`` rebuilds its C encoder on every call (``iterencode`` makes a
fresh circular-reference table, a float formatter and a ``c_make_encoder`` object each
time), which costs more than encoding a small message. :func:`encoder` builds that C
encoder once and returns a function that only runs it: the same text, the same
exceptions, for a fraction of the instructions (a ``tools/call`` response: about 29,000
instead of 41,000 under callgrind).

The one thing left out is the circular-reference table: it cannot be shared between calls
(a failed encoding leaves stale entries in it, and threads encode at the same time), and
a fresh one per call is most of the set-up saved. Nothing encoded here can be circular
(parsed JSON, and results made of plain dicts and lists); a circular value ends in
``RecursionError`` instead of ``ValueError("Circular reference detected")``.
"""

from __future__ import annotations

import json
import json.encoder
from collections.abc import Callable
from typing import Any

Encode = Callable[[Any], str]


def encoder(
    *,
    ensure_ascii: bool = True,
    separators: tuple[str, str] | None = None,
    allow_nan: bool = True,
    sort_keys: bool = False,
) -> Encode:
    """``json.JSONEncoder(**options).encode``, with its C encoder built once."""
    base = json.JSONEncoder(
        ensure_ascii=ensure_ascii,
        separators=separators,
        allow_nan=allow_nan,
        sort_keys=sort_keys,
        check_circular=False,
    )
    make_encoder = getattr(json.encoder, "c_make_encoder", None)
    if make_encoder is None:  # an interpreter without the C accelerator
        return base.encode
    encode_string = (
        json.encoder.encode_basestring_ascii if ensure_ascii else json.encoder.encode_basestring
    )
    chunks = make_encoder(
        None,  # no circular-reference table (see the module docstring)
        base.default,
        encode_string,
        None,  # no indent
        base.key_separator,
        base.item_separator,
        base.sort_keys,
        base.skipkeys,
        base.allow_nan,
    )

    def encode(value: Any) -> str:
        return "".join(chunks(value, 0))

    return encode
