"""The browser login in real Chromium: sign up, sign in, consent, CSRF, framing, keyboard."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from common.models import AuthorizationCode
from tests.pages import Account, query
from tests.servers import LiveServer, Site

expect = pytest.importorskip("playwright.sync_api").expect

STATE = "state-Ω 1/2"


def authorize_url(base: str, account: Account, site: Site, **extra: str) -> str:
    """Return an authorize URL sending the browser back to the other-origin site."""
    params = {
        "client_id": account.client_id,
        "redirect_uri": f"{site.url}/cb",
        "response_type": "code",
        "state": STATE,
        **extra,
    }
    return f"{base}/oauth2/authorize?{urlencode(params)}"


def sign_in_with_keyboard(page: Any, account: Account) -> None:
    """Fill the sign-in form with the keyboard only and submit it with Enter."""
    # Chromium applies autofocus at its next rendering step, soon after the load event.
    expect(page.get_by_label("Email")).to_be_focused()
    page.keyboard.type(account.email)
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "password"
    page.keyboard.type(account.password)
    page.keyboard.press("Enter")


def codes(sessions: sessionmaker[Session]) -> int:
    """Return how many authorization codes exist."""
    with sessions() as s:
        return int(s.scalar(select(func.count()).select_from(AuthorizationCode)) or 0)


def test_sign_up_then_approve_carries_code_and_state(
    page: Any,
    combined_server: LiveServer,
    site: Site,
    account: Account,
) -> None:
    page.goto(authorize_url(combined_server.url, account, site, scope="offline_access"))
    assert "/account/sign_in" in page.url
    page.get_by_role("link", name="Create an account").click()
    page.get_by_label("Name").fill("Mary Cassatt")
    page.get_by_label("Email").fill("mary@example.org")
    page.get_by_label("Password").fill("Little girl 1878")
    page.get_by_role("button", name="Create account").click()
    # Email off (the default): no confirmation; the password typed at sign-up signs in.
    expect(page.get_by_role("heading", level=1)).to_have_text("Sign up received")
    page.get_by_role("link", name="Sign in").last.click()
    page.get_by_label("Email").fill("mary@example.org")
    page.get_by_label("Password").fill("Little girl 1878")
    page.get_by_role("button", name="Sign in").click()
    # Back on the consent page: the application, its owner and the host are in plain sight.
    page.wait_for_url(f"{combined_server.url}/oauth2/authorize?**")
    assert (
        page.get_by_role("heading", level=1).inner_text()
        == "Allow Gallery Viewer to use your account?"
    )
    body = page.inner_text("main")
    assert "Berthe Morisot" in body
    assert site.url.removeprefix("http://") in body
    assert "Offline access" in body
    with page.expect_request(f"{site.url}/cb?**") as request:
        page.get_by_role("button", name="Allow").click()
    q = query(request.value.url)
    assert q["state"] == STATE and len(q["code"]) >= 43
    page.wait_for_url(f"{site.url}/cb?**")
    assert site.received("/cb?")


def test_sign_in_with_the_keyboard_then_deny(
    page: Any, combined_server: LiveServer, site: Site, account: Account
) -> None:
    page.goto(authorize_url(combined_server.url, account, site))
    sign_in_with_keyboard(page, account)
    page.wait_for_url(f"{combined_server.url}/oauth2/authorize?**")
    deny = page.get_by_role("button", name="Deny")
    deny.focus()
    with page.expect_request(f"{site.url}/cb?**") as request:
        page.keyboard.press("Enter")
    q = query(request.value.url)
    assert q["error"] == "access_denied" and q["state"] == STATE
    assert q["iss"] == combined_server.url  # RFC 9207
    assert "code" not in q


def test_focus_is_visible_and_tab_order_follows_the_form(
    page: Any, combined_server: LiveServer, account: Account
) -> None:
    page.goto(f"{combined_server.url}/account/sign_in")
    active = "document.activeElement.id || document.activeElement.textContent.trim()"
    outline = "getComputedStyle(document.activeElement).outlineStyle"
    expect(page.get_by_label("Email")).to_be_focused()  # autofocus on the first field
    forward = []
    for _ in range(4):
        page.keyboard.press("Tab")
        forward.append(page.evaluate(active))
        assert page.evaluate(outline) != "none", forward[-1]  # the focus is visible
    assert forward == ["password", "Sign in", "Forgot your password?", "Create an account"]
    page.get_by_label("Email").focus()
    backward = []
    for _ in range(2):
        page.keyboard.press("Shift+Tab")
        backward.append(page.evaluate(active))
        assert page.evaluate(outline) != "none", backward[-1]
    assert backward == ["Your account", "Search"]  # the header (the catalog's) comes first
    # A failed sign-in: the error is announced and tied to the fields.
    page.get_by_label("Email").fill(account.email)
    page.get_by_label("Password").fill("Wrong password 1")
    page.get_by_role("button", name="Sign in").click()
    alert = page.get_by_role("alert")
    assert "incorrect" in alert.inner_text()
    described = page.get_by_label("Password").get_attribute("aria-describedby")
    assert described is not None and "form-error" in described


def test_a_forged_form_from_another_origin_is_refused(
    page: Any,
    combined_server: LiveServer,
    site: Site,
    account: Account,
    sessions: sessionmaker[Session],
) -> None:
    base = combined_server.url
    page.goto(f"{base}/account/sign_in")
    sign_in_with_keyboard(page, account)
    page.wait_for_url(f"{base}/account")
    fields = {
        "client_id": account.client_id,
        "redirect_uri": f"{site.url}/cb",
        "response_type": "code",
        "state": "forged",
    }
    inputs = "".join(f'<input type="hidden" name="{k}" value="{v}">' for k, v in fields.items())
    site.pages["/attack"] = (
        f'<!doctype html><form method="post" action="{base}/oauth2/authorize">{inputs}'
        '<button name="approve" value="Allow">Win a prize</button></form>'
    )
    page.goto(f"{site.url}/attack")
    with page.expect_response(f"{base}/oauth2/authorize") as response:
        page.get_by_role("button", name="Win a prize").click()
    assert response.value.status == 400
    assert "This form has expired" in page.inner_text("h1")
    assert not site.received("/cb")
    assert codes(sessions) == 0


def test_the_consent_page_refuses_to_render_in_a_frame(
    page: Any, combined_server: LiveServer, site: Site, account: Account
) -> None:
    base = combined_server.url
    page.goto(f"{base}/account/sign_in")
    sign_in_with_keyboard(page, account)
    page.wait_for_url(f"{base}/account")
    target = authorize_url(base, account, site)
    site.pages["/frame"] = f'<!doctype html><h1>Framer</h1><iframe src="{target}"></iframe>'
    with page.expect_response(lambda r: r.url.startswith(f"{base}/oauth2/authorize")) as framed:
        page.goto(f"{site.url}/frame")
    # The server did answer the frame's request with the consent page...
    assert framed.value.status == 200
    assert "frame-ancestors 'none'" in framed.value.headers["content-security-policy"]
    page.wait_for_load_state("load")
    (child,) = [f for f in page.frames if f != page.main_frame]
    # ...but Chromium refused to render it: the frame holds its own error page, no consent form.
    assert child.url.startswith("chrome-error://")
    assert "to use your account?" not in child.content()
    assert child.locator("form[action='/oauth2/authorize']").count() == 0


def test_consent_page_layout_on_a_phone_and_a_desktop(
    page: Any, combined_server: LiveServer, site: Site, account: Account
) -> None:
    base = combined_server.url
    page.goto(authorize_url(base, account, site, scope="offline_access"))
    sign_in_with_keyboard(page, account)
    page.wait_for_url(f"{combined_server.url}/oauth2/authorize?**")
    for width, height in ((375, 812), (1280, 900)):
        page.set_viewport_size({"width": width, "height": height})
        # No sideways scrolling, and the buttons are fully on screen.
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        for name in ("Allow", "Deny"):
            box = page.get_by_role("button", name=name).bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width
            assert box["height"] >= 44  # a comfortable touch target
        page.screenshot(path=f"/tmp/consent-{width}.png", full_page=True)
