"""Secrets in URLs stay out of the logs, however the parameter names are encoded.

Attack: a client (or a link an attacker hands out) puts a token, a client secret or a code in
the query string under a percent-encoded name (``c%6Fde``, ``%2561ccess_token`` encoded twice,
``;`` as the separator) or a password reset token in an odd spelling of the reset path; the
access log, which operators ship elsewhere, must still show ``[redacted]`` and never the value.
The requests are sent byte for byte (``http.client``: ``requests`` would re-encode them).
"""

from __future__ import annotations

import http.client
import logging
import secrets
import time
from urllib.parse import quote, urlsplit

import pytest

from tests.functional import log_secrets
from tests.servers import LiveServer

# (method, target with {s} where the secret goes); every one of them is an access line.
TARGETS = [
    ("GET", "/api/artists?c%6Fde={s}&size=2"),
    ("GET", "/api?%61ccess_token={s}"),
    ("GET", "/api/artists?%2561ccess%255Ftoken={s}"),  # encoded twice
    ("GET", "/api/artists?size=2;access_token={s}"),
    ("GET", "/api/search?q=a&pass%77ord={s}"),
    ("GET", "/api/artists?x_%61uth=1&%2578app%255ftoken={s}"),
    ("POST", "/api/tokens/xapp_token?client_id=x&client%5Fsecret={s}"),
    ("POST", "/oauth2/access_token?%63lient_secret={s}&grant_type=password"),
    ("GET", "/oauth2/authorize?client_id=x&c%6F%64e={s}"),
    ("GET", "/account/sign_in?next=/account&%73tate={s}"),
    ("GET", "//account//password/reset/{s}"),
    ("GET", "/account/password/./reset/{s}"),
    ("GET", "/Account/Password/Reset/{s}"),
    ("GET", "/account/password/%2572eset/{s}"),
]


def send(live: LiveServer, method: str, target: str) -> int:
    """Send one request exactly as written; return its status."""
    where = urlsplit(live.url)
    conn = http.client.HTTPConnection(where.hostname or "", where.port, timeout=10)
    try:
        conn.request(method, target, body=b"" if method == "POST" else None)
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


def access_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    """Return the access lines captured so far."""
    return [r.getMessage() for r in caplog.records if r.name == "artcat.access"]


def test_encoded_secret_names_and_reset_paths_are_redacted(
    combined_server: LiveServer, caplog: pytest.LogCaptureFixture
) -> None:
    sent = {}
    with caplog.at_level(logging.INFO, logger="artcat"):
        for method, target in TARGETS:
            secret = secrets.token_urlsafe(24)
            log_secrets.keep(secret)  # the run's own check looks for it in every line too
            status = send(combined_server, method, target.format(s=secret))
            assert status < 500, (target, status)
            sent[target] = secret
        # A response's access line is written as the server closes it, which may come just
        # after the client has read the answer: wait (with a deadline) for the last one.
        end = time.monotonic() + 10
        while len(access_lines(caplog)) < len(TARGETS) and time.monotonic() < end:
            time.sleep(0.02)
    assert len(access_lines(caplog)) >= len(TARGETS), access_lines(caplog)
    text = "\n".join(r.getMessage() for r in caplog.records)
    leaked = {t: s for t, s in sent.items() if s in text or quote(s) in text}
    assert leaked == {}, text
    assert text.count("[redacted]") >= len(TARGETS)
