import socket
import threading
from typing import Any

import pytest

from common.serve import PathDispatcher, Waitress, is_auth_path


def test_auth_paths() -> None:
    for path in (
        "/oauth2/authorize",
        "/api/tokens/xapp_token",
        "/api/applications",
        "/api/applications/x",
        "/account/sign_in",
        "/.well-known/oauth-authorization-server",
        "/activate",
    ):
        assert is_auth_path(path), path
    for path in ("/api", "/api/artists", "/api/tokensx", "/api/status", "/activatex"):
        assert not is_auth_path(path), path


def test_dispatcher_sends_requests_by_path() -> None:
    def app(name: str) -> Any:
        return lambda environ, start_response: [name.encode()]

    d = PathDispatcher(app("auth"), app("resource"))
    assert d({"PATH_INFO": "/oauth2/access_token"}, None) == [b"auth"]
    assert d({"PATH_INFO": "/api/artworks"}, None) == [b"resource"]


def test_a_stopped_waitress_refuses_connections_and_returns() -> None:
    """``stop()`` from another thread wakes the loop at once; nothing was in flight, so the
    stop is clean, and the port no longer accepts."""
    server = Waitress(lambda environ, start_response: [b""], host="127.0.0.1", port=0)
    port = server.port
    done = threading.Event()
    result: list[bool] = []
    thread = threading.Thread(
        target=lambda: (result.append(server.serve(grace=5)), done.set()), daemon=True
    )
    thread.start()
    with socket.create_connection(("127.0.0.1", port), timeout=5):
        pass
    server.stop()
    assert done.wait(5), "the loop did not stop"
    assert result == [True]
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=5)
