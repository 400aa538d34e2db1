"""Real Chromium (Debian's package) driven by Playwright against the servers under test.

One browser per test session; a fresh context (cookies, storage) per test. The tests are skipped,
with the reason, when the ``chromium`` executable or the ``playwright`` package is missing.
"""

from __future__ import annotations

import contextlib
import shutil
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from sqlalchemy.orm import Session, sessionmaker

from common.settings import Settings
from tests.pages import Account, make_account
from tests.servers import LiveServer, Site

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


@pytest.fixture(scope="session")
def combined_server(request: pytest.FixtureRequest) -> LiveServer:
    """Both services on one port over real HTTP: the browser needs a socket."""
    live: LiveServer = request.getfixturevalue("http_combined_server")
    return live


@pytest.fixture(scope="session")
def chromium_path() -> str:
    """Return the path of Debian's chromium, or skip."""
    path = shutil.which("chromium")
    if path is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    return path


@pytest.fixture(scope="session")
def browser(chromium_path: str) -> Iterator[Any]:
    """One headless Chromium for the whole session."""
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="the playwright package is missing"
    )
    with sync_api.sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A page in a fresh browser context (no cookies), desktop-sized."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(10_000)
    pg = context.new_page()
    yield pg
    context.close()


@pytest.fixture(scope="session")
def _site_server() -> Iterator[tuple[ThreadingHTTPServer, Site]]:
    site = Site("")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            site.requests.append(self.path)
            body = site.pages.get(self.path.split("?")[0], "<!doctype html><p>client page</p>")
            data = body.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(data)  # a browser that navigated on hangs up first

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    site.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server, site
    server.shutdown()
    server.server_close()


@pytest.fixture
def site(_site_server: tuple[ThreadingHTTPServer, Site]) -> Site:
    """The other-origin site, emptied for this test."""
    s = _site_server[1]
    s.pages.clear()
    s.requests.clear()
    return s


@pytest.fixture
def account(clean_db: Any, sessions: sessionmaker[Session], base_settings: Settings) -> Account:
    """A user with a known password who owns an application with no registered redirect URI."""
    return make_account(sessions, base_settings, name="Berthe Morisot", app_name="Gallery Viewer")
