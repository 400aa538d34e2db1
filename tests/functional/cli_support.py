"""Run the ``artcat`` command line in-process against the stores the servers under test use."""

from __future__ import annotations

from click.testing import CliRunner, Result

from artcat.cli.main import main
from common.settings import Settings
from tests.constants import CHEAP_ARGON2


def cli_env(settings: Settings, **extra: str) -> dict[str, str]:
    """Return the environment that points the CLI at ``settings``' database and Redis."""
    return {
        "INSTANCE_DIR": str(settings.instance_dir),
        "DATABASE_URL": settings.database_url,
        "REDIS_URL": settings.redis_url,
        "REDIS_SENTINELS": "",
        "REDIS_PREFIX": settings.redis_prefix,
        "SECRET_KEY": settings.secret_key,
        **{k.upper(): str(v) for k, v in CHEAP_ARGON2.items()},
        **extra,
    }


def invoke(env: dict[str, str], *args: str, stdin: str | None = None) -> Result:
    """Run one command and return its result (whatever its exit code)."""
    return CliRunner().invoke(main, list(args), env=env, input=stdin, catch_exceptions=False)


def run_cli(env: dict[str, str], *args: str, stdin: str | None = None) -> str:
    """Run one command, fail unless it succeeds, and return its output."""
    result = invoke(env, *args, stdin=stdin)
    assert result.exit_code == 0, result.output
    return result.output


def cli_refuses(env: dict[str, str], *args: str) -> str:
    """Run one command, fail unless it is refused, and return its output."""
    result = invoke(env, *args)
    assert result.exit_code != 0, result.output
    return result.output
