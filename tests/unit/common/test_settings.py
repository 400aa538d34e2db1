from pathlib import Path

from common.settings import AuthSettings, ResourceSettings, Settings


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
