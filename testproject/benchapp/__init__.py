"""Benchmark-only app: the ``add`` tool and the bare JSON views it is compared with.

Installed only by ``testproject.settings_bench`` (the benchmark, ``python -m bench``), so the
test suite's tool lists do not change.
"""
