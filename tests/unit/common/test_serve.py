from typing import Any

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
