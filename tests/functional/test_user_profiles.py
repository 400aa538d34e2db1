"""Every user has a profile: made with the account (every path goes through ``create_user``),
and backfilled by migration 0006 for the users created before."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import requests
from sqlalchemy import func, insert, select, text
from sqlalchemy.orm import Session, sessionmaker

from common.db import make_engine, upgrade
from common.ids import new_id, utcnow
from common.models import Profile, User
from common.settings import Settings
from tests.pages import PASSWORD, Account, form, make_account
from tests.servers import LiveServer

pytestmark = pytest.mark.functional


def test_the_backfill_gives_every_user_one_profile(tmp_path: Path) -> None:
    settings = Settings(instance_dir=tmp_path, database_url="", redis_url="", secret_key="k")
    upgrade(settings, "0004")
    engine = make_engine(settings)
    now = utcnow()
    ids = [new_id() for _ in range(3)]
    with engine.begin() as conn:
        conn.execute(
            insert(User.__table__),
            [
                {"id": i, "name": f"U{n}", "email": f"u{n}@x.org", "type": "User", "enabled": True,
                 "session_generation": 0, "created_at": now, "updated_at": now}
                for n, i in enumerate(ids)
            ],
        )  # fmt: skip
        # One user already has a profile: it is kept, and no second one is made.
        conn.execute(
            insert(Profile.__table__),
            [{"id": new_id(), "handle": "kept", "location": "", "description": "mine",
              "owner_type": "user", "owner_id": ids[0], "image_versions": [],
              "created_at": now, "updated_at": now}],
        )  # fmt: skip
    upgrade(settings, "0006")
    with engine.connect() as conn:
        rows = conn.execute(
            select(Profile.owner_id, Profile.handle).where(Profile.owner_type == "user")
        ).all()
        assert sorted(rows) == sorted([(ids[0], "kept"), *((i, f"user-{i}") for i in ids[1:])])
        assert conn.execute(text("select version_num from alembic_version")).scalar() == "0006"
    engine.dispose()


def test_a_user_signed_up_has_a_profile(
    combined_server: LiveServer, clean_db: Any, sessions: sessionmaker[Session]
) -> None:
    base = combined_server.url
    with requests.Session() as web:
        page = web.get(f"{base}/account/sign_up", timeout=10)
        f = form(page.text, "/account/sign_up")
        data = {**f.fields, "name": "Grace", "email": "profiled@example.org", "password": PASSWORD}
        assert web.post(f"{base}/account/sign_up", data=data, timeout=10).status_code == 200
    with sessions() as s:
        user = s.scalar(select(User).where(User.email == "profiled@example.org"))
        assert user is not None
        profile = s.scalar(select(Profile).where(Profile.owner_id == user.id))
        assert profile is not None and profile.owner_type == "user"
        assert profile.handle == f"user-{user.id}" and "Grace" not in profile.handle


def test_every_other_path_makes_one_too(
    clean_db: Any, sessions: sessionmaker[Session], base_settings: Settings
) -> None:
    account: Account = make_account(sessions, base_settings)  # create_user, as the CLI and grants
    with sessions() as s:
        count = select(func.count()).select_from(Profile)
        assert s.scalar(count.where(Profile.owner_id == account.user_id)) == 1
