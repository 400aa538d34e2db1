import threading
from typing import Any

from waitress import wasyncore

from common.graceful import build_server, serve_until_stopped, socket_map
from common.serve import PathDispatcher, is_auth_path


def test_auth_paths() -> None:
    for path in (
        "/oauth2/authorize",
        "/api/tokens/xapp_token",
        "/api/applications",
        "/api/applications/x",
        "/account/sign_in",
        "/.well-known/oauth-authorization-server",
    ):
        assert is_auth_path(path), path
    for path in ("/api", "/api/artists", "/api/tokensx", "/api/status"):
        assert not is_auth_path(path), path


def test_dispatcher_sends_requests_by_path() -> None:
    def app(name: str) -> Any:
        return lambda environ, start_response: [name.encode()]

    d = PathDispatcher(app("auth"), app("resource"))
    assert d({"PATH_INFO": "/oauth2/access_token"}, None) == [b"auth"]
    assert d({"PATH_INFO": "/api/artworks"}, None) == [b"resource"]


def test_the_serve_loop_ends_when_its_sockets_are_gone() -> None:
    """A loop whose socket map was emptied (its sockets closed elsewhere) returns instead of
    spinning on an empty poll."""
    server = build_server(lambda environ, start_response: [b""], host="127.0.0.1", port=0)
    wasyncore.close_all(socket_map(server))
    done = threading.Event()
    thread = threading.Thread(
        target=lambda: (serve_until_stopped(server, grace=0.1), done.set()), daemon=True
    )
    thread.start()
    assert done.wait(5), "the loop kept polling an empty map"
