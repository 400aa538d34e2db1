"""A server's start skips Alembic when the schema is at the newest revision, and only then."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from alembic import command
from alembic.script import ScriptDirectory

from common.db import alembic_config, at_revision, newest_revision, upgrade
from common.settings import Settings

ASK = (
    "import sys; from common.db import upgrade; from common.settings import Settings; "
    "upgrade(Settings.from_env()); print('alembic' in sys.modules)"
)


def settings_in(folder: Path) -> Settings:
    return Settings.from_env({"INSTANCE_DIR": str(folder), "ENVIRONMENT": "development"})


def test_the_scripts_text_names_the_head_alembic_finds(tmp_path: Path) -> None:
    script = ScriptDirectory.from_config(alembic_config(settings_in(tmp_path)))
    assert newest_revision() == script.get_current_head()


def test_a_fresh_database_is_migrated_and_then_left_alone(tmp_path: Path) -> None:
    settings = settings_in(tmp_path)
    assert at_revision(settings) is None
    upgrade(settings)
    assert at_revision(settings) == newest_revision()

    def alembic_loaded() -> str:
        env = {"INSTANCE_DIR": str(tmp_path), "ENVIRONMENT": "development", "PATH": ""}
        done = subprocess.run(
            [sys.executable, "-c", ASK], env=env, capture_output=True, text=True, check=True
        )
        return done.stdout.strip()

    assert alembic_loaded() == "False"  # at the head: Alembic is not even imported
    command.downgrade(alembic_config(settings), "-1")  # one step behind
    behind = at_revision(settings)
    assert behind is not None and behind != newest_revision()
    assert alembic_loaded() == "True"  # behind: Alembic brings it to the head
    assert at_revision(settings) == newest_revision()
