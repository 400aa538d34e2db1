"""``artcat keys list|rotate`` and ``artcat apps set --id-token-alg`` against the stores the
servers under test use: what the operator sees, and what the servers serve after it."""

from __future__ import annotations

import json
from typing import Any

import requests
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from common.models import Application
from common.settings import AuthSettings
from common.stores import Stores
from tests.functional.cli_support import cli_env, cli_refuses, run_cli
from tests.functional.oidc_support import forget_cached_keys
from tests.pages import Account
from tests.servers import LiveServer


def test_keys_list_and_rotate(
    clean_db: Any, auth_server: LiveServer, stores: Stores, auth_settings: AuthSettings
) -> None:
    forget_cached_keys(stores, auth_settings)
    env = cli_env(auth_settings)
    listed = json.loads(run_cli(env, "keys", "list", "--json"))
    assert {(k["alg"], k["state"]) for k in listed} == {("ES256", "current"), ("RS256", "current")}
    assert all(
        set(k)
        == {"kid", "alg", "state", "published_at", "signs_from", "signs_until", "unpublished_at"}
        for k in listed
    )
    out = run_cli(env, "keys", "rotate")
    assert out.count(" next ") == 2
    after = json.loads(run_cli(env, "keys", "list", "--json"))
    assert sorted(k["state"] for k in after) == ["current", "current", "next", "next"]
    # Every process of the server sees the rotation at once: the next keys are published.
    served = requests.get(f"{auth_server.url}/oauth2/jwks", timeout=10).json()
    assert {k["kid"] for k in served["keys"]} == {k["kid"] for k in after}
    assert "private" not in out.lower() and '"d"' not in json.dumps(after)

    forced = run_cli(env, "keys", "rotate", "--now")
    assert forced.count(" current ") == 2
    states = json.loads(run_cli(env, "keys", "list", "--json"))
    # The keys that never signed are gone; the ones that did stay published, retired.
    assert sorted(k["state"] for k in states) == ["current", "current", "retired", "retired"]


def test_apps_set_id_token_alg(
    account: Account, auth_settings: AuthSettings, sessions: sessionmaker[Session]
) -> None:
    env = cli_env(auth_settings)
    assert "RS256" in run_cli(env, "apps", "set", account.client_id, "--id-token-alg", "RS256")
    with sessions() as s:
        alg = s.scalar(
            select(Application.id_token_signed_response_alg).where(Application.id == account.app_id)
        )
    assert alg == "RS256"
    run_cli(env, "apps", "set", account.client_id, "--id-token-alg", "ES256")
    with sessions() as s:
        app = s.get_one(Application, account.app_id)
        assert app.id_token_signed_response_alg is None  # the server's default
    assert "HS256" in cli_refuses(env, "apps", "set", account.client_id, "--id-token-alg", "HS256")
    made = json.loads(
        run_cli(
            env,
            "apps",
            "create",
            "--name",
            "RS only",
            "--owner",
            account.email,
            "--redirect-uri",
            "https://rs.example/cb",
            "--id-token-alg",
            "RS256",
            "--json",
        )
    )
    with sessions() as s:
        app = s.get_one(Application, made["id"])
        assert app.id_token_signed_response_alg == "RS256"
