"""A corpus of hostile requests for both services: each must get a clear 4xx and change nothing.

Each ``Probe`` is one request. Most are sent with ``requests``; those that ``requests`` cannot
send (raw bytes in the request line or headers, bodies over the limit, chunked bodies, malformed
framing) are written byte by byte on a socket (``raw``). ``<<name>>`` placeholders are filled in
at send time with the test world's ids, tokens and CSRF token (see ``test_hostile_input``).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlencode

from resource_server.app import ROOT_ROUTES
from resource_server.routes import CollectionRoute

MiB = 1024 * 1024


@dataclass(frozen=True)
class Probe:
    """One hostile request and what may answer it (``expect``: None means any status < 500)."""

    id: str
    service: str  # "auth" | "resource"
    method: str = "GET"
    target: str = "/"  # path and already-encoded query
    body: bytes | None = None
    content_type: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    auth: str = ""  # "" | "xapp" | "user" | "browser" (the signed-in session with its cookie)
    expect: frozenset[int] | None = None
    raw: bytes | None = None  # the whole request head (and body) as sent on the socket
    chunks: int = 0  # raw: send this many bytes more as a chunked body after the head


def statuses(*codes: int) -> frozenset[int]:
    """Return a set of acceptable statuses."""
    return frozenset(codes)


CLIENT_ERROR = frozenset(range(400, 500))
REFUSED = frozenset({400, 401, 403, 404, 405, 406, 409, 413, 422, 429, 431})

# -- payloads ---------------------------------------------------------------------------------

SQLI = [
    "' OR '1'='1",
    "'; DROP TABLE users; --",
    "1 UNION SELECT password_hash FROM users --",
    '" OR ""="',
    "1); DELETE FROM tokens; --",
    "'||(SELECT pg_sleep(0))||'",
]
# 7777*7777 = 60481729: a template engine that evaluates any of these prints that number.
EVALUATED = "60481729"
TEMPLATE = ["{{7777*7777}}", "${7777*7777}", "#{7777*7777}", "<%= 7777*7777 %>", "{% debug %}"]
XSS = ["<script>alert(1)</script>", '"><svg onload=alert(1)>', "'><img src=x onerror=alert(1)>"]
INJECTIONS = SQLI + TEMPLATE + XSS
# For the many query parameters of the catalog's lists: one of each kind of trick.
SHORT_INJECTIONS = [SQLI[0], SQLI[1], SQLI[5], TEMPLATE[0], TEMPLATE[1], XSS[0], XSS[1]]
# What a page must never contain unescaped, whatever it reflects.
XSS_MARKERS = ("<script>alert(", "<svg onload", "<img src=x")
# FTS5 and tsquery operators, quotes and odd characters for the search query.
SEARCH_SYNTAX = [
    '"',
    '"unterminated',
    "*",
    "a*",
    "NEAR(a b)",
    "title:monet",
    "-monet",
    "^monet",
    "(",
    ")",
    "AND",
    "OR NOT",
    "{a b}",
    "a & b | !c",
    "a <-> b",
    "monet:*",
    "\\",
    "'",
    "%",
    "_",
    "\u2028\u2029",
    "\U0001f3a8" * 50,
    "a" * 499 + "\u00e9",
]
CRLF = "\r\nX-Injected: 1"
# Characters some servers fold to CR and LF (U+560A, U+560D: UTF-8 e5 98 8a, e5 98 8d).
UNICODE_CRLF = "\u560a\u560dX-Injected: 1"
TEN_KB = "a" * 10_240
ZERO_ID = "0" * 24
# A JSON object every write endpoint refuses (for bodies that are odd only in their encoding).
UNWRITABLE = '{"name": "x", "user_id": "x", "redirect_urls": 5, "position": "x", "client_id": 1}'

# -- the endpoints ------------------------------------------------------------------------------

# (service, method, path, auth) of every write endpoint.
WRITES: list[tuple[str, str, str, str]] = [
    ("auth", "POST", "/api/tokens/xapp_token", ""),
    ("auth", "POST", "/oauth2/access_token", ""),
    ("auth", "POST", "/oauth2/revoke", ""),
    ("auth", "POST", "/oauth2/introspect", ""),
    ("auth", "POST", "/api/applications", "user"),
    ("auth", "PUT", "/api/applications/<<app_id>>", "user"),
    ("auth", "DELETE", "/api/applications/<<app_id>>", "user"),
    ("auth", "DELETE", "/api/tokens/access_token", ""),
    ("resource", "POST", "/api/collections", "user"),
    ("resource", "PUT", "/api/collections/<<collection_id>>", "user"),
    ("resource", "POST", "/api/collection_items", "user"),
    ("resource", "PUT", "/api/collection_items/<<item_id>>", "user"),
    ("resource", "PATCH", "/api/collection_items/<<item_id>>", "user"),
    ("resource", "DELETE", "/api/collection_items/<<item_id>>", "user"),
]
JSON_WRITES = [w for w in WRITES if w[1] in ("POST", "PUT", "PATCH")]
# (method, path) of the account pages' forms, and the fields each sends.
PAGE_FORMS: list[tuple[str, dict[str, str]]] = [
    ("/account/sign_in", {"email": "x@example.org", "password": "x"}),
    ("/account/sign_up", {"name": "x", "email": "x@example.org", "password": "x"}),
    ("/account/password/forgot", {"email": "x@example.org"}),
    ("/account/password/reset/" + "a" * 40, {"password": "x", "confirm": "x"}),
    ("/account/applications", {"name": "x", "redirect_uris": "x"}),
    ("/account/applications/<<page_app_id>>/rotate", {}),
    ("/account/authorizations/<<page_app_id>>/revoke", {}),
    ("/account/sign_out", {}),
    ("/oauth2/authorize", {"client_id": "<<client_id>>", "decision": "allow"}),
]


def collection_routes() -> list[CollectionRoute]:
    """Return the catalog's collection routes (every GET list with parameters)."""
    return [r for r in ROOT_ROUTES if isinstance(r, CollectionRoute)]


