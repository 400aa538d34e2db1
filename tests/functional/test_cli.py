"""The `artcat` command line against a real database in a fresh instance folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import create_engine, func, select

from artcat.cli.main import main
from auth_server.accounts import authenticate_client
from common.db import make_sessionmaker
from common.models import Application, Artist, User
from tests.functional.process_support import free_port

pytestmark = pytest.mark.functional


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A fresh SQLite instance with cheap password hashing."""
    return {
        "INSTANCE_DIR": str(tmp_path),
        "DATABASE_URL": "",
        "REDIS_URL": "",
        "ARGON2_TIME_COST": "1",
        "ARGON2_MEMORY_COST": "1024",
    }


def run(env: dict[str, str], *args: str, stdin: str | None = None) -> str:
    """Run the CLI and return its output, failing on a non-zero exit."""
    result = CliRunner().invoke(main, list(args), env=env, input=stdin, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def sessions_for(env: dict[str, str]):  # type: ignore[no-untyped-def]
    """Open the instance's database."""
    return make_sessionmaker(create_engine(f"sqlite:///{env['INSTANCE_DIR']}/artcat.sqlite3"))


def test_users_and_apps(env: dict[str, str]) -> None:
    run(env, "db", "upgrade")
    user = json.loads(
        run(
            env,
            "users",
            "create",
            "--email",
            "Ada@Example.org",
            "--name",
            "Ada",
            "--json",
            stdin="a long enough password\n",
        )
    )
    assert user["email"] == "ada@example.org"
    app = json.loads(
        run(
            env,
            "apps",
            "create",
            "--name",
            "My app",
            "--owner",
            "ada@example.org",
            "--redirect-uri",
            "https://app.example.org/cb",
            "--json",
        )
    )
    assert set(app) == {
        "id",
        "name",
        "client_id",
        "client_secret",
        "first_party",
        "public_client",
        "redirect_uris",
        "standard_token_response",
    }
    assert app["redirect_uris"] == ["https://app.example.org/cb"]
    assert app["first_party"] is False and app["public_client"] is False
    assert app["standard_token_response"] is True  # what stock OAuth clients accept
    sessions = sessions_for(env)
    with sessions() as s:
        stored = s.scalar(select(Application).where(Application.client_id == app["client_id"]))
        assert stored is not None and app["client_secret"] not in stored.client_secret_digest
        assert authenticate_client(s, app["client_id"], app["client_secret"]) is not None
        assert s.scalar(select(User.password_hash).where(User.id == user["id"])).startswith(
            "$argon2id$"
        )
    rotated = json.loads(run(env, "apps", "rotate-secret", app["client_id"], "--json"))
    with sessions() as s:
        assert authenticate_client(s, app["client_id"], app["client_secret"]) is None
        assert authenticate_client(s, app["client_id"], rotated["client_secret"]) is not None


def test_cli_errors_are_clear(env: dict[str, str]) -> None:
    run(env, "db", "upgrade")
    runner = CliRunner()
    short = runner.invoke(
        main, ["users", "create", "--email", "a@b.c", "--name", "A"], env=env, input="short\n"
    )
    assert short.exit_code != 0 and "at least 8" in short.output
    orphan = runner.invoke(
        main,
        ["apps", "create", "--name", "x", "--owner", "nobody@x.org", "--no-browser-flow"],
        env=env,
    )
    assert orphan.exit_code != 0 and "no user" in orphan.output
    run(env, "users", "create", "--email", "a@b.c", "--name", "A", stdin="vermilion ochre umber\n")
    dup = runner.invoke(
        main,
        ["users", "create", "--email", "A@b.c", "--name", "A"],
        env=env,
        input="vermilion ochre umber\n",
    )
    assert dup.exit_code != 0 and "taken" in dup.output


def artcat(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``python -m artcat`` (the entry point an operator runs) in a process of its own."""
    return subprocess.run(
        [sys.executable, "-m", "artcat", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_an_unreachable_store_is_one_error_line_and_changes_nothing(env: dict[str, str]) -> None:
    port = free_port()  # nothing listens there
    run(env, "db", "upgrade")
    run(env, "users", "create", "--email", "a@b.c", "--name", "A", stdin="vermilion ochre umber\n")
    closed = f"redis://127.0.0.1:{port}/0"
    create = ["apps", "create", "--name", "x", "--owner", "a@b.c", "--no-browser-flow"]
    refused = artcat({**env, "REDIS_URL": closed}, *create)
    assert refused.returncode == 1, refused.stderr
    assert "Traceback" not in refused.stderr
    assert "Error: Redis could not be reached, so the application was not changed" in (
        refused.stderr
    )
    assert "no applications" in run(env, "apps", "list")
    gone = artcat({**env, "DATABASE_URL": f"postgresql://nobody@127.0.0.1:{port}/x"}, *create)
    assert gone.returncode == 1 and "Traceback" not in gone.stderr
    assert "Error: the database could not be reached" in gone.stderr


def test_users_create_leaves_the_address_unconfirmed_unless_the_operator_vouches(
    env: dict[str, str],
) -> None:
    run(env, "db", "upgrade")
    strong = "vermilion ochre umber\n"
    plain = json.loads(
        run(env, "users", "create", "--email", "u@b.org", "--name", "U", "--json", stdin=strong)
    )
    vouched = json.loads(
        run(
            env,
            "users",
            "create",
            "--email",
            "v@b.org",
            "--name",
            "V",
            "--confirmed",
            "--json",
            stdin=strong,
        )
    )
    assert plain["email_verified"] is False and vouched["email_verified"] is True
    with sessions_for(env)() as s:
        found = {u.email: u.email_verified_at for u in s.scalars(select(User))}
    assert found["u@b.org"] is None and found["v@b.org"] is not None


def test_load_demo_is_idempotent(env: dict[str, str]) -> None:
    out = run(env, "load", "demo", "--seed", "3", "--artworks", "30")
    assert "demo client secret" in out
    sessions = sessions_for(env)
    with sessions() as s:
        artists = s.scalar(select(func.count()).select_from(Artist))
    run(env, "load", "demo", "--seed", "3", "--artworks", "30")
    with sessions() as s:
        assert s.scalar(select(func.count()).select_from(Artist)) == artists


def test_db_check_passes(env: dict[str, str]) -> None:
    run(env, "db", "check")


def test_disable_and_enable_a_user_and_an_application(env: dict[str, str]) -> None:
    run(
        env, "users", "create", "--email", "b@b.org", "--name", "B", stdin="vermilion ochre umber\n"
    )
    app = json.loads(
        run(
            env,
            "apps",
            "create",
            "--name",
            "Job",
            "--owner",
            "b@b.org",
            "--no-browser-flow",
            "--json",
        )
    )
    assert app["redirect_uris"] == []
    assert "user b@b.org disabled" in run(env, "users", "disable", "b@b.org")
    assert "(it already was)" in run(env, "users", "disable", "b@b.org")
    assert "user b@b.org enabled" in run(env, "users", "enable", "b@b.org")
    assert "disabled" in run(env, "apps", "disable", app["client_id"])
    sessions = sessions_for(env)
    with sessions() as s:
        assert authenticate_client(s, app["client_id"], app["client_secret"]) is None
        assert s.scalar(select(User.enabled).where(User.email == "b@b.org")) is True
    run(env, "apps", "enable", app["client_id"])
    with sessions() as s:
        assert authenticate_client(s, app["client_id"], app["client_secret"]) is not None
    unchanged = CliRunner().invoke(main, ["apps", "set", app["client_id"]], env=env)
    assert unchanged.exit_code != 0 and "--first-party, --third-party" in unchanged.output
    # Migrating an application of the reference API: register its callback.
    callback = "https://app.example.org/callback"
    assert callback in run(env, "apps", "set", app["client_id"], "--redirect-uri", callback)
    with sessions() as s:
        uris = s.scalar(select(Application.redirect_uris).where(Application.id == app["id"]))
        assert uris == [callback]
    refused = CliRunner().invoke(
        main, ["apps", "set", app["client_id"], "--redirect-uri", "http://evil.example/cb"], env=env
    )
    assert refused.exit_code != 0 and "https" in refused.output


def test_token_response_form(env: dict[str, str]) -> None:
    run(env, "db", "upgrade")
    run(
        env,
        "users",
        "create",
        "--email",
        "c@c.org",
        "--name",
        "C",
        stdin="a long enough password\n",
    )
    app = json.loads(
        run(
            env,
            "apps",
            "create",
            "--name",
            "Legacy",
            "--owner",
            "c@c.org",
            "--no-browser-flow",
            "--reference-token-response",
            "--json",
        )
    )
    assert app["standard_token_response"] is False
    sessions = sessions_for(env)

    def standard() -> bool | None:
        with sessions() as s:
            query = select(Application.standard_token_response)
            return s.scalar(query.where(Application.id == app["id"]))

    assert standard() is False
    out = run(env, "apps", "set", app["client_id"], "--standard-token-response")
    assert "RFC 6749" in out and standard() is True
    run(env, "apps", "set", app["client_id"], "--reference-token-response")
    assert standard() is False
