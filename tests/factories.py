"""Test data factories: small functions that add realistic rows with overridable fields."""

from __future__ import annotations

import itertools
from typing import Any

from sqlalchemy.orm import Session

from auth_server.accounts import NewApplication, create_application, create_user, password_hasher
from common.ids import new_id
from common.models import Artist, User
from common.settings import Settings

_seq = itertools.count(1)


def artist(session: Session, **fields: Any) -> Artist:
    """Add an artist."""
    n = next(_seq)
    values: dict[str, Any] = {
        "id": new_id(),
        "slug": f"artist-{n}",
        "name": f"Artist {n}",
        "sortable_name": f"{n} Artist",
        "gender": "female",
        "birthday": "1900",
        "deathday": "1980",
        "nationality": "French",
        "image_url": f"https://images.example.org/a{n}/{{image_version}}.jpg",
        "image_versions": ["four_thirds", "large", "square", "tall"],
    }
    values.update(fields)
    row = Artist(**values)
    session.add(row)
    session.flush()
    return row


def user(
    session: Session, settings: Settings, *, password: str = "correct horse", **kw: Any
) -> User:
    """Add a user (with details and a default collection)."""
    n = next(_seq)
    return create_user(
        session,
        password_hasher(settings),
        email=kw.get("email", f"user{n}@example.org"),
        name=kw.get("name", f"User {n}"),
        password=password,
    )


def application(session: Session, owner: User | None = None, **kw: Any) -> NewApplication:
    """Add an application; the returned object carries the clear secret."""
    return create_application(session, name=kw.pop("name", f"App {next(_seq)}"), owner=owner, **kw)
