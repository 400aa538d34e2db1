"""What the HTTP benchmark's load needs from the catalog: credentials, a token, ids, a deep page.

Each run adds its own user and application (rate limit lifted, so that the figures are the
service's and not its throttle's) to the configured database; the artwork ids are spread over
the table and the same on every run of one import.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field

import requests

from common.settings import AuthSettings

DEEP = 100_000  # rows before the deep cursor page


@dataclass
class Fixture:
    """What the load needs: credentials, a token, ids, a deep cursor path."""

    client_id: str
    client_secret: str
    email: str
    password: str
    xapp_token: str = ""
    artwork_ids: list[str] = field(default_factory=list)
    deep_path: str = ""
    artworks: int = 0


def prepare(settings: AuthSettings) -> Fixture:
    """Add a benchmark user and application (no rate limit to speak of); pick artwork ids."""
    from sqlalchemy import func, select

    from auth_server.accounts import create_application, create_user, password_hasher
    from common.db import make_engine, make_sessionmaker, upgrade
    from common.models import Artwork

    upgrade(settings)
    engine = make_engine(settings)
    tag = secrets.token_hex(4)
    password = secrets.token_urlsafe(12)
    email = f"bench-{tag}@example.org"
    with make_sessionmaker(engine)() as session, session.begin():
        user = create_user(
            session, password_hasher(settings), email=email, name="Benchmark", password=password
        )
        new = create_application(session, name=f"bench {tag}", owner=user)
        new.application.rate_limit = "1000000/second"
        fixture = Fixture(new.application.client_id, new.client_secret, email, password)
        fixture.artworks = session.scalar(select(func.count()).select_from(Artwork)) or 0
        # 1,000 ids spread over the table (every k-th by primary key), the same on every run.
        step = max(1, fixture.artworks // 1000)
        ids = session.scalars(select(Artwork.id).order_by(Artwork.id)).all()
        fixture.artwork_ids = list(ids[::step][:1000])
    engine.dispose()
    return fixture


def xapp_token(url: str, fx: Fixture) -> str:
    """Get an XAPP token for the benchmark application."""
    resp = requests.post(
        url + "/api/tokens/xapp_token",
        data={"client_id": fx.client_id, "client_secret": fx.client_secret},
        timeout=10,
    )
    resp.raise_for_status()
    return str(resp.json()["token"])


def deep_cursor(url: str, token: str, depth: int = DEEP) -> str:
    """Walk the artworks by ``next`` links (size 100) to ``depth`` rows; return the page path."""
    session = requests.Session()
    session.headers["X-Xapp-Token"] = token
    path = "/api/artworks?size=100"
    walked = 0
    while walked < depth:
        resp = session.get(url + path, timeout=30)
        resp.raise_for_status()
        body = resp.json()
        walked += len(body["_embedded"]["artworks"])
        nxt = body["_links"].get("next")
        if nxt is None:
            break
        path = "/" + nxt["href"].split("://", 1)[1].split("/", 1)[1]
    return path.replace("size=100", "size=20")
