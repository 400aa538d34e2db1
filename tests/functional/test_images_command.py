"""``artcat images fetch`` as an operator runs it: settings from the environment, a summary at
the end, a clear refusal of a bad setting."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine, insert

from common.ids import new_id
from common.models import Artwork
from common.settings import Settings
from tests.functional.cli_support import cli_env, cli_refuses, run_cli
from tests.functional.museum_support import PUBLISHED, museum

pytestmark = pytest.mark.functional


def test_fetch_prints_its_summary_and_a_second_run_does_nothing(
    clean_db: Engine, base_settings: Settings, tmp_path: object
) -> None:
    with clean_db.begin() as conn:
        conn.execute(
            insert(Artwork),
            [
                {"id": new_id(), "slug": f"w-{case}", "title": case, "published": True,
                 "image_url": f"{PUBLISHED}{case}/{{image_version}}.jpg",
                 "image_versions": ["medium"]}
                for case in ("good-jpeg", "missing")
            ],
        )  # fmt: skip
    with museum() as stand_in:
        env = cli_env(
            base_settings,
            IMAGE_STORE=str(tmp_path),
            IMAGE_SOURCE_REWRITE=f"{PUBLISHED}={stand_in.url}",
            IMAGE_FETCH_TIMEOUT="2",
        )
        out = run_cli(env, "images", "fetch", "--workers", "2", "--no-progress")
        assert "1 of 2 images mirrored, 1 failed." in out and "not_found: 1" in out
        assert "Nothing to fetch" in run_cli(env, "images", "fetch", "--no-progress")
        retried = run_cli(env, "images", "fetch", "--retry-failed", "--no-progress")
        assert "0 of 1 images mirrored, 1 failed." in retried
        status = run_cli(env, "images", "status")
        assert "pending: 0\nmirrored: 1\nfailed: 1\nfailed not_found: 1\n" in status


def test_a_bad_setting_is_a_plain_error(base_settings: Settings) -> None:
    env = cli_env(base_settings, IMAGE_SOURCE_REWRITE="no-equals-sign")
    assert "IMAGE_SOURCE_REWRITE" in cli_refuses(env, "images", "fetch")
    assert "bucket" in cli_refuses(cli_env(base_settings, IMAGE_STORE="s3://"), "images", "fetch")
    assert "workers" in cli_refuses(cli_env(base_settings), "images", "fetch", "--workers", "0")
