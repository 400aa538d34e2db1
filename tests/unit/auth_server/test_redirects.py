"""The redirect URI policy."""

from __future__ import annotations

import pytest

from auth_server.redirects import check_redirect_uri, parse_registered, parse_target, with_params


@pytest.mark.parametrize(
    ("uri", "kind", "display", "csp"),
    [
        ("https://Client.Example/cb", "web", "client.example", "https://client.example"),
        (
            "https://client.example:8443/cb?x=1",
            "web",
            "client.example:8443",
            "https://client.example:8443",
        ),
        ("http://127.0.0.1:8080/cb", "loopback", "127.0.0.1:8080", "http://127.0.0.1:8080"),
        ("http://[::1]:9/cb", "loopback", "[::1]:9", "http://[::1]:9"),
        ("http://localhost/cb", "loopback", "localhost", "http://localhost"),
        ("com.example.app:/oauth2redirect", "app", "com.example.app:", "com.example.app:"),
        ("com.example.app://cb", "app", "com.example.app://cb", "com.example.app:"),
    ],
)
def test_accepted_when_registered(uri: str, kind: str, display: str, csp: str) -> None:
    target, reason = parse_target(uri)
    assert target is not None, reason
    assert check_redirect_uri(uri, [uri])[0] == target
    assert check_redirect_uri(uri, [])[0] is None
    assert (target.kind, target.display, target.csp_source) == (kind, display, csp)


@pytest.mark.parametrize(
    "uri",
    [
        "",
        "javascript:alert(1)",
        "JAVASCRIPT:alert(1)",
        "data:text/html;base64,PHNjcmlwdD4=",
        "vbscript:x",
        "file:///etc/passwd",
        "about:blank",
        "https://a.example/cb#x",
        "https://a.example/cb#",
        "http://a.example/cb",
        "http://127.0.0.1.evil.example/cb",
        "https://user:pw@a.example/cb",
        "https://a.example@evil.example/",
        "https:///cb",
        "https:a.example/cb",
        "//a.example/cb",
        "/cb",
        "cb",
        "https://a.example/c b",
        "https://a.example/cb\n",
        "https://a.example\\@evil.example/",
        "https://a.example:99999/",
        "https://a_b.example;x/",
        "myapp:",
        "myapp://cb",  # a private-use scheme must be a reverse domain name (RFC 8252 7.1)
        "com.example.app:",
        "https://a.example/" + "x" * 2000,
    ],
)
def test_refused_whatever_is_registered(uri: str) -> None:
    assert check_redirect_uri(uri, [])[0] is None
    assert check_redirect_uri(uri, [uri])[0] is None


def test_registered_uris_need_an_exact_match() -> None:
    registered = ["https://a.example/cb", "com.example.app:/cb", "http://127.0.0.1/cb"]
    assert check_redirect_uri("https://a.example/cb", registered)[0] is not None
    assert check_redirect_uri("com.example.app:/cb", registered)[0] is not None
    for near in (
        "https://a.example/cb/",
        "https://A.example/cb",
        "https://a.example/cb?x",
        "https://a.example:443/cb",
        "https://b.example/",
        "com.example.app:/cb2",
        "http://127.0.0.1/cb/",
        "http://localhost/cb",
        "http://[::1]/cb",
    ):
        target, reason = check_redirect_uri(near, registered)
        assert target is None and "registered" in reason


def test_a_loopback_uri_matches_on_any_port() -> None:
    registered = ["http://127.0.0.1/cb", "http://[::1]:8000/cb"]
    for uri in ("http://127.0.0.1:51234/cb", "http://127.0.0.1/cb", "http://[::1]:9/cb"):
        assert check_redirect_uri(uri, registered)[0] is not None, uri
    assert check_redirect_uri("https://127.0.0.1:51234/cb", registered)[0] is None


def test_parse_registered_lists_each_problem() -> None:
    uris, problems = parse_registered(
        "https://a.example/cb\n\n  com.example.app:/cb  \nhttps://a.example/cb\njavascript:x\n"
        "myapp://cb\n"
    )
    assert uris == ["https://a.example/cb", "com.example.app:/cb"]
    assert len(problems) == 2 and "javascript:" in problems[0] and "reverse-domain" in problems[1]
    _, too_many = parse_registered("\n".join(f"https://a.example/{i}" for i in range(11)))
    assert too_many == ["Register at most 10 redirect URIs."]


def test_with_params_keeps_the_query() -> None:
    assert with_params("https://a.example/cb", {"code": "x y"}) == "https://a.example/cb?code=x+y"
    assert (
        with_params("https://a.example/cb?k=1", {"code": "c"}) == "https://a.example/cb?k=1&code=c"
    )
    assert with_params("https://a.example/cb?", {"code": "c"}) == "https://a.example/cb?code=c"
    assert with_params("myapp://cb", {"state": "a&b"}) == "myapp://cb?state=a%26b"


def test_parse_target_reasons_are_readable() -> None:
    assert parse_target("https://a.example/#x")[1] == "must not contain a fragment (#)"
    assert parse_target("javascript:alert(1)")[1] == "must not use the javascript: scheme"
