"""`artcat serve` on granian (WSGI_SERVER=granian, the default in production), attacked over
real HTTP: what waitress refused before the app ran is refused here too.

- a body over 1 MiB is answered 413 and changes nothing: chunked, declared, or (HTTP/2)
  of no stated length;
- a request head over 64 KiB is answered 431;
- forwarding headers are believed from the trusted proxy only;
- every response names the server ``artcat``.

That no request's environ carries a setting is in ``test_graceful_shutdown.py``, on the
project's runners.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session, sessionmaker

from common.models import Token
from common.serve import MAX_REQUEST_BODY
from common.settings import AuthSettings, Settings
from tests.functional.oauth_support import World, make_world
from tests.functional.process_support import (
    REQUEST_TIMEOUT,
    RedisServer,
    Service,
    poll,
    running,
    service_env,
)

pytestmark = pytest.mark.functional
ROOT = Path(__file__).resolve().parents[2]
FORGED = "203.0.113.9"  # TEST-NET-3: an address no test client has


@pytest.fixture(scope="module")
def world(module_db: Engine, sessions: sessionmaker[Session], auth_settings: AuthSettings) -> World:
    """An application and a user with a password."""
    return make_world(sessions, auth_settings)


@pytest.fixture(scope="module")
def servers(
    world: World,
    redis_server: RedisServer,
    base_settings: Settings,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[list[Service]]:
    """`artcat serve all` on granian twice: trusting no proxy (the default), and trusting
    the loopback address as its proxy."""
    instance = tmp_path_factory.mktemp("granian")
    env = service_env(
        base_settings,
        database_url=base_settings.sqlalchemy_url,
        redis_url=redis_server.url,
        instance_dir=instance,
        WSGI_SERVER="granian",
    )
    with running(
        [("all", env), ("all", {**env, "TRUSTED_PROXY": "127.0.0.1"})], instance / "logs"
    ) as services:
        yield services


def tokens(sessions: sessionmaker[Session]) -> int:
    with sessions() as s:
        return s.scalar(select(func.count()).select_from(Token)) or 0


def chunked(body: bytes, piece: int = 64 * 1024) -> Iterator[bytes]:
    """Yield ``body`` in pieces: requests sends a generator with Transfer-Encoding: chunked."""
    for start in range(0, len(body), piece):
        yield body[start : start + piece]


def raw_exchange(url: str, head: bytes) -> bytes:
    """Send a raw request head; return the start of the answer."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=REQUEST_TIMEOUT) as sock:
        sock.sendall(head)
        return sock.recv(4096)


def test_a_chunked_body_over_the_limit_is_refused_and_changes_nothing(
    servers: list[Service], world: World, sessions: sessionmaker[Session]
) -> None:
    url = servers[0].url
    before = tokens(sessions)
    form = f"client_id={world.client_id}&client_secret={world.client_secret}&pad=".encode()
    huge = form + b"a" * (MAX_REQUEST_BODY + 1)
    headers = {"Content-Type": "application/x-www-form-urlencoded"}
    r = requests.post(
        f"{url}/api/tokens/xapp_token", data=chunked(huge), headers=headers, timeout=30
    )
    assert r.status_code == 413, r.text
    assert r.headers["Server"] == "artcat"
    assert str(MAX_REQUEST_BODY) in r.json()["message"]
    assert tokens(sessions) == before  # nothing was issued
    r = requests.post(
        f"{url}/api/collections",
        data=chunked(b"{" + b" " * (2 * MAX_REQUEST_BODY) + b"}"),
        headers={"Content-Type": "application/json"},
        timeout=30,
    )
    assert r.status_code == 413, r.text
    # The same credentials in a chunked body under the limit are read whole: a token.
    r = requests.post(
        f"{url}/api/tokens/xapp_token",
        data=chunked(form + b"a" * 1000),
        headers=headers,
        timeout=30,
    )
    assert r.status_code == 201, r.text
    assert tokens(sessions) == before + 1


def curl_http2() -> str | None:
    """Return curl's path when it speaks HTTP/2 (Debian's does), else None."""
    curl = shutil.which("curl")
    if curl is None:
        return None
    out = subprocess.run([curl, "--version"], capture_output=True, text=True, check=False)
    return curl if "HTTP2" in out.stdout else None


