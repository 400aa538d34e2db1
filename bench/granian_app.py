"""WSGI factories for serving the benchmark's apps with granian (``http_bench.py --server``).

    granian --interface wsgi --factory bench.granian_app:resource --workers 1 --port 8100

Each factory builds its app in the granian worker process, from the environment, as
``artcat serve`` builds it for waitress.
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


def resource() -> Any:
    """Return the catalog, as ``artcat serve resource`` builds it."""
    from artcat.launch import build_wsgi
    from common.observability import configure_logging
    from common.settings import AuthSettings, ResourceSettings

    resource_settings = ResourceSettings.from_env()
    configure_logging(resource_settings.log_level, access=resource_settings.access_log)
    return build_wsgi("resource", AuthSettings.from_env(), resource_settings)
