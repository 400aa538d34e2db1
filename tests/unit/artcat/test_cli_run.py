"""``artcat``'s entry point: a store that cannot be reached is one error line and status 1;
any other error is raised as it was."""

from __future__ import annotations

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError
from sqlalchemy.exc import OperationalError

from artcat.cli import main as cli
from common.client_versions import ChangeNotAnnounced


def failing(error: Exception) -> object:
    def main() -> None:
        raise error

    return main


@pytest.mark.parametrize(
    ("error", "said"),
    [
        (ChangeNotAnnounced("x"), "Redis could not be reached, so the application was not changed"),
        (RedisConnectionError("refused"), "Redis could not be reached (ConnectionError: refused)"),
        (
            OperationalError("SELECT 1", {}, ConnectionRefusedError("refused")),
            "the database could not be reached (ConnectionRefusedError: refused)",
        ),
    ],
)
def test_an_unreachable_store_is_one_line_and_status_1(
    error: Exception, said: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cli, "main", failing(error))
    with pytest.raises(SystemExit) as ended:
        cli.run()
    assert ended.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith(f"Error: {said}") and err.count("\n") == 1


def test_any_other_error_is_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli, "main", failing(ValueError("a bug")))
    with pytest.raises(ValueError, match="a bug"):
        cli.run()
