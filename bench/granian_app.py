"""The baseline's WSGI factory for granian (``http_bench.py --server granian``):

    granian --interface wsgi --factory bench.granian_app:hello --workers 1 --port 8100

The services themselves are served by ``artcat serve --server granian``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def hello() -> Any:
    """Return the baseline: the falcon hello-world of ``bench/hello_app.py``."""
    from bench.hello_app import build_app

    return build_app()
