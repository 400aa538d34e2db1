"""``artcat images fetch`` against a stand-in museum over real HTTP, on both image stores
(a folder, and S3 through moto's in-process S3): every outcome recorded with its reason, the
summary, resuming after an interruption, an idempotent second run, and the versions served
by the catalog with their sizes, long-lived cache headers and 304s."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import falcon.testing
import pytest
from PIL import Image
from sqlalchemy import Engine, insert, select, update

from artcat.image_download import FetchOptions
from artcat.image_fetch import fetch_images, placeholder_template
from common.ids import new_id
from common.images.store import FolderStore, ImageStore, S3Store
from common.images.versions import instance_template
from common.models import Artwork, ImageMirror
from common.settings import ResourceSettings, Settings
from common.stores import Stores
from resource_server.app import create_app
from tests.functional.museum_support import CASES, EXPECTED, PUBLISHED, Museum, museum

pytestmark = pytest.mark.functional

BUCKET = "artcat-images"
VERSIONS = ["medium", "large"]


@pytest.fixture(scope="module")
def stand_in() -> Iterator[Museum]:
    """The stand-in museum, for the module."""
    with museum() as running:
        yield running


@pytest.fixture(params=["folder", "s3"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[ImageStore, str]]:
    """An empty image store and its IMAGE_STORE setting: a folder, or a moto S3 bucket."""
    if request.param == "folder":
        yield FolderStore(tmp_path / "images"), str(tmp_path / "images")
        return
    moto = pytest.importorskip("moto")
    with moto.mock_aws():
        import boto3

        boto3.client("s3", region_name="us-east-1").create_bucket(Bucket=BUCKET)
        url = f"s3://{BUCKET}/mirror"
        yield S3Store.connect(url), url


@pytest.fixture(autouse=True)
def aws_region(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fake credentials and a region for boto3 (moto answers; nothing leaves the machine)."""
    for name, value in (("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing"),
                        ("AWS_DEFAULT_REGION", "us-east-1")):  # fmt: skip
        monkeypatch.setenv(name, value)


def add_artworks(engine: Engine, cases: tuple[str, ...] = CASES) -> dict[str, str]:
    """Add a published artwork per case, its image on the museum; return case -> id."""
    ids = {case: new_id() for case in cases}
    with engine.begin() as conn:
        conn.execute(
            insert(Artwork),
            [
                {
                    "id": i,
                    "slug": f"work-{case}-{i}",
                    "title": f"Work {case}",
                    "published": True,
                    "image_url": f"{PUBLISHED}{case}/{{image_version}}.jpg",
                    "image_versions": VERSIONS,
                }
                for case, i in ids.items()
            ],
        )
    return ids


def options(stand_in: Museum, **overrides: Any) -> FetchOptions:
    """Options of the test runs: short timeout, small caps, the museum rewritten locally."""
    values: dict[str, Any] = {
        "workers": 3, "timeout": 1, "max_bytes": 1_000_000, "max_pixels": 4_000_000,
        "rewrites": ((PUBLISHED, stand_in.url),), "progress": False,
    }  # fmt: skip
    values.update(overrides)
    return FetchOptions(**values)


def mirrors(engine: Engine) -> dict[str, ImageMirror]:
    """Return the mirror rows by artwork id."""
    with engine.connect() as conn:
        return {r.artwork_id: r for r in conn.execute(select(ImageMirror))}


def image_urls(engine: Engine) -> dict[str, str]:
    """Return every artwork's image URL by id."""
    with engine.connect() as conn:
        return dict(conn.execute(select(Artwork.id, Artwork.image_url)).all())


