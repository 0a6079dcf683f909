"""The latency histogram of the request log's hourly summaries: fixed log-scale buckets.

Why a histogram: an exact 95th percentile needs every duration of a window sorted, which
is what made the dashboard's cost grow with the requests in its window (9 s for 30 days of
10 million rows). Counts per bucket add up across batches, processes and hours, so a
window's p95 comes from a few summary rows, at a bounded cost in precision.

The buckets: ``[0, LOW)``, then ``[LOW·RATIO^(i-1), LOW·RATIO^i)`` for ``i`` in
``1 .. BUCKETS-2``, then everything from ``LOW·RATIO^(BUCKETS-2)`` (about 102 s) up. With
``RATIO = 1.25`` a bucket spans a factor of 1.25, and :func:`p95` reports the geometric
middle of the bucket holding the nearest-rank p95, so the reported value is within a
factor of ``sqrt(1.25)`` (about 11.8 %) of the exact nearest-rank p95, either way. Below
``LOW`` (0.1 ms) the error is at most 0.05 ms; in the last bucket the value is that
bucket's lower bound (an underestimate: "at least 102 s").

Pure Python (no Django): the writer, the rebuild command's SQL and the dashboard all use
:data:`BOUNDS`, so a duration falls in the same bucket whichever of them counted it.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Sequence

#: The lowest bound (milliseconds), the ratio between bounds and the number of buckets.
LOW: Final = 0.1
RATIO: Final = 1.25
BUCKETS: Final = 64
#: The upper bound of each bucket but the last (``BUCKETS - 1`` values, increasing).
BOUNDS: Final = tuple(LOW * RATIO**i for i in range(BUCKETS - 1))
#: The largest relative error of :func:`p95` above ``LOW`` (a factor, either way).
ERROR_FACTOR: Final = math.sqrt(RATIO)
#: The summary columns of the buckets, in order (``b00`` .. ``b63``).
COLUMNS: Final = tuple(f"b{i:02d}" for i in range(BUCKETS))


def bucket(duration_ms: float) -> int:
    """The index of the bucket ``duration_ms`` falls in (``BOUNDS[i-1] <= d < BOUNDS[i]``)."""
    return bisect_right(BOUNDS, duration_ms)


def value(index: int) -> float:
    """The value reported for a bucket: its geometric middle (see the module docstring)."""
    if index <= 0:
        return LOW / 2
    if index >= BUCKETS - 1:
        return BOUNDS[-1]
    return BOUNDS[index - 1] * ERROR_FACTOR


def p95(counts: Sequence[int]) -> float | None:
    """The approximate nearest-rank 95th percentile of a histogram; None when it is empty."""
    total = sum(counts)
    if total <= 0:
        return None
    rank = math.ceil(0.95 * total)
    seen = 0
    for index, count in enumerate(counts):
        seen += count
        if seen >= rank:
            return value(index)
    return value(len(counts) - 1)  # unreachable: seen reaches total
