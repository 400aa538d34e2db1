"""Check real responses against the OpenAPI document: used by the functional tests."""

from __future__ import annotations

import re
from functools import cache
from typing import Any
from urllib.parse import urlsplit

import jsonschema_rs

from auth_server.app import describe
from common.openapi import compose
from resource_server.app import ROUTE_TABLE
from resource_server.openapi import build_part


@cache
def document() -> dict[str, Any]:
    """Return the document both services describe (its server URL is irrelevant here): the
    catalog's part and the authorization server's as its code describes it now (a unit test
    holds the stored part the catalog serves to it)."""
    return compose([build_part(ROUTE_TABLE), describe()], "http://127.0.0.1")


@cache
def _matchers() -> list[tuple[re.Pattern[str], str]]:
    out = []
    for path in document()["paths"]:
        pattern = re.sub(
            r"\{[^}]+\}", r"[^/]+", re.escape(path).replace(r"\{", "{").replace(r"\}", "}")
        )
        out.append((re.compile(f"^{pattern}$"), path))
    # Literal paths first, so /api/collections beats /api/{x} style templates.
    out.sort(key=lambda m: m[1].count("{"))
    return out


def operation_for(method: str, url: str) -> tuple[str, dict[str, Any]] | None:
    """Return the documented path and operation that a request hits, if any."""
    path = urlsplit(url).path.rstrip("/") or "/"
    for pattern, template in _matchers():
        if pattern.match(path):
            op = document()["paths"][template].get(method.lower())
            return (template, op) if op else None
    return None


def documented_path(url: str) -> bool:
    """Tell whether the document has the path a request hits (whatever its method)."""
    path = urlsplit(url).path.rstrip("/") or "/"
    return any(pattern.match(path) for pattern, _ in _matchers())


def check_response(method: str, url: str, status: int, content_type: str, body: Any) -> str | None:
    """Return a description of how a response breaks the document, or None when it fits."""
    if method.upper() in ("HEAD", "OPTIONS"):
        return None
    found = operation_for(method, url)
    if found is None:
        if status == 405 and documented_path(url):
            return None  # a method the path does not take: 405 (with Allow) is the answer
        if 400 <= status < 500 and status != 405:
            return None  # a path the API does not have (404), or a request refused before routing
        return f"{method} {urlsplit(url).path} answered {status}, and is not in the document"
    template, op = found
    responses = op["responses"]
    spec = responses.get(str(status))
    if spec is None:
        if status < 300:
            return f"{method} {template} answered {status}, which the document does not list"
        return None
    media = spec.get("content") or {}
    if not content_type.startswith("application/") or "json" not in content_type:
        return None
    schema = (media.get("application/json") or {}).get("schema")
    if schema is None:
        return None
    validator = _validator(template, method.lower(), str(status))
    if validator.is_valid(body):
        return None
    errors = sorted(validator.iter_errors(body), key=lambda e: [str(p) for p in e.instance_path])
    first = errors[0]
    where = "/".join(str(p) for p in first.instance_path)
    return f"{method} {template} {status}: {where}: {first.message[:300]}"


@cache
def _validator(template: str, method: str, status: str) -> Any:
    """Return the compiled validator of one documented JSON response (JSON Schema 2020-12, as
    OpenAPI 3.1 has it; a compiled validator, as every functional test's response is checked)."""
    spec = document()["paths"][template][method]["responses"][status]
    schema = spec["content"]["application/json"]["schema"]
    return jsonschema_rs.Draft202012Validator({**schema, "components": document()["components"]})
