"""One password rule everywhere: the operator's ``artcat users create`` refuses what the forms do.

The attack (or the accident): the web forms refuse ``password1234``, but the operator's command
took any password of 8 characters, so an account made there could be guessed in a few tries over
the credentials grant. Now the command applies the forms' own rule (``password_problem``, with
the account's email and name as context): a weak password exits non-zero with the rule's message
and creates nothing (the password then signs nothing in over HTTP); a strong one creates an
account that signs in.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterator
from typing import Any

import pytest
from redis import Redis
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from auth_server import forms
from auth_server.passwords import password_problem
from common.models import User
from common.settings import AuthSettings, Settings
from tests.functional.cli_support import cli_env, invoke, run_cli
from tests.functional.oauth_support import post
from tests.functional.security.test_low_passwords import sign_up
from tests.pages import text
from tests.servers import LiveServer, forget_sign_in_throttle

pytestmark = pytest.mark.functional

NAME, EMAIL = "Edgar Degas", "edgar@example.org"
WEAK = [
    "password1234",  # the review's: taken by the command, refused by the forms
    "edgardegas1",  # the account's own name
    "edgar@example.org",  # its own email
    "Qwerty12345",  # a keyboard walk
    "short1!",  # 7 characters
]
STRONG = "ballet dancers rehearse at dawn"


@pytest.fixture
def env(base_settings: Settings) -> dict[str, str]:
    """The CLI's environment: the servers' own database and Redis."""
    return cli_env(base_settings)


@pytest.fixture
def fresh(clean_db: Any, redis_client: Redis, auth_settings: AuthSettings) -> Iterator[None]:
    """An empty database and no sign-in failures counted."""
    forget_sign_in_throttle(redis_client, auth_settings.redis_prefix)
    yield


def accounts(sessions: sessionmaker[Session]) -> int:
    """Count the accounts with Edgar's address."""
    with sessions() as s:
        return int(s.scalar(select(func.count()).select_from(User).where(User.email == EMAIL)))


def create_user(env: dict[str, str], password: str) -> Any:
    """Run ``artcat users create`` with the password on standard input."""
    return invoke(
        env, "users", "create", "--email", EMAIL, "--name", NAME, "--json", stdin=password + "\n"
    )


def application(env: dict[str, str]) -> dict[str, Any]:
    """Register an application (its owner made by the command too) for the credentials grant."""
    run_cli(env, "users", "create", "--email", "owner@example.org", "--name", "Owner", stdin=STRONG)
    out = run_cli(
        env,
        "apps",
        "create",
        "--name",
        "Job",
        "--owner",
        "owner@example.org",
        "--no-browser-flow",
        "--json",
    )
    created: dict[str, Any] = json.loads(out)
    return created


def test_the_forms_and_the_command_share_one_rule() -> None:
    assert forms.password_problem is password_problem


@pytest.mark.parametrize("password", WEAK)
def test_the_command_refuses_a_weak_password_and_creates_nothing(
    fresh: None,
    env: dict[str, str],
    sessions: sessionmaker[Session],
    auth_server: LiveServer,
    sign_up_server: LiveServer,
    password: str,
) -> None:
    rule = password_problem(password, email=EMAIL, name=NAME)
    assert rule is not None
    result = create_user(env, password)
    assert result.exit_code != 0
    assert rule in result.output, result.output
    assert accounts(sessions) == 0
    # The sign-up form refuses the same password with the same words.
    page = sign_up(sign_up_server.url, password)
    assert page.status_code == 400 and rule in html.unescape(text(page.text))
    assert accounts(sessions) == 0
    # Nothing signs in with it over HTTP.
    app = application(env)
    r = post(
        auth_server,
        {
            "client_id": app["client_id"],
            "client_secret": app["client_secret"],
            "grant_type": "credentials",
            "email": EMAIL,
            "password": password,
        },
    )
    assert r.status_code in (400, 401) and "access_token" not in r.text


def test_the_command_creates_an_account_with_a_strong_password(
    fresh: None, env: dict[str, str], sessions: sessionmaker[Session], auth_server: LiveServer
) -> None:
    assert password_problem(STRONG, email=EMAIL, name=NAME) is None
    result = create_user(env, STRONG)
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["email"] == EMAIL
    assert accounts(sessions) == 1
    app = application(env)
    r = post(
        auth_server,
        {
            "client_id": app["client_id"],
            "client_secret": app["client_secret"],
            "grant_type": "credentials",
            "email": EMAIL,
            "password": STRONG,
        },
    )
    assert r.status_code == 200 and r.json()["access_token"]
