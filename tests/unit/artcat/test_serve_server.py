"""``artcat serve``: waitress in development, granian on staging and in production, unless
told (WSGI_SERVER or ``--server``); more than one worker is granian's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from artcat.cli import serve as serve_module
from artcat.cli.main import main

PRODUCTION = {"ENVIRONMENT": "production", "PUBLIC_URL": "https://api.example.org"}


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, dict[str, Any]]]:
    """Which runner was asked to serve, with what."""
    calls: list[tuple[str, dict[str, Any]]] = []
    monkeypatch.setattr(serve_module, "configure_logging", lambda *a, **k: None)
    monkeypatch.setattr(serve_module, "first_start", lambda *a, **k: None)
    monkeypatch.setattr(serve_module, "build_wsgi", lambda *a: object())
    monkeypatch.setattr(serve_module, "print_banner", lambda *a: None)
    monkeypatch.setattr(serve_module, "pin_to_one_core", lambda: None)
    monkeypatch.setattr(serve_module, "connect_redis", lambda *a: None)
    monkeypatch.setattr(
        serve_module, "run_waitress", lambda app, host, port, **kw: calls.append(("waitress", kw))
    )
    monkeypatch.setattr(
        serve_module, "run_granian", lambda build, host, port, **kw: calls.append(("granian", kw))
    )
    return calls


@pytest.mark.parametrize(
    ("env", "args", "server"),
    [
        ({}, [], "waitress"),
        ({"ENVIRONMENT": "staging"}, [], "granian"),
        (PRODUCTION, [], "granian"),
        ({**PRODUCTION, "WSGI_SERVER": "waitress"}, [], "waitress"),
        ({"WSGI_SERVER": "Granian"}, [], "granian"),
        ({}, ["--server", "granian"], "granian"),
        ({**PRODUCTION, "WSGI_SERVER": "granian"}, ["--server", "waitress"], "waitress"),
        (PRODUCTION, ["--workers", "2"], "granian"),
        # waitress serves one process: more workers are granian's, unless waitress is asked for.
        ({}, ["--workers", "2"], "granian"),
        ({"WSGI_SERVER": "auto"}, ["--workers", "3"], "granian"),
    ],
)
def test_the_server_served(
    served: list[tuple[str, dict[str, Any]]],
    tmp_path: Path,
    env: dict[str, str],
    args: list[str],
    server: str,
) -> None:
    result = CliRunner().invoke(
        main,
        ["serve", "resource", "--no-demo", *args],
        env={"INSTANCE_DIR": str(tmp_path), "WSGI_SERVER": None, **env},
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    assert [name for name, _ in served] == [server]


def test_granian_is_given_the_threads_workers_grace_and_the_settings_to_forget(
    served: list[tuple[str, dict[str, Any]]], tmp_path: Path
) -> None:
    args = ["serve", "all", "--no-demo", "--server", "granian", "--workers", "3", "--threads", "6"]
    env = {"INSTANCE_DIR": str(tmp_path), "SHUTDOWN_GRACE": "7", "TRUSTED_PROXY": "10.0.0.2"}
    result = CliRunner().invoke(main, args, env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    [(name, kw)] = served
    assert name == "granian"
    assert (kw["workers"], kw["threads"], kw["grace"]) == (3, 6, 7)
    assert kw["proxy"]["trusted_proxy"] == "10.0.0.2"
    assert "SECRET_KEY" in kw["settings_names"]


def test_an_unknown_server_is_refused_plainly(
    served: list[tuple[str, dict[str, Any]]], tmp_path: Path
) -> None:
    result = CliRunner().invoke(
        main,
        ["serve", "resource", "--no-demo"],
        env={"INSTANCE_DIR": str(tmp_path), "WSGI_SERVER": "gunicorn"},
    )
    assert result.exit_code == 1 and "WSGI_SERVER must be one of" in result.output
    assert "Traceback" not in result.output and served == []


@pytest.mark.parametrize(
    ("env", "args"),
    [
        ({"WSGI_SERVER": "waitress"}, ["--workers", "2"]),
        ({}, ["--server", "waitress", "--workers", "2"]),
    ],
)
def test_waitress_with_workers_is_refused_plainly(
    served: list[tuple[str, dict[str, Any]]], tmp_path: Path, env: dict[str, str], args: list[str]
) -> None:
    result = CliRunner().invoke(
        main, ["serve", "resource", "--no-demo", *args], env={"INSTANCE_DIR": str(tmp_path), **env}
    )
    assert result.exit_code == 1 and "--workers needs granian" in result.output
    assert "Traceback" not in result.output and served == []