@pytest.mark.skipif(curl_http2() is None, reason="needs curl with HTTP/2")
def test_an_http2_body_without_a_length_is_bounded_too(
    servers: list[Service], world: World, sessions: sessionmaker[Session]
) -> None:
    """granian also speaks HTTP/2 (cleartext, prior knowledge), where a body may come with no
    length at all: read up to the limit, then refused; under it, read whole."""
    url = f"{servers[0].url}/api/tokens/xapp_token"
    before = tokens(sessions)
    form = f"client_id={world.client_id}&client_secret={world.client_secret}&pad=".encode()

    def post(body: bytes) -> str:
        argv = [str(curl_http2()), "-s", "--http2-prior-knowledge", "-X", "POST", "-T", "-"]
        argv += ["-H", "Content-Type: application/x-www-form-urlencoded", "-o", "/dev/null"]
        argv += ["-w", "%{http_code} %{http_version}", url]
        return subprocess.run(argv, input=body, capture_output=True, check=False).stdout.decode()

    # curl streams stdin with no length. The server answers 413 and resets the stream once
    # past the limit; curl, still sending, may report the reset (000) instead of the answer.
    assert post(form + b"a" * (MAX_REQUEST_BODY + 50_000)) in ("413 2", "000 0")
    assert tokens(sessions) == before  # nothing was issued
    assert post(form + b"a" * 1000) == "201 2"
    assert tokens(sessions) == before + 1


def test_a_declared_body_over_the_limit_is_refused_before_it_is_sent(
    servers: list[Service],
) -> None:
    head = (
        b"POST /api/tokens/xapp_token HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Type: application/x-www-form-urlencoded\r\n"
        + f"Content-Length: {50 * MAX_REQUEST_BODY}\r\n\r\n".encode()
    )
    answer = raw_exchange(servers[0].url, head)  # no body follows: the answer comes anyway
    assert answer.startswith(b"HTTP/1.1 413 "), answer[:200]
    bad = raw_exchange(
        servers[0].url,
        b"POST /api/tokens/xapp_token HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: -5\r\n\r\n",
    )
    assert bad.startswith(b"HTTP/1.1 400 "), bad[:200]


def test_a_request_head_over_64_kib_is_refused(servers: list[Service]) -> None:
    url = servers[0].url
    r = requests.get(f"{url}/api/status", headers={"X-Big": "a" * 70_000}, timeout=10)
    assert r.status_code == 431
    r = requests.get(f"{url}/api/status", headers={"X-Big": "a" * 8_000}, timeout=10)
    assert r.status_code == 200


def access_line_count(service: Service, address: str) -> int:
    return service.output().count(f'"remote_addr":"{address}"')


def test_forwarding_headers_are_believed_from_the_trusted_proxy_only(
    servers: list[Service],
) -> None:
    untrusting, trusting = servers
    forged = {"X-Forwarded-For": FORGED, "X-Forwarded-Proto": "https"}
    r = requests.get(f"{untrusting.url}/api", headers=forged, timeout=10)
    assert r.status_code == 200
    # The links are built from the request's own scheme: the forged https was dropped.
    assert r.json()["_links"]["self"]["href"].startswith("http://127.0.0.1:")
    r = requests.get(f"{trusting.url}/api", headers=forged, timeout=10)
    assert r.json()["_links"]["self"]["href"].startswith("https://127.0.0.1:")
    # The access lines (written once the answer is sent) name the address each believed.
    poll(lambda: access_line_count(trusting, FORGED) == 1, 10, "the trusting server's line")
    assert access_line_count(untrusting, FORGED) == 0


def test_every_response_names_the_server(servers: list[Service]) -> None:
    url = servers[0].url
    for path, status in (
        ("/api", 200),
        ("/api/artworks", 401),
        ("/api/nowhere", 404),
        ("/oauth2/authorize", 400),
        ("/healthz", 200),
    ):
        r = requests.get(f"{url}{path}", timeout=10, allow_redirects=False)
        assert (r.status_code, r.headers.get("Server")) == (status, "artcat"), path
