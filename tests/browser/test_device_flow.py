"""The device flow in real Chromium: a device asks for codes, its user opens the complete
verification URI, signs in, confirms the code and approves; the device's polling then gets a
token that works at the catalog."""

from __future__ import annotations

from typing import Any

import pytest
import requests

from tests.functional.device_support import poll, start_device
from tests.pages import Account
from tests.servers import LiveServer

expect = pytest.importorskip("playwright.sync_api").expect


def test_a_device_is_approved_in_the_browser_and_its_token_works(
    page: Any, combined_server: LiveServer, account: Account
) -> None:
    base = combined_server.url
    codes = start_device(base, account.client_id, account.client_secret, scope="offline_access")
    pending = poll(base, account.client_id, codes["device_code"], account.client_secret)
    assert pending.json()["error"] == "authorization_pending"

    page.goto(codes["verification_uri_complete"])
    assert "/account/sign_in" in page.url
    page.get_by_label("Email").fill(account.email)
    page.get_by_label("Password").fill(account.password)
    page.get_by_role("button", name="Sign in").click()

    # Back on /activate, the code from the URL is filled in; the user confirms it.
    page.wait_for_url(f"{base}/activate?**")
    expect(page.get_by_role("heading", level=1)).to_have_text("Connect a device")
    expect(page.get_by_label("Code")).to_have_value(codes["user_code"])
    page.get_by_role("button", name="Continue").click()

    # The consent page names the application and the code the device shows.
    expect(page.get_by_role("heading", level=1)).to_have_text(
        f"Allow {account.app_name} on your device?"
    )
    body = page.inner_text("main")
    assert codes["user_code"] in body and "offline_access" in body
    page.get_by_role("button", name="Approve").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Device connected")
    assert "You can return to your device" in page.inner_text("main")

    token = poll(base, account.client_id, codes["device_code"], account.client_secret)
    assert token.status_code == 200, token.text
    access = token.json()["access_token"]
    r = requests.get(f"{base}/api/artists", headers={"X-Access-Token": access}, timeout=10)
    assert r.status_code == 200, r.text

    # The account page lists the device, with a revoke button that works.
    page.goto(f"{base}/account")
    section = page.locator("section.device-grants")
    expect(section).to_contain_text(account.app_name)
    section.get_by_role("button", name=f"Revoke the device grant of {account.app_name}").click()
    expect(page.locator("section.device-grants")).to_contain_text("No device")
    r = requests.get(f"{base}/api/artists", headers={"X-Access-Token": access}, timeout=10)
    assert r.status_code == 401
