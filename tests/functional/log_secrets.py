"""No secret or token in any log line: collect the run's secrets and its log lines, then grep.

Every request the functional tests send goes through ``requests.Session.send`` (wrapped in
``conftest``). Collected there: the tokens, client secrets, codes and cookies the services
issue, the tokens and secrets requests present, and the passwords the services accept. Every
log record emitted during the run is captured (the servers run in-process, so their access,
audit and error logs reach the root logger), and so are the output files of the servers tests
start as processes (``LOG_FILES``). At the end of the session not one collected secret may
appear in them.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import logging
import re
from collections.abc import Iterable, Iterator
from itertools import repeat
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, quote_plus, urlsplit

import requests

SECRETS: set[str] = set()
# The subset the services issued (tokens, client secrets, codes, cookies): generated input
# sent by a fuzzer is forgotten after its tests (``forget_generated``), these never are.
ISSUED: set[str] = set()
LOG_FILES: list[Path] = []

# Parameters and JSON fields whose values are secrets.
SECRET_FIELDS = frozenset(
    {
        "token",
        "access_token",
        "refresh_token",
        "xapp_token",
        "id_token",
        "client_secret",
        "code",
        "code_verifier",
        "password",
        "new_password",
        "current_password",
        "oauth_token",
        "oauth_token_secret",
        "device_code",
        "user_code",
        "registration_access_token",
        "initial_access_token",
    }
)
PASSWORD_FIELDS = frozenset({"password", "new_password", "current_password"})
TOKEN_HEADERS = ("X-Xapp-Token", "X-Access-Token", "X-Auth-Token")
RESET_PATH = "/account/password/reset/"
_URLSAFE = re.compile(r"[A-Za-z0-9_-]{16,}")
_ISSUED = re.compile(r"[A-Za-z0-9_-]{20,512}")
# A secret field as a JSON key (escaped key names are generated input, never a secret of ours).
_JSON_SECRET_KEY = re.compile('"(?:' + "|".join(sorted(SECRET_FIELDS)) + ')"')


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("latin-1")
    return value if isinstance(value, str) else ""


def keep(value: Any, *, issued: bool = False) -> None:
    """Remember a secret; short or low-entropy values are skipped (they match too much)."""
    text = _text(value).strip()
    if len(text) >= 8 and len(set(text)) >= 6:
        SECRETS.add(text)
        if issued:
            ISSUED.add(text)


def forget_generated(known: set[str]) -> None:
    """Forget the secrets collected since ``known`` that the services did not issue.

    Fuzzed requests send made-up values as passwords, codes and tokens, and the same strings in
    other fields, which the logs rightly show: they are no secrets of the service. What the
    services issued (tokens, secrets, codes, session cookies) stays to be looked for.
    """
    SECRETS.difference_update(SECRETS - known - ISSUED)


def keep_presented(value: Any) -> None:
    """Remember a secret a request carried, if it has the shape of an issued one.

    Tokens, client secrets and codes are long URL-safe random strings. Whatever else a request
    carries in those places (a fuzzer's strings, "a" * 5000) is no secret of the service, and
    may rightly appear in a log line under another name.
    """
    text = _text(value).strip()
    if _ISSUED.fullmatch(text) and len(set(text)) >= 10:
        SECRETS.add(text)


def _entries(data: Any) -> Iterator[tuple[str | None, Any]]:
    if isinstance(data, dict):
        return iter(data.items())
    return zip(repeat(None), data if isinstance(data, list) else ())


def _walk_json(data: Any) -> Iterator[tuple[str, Any]]:
    """Yield every (key, value) of a JSON document, depth first, in document order.

    An explicit stack, not nested generators: a deeply nested body (the hostile input tests
    send some) costs its size, not its size times its depth."""
    stack = [_entries(data)]
    while stack:
        entry = next(stack[-1], None)
        if entry is None:
            stack.pop()
            continue
        key, value = entry
        if key is not None:
            yield key, value
        if isinstance(value, dict | list):
            stack.append(_entries(value))


def _secret_values(pairs: Iterable[tuple[str, Any]], fields: frozenset[str]) -> list[Any]:
    return [v for k, v in pairs if k in fields and isinstance(v, str | bytes)]


def _body_pairs(body: Any, content_type: str) -> list[tuple[str, Any]]:
    """Return a body's (key, value) pairs whose key may be a secret field.

    Only secret fields are read by the callers: a JSON body that names none of them (most
    catalog documents) is not parsed and walked.
    """
    text = _text(body)
    if not text:
        return []
    if "json" in content_type:
        if not _JSON_SECRET_KEY.search(text):
            return []
        with contextlib.suppress(ValueError):
            return list(_walk_json(json.loads(text)))
        return []
    if "form" in content_type or not content_type:
        return parse_qsl(text)
    return []


def _url_pairs(url: str) -> list[tuple[str, str]]:
    parts = urlsplit(url)
    return parse_qsl(parts.query) + parse_qsl(parts.fragment)


def harvest(request: requests.PreparedRequest, response: requests.Response) -> None:
    """Collect the secrets one exchange carried, either way."""
    # What the server issued: tokens, client secrets, codes (in a redirect), cookies.
    location = response.headers.get("Location", "")
    for value in _secret_values(_url_pairs(location), SECRET_FIELDS):
        keep(value, issued=True)
    for value in response.cookies.values():
        keep(value, issued=True)
    content_type = response.headers.get("Content-Type", "")
    answer = _body_pairs(response.content, content_type) if "json" in content_type else []
    for value in _secret_values(answer, SECRET_FIELDS):
        keep(value, issued=True)
    # What the request presented.
    headers = request.headers
    for name in TOKEN_HEADERS:
        keep_presented(headers.get(name))
    scheme, _, credentials = _text(headers.get("Authorization")).partition(" ")
    if scheme.lower() == "bearer":
        keep_presented(credentials)
    elif scheme.lower() == "basic":
        with contextlib.suppress(binascii.Error, ValueError):
            keep_presented(base64.b64decode(credentials).decode("latin-1").partition(":")[2])
    url = request.url or ""
    sent = _url_pairs(url) + _body_pairs(request.body, _text(headers.get("Content-Type")))
    for value in _secret_values(sent, SECRET_FIELDS - PASSWORD_FIELDS):
        keep_presented(value)
    if RESET_PATH in urlsplit(url).path:
        keep_presented(urlsplit(url).path.split(RESET_PATH, 1)[1].split("/")[0])
    # A password the service accepted: a token or a redirect (a signed-in page) came back.
    accepted = response.status_code in (302, 303) or any(k == "access_token" for k, _ in answer)
    if accepted:
        for value in _secret_values(sent, PASSWORD_FIELDS):
            keep(value)


class LogCapture(logging.Handler):
    """Keep every formatted log record of the run."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []
        self.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        """Keep one record (never fail the code that logged it)."""
        try:
            self.lines.append(self.format(record))
        except Exception:
            self.lines.append(f"{record.name} {record.msg!r} {record.args!r}")


def leaks(lines: Iterable[str], secrets: Iterable[str]) -> list[str]:
    """Return the secrets found in ``lines``, each with the first line that holds it.

    A secret with long URL-safe parts (tokens, client secrets, signed cookies) is found when
    each part is a whole run of URL-safe characters in the text (one set lookup per part); a
    shorter one (a password) is searched as it is and URL-encoded.
    """
    text = "\n".join(lines)
    runs = set(_URLSAFE.findall(text))
    found = []
    for secret in sorted(secrets):
        parts = _URLSAFE.findall(secret)
        if parts:
            hit = all(p in runs for p in parts)
        else:
            parts = sorted({secret, quote(secret), quote_plus(secret)})
            hit = any(form in text for form in parts)
        if hit:
            line = next((ln for ln in text.splitlines() if any(p in ln for p in parts)), "")
            found.append(f"{secret!r} in: {line[:300]}")
    return found


def log_file_lines() -> list[str]:
    """Return the lines of the registered server output files that still exist."""
    out: list[str] = []
    for path in LOG_FILES:
        try:
            out += path.read_text(errors="replace").splitlines()
        except OSError:
            continue
    return out
