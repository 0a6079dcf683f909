"""``python -m bench``: the server benchmark (see bench/servers.py and docs/benchmark.md)."""

import sys

from bench.servers import main

sys.exit(main())
