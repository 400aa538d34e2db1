"""The cyclic collector is off while a command starts, and on again once it works."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest
from click.testing import CliRunner

from artcat.cli.main import main
from common import startup


@pytest.fixture
def collector_on() -> Iterator[None]:
    """Whatever a test does, the collector is on again after it."""
    yield
    gc.enable()


@pytest.mark.usefixtures("collector_on")
def test_settle_freezes_what_start_up_made_and_turns_the_collector_on() -> None:
    startup.quiet()
    assert not gc.isenabled()
    made = [object() for _ in range(1000)]
    startup.settle()
    assert gc.isenabled()
    assert gc.get_freeze_count() >= len(made)


@pytest.mark.usefixtures("collector_on")
def test_settle_leaves_a_process_that_never_quieted_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    frozen: list[bool] = []
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(True))
    startup.settle()
    assert gc.isenabled() and frozen == []


@pytest.mark.usefixtures("collector_on")
def test_a_command_other_than_serve_runs_with_the_collector_on() -> None:
    startup.quiet()
    result = CliRunner().invoke(main, ["keys", "--help"])
    assert result.exit_code == 0
    assert gc.isenabled()
