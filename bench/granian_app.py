"""The baseline's WSGI factory for granian (``python -m bench.http_bench --server granian``):

    granian --interface wsgi --factory bench.granian_app:hello --working-dir . --port 8100

The services themselves are served by ``artcat serve --server granian``.
"""

from __future__ import annotations

from typing import Any

from bench.hello_app import build_app


def hello() -> Any:
    """Return the baseline: the falcon hello-world of ``bench/hello_app.py``."""
    return build_app()