def test_each_image_is_mirrored_or_fails_with_its_reason(
    clean_db: Engine, stand_in: Museum, backend: tuple[ImageStore, str]
) -> None:
    store, _ = backend
    ids = add_artworks(clean_db)
    report = fetch_images(clean_db, store, options(stand_in))
    rows, urls = mirrors(clean_db), image_urls(clean_db)
    assert report.to_do == len(CASES) and report.mirrored == 2
    assert dict(report.failed) == {"not_found": 1, "timeout": 1, "content_type": 1,
                                   "too_big": 2, "undecodable": 1}  # fmt: skip
    for case, i in ids.items():
        row = rows[i]
        assert row.attempts == 1, case
        if case in EXPECTED:
            assert row.status == "failed" and row.reason.startswith(EXPECTED[case]), (case, row)
        else:
            assert row.status == "mirrored" and row.reason is None, case
            assert urls[i] == instance_template(row.digest)
            for version in VERSIONS:
                assert store.exists(f"{row.digest}/{version}.jpg"), (case, version)
    # A museum that no longer serves an image: the artwork stays, with the placeholder; a slow
    # one may answer next time: its published URL stays (the pages fall back on their own).
    assert urls[ids["missing"]] == placeholder_template(ids["missing"])
    assert urls[ids["corrupt"]] == placeholder_template(ids["corrupt"])
    assert urls[ids["slow"]] == f"{PUBLISHED}slow/{{image_version}}.jpg"
    summary = report.summary()
    assert "2 of 8 images mirrored, 6 failed." in summary
    for line in ("not_found: 1", "timeout: 1", "content_type: 1", "too_big: 2",
                 "undecodable: 1", f"artwork {ids['missing']}: not_found: HTTP 404"):  # fmt: skip
        assert line in summary, (line, summary)
    # The largest listed version was asked for, of the local mirror only.
    assert stand_in.asked["/good-jpeg/large.jpg"] >= 1


def test_a_second_run_fetches_nothing_and_a_retry_only_the_failed(
    clean_db: Engine, stand_in: Museum, backend: tuple[ImageStore, str]
) -> None:
    store, _ = backend
    ids = add_artworks(clean_db, ("good-jpeg", "missing"))
    fetch_images(clean_db, store, options(stand_in))
    before, asked = mirrors(clean_db), sum(stand_in.asked.values())
    again = fetch_images(clean_db, store, options(stand_in))
    assert again.to_do == 0 and "Nothing to fetch" in again.summary()
    assert sum(stand_in.asked.values()) == asked  # not one request
    assert {i: (r.status, r.attempts, r.digest) for i, r in mirrors(clean_db).items()} == {
        i: (r.status, r.attempts, r.digest) for i, r in before.items()
    }
    retried = fetch_images(clean_db, store, options(stand_in, retry_failed=True))
    assert retried.to_do == 1 and dict(retried.failed) == {"not_found": 1}
    assert mirrors(clean_db)[ids["missing"]].attempts == 2
    assert mirrors(clean_db)[ids["good-jpeg"]].attempts == 1


def test_an_image_that_comes_back_replaces_its_placeholder(
    clean_db: Engine, stand_in: Museum, backend: tuple[ImageStore, str]
) -> None:
    store, _ = backend
    work = add_artworks(clean_db, ("recovers",))["recovers"]
    with clean_db.begin() as conn:  # a path of its own: the museum counts requests by path
        conn.execute(
            update(Artwork)
            .where(Artwork.id == work)
            .values(image_url=f"{PUBLISHED}recovers/{work}/{{image_version}}.jpg")
        )
    assert fetch_images(clean_db, store, options(stand_in)).failed == {"not_found": 1}
    assert image_urls(clean_db)[work] == placeholder_template(work)
    retried = fetch_images(clean_db, store, options(stand_in, retry_failed=True))
    assert retried.mirrored == 1
    row = mirrors(clean_db)[work]
    assert (row.status, row.attempts, row.reason) == ("mirrored", 2, None)
    assert image_urls(clean_db)[work] == instance_template(row.digest)


def test_redirects_are_followed_and_private_hosts_never_asked(
    clean_db: Engine, stand_in: Museum, backend: tuple[ImageStore, str]
) -> None:
    store, _ = backend
    ids = add_artworks(clean_db, ("redirect", "good-png"))
    # A published URL straight at a loopback address (the museum's files are anyone's to
    # edit): not under a rewrite's target, so refused before any request.
    with clean_db.begin() as conn:
        conn.execute(
            update(Artwork)
            .where(Artwork.id == ids["good-png"])
            .values(
                image_url=stand_in.url.replace("127.0.0.1", "localhost")
                + "good-png/{image_version}.jpg"
            )
        )
    asked = stand_in.asked["/good-png/large.jpg"]
    report = fetch_images(clean_db, store, options(stand_in))
    rows = mirrors(clean_db)
    assert rows[ids["redirect"]].status == "mirrored"
    assert rows[ids["good-png"]].status == "failed"
    assert rows[ids["good-png"]].reason.startswith("refused: localhost is not a public address")
    assert stand_in.asked["/good-png/large.jpg"] == asked
    assert report.failed == {"refused": 1}


