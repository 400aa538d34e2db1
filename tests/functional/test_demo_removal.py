"""Demo and real data apart: the demo catalog removed completely, in one transaction, on demand
(``artcat demo remove``) and before a museum's import; its cached documents are not served."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import requests
from sqlalchemy import Engine, func, select, text
from sqlalchemy.orm import Session

import common.search.models  # noqa: F401 - the index's tables belong to the metadata
from artcat.launch import first_start
from artcat.loaders import demo_removal
from artcat.loaders.demo import DEMO_EMAIL, demo_credentials, load_demo
from artcat.loaders.demo_removal import holds_demo, remove_demo
from common.catalog_version import bump_catalog_version
from common.models import (
    Application,
    Artist,
    Artwork,
    Base,
    CollectionItem,
    DemoLoad,
    User,
)
from common.settings import AuthSettings, Settings
from common.stores import Stores
from tests import factories
from tests.functional.cli_support import cli_env, run_cli

pytestmark = pytest.mark.functional

ARTWORKS = 30
# Tables the demo never writes, or that a removal leaves by design (its record of the load).
UNTOUCHED = {"demo_loads", "signing_keys", "artist_sources", "social_identities"}


def counts(engine: Engine) -> dict[str, int]:
    """Return the number of rows of every table that holds any."""
    with Session(engine) as session:
        found = {
            table.name: session.scalar(select(func.count()).select_from(table)) or 0
            for table in Base.metadata.sorted_tables
        }
    return {name: n for name, n in found.items() if n}


def demo_loaded(engine: Engine, settings: Settings) -> None:
    """Load a small demo catalog into an empty database."""
    report = load_demo(engine, settings, artworks=ARTWORKS)
    assert not report.skipped, report.summary()


def test_removal_leaves_nothing_of_the_demo(
    clean_db: Engine, base_settings: Settings, stores: Stores
) -> None:
    """Artists, artworks, partners, shows, genes, images, sales, profiles, users, the
    application, their tokens and the search index's documents: all gone."""
    demo_loaded(clean_db, base_settings)
    assert holds_demo(clean_db)
    filled = counts(clean_db)
    assert {"artists", "artworks", "partners", "shows", "genes", "images", "sales"} <= set(filled)
    assert filled.get("search_documents", 0) > 0
    report = remove_demo(stores, base_settings)
    assert report.counts["artworks"] == ARTWORKS
    assert set(counts(clean_db)) == {"demo_loads"}
    assert not holds_demo(clean_db)
    with Session(clean_db) as session:
        assert session.scalars(select(DemoLoad.removed_at)).one() is not None
    assert "demo catalog removed" in report.summary()
    assert remove_demo(stores, base_settings).counts == {}  # nothing left to remove


def test_real_rows_stay_and_lose_only_what_pointed_at_the_demo(
    clean_db: Engine, base_settings: Settings, stores: Stores
) -> None:
    """A real user keeps the account; a demo artwork in the user's collection goes from it."""
    demo_loaded(clean_db, base_settings)
    with Session(clean_db, expire_on_commit=False) as s, s.begin():
        real = factories.user(s, base_settings)
        owned = factories.application(s, real)
        collection = s.execute(
            text("SELECT id FROM collections WHERE user_id = :u"), {"u": real.id}
        ).scalar_one()
        work = s.scalars(select(Artwork.id).limit(1)).one()
        s.add(CollectionItem(collection_id=collection, artwork_id=work, position=1))
    remove_demo(stores, base_settings)
    with Session(clean_db) as s:
        assert s.get(User, real.id) is not None
        assert s.scalars(select(Application.id)).all() == [owned.application.id]
        assert s.scalar(select(func.count()).select_from(CollectionItem)) == 0
        assert s.scalar(select(func.count()).select_from(Artist)) == 0


def test_keep_demo_account_keeps_the_user_and_application_only(
    clean_db: Engine, base_settings: Settings, stores: Stores
) -> None:
    demo_loaded(clean_db, base_settings)
    report = remove_demo(stores, base_settings, keep_account=True)
    assert "kept" in report.summary()
    creds = demo_credentials(base_settings)
    with Session(clean_db) as s:
        assert s.scalars(select(User.email)).all() == [DEMO_EMAIL]
        apps = s.scalars(select(Application.client_id)).all()
        assert apps == [creds.client_id]
        assert s.scalar(select(func.count()).select_from(Artwork)) == 0


