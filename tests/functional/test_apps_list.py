"""``artcat apps list`` (never a secret) and ``artcat demo credentials`` (the demo's, again)."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import Engine, select, update
from sqlalchemy.orm import Session

from artcat.loaders.demo import DEMO_REDIRECT_URIS, demo_credentials, load_demo
from auth_server.accounts import authenticate_client
from common.models import Application
from common.settings import Settings
from tests import factories
from tests.functional.cli_support import cli_env, run_cli

pytestmark = pytest.mark.functional


def test_apps_list_shows_every_application_and_no_secret(
    clean_db: Engine, base_settings: Settings
) -> None:
    load_demo(clean_db, base_settings, artworks=5)
    with Session(clean_db, expire_on_commit=False) as s, s.begin():
        other = factories.application(s, factories.user(s, base_settings), name="Zebra")
        s.execute(
            update(Application)
            .where(Application.id == other.application.id)
            .values(enabled=False, redirect_uris=[])
        )
    env = cli_env(base_settings)
    listed = json.loads(run_cli(env, "apps", "list", "--json"))
    demo = demo_credentials(base_settings)
    assert [a["name"] for a in listed] == ["Artcat Demo", "Zebra"]
    assert listed[0] == {
        "name": "Artcat Demo",
        "client_id": demo.client_id,
        "kind": "confidential, third-party",
        "redirect_uris": DEMO_REDIRECT_URIS,
        "enabled": True,
        "demo": True,
    }
    assert (listed[1]["enabled"], listed[1]["demo"], listed[1]["redirect_uris"]) == (
        False,
        False,
        [],
    )
    text = run_cli(env, "apps", "list")
    assert demo.client_id in text and "(the demo application" in text
    assert "none (no browser flow)" in text and "enabled:       no" in text
    for secret in (demo.client_secret, other.client_secret):
        assert secret not in text and secret not in json.dumps(listed)


def test_demo_credentials_are_shown_again_and_work(
    clean_db: Engine, base_settings: Settings
) -> None:
    load_demo(clean_db, base_settings, artworks=5)
    env = cli_env(base_settings)
    shown = json.loads(run_cli(env, "demo", "credentials", "--json"))
    with Session(clean_db) as s:
        assert authenticate_client(s, shown["client_id"], shown["client_secret"]) is not None
    assert shown["user_email"] == "demo@example.org" and shown["user_password"]
    # Rotated since: the derived secret is no longer it, and the command says so.
    rotated = json.loads(run_cli(env, "apps", "rotate-secret", shown["client_id"], "--json"))
    assert rotated["client_secret"] != shown["client_secret"]
    again = run_cli(env, "demo", "credentials")
    assert "client_secret: None" in again and "was rotated since" in again
    with Session(clean_db) as s:
        app = s.scalars(select(Application)).one()
        assert authenticate_client(s, app.client_id, rotated["client_secret"]) is not None