def list_auth(route: CollectionRoute) -> str:
    """Return the token a list route is sent with."""
    return "user" if route.auth == "user" else "xapp"


def enc(params: dict[str, str] | list[tuple[str, str]]) -> str:
    """Encode query parameters (UTF-8, as a browser would)."""
    return urlencode(params, quote_via=quote)


def form(**fields: str) -> bytes:
    """Return a form-urlencoded body."""
    return enc(fields).encode()


def js(value: Any) -> bytes:
    """Return a JSON body."""
    return json.dumps(value).encode()


FORM = "application/x-www-form-urlencoded"
JSON = "application/json"


def head(
    method: str, target: str, headers: dict[str, str] | list[tuple[str, str]], body: bytes = b""
) -> bytes:
    """Return raw request bytes (HTTP/1.1, the connection closed after the answer)."""
    items = list(headers.items()) if isinstance(headers, dict) else headers
    lines = [f"{method} {target} HTTP/1.1", "Host: 127.0.0.1", "Connection: close"]
    lines += [f"{k}: {v}" for k, v in items]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def token_headers(auth: str) -> list[tuple[str, str]]:
    """Return the header that carries a (placeholder) token of this kind, if any."""
    if auth == "xapp":
        return [("X-Xapp-Token", "<<xapp>>")]
    if auth == "user":
        return [("X-Access-Token", "<<user>>")]
    return []


# -- the corpus, category by category ------------------------------------------------------------


