"""``/healthz`` (alive) and ``/readyz`` (database and Redis reachable)."""

from __future__ import annotations

from flask import Response, jsonify

from auth_server.context import services
from common.health import readiness


def healthz() -> Response:
    """Say the process is alive."""
    return jsonify({"status": "ok"})


def readyz() -> tuple[Response, int]:
    """Check the stores; 503 when one does not answer."""
    checks = readiness(services().stores)
    ready = all(v == "ok" for v in checks.values())
    return jsonify({"status": "ok" if ready else "unavailable", "checks": checks}), (
        200 if ready else 503
    )
