"""The front door (``/``) and the API docs (``/docs``), over real HTTP."""

from __future__ import annotations

import re

import pytest
import requests
from swagger_ui_bundle import swagger_ui_path

from tests.servers import LiveServer

pytestmark = pytest.mark.functional

HTML_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"


def get(server: LiveServer, path: str, accept: str | None = None) -> requests.Response:
    """GET a path of the server, without following redirects."""
    headers = {"Accept": accept} if accept else {}
    return requests.get(server.url + path, headers=headers, allow_redirects=False, timeout=20)


def test_a_browser_gets_the_front_door_page(resource_server: LiveServer) -> None:
    r = get(resource_server, "/", HTML_ACCEPT)
    assert r.status_code == 200
    assert r.headers["Content-Type"].startswith("text/html")
    assert "Accept" in r.headers["Vary"]
    hrefs = set(re.findall(r'href="([^"]+)"', r.text))
    for wanted in ("/api", "/docs", "/account/sign_in", "/account/applications", "/artists",
                   "/artworks", "/genes", "/partners", "/shows", "/search"):  # fmt: skip
        assert wanted in hrefs, wanted
    assert "<h1>Art catalog</h1>" in r.text
    csp = r.headers["Content-Security-Policy"]
    # One script runs, from this server's files (an image that fails gives way to its
    # placeholder); no inline script.
    assert "default-src 'none'" in csp and "script-src 'self';" in csp and "unsafe" not in csp
    assert r.headers["X-Content-Type-Options"] == "nosniff"


@pytest.mark.parametrize(
    "accept", ["application/json", "application/hal+json", "application/vnd.artcat-v2+json"]
)
def test_a_client_asking_for_json_gets_the_api_root(
    resource_server: LiveServer, accept: str
) -> None:
    r = get(resource_server, "/", accept)
    assert r.status_code == 200
    assert r.headers["Content-Type"].startswith(accept)
    assert r.json() == get(resource_server, "/api", accept).json()
    assert r.json()["_links"]["self"]["href"] == resource_server.url + "/api"


def test_html_is_preferred_when_the_client_states_no_preference(
    resource_server: LiveServer,
) -> None:
    for accept in (None, "*/*", "text/html"):
        r = get(resource_server, "/", accept)
        assert r.headers["Content-Type"].startswith("text/html"), accept


def test_the_docs_render_the_served_document_with_local_assets_only(
    resource_server: LiveServer,
) -> None:
    r = get(resource_server, "/docs", HTML_ACCEPT)
    assert r.status_code == 200
    assert 'data-url="/api/openapi.json"' in r.text
    sources = re.findall(r'(?:src|href)="([^"]+)"', r.text)
    assert sources and all(s[:1] in "/#" and not s.startswith("//") for s in sources)
    csp = r.headers["Content-Security-Policy"]
    assert "script-src 'self';" in csp and "connect-src 'self'" in csp
    for path in ("/docs/assets/swagger-ui-bundle.js", "/docs/assets/swagger-ui.css",
                 "/static/docs.js", "/static/site.css"):  # fmt: skip
        asset = get(resource_server, path)
        assert asset.status_code == 200, path
        assert asset.headers["X-Content-Type-Options"] == "nosniff"
    bundle = get(resource_server, "/docs/assets/swagger-ui-bundle.js")
    assert bundle.content == (swagger_ui_path / "swagger-ui-bundle.js").read_bytes()
    assert bundle.headers["Content-Type"].startswith("text/javascript")
    assert get(resource_server, "/api/openapi.json").json()["openapi"].startswith("3.1")


@pytest.mark.parametrize(
    "path", ["/docs/assets/index.html", "/docs/assets/..%2F__init__.py", "/static/x.css"]
)
def test_only_the_listed_files_are_served(resource_server: LiveServer, path: str) -> None:
    assert get(resource_server, path).status_code == 404


def test_the_front_door_is_served_by_serve_all(combined_server: LiveServer) -> None:
    r = get(combined_server, "/", HTML_ACCEPT)
    assert r.status_code == 200 and "Register an application" in r.text
    assert get(combined_server, "/account/sign_in", HTML_ACCEPT).status_code == 200
    assert get(combined_server, "/docs", HTML_ACCEPT).status_code == 200
