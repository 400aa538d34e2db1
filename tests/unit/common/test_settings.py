import dataclasses
import logging
from pathlib import Path

import pytest

from common.settings import AuthSettings, ResourceSettings, Settings, SettingsError


def test_defaults_use_the_instance_folder(tmp_path: Path) -> None:
    s = Settings.from_env({"INSTANCE_DIR": str(tmp_path)})
    assert s.sqlalchemy_url == f"sqlite:///{tmp_path.resolve()}/artcat.sqlite3"
    assert s.redis_url == ""
    assert s.xapp_token_ttl == 7 * 86400 and s.access_token_ttl == 60 * 86400


def test_secret_key_is_generated_once_and_persisted(tmp_path: Path) -> None:
    first = Settings.from_env({"INSTANCE_DIR": str(tmp_path)}).secret_key
    again = Settings.from_env({"INSTANCE_DIR": str(tmp_path)}).secret_key
    assert first == again and len(first) >= 48
    assert (tmp_path / "secret_key").stat().st_mode & 0o777 == 0o600


def test_environment_values_are_typed(tmp_path: Path) -> None:
    env = {
        "INSTANCE_DIR": str(tmp_path),
        "DATABASE_URL": "postgres://u@h/db",
        "SECRET_KEY": "k",
        "ARGON2_TIME_COST": "5",
        "SESSION_COOKIE_SECURE": "true",
        "PAGE_SIZE_MAX": "50",
    }
    auth = AuthSettings.from_env(env)
    assert auth.sqlalchemy_url == "postgresql+psycopg://u@h/db"
    assert auth.argon2_time_cost == 5 and auth.session_cookie_secure is True
    assert ResourceSettings.from_env(env).page_size_max == 50


@pytest.mark.parametrize(
    "url",
    ["https://api.example.org", "http://localhost:8080", "http://127.0.0.1:8000", "http://[::1]"],
)
def test_production_takes_https_or_a_loopback_http_public_url(url: str) -> None:
    assert Settings(environment="production", public_url=url).public_url == url


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("", "PUBLIC_URL must be set when ENVIRONMENT=production"),
        ("http://api.example.org", "PUBLIC_URL must be https"),
        ("http://127.0.0.1.example.org", "PUBLIC_URL must be https"),
        ("api.example.org", "not an absolute"),
        ("ftp://api.example.org", "not an absolute"),
        ("https://api.example.org:http", "not an absolute"),
        ("https://api.example.org/?a=1", "not an absolute"),
        ("https://[::1", "not an absolute"),
    ],
)
def test_production_refuses_a_missing_or_plain_http_public_url(url: str, says: str) -> None:
    with pytest.raises(SettingsError, match=says):
        Settings(environment="production", public_url=url)


def test_development_needs_no_public_url_but_refuses_a_malformed_one() -> None:
    assert (
        Settings().public_url == ""
        and Settings(public_url="http://192.168.1.5:8000").https is False
    )
    with pytest.raises(SettingsError, match="PUBLIC_URL"):
        Settings(public_url="/relative")


def test_session_cookie_is_secure_exactly_when_public_url_is_https(
    caplog: pytest.LogCaptureFixture,
) -> None:
    assert AuthSettings().cookie_secure is False
    assert AuthSettings(public_url="http://localhost:8000").cookie_secure is False
    https = AuthSettings(public_url="https://api.example.org")
    assert https.cookie_secure is True
    assert AuthSettings(session_cookie_secure=True).cookie_secure is True
    assert not caplog.records
    with caplog.at_level(logging.WARNING, logger="artcat.settings"):
        odd = dataclasses.replace(https, session_cookie_secure=False)
    assert odd.cookie_secure is False
    assert "SESSION_COOKIE_SECURE=false" in caplog.text


def test_session_cookie_secure_from_the_environment(tmp_path: Path) -> None:
    env = {"INSTANCE_DIR": str(tmp_path), "SECRET_KEY": "k", "PUBLIC_URL": "https://a.example"}
    assert AuthSettings.from_env(env).cookie_secure is True
    off = AuthSettings.from_env({**env, "SESSION_COOKIE_SECURE": "false"})
    assert off.session_cookie_secure is False and off.cookie_secure is False


def test_hsts_max_age_is_a_year_by_default_and_configurable(tmp_path: Path) -> None:
    env = {"INSTANCE_DIR": str(tmp_path), "SECRET_KEY": "k"}
    assert Settings.from_env(env).hsts_max_age == 31_536_000
    assert Settings.from_env({**env, "HSTS_MAX_AGE": "0"}).hsts_max_age == 0


def test_a_malformed_number_names_its_variable(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="HSTS_MAX_AGE='a year' is not a valid int"):
        Settings.from_env(
            {"INSTANCE_DIR": str(tmp_path), "SECRET_KEY": "k", "HSTS_MAX_AGE": "a year"}
        )


@pytest.mark.parametrize(
    ("cls", "variable"),
    [
        (AuthSettings, "SIGN_UP_ATTEMPTS_PER_IP"),
        (AuthSettings, "XAPP_ATTEMPTS_PER_CLIENT"),
        (AuthSettings, "APPLICATIONS_CREATED_PER_USER"),
        (ResourceSettings, "RATE_LIMIT"),
    ],
)
def test_a_rate_limits_cannot_read_is_refused_at_start(
    tmp_path: Path, cls: type[Settings], variable: str
) -> None:
    environ = {"INSTANCE_DIR": str(tmp_path), variable: "lots"}
    with pytest.raises(SettingsError, match=variable):
        cls.from_env(environ)


def test_url_credentials_is_accept_or_refuse(tmp_path: Path) -> None:
    environ = {"INSTANCE_DIR": str(tmp_path)}
    assert AuthSettings.from_env(environ).url_credentials_accepted
    strict = AuthSettings.from_env({**environ, "URL_CREDENTIALS": " Refuse "})
    assert strict.url_credentials == "refuse" and not strict.url_credentials_accepted
    for value in ("sometimes", " ", "reject"):
        with pytest.raises(SettingsError, match="URL_CREDENTIALS must be one of accept, refuse"):
            AuthSettings.from_env({**environ, "URL_CREDENTIALS": value})
