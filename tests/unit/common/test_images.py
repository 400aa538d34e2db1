"""The image versions, the stores (a folder; S3 through moto's in-process S3) and the pictures
the instance draws."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image

from common.images.art import demo_picture, placeholder_svg
from common.images.store import FolderStore, ImageStoreError, S3Store, check_key, open_store
from common.images.versions import BOXES, box, largest, make_version
from common.settings import Settings


def size_of(data: bytes) -> tuple[int, int]:
    return Image.open(io.BytesIO(data)).size


@pytest.mark.parametrize(
    ("source", "version", "expected"),
    [
        ((800, 600), "medium", (260, 195)),
        ((600, 800), "medium", (195, 260)),
        ((800, 600), "square", (230, 173)),
        ((800, 600), "medium250x165", (220, 165)),
        ((100, 50), "larger", (100, 50)),  # never larger than the original
        ((3000, 1000), "wide", (1200, 400)),
        ((2000, 2000), "10", (1400, 1400)),
        ((2000, 1000), "a-new-size", (640, 320)),
    ],
)
def test_a_version_fits_its_box_with_the_aspect_kept(
    source: tuple[int, int], version: str, expected: tuple[int, int]
) -> None:
    data = make_version(Image.new("RGB", source, "red"), version)
    assert data[:3] == b"\xff\xd8\xff" and size_of(data) == expected


def test_transparent_and_palette_pictures_become_jpegs_on_white() -> None:
    rgba = Image.new("RGBA", (40, 40), (0, 0, 0, 0))
    pixel = Image.open(io.BytesIO(make_version(rgba, "small"))).convert("RGB").getpixel((5, 5))
    assert all(c > 240 for c in pixel)  # type: ignore[union-attr]
    assert size_of(make_version(Image.new("P", (40, 20)), "small")) == (40, 20)
    assert size_of(make_version(Image.new("L", (40, 20)), "small")) == (40, 20)


def test_the_largest_version_is_the_one_fetched() -> None:
    assert largest(["medium", "large", "square"]) == "large"
    assert largest(["7", "8", "9", "10"]) == "10"
    assert largest(["Medium"]) == "Medium"
    assert largest([]) is None and largest(["../x"]) is None
    assert box("unknown") == (640, 640)


@pytest.mark.parametrize(
    "key", ["../x.jpg", "a/../b.jpg", "a/b/c.jpg", "/a/b.jpg", "a/b.png", "a/.jpg", "a\\b/c.jpg"]
)
def test_a_key_outside_the_format_is_refused(key: str) -> None:
    with pytest.raises(ImageStoreError):
        check_key(key)


def test_the_folder_store_writes_whole_files(tmp_path: Path) -> None:
    store = FolderStore(tmp_path)
    assert store.get("abc/medium.jpg") is None and not store.exists("abc/medium.jpg")
    store.put("abc/medium.jpg", b"one", "image/jpeg")
    store.put("abc/medium.jpg", b"two", "image/jpeg")
    assert store.get("abc/medium.jpg") == b"two" and store.exists("abc/medium.jpg")
    assert sorted(p.name for p in (tmp_path / "abc").iterdir()) == ["medium.jpg"]  # no leftovers
    with pytest.raises(ImageStoreError):
        store.get("../../etc/passwd.jpg")


@pytest.fixture
def s3() -> Iterator[S3Store]:
    """A store on a bucket of moto's in-process S3 (nothing leaves the process)."""
    moto = pytest.importorskip("moto")
    with pytest.MonkeyPatch.context() as env, moto.mock_aws():
        for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
            env.setenv(name, "testing")
        env.setenv("AWS_DEFAULT_REGION", "us-east-1")
        store = S3Store.connect("s3://bucket/some/prefix/")
        store.client.create_bucket(Bucket="bucket")
        yield store


def test_the_s3_store_reads_and_writes_under_its_prefix(s3: S3Store) -> None:
    assert s3.get("abc/medium.jpg") is None and not s3.exists("abc/medium.jpg")
    s3.put("abc/medium.jpg", b"\xff\xd8data", "image/jpeg")
    assert s3.get("abc/medium.jpg") == b"\xff\xd8data" and s3.exists("abc/medium.jpg")
    head = s3.client.head_object(Bucket="bucket", Key="some/prefix/abc/medium.jpg")
    assert head["ContentType"] == "image/jpeg"
    with pytest.raises(ImageStoreError):
        s3.put("../abc.jpg", b"", "image/jpeg")


def test_the_setting_names_the_store(tmp_path: Path) -> None:
    default = open_store(Settings(instance_dir=tmp_path, secret_key="x"))
    assert isinstance(default, FolderStore) and default.root == tmp_path / "images"
    folder = open_store(Settings(instance_dir=tmp_path, secret_key="x", image_store="/srv/img"))
    assert isinstance(folder, FolderStore) and folder.root == Path("/srv/img")
    with pytest.raises(ImageStoreError):
        open_store(Settings(instance_dir=tmp_path, secret_key="x", image_store="s3://"))


def test_demo_pictures_are_the_same_for_a_token_and_fit_their_box() -> None:
    assert demo_picture("tok", "large") == demo_picture("tok", "large")
    assert demo_picture("tok", "large") != demo_picture("other", "large")
    for version in ("medium", "large", "square", "wide"):
        width, height = size_of(demo_picture("tok", version))
        assert width <= BOXES[version][0] and height <= BOXES[version][1]
        assert BOXES[version][0] - width <= 1 or BOXES[version][1] - height <= 1  # fills it


def test_the_placeholder_escapes_what_it_shows() -> None:
    svg = placeholder_svg('<b>"Night" & day</b>', "O'Keeffe <x>").decode()
    assert svg.startswith("<svg") and "<b>" not in svg and "<x>" not in svg
    assert "&lt;b&gt;" in svg and "&amp; day" in svg
    assert "Untitled" in placeholder_svg("", "Someone").decode()
    assert "<text" not in placeholder_svg(None, "Someone").decode()
