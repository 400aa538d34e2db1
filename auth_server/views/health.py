"""``/healthz`` (alive) and ``/readyz`` (database and Redis reachable)."""

from __future__ import annotations

from flask import Response, jsonify

from auth_server.context import services
from auth_server.views.described import Described
from common.health import readiness
from common.openapi.parts import json_response, op, ref


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


# Described as the catalog describes its own (both services answer them alike).
bp = Described("health", __name__, tag="service")
bp.declare(
    "/healthz",
    healthz,
    get=op("healthz", "Liveness", {"200": json_response(ref("Health"), "Alive")}),
)
bp.declare(
    "/readyz",
    readyz,
    get=op(
        "readyz",
        "Readiness (database and Redis)",
        {
            "200": json_response(ref("Health"), "Ready"),
            "503": json_response(ref("Health"), "Not ready"),
        },
    ),
)