def body_size() -> Iterator[Probe]:
    """Bodies over 1 MiB (by Content-Length and chunked), at the limit, and bad framing."""
    for service, method, path, auth in [*WRITES, ("resource", "GET", "/api/artists", "xapp")]:
        tag = f"{method} {path}"
        tokens = token_headers(auth)
        headers = [*tokens, ("Content-Type", FORM), ("Content-Length", str(MiB + 1))]
        raw = head(method, path, headers, b"a=" + b"x" * 1000)
        yield Probe(f"413 content-length {tag}", service, raw=raw, expect=statuses(413))
        headers = [*tokens, ("Content-Type", FORM), ("Transfer-Encoding", "chunked")]
        raw = head(method, path, headers)
        yield Probe(f"413 chunked {tag}", service, raw=raw, chunks=MiB + 1, expect=statuses(413))
    for service, method, path, auth in JSON_WRITES:
        # Just under 1 MiB reaches the app (waitress refuses 1 MiB and more): a body that is
        # no JSON object is a 4xx.
        body = b"[" + b"0," * (MiB // 2 - 2) + b"0]"
        yield Probe(
            f"almost 1 MiB of JSON {method} {path}",
            service,
            method,
            path,
            body,
            JSON,
            auth=auth,
            expect=CLIENT_ERROR - {413},
        )
    framing = {
        "content-length not a number": [("Content-Length", "abc")],
        "negative content-length": [("Content-Length", "-1")],
        "two content-lengths": [("Content-Length", "1"), ("Content-Length", "2")],
        "content-length and chunked": [("Content-Length", "5"), ("Transfer-Encoding", "chunked")],
        "chunked twice": [("Transfer-Encoding", "chunked, chunked")],
        "bad chunk size": [("Transfer-Encoding", "chunked")],
    }
    for name, headers in framing.items():
        for service, path in (("auth", "/api/tokens/xapp_token"), ("resource", "/api/collections")):
            chunked = "chunked" in str(headers)
            body = b"3\r\na=b\r\n0\r\n\r\n" if chunked else b"a=b"
            if name == "bad chunk size":
                body = b"zz\r\nhello\r\n0\r\n\r\n"
            raw = head("POST", path, [("Content-Type", FORM), *headers], body)
            # Waitress reads a chunked body whatever else is said (RFC 9112 6.3 allows it);
            # the app then refuses the request as it would any other.
            expect = CLIENT_ERROR if "chunked" in str(headers) else statuses(400)
            yield Probe(f"framing {name} {path}", service, raw=raw, expect=expect)


def json_bodies() -> Iterator[Probe]:
    """Deep, invalid and ill-typed JSON bodies on every JSON write endpoint."""
    bodies: dict[str, bytes] = {
        "100k [": b"[" * 100_000,
        "100k nested objects": b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
        "1000 deep arrays": b"[" * 1000 + b"]" * 1000,
        "truncated": b'{"name": "x"',
        "trailing garbage": b'{"name": "x"} x',
        "NaN": b'{"name": NaN}',
        "Infinity": b'{"position": Infinity}',
        "single quotes": b"{'name': 'x'}",
        # Readable by some parsers: a field that is invalid everywhere keeps them unwritten.
        "byte order mark": b"\xef\xbb\xbf" + UNWRITABLE.encode(),
        "utf-16": UNWRITABLE.encode("utf-16"),
        "top-level array": b"[]",
        "top-level string": b'"x"',
        "top-level number": b"1",
        "null": b"null",
        "empty": b"",
        "whitespace": b"   \n",
        "1e400": b'{"position": 1e400}',
        "5000 digits": b'{"position": ' + b"9" * 5000 + b"}",
        "huge integer": b'{"position": 99999999999999999999}',
        "lone surrogate": b'{"name": "\\ud800", "client_id": "\\udfff", "token": "\\ud800"}',
        "escaped NUL": b'{"name": "a\\u0000b", "client_id": "\\u0000", "token": "\\u0000"}',
        "operator objects": b'{"name": {"$gt": ""}, "user_id": {"$ne": null}, "token": {}}',
        "arrays for scalars": b'{"name": ["a", "b"], "user_id": ["x"], "position": [1]}',
        "wrong types": b'{"name": 1, "user_id": 2, "private": "maybe", "position": "x", '
        b'"redirect_urls": 5}',
        "duplicate keys": b'{"name": "a", "name": {"x": 1}}',
        "invalid UTF-8": b'{"name": "\xff\xfe"}',
    }
    for service, method, path, auth in JSON_WRITES:
        for name, body in bodies.items():
            yield Probe(
                f"json {name} {method} {path}", service, method, path, body, JSON, auth=auth
            )


def encodings() -> Iterator[Probe]:
    """Invalid UTF-8 and NUL bytes in bodies, paths, query strings and headers."""
    for service, method, path, auth in JSON_WRITES:
        yield Probe(
            f"form invalid UTF-8 {method} {path}",
            service,
            method,
            path,
            b"name=%FF%FE&user_id=%C0%AF&client_id=%FF&token=%FF&email=%FF",
            FORM,
            auth=auth,
        )
        yield Probe(
            f"form raw bytes {method} {path}",
            service,
            method,
            path,
            b"name=\xff\xfe&client_id=\xff&token=\x80",
            FORM,
            auth=auth,
        )
        yield Probe(
            f"form NUL {method} {path}",
            service,
            method,
            path,
            b"name=a%00b&user_id=%00&client_id=%00&client_secret=%00&token=%00&position=1%00",
            FORM,
            auth=auth,
        )
        yield Probe(
            f"form NUL names {method} {path}",
            service,
            method,
            path,
            b"na%00me=x&%00=1&%FF=2",
            FORM,
            auth=auth,
        )
    for service, target, auth in [
        ("resource", "/api/artists/%FF%FE", "xapp"),
        ("resource", "/api/artists/%C0%AF", "xapp"),
        ("resource", "/api/artists/a%00b", "xapp"),
        ("resource", "/api/search?q=%FF%FE", "xapp"),
        ("resource", "/api/search?q=a%00b", "xapp"),
        ("resource", "/api/artists?%FF=%FE&term=%00", "xapp"),
        ("resource", "/api/users?term=%FF%00", "user"),
        ("resource", "/api/collections/%FF?user_id=%00", "user"),
        ("auth", "/api/applications/%FF%FE", "user"),
        ("auth", "/api/applications?user_id=%FF%00", "user"),
        ("auth", "/oauth2/authorize?client_id=%FF&redirect_uri=%00&state=%FF", ""),
        ("auth", "/account/sign_in?next=%FF%00", ""),
        ("auth", "/account/password/reset/%FF%00", ""),
        ("auth", "/account/static/%00", ""),
        ("auth", "/account/static/..%2f..%2fapp.py", ""),
        ("auth", "/oauth2/access_token?grant_type=%FF&client_id=%00", ""),
    ]:
        yield Probe(f"url bytes {target}", service, "GET", target, auth=auth)
        raw_target = (
            target.replace("%FF", "\xff").replace("%FE", "\xfe").replace("%C0%AF", "\xc0\xaf")
        )
        raw = head("GET", raw_target, token_headers(auth))
        yield Probe(f"raw url bytes {target}", service, raw=raw)
    for service, path in (("resource", "/api/artists"), ("auth", "/api/applications")):
        for name, value in {
            "token latin-1": "\xff\xfe\xe9",
            "token NUL": "ab\x00cd",
            "token control chars": "\x01\x02\x7f",
            "token tab": "abc\tdef",
        }.items():
            for header in ("X-Xapp-Token", "X-Access-Token", "Authorization"):
                v = f"Bearer {value}" if header == "Authorization" else value
                raw = head("GET", path, [(header, v)])
                yield Probe(f"header {name} in {header} {path}", service, raw=raw)
        raw = head("GET", path, [("X-Request-Id", "\xff\x00id"), ("Cookie", "session=\xff\x00")])
        yield Probe(f"header bytes in request id and cookie {path}", service, raw=raw)


def header_injection() -> Iterator[Probe]:
    """CR/LF in every parameter that ends up in a response header (Location, X-Request-Id)."""
    for payload_name, payload in (("CRLF", CRLF), ("unicode CRLF", UNICODE_CRLF)):
        for name, target in [
            (
                "redirect_uri",
                "/oauth2/authorize?"
                + enc(
                    {
                        "client_id": "<<client_id>>",
                        "response_type": "code",
                        "redirect_uri": "https://client.example.org/cb" + payload,
                    }
                ),
            ),
            (
                "state",
                "/oauth2/authorize?"
                + enc(
                    {
                        "client_id": "<<client_id>>",
                        "response_type": "nope",
                        "redirect_uri": "https://client.example.org/cb",
                        "state": payload,
                    }
                ),
            ),
            ("next", "/account/sign_in?" + enc({"next": "/account" + payload})),
            ("next of sign out", "/account/sign_out?" + enc({"next": "/account" + payload})),
            ("token endpoint state", "/oauth2/access_token?" + enc({"state": payload})),
        ]:
            yield Probe(f"{payload_name} in {name}", "auth", "GET", target)
        for name, target, auth in [
            ("search q", "/api/search?" + enc({"q": "monett" + payload}), "xapp"),
            ("slug", "/api/artists/" + quote("andy" + payload, safe=""), "xapp"),
            ("sample", "/api/artists?" + enc({"sample": "1", "term": payload}), "xapp"),
            ("cursor", "/api/artworks?" + enc({"cursor": payload}), "xapp"),
            ("current user", "/api/current_user?" + enc({"x": payload}), "user"),
            ("applications redirect", "/api/applications?" + enc({"cursor": payload}), "user"),
        ]:
            service = "auth" if name.startswith("applications") else "resource"
            yield Probe(f"{payload_name} in {name}", service, "GET", target, auth=auth)
    for service, path in (("resource", "/api/status"), ("auth", "/healthz")):
        for value in ("x\x0bX-Injected: 1", "a" * 200, "<script>", "\xe9\xe9"):
            raw = head("GET", path, [("X-Request-Id", value)])
            yield Probe(f"request id {value[:10]!r} {path}", service, raw=raw)
        # An obs-fold continuation line (obsolete line folding) is refused, never joined.
        raw = head("GET", path, [("X-Request-Id", "abc"), (" X-Injected", "1")])
        yield Probe(f"obs-fold {path}", service, raw=raw)


def injections() -> Iterator[Probe]:
    """SQL, template and script injection strings in every text parameter."""
    for route in collection_routes():
        auth = list_auth(route)
        names = [p.name for p in route.filters] + (["cursor"] if route.paged else [])
        for name in names:
            for payload in SHORT_INJECTIONS:
                target = f"/api{route.path}?" + enc({name: payload})
                yield Probe(
                    f"inject {route.rel} {name} {payload}", "resource", target=target, auth=auth
                )
        if route.item_rel:
            item_auth = "user" if route.item_auth == "user" else "xapp"
            for payload in SHORT_INJECTIONS:
                target = f"/api{route.path}/" + quote(payload, safe="")
                query = enc({n: payload for n in route.item_params})
                target += "?" + query if query else ""
                yield Probe(
                    f"inject {route.item_rel} id {payload}",
                    "resource",
                    target=target,
                    auth=item_auth,
                )
    for payload in INJECTIONS + SEARCH_SYNTAX:
        for extra in ({}, {"type": "artist"}, {"size": "50", "offset": "3"}):
            target = "/api/search?" + enc({"q": payload, **extra})
            yield Probe(f"search {payload!r} {extra}", "resource", target=target, auth="xapp")
    for payload in INJECTIONS:
        yield Probe(
            f"search type {payload}",
            "resource",
            target="/api/search?" + enc({"q": "a", "type": payload}),
            auth="xapp",
        )
        # Writes: an injection in each field, with an id field that is not an id (so no write).
        for service, method, path, auth in JSON_WRITES:
            fields = {
                "name": payload,
                "description": payload,
                "user_id": payload,
                "collection_id": payload,
                "artwork_id": payload,
                "position": payload,
                "private": payload,
                "redirect_urls": payload,
                "client_id": payload,
                "client_secret": payload,
                "token": payload,
                "token_type_hint": payload,
                "grant_type": payload,
            }
            if path.startswith("/api/applications"):
                # The applications API takes a name alone: a bad redirect URL keeps it unwritten.
                fields["redirect_urls"] = "javascript:" + payload
            yield Probe(
                f"inject form {payload} {method} {path}",
                service,
                method,
                path,
                form(**fields),
                FORM,
                auth=auth,
            )
            yield Probe(
                f"inject json {payload} {method} {path}",
                service,
                method,
                path,
                js(fields),
                JSON,
                auth=auth,
            )
        for grant in (
            {"grant_type": "credentials", "email": payload, "password": payload},
            {"grant_type": "credentials", "email": "demo@example.org", "password": payload},
            {"grant_type": "authorization_code", "code": payload, "redirect_uri": payload},
            {"grant_type": "authorization_code", "code": payload, "code_verifier": payload},
            {"grant_type": "oauth_token", "oauth_provider": payload, "oauth_token": payload},
            {"grant_type": "oauth_token", "oauth_provider": "facebook", "oauth_token": payload},
            {"grant_type": "credentials", "email": "a@b.c", "password": "x", "scope": payload},
            {"grant_type": "credentials", "email": "a@b.c", "password": "x", "state": payload},
        ):
            body = form(client_id="<<client_id>>", client_secret="<<client_secret>>", **grant)
            yield Probe(
                f"grant {grant['grant_type']} {sorted(grant)} {payload}",
                "auth",
                "POST",
                "/oauth2/access_token",
                body,
                FORM,
            )
        for path in ("/oauth2/revoke", "/oauth2/introspect"):
            body = form(
                client_id="<<client_id>>",
                client_secret="<<client_secret>>",
                token=payload,
                token_type_hint=payload,
            )
            yield Probe(f"{path} token {payload}", "auth", "POST", path, body, FORM)
        q = quote(payload, safe="")
        scope = enc({"collection_id": payload, "user_id": payload})
        yield Probe(
            f"delete item {payload}",
            "resource",
            "DELETE",
            f"/api/collection_items/{q}?{scope}",
            auth="user",
        )
        yield Probe(
            f"delete real item, hostile scope {payload}",
            "resource",
            "DELETE",
            "/api/collection_items/<<item_id>>?" + enc({"collection_id": payload}),
            auth="user",
        )
        yield Probe(
            f"delete application {payload}", "auth", "DELETE", f"/api/applications/{q}", auth="user"
        )
        yield Probe(
            f"expire token {payload}",
            "auth",
            "DELETE",
            "/api/tokens/access_token?" + enc({"access_token": payload}),
        )
        yield Probe(
            f"xapp client {payload}",
            "auth",
            "POST",
            "/api/tokens/xapp_token",
            form(client_id=payload, client_secret=payload),
            FORM,
        )
        basic = base64.b64encode(f"{payload}:{payload}".encode()).decode()
        yield Probe(
            f"basic client {payload}",
            "auth",
            "POST",
            "/oauth2/introspect",
            form(token="x"),
            FORM,
            headers={"Authorization": f"Basic {basic}"},
        )
        for header in ("X-Xapp-Token", "X-Access-Token"):
            yield Probe(
                f"token header {header} {payload}",
                "resource",
                "GET",
                "/api/artists",
                headers={header: payload},
            )
        yield Probe(
            f"bearer {payload}",
            "auth",
            "GET",
            "/api/applications",
            headers={"Authorization": f"Bearer {payload}"},
        )
        yield Probe(
            f"applications user_id {payload}",
            "auth",
            "GET",
            "/api/applications?" + enc({"user_id": payload, "cursor": payload, "size": payload}),
            auth="user",
        )
        yield Probe(
            f"application id {payload}",
            "auth",
            "GET",
            "/api/applications/" + quote(payload, safe=""),
            auth="user",
        )
        yield Probe(
            f"authorize {payload}",
            "auth",
            "GET",
            "/oauth2/authorize?"
            + enc(
                {
                    "client_id": payload,
                    "redirect_uri": payload,
                    "state": payload,
                    "scope": payload,
                    "response_type": payload,
                }
            ),
        )
        yield Probe(
            f"authorize real client {payload}",
            "auth",
            "GET",
            "/oauth2/authorize?"
            + enc(
                {
                    "client_id": "<<client_id>>",
                    "redirect_uri": "https://client.example.org/cb",
                    "response_type": "code",
                    "state": payload,
                    "scope": payload,
                    "code_challenge": payload,
                    "code_challenge_method": payload,
                }
            ),
        )
        yield Probe(
            f"sign in next {payload}", "auth", "GET", "/account/sign_in?" + enc({"next": payload})
        )
        yield Probe(
            f"reset token {payload}",
            "auth",
            "GET",
            "/account/password/reset/" + quote(payload, safe=""),
        )


def oversize() -> Iterator[Probe]:
    """Oversize, negative and garbage paging values, huge ids, repeated and long parameters."""
    cursors = {
        "garbage": "!!not a cursor!!",
        "base64 of garbage": base64.urlsafe_b64encode(b"\x00\xff garbage").decode(),
        "json object": base64.urlsafe_b64encode(b'{"a": 1}').decode(),
        "json ints": base64.urlsafe_b64encode(b"[1]").decode(),
        "json big int": base64.urlsafe_b64encode(b"[18446744073709551615]").decode(),
        "json float": base64.urlsafe_b64encode(b"[1e308]").decode(),
        "json bools": base64.urlsafe_b64encode(b"[true, false]").decode(),
        "json nulls": base64.urlsafe_b64encode(b"[null]").decode(),
        "json nested": base64.urlsafe_b64encode(b"[[1], {}]").decode(),
        "json three values": base64.urlsafe_b64encode(b'[99999999999, "x", "y"]').decode(),
        "json position": base64.urlsafe_b64encode(
            b'[99999999999999999999, "000000000000000000000000", "000000000000000000000000"]'
        ).decode(),
        "json negative position": base64.urlsafe_b64encode(
            b'[-9223372036854775809, "000000000000000000000000", "000000000000000000000000"]'
        ).decode(),
        "json string date": base64.urlsafe_b64encode(b'["2020-13-45T99:99:99"]').decode(),
        "json long string": base64.urlsafe_b64encode(json.dumps(["a" * 600]).encode()).decode(),
        "2000 chars": "A" * 2000,
    }
    values = {
        "size": ["10" + "0" * 30, "-1", "0", "1e3", "abc", "5.5", " 5", "\u0665"],
        "offset": ["1" + "0" * 30, "-5", "abc", "1e9", "99999999999"],
        "page": ["-1", "1" + "0" * 30],
        "total_count": ["maybe", "1" * 100],
        "sample": ["maybe", "\u2713"],
    }
    # Every list parses paging the same way: the values go to one list of each pager (by id,
    # by position, the auth server's) and to search; cursors go to every list.
    matrix = {"artists", "users", "collections", "collection_items", "search"}
    for route in collection_routes():
        auth = list_auth(route)
        base = {}
        if route.rel == "images":
            base = {"show_id": ZERO_ID}
        elif route.rel == "editions":
            base = {"artwork_id": "<<artwork_id>>"}
        elif route.rel == "collections":
            base = {"user_id": "<<user_id>>"}
        elif route.rel == "collection_items":
            base = {"user_id": "<<user_id>>", "collection_id": "<<collection_id>>"}
        elif route.rel == "search":
            base = {"q": "monet"}
        for name, options in values.items() if route.rel in matrix else ():
            for value in options:
                target = f"/api{route.path}?" + enc({**base, name: value})
                yield Probe(
                    f"param {route.rel} {name}={value[:12]}", "resource", target=target, auth=auth
                )
        if route.paged:
            for name, cursor in cursors.items():
                target = f"/api{route.path}?" + enc({**base, "cursor": cursor})
                yield Probe(f"cursor {route.rel} {name}", "resource", target=target, auth=auth)
        for p in route.filters:
            target = f"/api{route.path}?" + enc({**base, p.name: TEN_KB})
            yield Probe(f"10 KB {route.rel} {p.name}", "resource", target=target, auth=auth)
            repeated = list(base.items()) + [(p.name, f"{i:024x}") for i in range(100)]
            yield Probe(
                f"100 repeated {route.rel} {p.name}",
                "resource",
                target=f"/api{route.path}?" + enc(repeated),
                auth=auth,
            )
        if route.item_rel:
            yield Probe(
                f"10 KB id {route.item_rel}",
                "resource",
                target=f"/api{route.path}/{TEN_KB}",
                auth=auth,
            )
    for name, options in values.items():
        for value in options:
            target = "/api/applications?" + enc({"user_id": "<<user_id>>", name: value})
            yield Probe(
                f"param applications {name}={value[:12]}", "auth", target=target, auth="user"
            )
    for name, cursor in cursors.items():
        target = "/api/applications?" + enc({"user_id": "<<user_id>>", "cursor": cursor})
        yield Probe(f"cursor applications {name}", "auth", target=target, auth="user")
    for service, path, auth in (
        ("resource", "/api/artists", "xapp"),
        ("resource", "/api/search", "xapp"),
        ("auth", "/api/applications", "user"),
        ("auth", "/oauth2/authorize", ""),
        ("auth", "/account/sign_in", ""),
    ):
        long_value = enc({"q": "a" * 60_000, "term": "b", "next": "/" + "c" * 100})
        yield Probe(f"60 KB query string {path}", service, target=f"{path}?{long_value}", auth=auth)
        many = enc([(f"p{i}", "x" * 50) for i in range(1100)])
        yield Probe(f"1100 parameters {path}", service, target=f"{path}?{many}", auth=auth)
        raw = head("GET", path, [("X-Big", "a" * 70_000)])
        yield Probe(f"70 KB header {path}", service, raw=raw, expect=statuses(431))
        raw = head("GET", path, [(f"X-H{i}", "a" * 100) for i in range(700)])
        yield Probe(f"700 headers {path}", service, raw=raw, expect=statuses(431))
        raw = head("GET", path, [("Cookie", "c=" + "a" * 70_000)])
        yield Probe(f"70 KB cookie {path}", service, raw=raw, expect=statuses(431))
        yield Probe(
            f"8 KB token {path}", service, target=path, headers={"X-Access-Token": "t" * 8000}
        )
    for service, method, path, auth in JSON_WRITES:
        fields = {
            "name": TEN_KB * 2,
            "description": TEN_KB * 2,
            "user_id": TEN_KB,
            "collection_id": TEN_KB,
            "artwork_id": TEN_KB,
            "position": "9" * 30,
            "client_id": TEN_KB,
            "client_secret": TEN_KB,
            "token": TEN_KB,
            "redirect_urls": TEN_KB,
        }
        yield Probe(
            f"10 KB fields {method} {path}", service, method, path, form(**fields), FORM, auth=auth
        )
        many = enc([(f"f{i}", "x") for i in range(5000)]).encode()
        yield Probe(f"5000 fields {method} {path}", service, method, path, many, FORM, auth=auth)
        yield Probe(
            f"position extremes {method} {path}",
            service,
            method,
            path,
            js({"position": 2**63, "user_id": 10**30, "private": 10**30}),
            JSON,
            auth=auth,
        )


MULTIPART_PART = b'--x\r\nContent-Disposition: form-data; name="name"\r\n\r\n'


def content_types() -> Iterator[Probe]:
    """Wrong, odd and missing content types on every body, and odd Accept headers."""
    types = {
        "text/plain": b"name=x",
        "application/xml": b"<a>x</a>",
        "multipart/form-data": MULTIPART_PART + b"x\r\n--x--",
        "multipart/form-data; boundary=x": MULTIPART_PART + b"\xff" * 10 + b"\r\n--x--",
        "application/json; charset=utf-16": UNWRITABLE.encode("utf-16"),
        "application/json, text/html": b"{}",
        # Read as UTF-8 whatever the charset says: invalid fields keep it unwritten.
        "application/x-www-form-urlencoded; charset=utf-7": b"name=+ADw-script+AD4-&user_id=x"
        b"&redirect_urls=javascript:x",
        "application/merge-patch+json": b"{}",
        "*/*": b"{}",
        "<script>alert(1)</script>": b"x",
        "a" * 5000: b"x",
    }
    for service, method, path, auth in JSON_WRITES:
        for ctype, body in types.items():
            yield Probe(
                f"content type {ctype[:40]} {method} {path}",
                service,
                method,
                path,
                body,
                ctype,
                auth=auth,
            )
        yield Probe(
            f"form body typed JSON {method} {path}",
            service,
            method,
            path,
            b"name=x",
            JSON,
            auth=auth,
        )
        yield Probe(
            f"JSON body typed form {method} {path}",
            service,
            method,
            path,
            b'{"name":"x"}',
            FORM,
            auth=auth,
        )
        raw = head(method, path, [*token_headers(auth), ("Content-Length", "6")], b"name=x")
        yield Probe(f"no content type {method} {path}", service, raw=raw)
    for accept in (
        "application/vnd.artcat-v999+json",
        "application/vnd.artcat-v2+json;q=abc",
        "text/html",
        "<script>alert(1)</script>",
        "a" * 5000,
        "*/*;q=0",
    ):
        yield Probe(
            f"accept {accept[:30]}",
            "resource",
            target="/api/artists",
            headers={"Accept": accept},
            auth="xapp",
        )
        yield Probe(
            f"accept {accept[:30]} auth",
            "auth",
            target="/api/applications",
            headers={"Accept": accept},
            auth="user",
        )


def methods() -> Iterator[Probe]:
    """Method override headers and parameters, and methods the routes do not serve."""
    item = "/api/collection_items/<<item_id>>?collection_id=<<collection_id>>&user_id=<<user_id>>"
    for header in ("X-HTTP-Method-Override", "X-HTTP-Method", "X-Method-Override"):
        for method, verb in (
            ("GET", "DELETE"),
            ("POST", "DELETE"),
            ("POST", "PUT"),
            ("GET", "PATCH"),
        ):
            yield Probe(
                f"override {header} {method}->{verb} item",
                "resource",
                method,
                item,
                headers={header: verb},
                auth="user",
            )
            yield Probe(
                f"override {header} {method}->{verb} application",
                "auth",
                method,
                "/api/applications/<<app_id>>",
                headers={header: verb},
                auth="user",
            )
            yield Probe(
                f"override {header} {method}->{verb} collection",
                "resource",
                method,
                "/api/collections/<<collection_id>>",
                headers={header: verb},
                auth="user",
            )
    for where in ("query", "form"):
        target = item + ("&_method=DELETE" if where == "query" else "")
        body = b"_method=DELETE" if where == "form" else None
        yield Probe(
            f"_method DELETE in {where}",
            "resource",
            "POST",
            target,
            body,
            FORM if body else None,
            auth="user",
        )
        target = "/api/applications/<<app_id>>" + ("?_method=DELETE" if where == "query" else "")
        yield Probe(
            f"_method DELETE in {where} application",
            "auth",
            "POST",
            target,
            body,
            FORM if body else None,
            auth="user",
        )
    for method in ("PATCH", "TRACE", "PROPFIND", "FOO", "CONNECT"):
        yield Probe(f"method {method} item", "resource", method, item, auth="user")
        yield Probe(
            f"method {method} application",
            "auth",
            method,
            "/api/applications/<<app_id>>",
            auth="user",
        )
        yield Probe(f"method {method} token", "auth", method, "/api/tokens/xapp_token")
    for service, path in (("resource", "/api/artists"), ("auth", "/api/tokens/xapp_token")):
        yield Probe(
            f"absolute-form target {path}",
            service,
            raw=head("GET", f"http://evil.example{path}", []),
        )
        yield Probe(f"asterisk target {path}", service, raw=head("OPTIONS", "*", []))
        yield Probe(f"HTTP/0.9 style {path}", service, raw=f"GET {path}\r\n\r\n".encode())
        yield Probe(
            f"HTTP/9.9 {path}", service, raw=f"GET {path} HTTP/9.9\r\nHost: x\r\n\r\n".encode()
        )
        yield Probe(
            f"no host HTTP/1.0 {path}", service, raw=f"GET {path} HTTP/1.0\r\n\r\n".encode()
        )
        yield Probe(f"lowercase method {path}", service, raw=head("get", path, []))
        yield Probe(
            f"garbage request line {path}",
            service,
            raw=b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x00" * 40 + b"\r\n\r\n",
        )


def hosts() -> Iterator[Probe]:
    """Hostile Host and forwarding headers: the hrefs and redirects built from them."""
    for service, path, auth in (
        ("resource", "/api", ""),
        ("resource", "/api/current_user", "user"),
        ("resource", "/api/openapi.json", ""),
        ("auth", "/api/applications", "user"),
        ("auth", "/account", ""),
        ("auth", "/.well-known/oauth-authorization-server", ""),
    ):
        for host in (
            "evil.example<script>",
            "a" * 1000,
            "a b",
            "evil.example:99999",
            "[::1",
            "\xe9.example",
            "",
        ):
            raw = (
                f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n".encode("latin-1")
                + "".join(f"{k}: {v}\r\n" for k, v in token_headers(auth)).encode("latin-1")
                + b"\r\n"
            )
            yield Probe(f"host {host[:20]!r} {path}", service, raw=raw)
        yield Probe(
            f"forwarded headers {path}",
            service,
            target=path,
            headers={
                "X-Forwarded-Host": "evil.example",
                "X-Forwarded-Proto": "javascript",
                "Forwarded": "host=evil.example;proto=gopher",
                "X-Forwarded-For": "' OR 1=1 --",
            },
            auth=auth,
        )


def pages() -> Iterator[Probe]:
    """The account pages' forms, with a valid CSRF token and hostile values; and without one."""
    hostile = [*INJECTIONS, "a\x00b", TEN_KB]
    for path, fields in PAGE_FORMS:
        for payload in hostile:
            values = {k: payload for k in fields} or {"x": payload}
            if path == "/account/sign_up":
                values["password"] = "short"  # too short: the account is never created
            if path == "/account/applications":
                values["redirect_uris"] = "javascript:" + payload
            if path.endswith(("/rotate", "/revoke")):
                target = path.replace("<<page_app_id>>", quote(payload, safe=""))
            else:
                target = path
            body = form(csrf_token="<<csrf>>", **values)
            yield Probe(
                f"page {path} {payload[:30]!r}", "auth", "POST", target, body, FORM, auth="browser"
            )
        yield Probe(
            f"page {path} without CSRF",
            "auth",
            "POST",
            path,
            form(**fields),
            FORM,
            auth="browser",
            expect=statuses(400),
        )
        yield Probe(
            f"page {path} forged CSRF",
            "auth",
            "POST",
            path,
            form(csrf_token="forged", **fields),
            FORM,
            auth="browser",
            expect=statuses(400),
        )
        yield Probe(f"page {path} HEAD", "auth", "HEAD", path, auth="browser")
        invalid = b"csrf_token=<<csrf>>&" + b"&".join(k.encode() + b"=%FF%FE\xff" for k in fields)
        target = path.replace("<<page_app_id>>", ZERO_ID)  # never rotate or revoke for real
        yield Probe(
            f"page {path} invalid UTF-8", "auth", "POST", target, invalid, FORM, auth="browser"
        )
    for payload in INJECTIONS:
        yield Probe(
            f"page authorize consent {payload}",
            "auth",
            "POST",
            "/oauth2/authorize",
            form(
                csrf_token="<<csrf>>",
                client_id="<<client_id>>",
                redirect_uri="https://client.example.org/cb",
                response_type="code",
                state=payload,
                scope=payload,
                decision=payload,
            ),
            FORM,
            auth="browser",
        )


CATEGORIES = {
    "body size": body_size,
    "json": json_bodies,
    "encodings": encodings,
    "header injection": header_injection,
    "injection": injections,
    "oversize": oversize,
    "content types": content_types,
    "methods": methods,
    "hosts": hosts,
    "pages": pages,
}


def corpus() -> list[tuple[str, Probe]]:
    """Return every probe with its category."""
    out: list[tuple[str, Probe]] = []
    seen: set[str] = set()
    for category, build in CATEGORIES.items():
        for probe in build():
            if probe.id not in seen:  # identical ids only repeat an identical request
                seen.add(probe.id)
                out.append((category, probe))
    return out
