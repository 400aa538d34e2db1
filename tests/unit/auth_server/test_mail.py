"""The mailer: staging sends nothing; development with email off keeps mail in an outbox."""

from __future__ import annotations

import logging
import smtplib
import stat
from email import message_from_bytes
from pathlib import Path
from typing import Any

import pytest

from auth_server.mail import Mailer
from common.settings import AuthSettings

SMTP: dict[str, Any] = {
    "email_enabled": True,
    "smtp_host": "127.0.0.1",
    "smtp_port": 2525,
    "smtp_from": "catalog@example.org",
    "public_url": "https://staging.example.org",
    "secret_key": "k",
}
BODY = "Open https://staging.example.org/account/password/reset/SECRET-TOKEN to reset."


@pytest.fixture
def no_smtp(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Record every attempt to open an SMTP connection (there must be none)."""
    attempts: list[Any] = []

    def refuse(*args: Any, **kwargs: Any) -> None:
        attempts.append(args)
        raise AssertionError("an SMTP connection was opened")

    monkeypatch.setattr(smtplib, "SMTP", refuse)
    monkeypatch.setattr(smtplib, "SMTP_SSL", refuse)
    return attempts


def test_staging_suppresses_email(no_smtp: list[Any], caplog: pytest.LogCaptureFixture) -> None:
    mailer = Mailer(AuthSettings(environment="staging", **SMTP))
    assert not mailer.enabled  # the forgotten-password page says email is off
    with caplog.at_level(logging.INFO, logger="artcat.mail"):
        mailer.send("someone@example.org", "Reset your password", BODY)
        mailer.send_later("someone@example.org", "Reset your password", BODY).result(timeout=5)
    mailer.close()
    assert no_smtp == []
    suppressed = [r.getMessage() for r in caplog.records if r.name == "artcat.mail"]
    assert len(suppressed) == 2
    for message in suppressed:
        assert "staging" in message and "Reset your password" in message
        assert "SECRET-TOKEN" not in message and "someone@" not in message


def test_environment_is_read_and_checked() -> None:
    env = {"ENVIRONMENT": "Staging", "SECRET_KEY": "k"}
    assert AuthSettings.from_env(env).environment == "staging"
    assert AuthSettings.from_env({"SECRET_KEY": "k"}).environment == "development"
    with pytest.raises(ValueError, match="ENVIRONMENT"):
        AuthSettings.from_env({**env, "ENVIRONMENT": "prod"})


def test_production_with_smtp_settings_may_send() -> None:
    mailer = Mailer(AuthSettings(environment="production", **SMTP))
    assert mailer.enabled


def test_development_keeps_mail_in_a_private_outbox(
    tmp_path: Path, no_smtp: list[Any], caplog: pytest.LogCaptureFixture
) -> None:
    mailer = Mailer(AuthSettings(instance_dir=tmp_path, secret_key="k"))
    assert not mailer.enabled
    with caplog.at_level(logging.INFO, logger="artcat.mail"):
        mailer.send_later("someone@example.org", "Confirm your email address", BODY).result(5)
    mailer.close()
    assert no_smtp == []
    (path,) = (tmp_path / "outbox").iterdir()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "outbox").stat().st_mode) == 0o700
    message = message_from_bytes(path.read_bytes())
    assert message["To"] == "someone@example.org"
    assert "SECRET-TOKEN" in str(message.get_payload())
    (line,) = [r.getMessage() for r in caplog.records if r.name == "artcat.mail"]
    assert path.name in line and "SECRET-TOKEN" not in line and "someone@" not in line


@pytest.mark.parametrize("environment", ["production", "staging"])
def test_elsewhere_email_off_keeps_nothing(
    tmp_path: Path, no_smtp: list[Any], environment: str
) -> None:
    settings = AuthSettings(
        instance_dir=tmp_path,
        secret_key="k",
        environment=environment,
        public_url="https://art.example.org",  # production requires one
    )
    mailer = Mailer(settings)
    mailer.send_later("someone@example.org", "Confirm your email address", BODY).result(5)
    mailer.send("someone@example.org", "Confirm your email address", BODY)
    mailer.close()
    assert no_smtp == [] and not (tmp_path / "outbox").exists()
