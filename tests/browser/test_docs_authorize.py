"""The API docs in real Chromium: the API's operations first, the pages on request, and the
"Authorize" button's authorization-code flow through our sign-in and consent."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy.orm import Session, sessionmaker

from common.settings import Settings
from tests.pages import make_account
from tests.servers import LiveServer

expect = pytest.importorskip("playwright.sync_api").expect

REDIRECT = "/docs/assets/oauth2-redirect.html"


def tags(page: Any) -> list[str]:
    """Return the tags the docs list, once Swagger UI drew them."""
    page.wait_for_selector(".opblock-tag", timeout=90_000)  # a busy machine draws slowly
    return [name.strip() for name in page.locator(".opblock-tag").all_inner_texts()]


def test_the_docs_show_the_api_first_and_the_pages_on_request(
    page: Any, combined_server: LiveServer
) -> None:
    page.goto(f"{combined_server.url}/docs")
    shown = " ".join(tags(page))
    for tag in ("catalog", "search", "auctions", "accounts", "tokens", "OAuth"):
        assert tag in shown, tag
    assert "pages" not in shown
    page.goto(f"{combined_server.url}/docs?pages")
    assert "pages" in " ".join(tags(page))


def test_authorize_runs_the_code_flow_against_our_server(
    page: Any,
    combined_server: LiveServer,
    clean_db: Any,
    sessions: sessionmaker[Session],
    base_settings: Settings,
) -> None:
    account = make_account(
        sessions, base_settings, redirect_uris=[f"{combined_server.url}{REDIRECT}"]
    )
    page.goto(f"{combined_server.url}/docs")
    tags(page)
    page.locator(".auth-wrapper .authorize").click()
    flow = page.locator(".auth-container", has_text="authorizationCode")
    flow.locator("#client_id_authorizationCode").fill(account.client_id)
    flow.locator("#client_secret_authorizationCode").fill(account.client_secret)
    with page.expect_popup() as opened:
        flow.locator("button.authorize").click()
    popup = opened.value
    popup.wait_for_url(f"{combined_server.url}/account/sign_in?**")
    popup.get_by_label("Email").fill(account.email)
    popup.get_by_label("Password").fill(account.password)
    popup.get_by_role("button", name="Sign in").click()
    popup.wait_for_url(f"{combined_server.url}/oauth2/authorize?**")
    with page.expect_response(f"{combined_server.url}/oauth2/access_token") as answered:
        popup.get_by_role("button", name="Allow").click()
    token = answered.value
    assert token.status == 200, token.text()
    assert token.json()["access_token"]
    # Swagger UI took the token: the flow now offers to log out.
    expect(page.get_by_role("button", name="Remove authorization").first).to_be_visible()
