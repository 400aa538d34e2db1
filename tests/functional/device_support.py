"""Helpers of the device flow tests (RFC 8628): ask for codes, poll, answer at /activate."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import requests
from sqlalchemy import update
from sqlalchemy.orm import Session, sessionmaker

from common.ids import utcnow
from common.models import DeviceAuthorization
from tests.pages import form, sign_in

DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"


def start_device(base: str, client_id: str, secret: str | None = None, **extra: str) -> Any:
    """Ask for a device code and a user code; return the answer's body."""
    data = {"client_id": client_id, **extra}
    if secret is not None:
        data["client_secret"] = secret
    r = requests.post(
        f"{base}/oauth2/device_authorization",
        data=data,
        headers={"Connection": "close"},
        timeout=10,
    )
    assert r.status_code == 200, r.text
    return r.json()


def poll(
    base: str, client_id: str, device_code: str, secret: str | None = None
) -> requests.Response:
    """Poll the token endpoint once with a device code."""
    data = {"grant_type": DEVICE_GRANT, "device_code": device_code, "client_id": client_id}
    if secret is not None:
        data["client_secret"] = secret
    return requests.post(
        f"{base}/oauth2/access_token", data=data, headers={"Connection": "close"}, timeout=10
    )


def signed_in(base: str, email: str, password: str) -> requests.Session:
    """Return a browser-like session signed in as the user."""
    web = requests.Session()
    r = sign_in(web, base, email, password)
    assert r.status_code == 302, r.text
    return web


def enter_code(web: requests.Session, base: str, user_code: str) -> requests.Response:
    """Submit a user code on /activate (the first step); return the answer."""
    page = web.get(f"{base}/activate")
    assert page.status_code == 200, page.text
    fields = form(page.text, "/activate").fields
    return web.post(
        f"{base}/activate", data={**fields, "user_code": user_code}, allow_redirects=False
    )


def answer(
    web: requests.Session, base: str, user_code: str, decision: str = "approve"
) -> requests.Response:
    """Enter the code, then approve (or deny) on the consent page; return the last answer."""
    consent = enter_code(web, base, user_code)
    assert consent.status_code == 200, consent.text
    fields = form(consent.text, "/activate").fields
    value = "Approve" if decision == "approve" else "Deny"
    return web.post(f"{base}/activate", data={**fields, decision: value}, allow_redirects=False)


def poll_later(sessions: sessionmaker[Session], seconds: int = 60) -> None:
    """Move every grant's last poll back in time (the next poll is on time)."""
    with sessions() as s, s.begin():
        s.execute(
            update(DeviceAuthorization).values(last_polled_at=utcnow() - timedelta(seconds=seconds))
        )
