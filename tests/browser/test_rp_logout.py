"""RP-initiated logout in real Chromium: the confirmation form's redirect back to the client
passes the pages' Content-Security-Policy (form-action) for a registered URI only."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import pytest
from sqlalchemy import update
from sqlalchemy.orm import Session, sessionmaker

from common.models import Application
from tests.pages import Account
from tests.servers import LiveServer, Site

expect = pytest.importorskip("playwright.sync_api").expect


def signed_in(page: Any, base: str, account: Account) -> None:
    """Sign in through the form."""
    page.goto(f"{base}/account/sign_in")
    page.get_by_label("Email").fill(account.email)
    page.get_by_label("Password").fill(account.password)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{base}/account")


def test_a_confirmed_sign_out_goes_back_to_a_registered_uri_only(
    page: Any,
    combined_server: LiveServer,
    site: Site,
    account: Account,
    sessions: sessionmaker[Session],
) -> None:
    base = combined_server.url
    with sessions() as s, s.begin():
        s.execute(
            update(Application)
            .where(Application.id == account.app_id)
            .values(post_logout_redirect_uris=[f"{site.url}/bye"])
        )
    signed_in(page, base, account)
    params = {
        "client_id": account.client_id,
        "post_logout_redirect_uri": f"{site.url}/bye",
        "state": "s-1",
    }
    page.goto(f"{base}/oauth2/logout?{urlencode(params)}")
    expect(page.get_by_role("heading", level=1)).to_have_text("Sign out?")
    assert "Gallery Viewer" in page.inner_text("main")
    with page.expect_request(f"{site.url}/bye?**") as request:
        page.get_by_role("button", name="Sign out everywhere").click()
    assert request.value.url == f"{site.url}/bye?state=s-1"
    page.goto(f"{base}/account")
    assert "/account/sign_in" in page.url

    # Another URI on the same site, not registered: the signed-out page, nothing sent there.
    signed_in(page, base, account)
    params["post_logout_redirect_uri"] = f"{site.url}/elsewhere"
    page.goto(f"{base}/oauth2/logout?{urlencode(params)}")
    page.get_by_role("button", name="Sign out everywhere").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("You are signed out")
    assert site.received("/elsewhere") == []
