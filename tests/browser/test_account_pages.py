"""The account area in real Chromium: register an application, see its secret once, revoke."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from common.stores import Stores
from tests.pages import Account
from tests.servers import LiveServer


def sign_in(page: Any, base: str, account: Account, path: str) -> None:
    """Open an account page signed out, sign in, and land back on it."""
    page.goto(base + path)
    page.get_by_label("Email").fill(account.email)
    page.get_by_label("Password").fill(account.password)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(base + path)


def test_register_an_application_and_see_the_secret_once(
    page: Any, combined_server: LiveServer, account: Account
) -> None:
    base = combined_server.url
    sign_in(page, base, account, "/account/applications")
    page.get_by_label("Application name").fill("Print Shop")
    uris = page.get_by_label("Redirect URIs (one per line)")
    uris.fill("https://print.example/cb\njavascript:alert(1)")
    with page.expect_navigation():
        page.get_by_role("button", name="Register application").click()
    # The bad line is explained next to the field, which is marked invalid.
    assert uris.get_attribute("aria-invalid") == "true"
    assert "javascript: scheme" in page.inner_text("#redirect_uris-error")
    uris.fill("https://print.example/cb\ncom.example.print:/cb")
    with page.expect_navigation():
        page.get_by_role("button", name="Register application").click()
    assert page.get_by_role("heading", level=1).inner_text() == "Print Shop is registered"
    client_id = page.inner_text("#client-id")
    secret = page.inner_text("#client-secret")
    assert len(secret) >= 43 and "shown only this once" in page.inner_text("[role=alert]")
    with page.expect_navigation():
        page.get_by_role("link", name="Back to your applications").click()
    listing = page.inner_text("main")
    assert "Print Shop" in listing and client_id in listing and secret not in listing
    with page.expect_navigation():
        page.get_by_role("button", name="New client secret for Print Shop").click()
    rotated = page.inner_text("#client-secret")
    assert rotated != secret and "The old secret no longer works." in page.inner_text("main")


def test_revoke_an_authorized_application(
    page: Any,
    combined_server: LiveServer,
    account: Account,
    stores: Stores,
    sessions: sessionmaker[Session],
) -> None:
    base = combined_server.url
    with sessions() as s, s.begin():
        issued = stores.tokens.issue(
            s, kind="access", application_id=account.app_id, user_id=account.user_id, ttl=3600
        )
    stores.tokens.publish(issued.row)
    sign_in(page, base, account, "/account/authorizations")
    assert "Gallery Viewer" in page.inner_text("main")
    with page.expect_navigation():
        page.get_by_role("button", name="Revoke access for Gallery Viewer").click()
    assert (
        "Gallery Viewer can no longer use your account." in page.get_by_role("status").inner_text()
    )
    assert "No application can use your account." in page.inner_text("main")
    assert stores.tokens.lookup(issued.value) is None


def test_sign_out_from_the_navigation(
    page: Any, combined_server: LiveServer, account: Account
) -> None:
    base = combined_server.url
    sign_in(page, base, account, "/account")
    page.get_by_role("navigation").get_by_role("button", name="Sign out").click()
    page.wait_for_url("**/account/sign_in")
    assert "You are signed out." in page.get_by_role("status").inner_text()
    page.goto(f"{base}/account")
    assert "/account/sign_in" in page.url


def test_change_the_password_from_the_account_page(
    page: Any, combined_server: LiveServer, account: Account
) -> None:
    base = combined_server.url
    sign_in(page, base, account, "/account")
    # This instance sends no email: the page says the address stays unconfirmed, and why.
    assert "sends no email" in page.get_by_role("status").inner_text()
    with page.expect_navigation():
        page.get_by_role("link", name="Change your password").click()
    assert "not required" in page.inner_text("#new_password-hint")
    page.get_by_label("Current password").fill(account.password)
    page.get_by_label("New password", exact=True).fill("password123")
    page.get_by_label("New password again").fill("password123")
    with page.expect_navigation():
        page.get_by_role("button", name="Change password").click()
    new_password = page.get_by_label("New password", exact=True)
    assert new_password.get_attribute("aria-invalid") == "true"
    assert "too easy to guess" in page.inner_text("#new_password-error")
    page.get_by_label("Current password").fill(account.password)
    new_password.fill("Olive trees in Provence")
    page.get_by_label("New password again").fill("Olive trees in Provence")
    with page.expect_navigation():
        page.get_by_role("button", name="Change password").click()
    assert page.url == f"{base}/account"
    assert "Every other session of your account has ended." in page.inner_text("main")
