"""``artcat serve``: 4 threads per process unless ``--threads`` says."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner

from artcat.cli import serve as serve_module
from artcat.cli.main import main


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """What ``run_waitress`` was asked, the service built and the demo left out."""
    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(serve_module, "configure_logging", lambda *a, **k: None)
    monkeypatch.setattr(serve_module, "first_start", lambda *a, **k: None)
    monkeypatch.setattr(serve_module, "build_wsgi", lambda *a: object())
    monkeypatch.setattr(serve_module, "print_banner", lambda *a: None)
    monkeypatch.setattr(serve_module, "pin_to_one_core", lambda: None)
    monkeypatch.setattr(
        serve_module, "run_waitress", lambda app, host, port, **kw: calls.append(kw)
    )
    return calls


@pytest.mark.parametrize(
    ("args", "threads"),
    [
        (["resource"], 4),
        (["auth"], 4),
        (["all"], 4),
        (["resource", "--threads", "3"], 3),
        (["auth", "--threads", "8"], 8),
    ],
)
def test_threads_per_process(served: list[dict[str, Any]], args: list[str], threads: int) -> None:
    result = CliRunner().invoke(main, ["serve", *args, "--no-demo"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert [call["threads"] for call in served] == [threads]


def test_threads_must_be_at_least_one(served: list[dict[str, Any]]) -> None:
    result = CliRunner().invoke(main, ["serve", "resource", "--threads", "0"])
    assert result.exit_code == 2 and "--threads" in result.output
    assert served == []