class Interrupted(Exception):
    """A store that fails mid-run (a full disk, a lost connection, Ctrl-C)."""


class FailingStore:
    """A store that fails on its n-th write."""

    def __init__(self, store: ImageStore, writes: int) -> None:
        self.store, self.writes = store, writes

    def get(self, key: str) -> bytes | None:
        return self.store.get(key)

    def exists(self, key: str) -> bool:
        return self.store.exists(key)

    def put(self, key: str, data: bytes, content_type: str) -> None:
        self.writes -= 1
        if self.writes < 0:
            raise Interrupted(key)
        self.store.put(key, data, content_type)


def test_an_interrupted_run_is_resumed(
    clean_db: Engine, stand_in: Museum, backend: tuple[ImageStore, str]
) -> None:
    store, _ = backend
    add_artworks(clean_db, ("good-jpeg", "good-png", "missing"))
    # One worker, in id order: the third version written fails.
    with pytest.raises(Interrupted):
        fetch_images(clean_db, FailingStore(store, 2), options(stand_in, workers=1))
    states = sorted(r.status for r in mirrors(clean_db).values())
    assert "pending" in states and states.count("mirrored") <= 1
    report = fetch_images(clean_db, store, options(stand_in))
    assert report.to_do == len([s for s in states if s == "pending"])
    final = mirrors(clean_db).values()
    assert sorted(r.status for r in final) == ["failed", "mirrored", "mirrored"]
    assert all(r.attempts == 1 for r in final)  # nothing was fetched twice to completion


def test_the_catalog_serves_the_versions_for_good(
    clean_db: Engine,
    stand_in: Museum,
    backend: tuple[ImageStore, str],
    base_settings: Settings,
    stores: Stores,
) -> None:
    store, where = backend
    ids = add_artworks(clean_db, ("good-jpeg", "good-png"))
    fetch_images(clean_db, store, options(stand_in))
    fields = {f: getattr(base_settings, f) for f in base_settings.__dataclass_fields__}
    settings = ResourceSettings(**{**fields, "image_store": where})
    client = falcon.testing.TestClient(create_app(settings, stores), headers={"Host": "127.0.0.1"})
    rows = mirrors(clean_db)
    expected = {"good-jpeg": {"medium": (260, 195), "large": (640, 480)},
                "good-png": {"medium": (156, 260), "large": (300, 500)}}  # fmt: skip
    for case, sizes in expected.items():
        digest = rows[ids[case]].digest
        for version, size in sizes.items():
            path = f"/images/{digest}/{version}.jpg"
            r = client.simulate_get(path)
            assert r.status_code == 200, (path, r.text)
            assert r.headers["Content-Type"] == "image/jpeg"
            assert Image.open(io.BytesIO(r.content)).size == size, (case, version)
            cache = r.headers["Cache-Control"]
            assert "immutable" in cache and "max-age=31536000" in cache and "public" in cache
            etag = r.headers["ETag"]
            again = client.simulate_get(path, headers={"If-None-Match": etag})
            assert again.status_code == 304 and not again.content
            assert again.headers["ETag"] == etag
            other = client.simulate_get(path, headers={"If-None-Match": '"something-else"'})
            assert other.status_code == 200
    digest = rows[ids["good-jpeg"]].digest
    for path in (f"/images/{digest}/square.jpg", f"/images/{'0' * 32}/medium.jpg",
                 f"/images/{digest}/..%2F..%2Fetc.jpg", f"/images/{digest}/medium.png",
                 "/images/..%2F/medium.jpg", "/images/demo-x/medium.jpg"):  # fmt: skip
        assert client.simulate_get(path).status_code == 404, path


def test_a_store_that_cannot_be_written_still_serves_the_demo_pictures(
    tmp_path: Path, base_settings: Settings, stores: Stores
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_bytes(b"")  # the store's folder would be under a file: no write succeeds
    fields = {f: getattr(base_settings, f) for f in base_settings.__dataclass_fields__}
    settings = ResourceSettings(**{**fields, "image_store": str(blocker / "images")})
    client = falcon.testing.TestClient(create_app(settings, stores), headers={"Host": "127.0.0.1"})
    r = client.simulate_get("/images/demo-abcdefghijklmnopqrstuv/medium.jpg")
    assert r.status_code == 200 and r.headers["Content-Type"] == "image/jpeg"
