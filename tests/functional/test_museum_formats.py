"""Every format a museum publishes loads to the same catalog (SQLite, or PostgreSQL in CI)."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import Engine, create_engine, text

from artcat.cli.main import main
from artcat.loaders.cmoa import load_cmoa
from artcat.loaders.formats import json_files
from artcat.loaders.tate import load_tate
from tests.constants import SAMPLE_DATA
from tests.db_state import truncate_all
from tests.functional.test_museum_import import TABLES, table_counts

pytestmark = [pytest.mark.functional, pytest.mark.data]

TATE, CMOA = SAMPLE_DATA / "tate", SAMPLE_DATA / "cmoa"
# Set by the database on every write, so they differ between two loads of the same data.
NOT_COMPARED = frozenset({"created_at", "updated_at"})

Catalog = dict[str, list[tuple[Any, ...]]]


def catalog(engine: Engine) -> Catalog:
    """Return every row of the catalog tables, without write times, in a stable order."""
    result: Catalog = {}
    with engine.connect() as conn:
        for table in TABLES:
            rows = conn.execute(text(f"SELECT * FROM {table}")).mappings().all()
            result[table] = sorted(
                (tuple((k, repr(v)) for k, v in row.items() if k not in NOT_COMPARED))
                for row in rows
            )
    return result


def write_bundle(folder: Path, target: Path, *, compress: bool = False) -> Path:
    """Write the per-record files under ``folder`` as one JSON Lines file, in repo order."""
    lines = "".join(json.dumps(json.loads(p.read_bytes())) + "\n" for p in json_files(folder))
    if compress:
        target.write_bytes(gzip.compress(lines.encode()))
    else:
        target.write_text(lines, encoding="utf-8")
    return target


def test_tate_clone_bundle_and_csv_give_one_catalog(clean_db: Engine, tmp_path: Path) -> None:
    report = load_tate(clean_db, TATE, progress=False)
    assert report.ok and report.counts["artworks"] == 350, report.summary()
    from_clone = catalog(clean_db)

    truncate_all(clean_db)
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    write_bundle(TATE / "artists", bundle / "artists.jsonl")
    write_bundle(TATE / "artworks", bundle / "artworks.jsonl.gz", compress=True)
    report = load_tate(clean_db, bundle, progress=False)
    assert report.ok and report.counts["artworks"] == 350, report.summary()
    assert catalog(clean_db) == from_clone

    # The CSVs hold a subset of the fields: loaded over the JSON they change and erase nothing.
    for name in ("artist_data.csv", "artwork_data.csv"):
        report = load_tate(clean_db, TATE / name, progress=False)
        assert report.ok and not report.changed, report.summary()
    assert catalog(clean_db) == from_clone


def test_tate_csv_alone_gives_the_same_records(clean_db: Engine, tmp_path: Path) -> None:
    load_tate(clean_db, TATE, progress=False)
    with clean_db.connect() as conn:
        json_rows = {
            r["id"]: dict(r) for r in conn.execute(text("SELECT * FROM artworks")).mappings()
        }
        json_artists = {
            r["id"]: dict(r) for r in conn.execute(text("SELECT * FROM artists")).mappings()
        }
    truncate_all(clean_db)

    csv_only = tmp_path / "collection"
    csv_only.mkdir()
    for name in ("artist_data.csv", "artwork_data.csv"):
        shutil.copy(TATE / name, csv_only / name)
    report = load_tate(clean_db, csv_only, progress=False)
    assert report.ok, report.summary()
    assert (report.counts["artworks"], report.counts["artists"]) == (50, 272)  # 3 name no one
    carried = ("slug", "title", "medium", "date", "year_start", "dimensions", "provenance")
    carried += ("credit_line", "cultural_maker")
    carried += ("website", "signature", "image_url", "image_versions", "partner_id")
    with clean_db.connect() as conn:
        artworks = conn.execute(text("SELECT * FROM artworks")).mappings().all()
        artists = conn.execute(text("SELECT * FROM artists")).mappings().all()
        links = conn.execute(text("SELECT count(*) FROM artwork_artists")).scalar_one()
    assert links == 49  # one work is by "British School 18th century": no artist, an attribution
    for row in artworks:
        assert {k: row[k] for k in carried} == {k: json_rows[row["id"]][k] for k in carried}
    person = ("sortable_name", "gender", "birthday", "deathday", "hometown", "nationality")
    for row in artists:
        assert {k: row[k] for k in person} == {k: json_artists[row["id"]][k] for k in person}
    # The display name is rebuilt from "Surname, Forename": most match Tate's own.
    same_name = sum(row["name"] == json_artists[row["id"]]["name"] for row in artists)
    assert same_name >= 0.9 * len(artists)


def test_cmoa_per_object_bulk_json_and_csv_give_one_catalog(
    clean_db: Engine, tmp_path: Path
) -> None:
    # The bulk files hold 50 of the slice's objects: the same 50 as per-object files.
    wanted = {
        o["id"].rsplit("/", 1)[-1]
        for o in json.loads(CMOA.joinpath("cmoa.json").read_bytes())["things"]
    }
    clone = tmp_path / "collection"
    (clone / "cmoa").mkdir(parents=True)
    for path in json_files(CMOA / "cmoa"):
        if path.stem in wanted:
            shutil.copy(path, clone / "cmoa" / path.name)
    report = load_cmoa(clean_db, clone, progress=False)
    assert report.ok and report.counts["artworks"] == 50, report.summary()
    expected = catalog(clean_db)

    for bulk in ("cmoa.json", "cmoa.csv"):
        truncate_all(clean_db)
        folder = tmp_path / bulk.replace(".", "_")
        folder.mkdir()
        shutil.copy(CMOA / bulk, folder / bulk)
        report = load_cmoa(clean_db, folder, progress=False)
        assert report.ok and report.counts["artworks"] == 50, report.summary()
        assert catalog(clean_db) == expected, bulk
        again = load_cmoa(clean_db, clone, progress=False)
        assert not again.changed, again.summary()


def test_cmoa_clone_slice_loads_both_sets(clean_db: Engine) -> None:
    report = load_cmoa(clean_db, CMOA, progress=False)
    assert report.ok, report.summary()
    assert report.counts["artworks"] == 155
    assert {i.file.split("/")[0] for i in report.warnings} <= {"cmoa", "teenie"}


def test_cli_names_the_bad_file_and_writes_nothing(tmp_path: Path) -> None:
    runner = CliRunner()
    help_text = runner.invoke(main, ["load", "tate", "--help"]).output
    assert "github.com/tategallery/collection" in help_text and "artwork_data.csv" in help_text
    assert "github.com/cmoa/collection" in runner.invoke(main, ["load", "cmoa", "--help"]).output

    good_env = instance_env(tmp_path / "good")
    ok = runner.invoke(main, ["load", "cmoa", str(CMOA), "--no-progress"], env=good_env)
    assert ok.exit_code == 0, ok.output
    assert "artworks 155" in ok.output

    bad = tmp_path / "bad"
    shutil.copytree(CMOA / "cmoa", bad / "cmoa")
    victim = json_files(bad / "cmoa")[3]
    victim.write_text(victim.read_text(encoding="utf-8")[:-40], encoding="utf-8")
    bad_env = instance_env(tmp_path / "fresh")
    result = runner.invoke(main, ["load", "cmoa", str(bad), "--no-progress"], env=bad_env)
    assert result.exit_code == 1
    assert f"cmoa/{victim.name}:" in result.output and "nothing was loaded" in result.output
    engine = create_engine(f"sqlite:///{bad_env['INSTANCE_DIR']}/artcat.sqlite3")
    try:
        assert table_counts(engine)["artworks"] == 0  # the 129 good files were not loaded
    finally:
        engine.dispose()


def instance_env(folder: Path) -> dict[str, str]:
    """Return the environment of a fresh SQLite instance in ``folder``."""
    return {"INSTANCE_DIR": str(folder), "DATABASE_URL": "", "REDIS_URL": ""}
