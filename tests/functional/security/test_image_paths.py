"""``/images/{folder}/{name}`` reads the image store by key: no spelling of a path reaches a
file outside the store (the database, the secret key, anything beside the images); and an
unpublished artwork's placeholder does not show its title or artist.

The attack: ask the public port, in raw HTTP (no client normalising the path), for the files
beside the store through ``..`` in every encoding. Every answer is a 404 and none carries the
file; the store's own files stay reachable."""

from __future__ import annotations

import http.client
from urllib.parse import urlsplit

import pytest
from sqlalchemy import Engine, insert

from common.ids import new_id
from common.images.store import open_store
from common.models import Artwork
from common.settings import Settings
from tests.servers import LiveServer

pytestmark = pytest.mark.functional

SECRET = b"not an image: a secret beside the store"
GOOD = "0123456789abcdef0123456789abcdef"
ATTACKS = (
    "/images/../secret.jpg",
    "/images/%2e%2e/secret.jpg",
    "/images/..%2F/secret.jpg",
    "/images/%2E%2E%2F%2E%2E/secret.jpg",
    f"/images/{GOOD}/..%2F..%2Fsecret.jpg",
    f"/images/{GOOD}/%2e%2e%2fsecret.jpg",
    "/images/demo-..%2F..%2Fsecret/medium.jpg",
    f"/images/{GOOD}%2F..%2F../secret.jpg",
    "/images/placeholder-..%2Fsecret/large.svg",
    f"/images/{GOOD}/medium.jpg%00.svg",
    f"/images/{GOOD}/medium.jpg/..",
)


def raw_get(server: LiveServer, target: str) -> tuple[int, bytes]:
    """Send a GET with this exact request target and return the status and body."""
    where = urlsplit(server.url)
    conn = http.client.HTTPConnection(where.hostname or "127.0.0.1", where.port, timeout=10)
    try:
        conn.putrequest("GET", target, skip_accept_encoding=True)
        conn.endheaders()
        reply = conn.getresponse()
        return reply.status, reply.read()
    finally:
        conn.close()


def test_no_path_leaves_the_image_store(
    resource_server: LiveServer, base_settings: Settings
) -> None:
    store_dir = base_settings.instance_dir / "images"
    store_dir.mkdir(parents=True, exist_ok=True)
    (base_settings.instance_dir / "secret.jpg").write_bytes(SECRET)
    (store_dir / "secret.jpg").write_bytes(SECRET)
    open_store(base_settings).put(f"{GOOD}/medium.jpg", b"\xff\xd8 the store's own", "image/jpeg")
    status, body = raw_get(resource_server, f"/images/{GOOD}/medium.jpg")
    assert status == 200 and body == b"\xff\xd8 the store's own"
    for target in ATTACKS:
        status, body = raw_get(resource_server, target)
        assert status in (400, 404), (target, status)
        assert SECRET not in body, target


def test_an_unpublished_artworks_placeholder_names_nothing(
    resource_server: LiveServer, clean_db: Engine
) -> None:
    secret_title = "Unannounced acquisition"
    hidden, shown = new_id(), new_id()
    with clean_db.begin() as conn:
        conn.execute(
            insert(Artwork),
            [
                {"id": hidden, "slug": "hidden", "title": secret_title, "published": False},
                {"id": shown, "slug": "shown", "title": "On view", "published": True},
            ],
        )
    status, body = raw_get(resource_server, f"/images/placeholder-{hidden}/large.svg")
    assert status == 200 and body.startswith(b"<svg") and secret_title.encode() not in body
    status, body = raw_get(resource_server, f"/images/placeholder-{shown}/large.svg")
    assert status == 200 and b"On view" in body