def test_a_failure_removes_nothing(
    clean_db: Engine, base_settings: Settings, stores: Stores, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rows and the search index go in one transaction: a failure in the last step
    leaves the demo whole."""
    demo_loaded(clean_db, base_settings)
    before = counts(clean_db)

    def broken(*_args: Any) -> tuple[int, int]:
        raise RuntimeError("the index could not be written")

    monkeypatch.setattr(demo_removal, "write_documents", broken)
    with pytest.raises(RuntimeError):
        remove_demo(stores, base_settings)
    assert counts(clean_db) == before
    assert holds_demo(clean_db)


def test_the_tokens_of_the_removed_application_stop_working(
    clean_db: Engine,
    base_settings: Settings,
    stores: Stores,
    auth_server: Any,
    resource_server: Any,
) -> None:
    """A token read into Redis before the removal is refused after it, and a demo artwork
    cached by the catalog is not served again (the catalog version moved on)."""
    demo_loaded(clean_db, base_settings)
    creds = demo_credentials(base_settings)
    token = requests.post(
        f"{auth_server.url}/api/tokens/xapp_token",
        data={"client_id": creds.client_id, "client_secret": creds.client_secret},
        timeout=20,
    ).json()["token"]
    with Session(clean_db) as s:
        work = s.scalars(select(Artwork.id).where(Artwork.published.is_(True)).limit(1)).one()
    url = f"{resource_server.url}/api/artworks/{work}"
    assert requests.get(url, headers={"X-Xapp-Token": token}, timeout=20).status_code == 200
    remove_demo(stores, base_settings, keep_account=False)
    bump_catalog_version(stores.redis, base_settings.redis_prefix)  # as the command does
    assert requests.get(url, headers={"X-Xapp-Token": token}, timeout=20).status_code == 401
    with Session(clean_db, expire_on_commit=False) as s, s.begin():
        made = factories.application(s, factories.user(s, base_settings))
    other = requests.post(
        f"{auth_server.url}/api/tokens/xapp_token",
        data={"client_id": made.application.client_id, "client_secret": made.client_secret},
        timeout=20,
    ).json()["token"]
    answer = requests.get(url, headers={"X-Xapp-Token": other}, timeout=20)
    assert answer.status_code == 404


def test_serve_does_not_bring_the_demo_back_after_it_was_removed(
    clean_db: Engine, base_settings: Settings, stores: Stores, auth_settings: AuthSettings
) -> None:
    demo_loaded(clean_db, base_settings)
    remove_demo(stores, base_settings)
    assert first_start(auth_settings, load_demo_data=True) is None
    with Session(clean_db) as s:
        assert s.scalar(select(func.count()).select_from(User)) == 0


def test_importing_a_museum_says_so_and_removes_the_demo(
    clean_db: Engine, base_settings: Settings, sample_dir: Path
) -> None:
    env = cli_env(base_settings)
    run_cli(env, "load", "demo", "--artworks", str(ARTWORKS))
    out = run_cli(env, "load", "tate", "--no-progress", str(sample_dir / "tate"))
    assert "holds the invented demo catalog" in out and "demo catalog removed" in out
    assert "--keep-demo-account keeps them" in out
    with Session(clean_db) as s:
        partners = s.scalars(select(text("name")).select_from(text("partners"))).all()
        assert partners == ["Tate"]
        assert s.scalar(select(func.count()).select_from(User)) == 0
        artists = s.scalar(select(func.count()).select_from(Artist))
    assert artists > 200
    again = run_cli(env, "load", "cmoa", "--no-progress", str(sample_dir / "cmoa"))
    assert "demo" not in again  # nothing to say the second time


def test_import_keeps_the_demo_account_when_asked(
    clean_db: Engine, base_settings: Settings, sample_dir: Path
) -> None:
    env = cli_env(base_settings)
    run_cli(env, "load", "demo", "--artworks", str(ARTWORKS))
    out = run_cli(
        env, "load", "cmoa", "--no-progress", "--keep-demo-account", str(sample_dir / "cmoa")
    )
    assert "the demo user and application are kept" in out
    with Session(clean_db) as s:
        assert s.scalars(select(User.email)).all() == [DEMO_EMAIL]
        assert s.scalars(select(text("name")).select_from(text("partners"))).all() == [
            "Carnegie Museum of Art"
        ]


def test_demo_remove_command(clean_db: Engine, base_settings: Settings) -> None:
    env = cli_env(base_settings)
    run_cli(env, "load", "demo", "--artworks", str(ARTWORKS))
    out = run_cli(env, "demo", "remove")
    assert out.startswith("demo catalog removed:") and f"{ARTWORKS} artworks" in out
    assert run_cli(env, "demo", "remove").startswith("no demo catalog here")


def test_a_demo_loaded_before_it_was_recorded_is_found(
    clean_db: Engine, base_settings: Settings, stores: Stores
) -> None:
    """An instance whose demo (serve's: seed 1, 200 artworks) predates ``demo_loads``."""
    report = load_demo(clean_db, base_settings)
    assert not report.skipped
    with clean_db.begin() as conn:
        conn.execute(text("DELETE FROM demo_loads"))
    assert holds_demo(clean_db)
    remove_demo(stores, base_settings)
    assert set(counts(clean_db)) == {"demo_loads"}


def test_the_demo_application_made_under_another_secret_key_goes_too(
    clean_db: Engine, base_settings: Settings, stores: Stores
) -> None:
    """Its client id derives from the secret key: one changed since still finds it, as the
    demo user's demo application."""
    demo_loaded(clean_db, base_settings)
    with clean_db.begin() as conn:
        conn.execute(text("UPDATE applications SET client_id = 'made-under-another-key'"))
    remove_demo(stores, base_settings)
    assert set(counts(clean_db)) == {"demo_loads"}
