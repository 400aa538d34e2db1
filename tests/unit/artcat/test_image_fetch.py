"""What ``artcat images fetch`` decides without the network: the URL it fetches, the versions
it builds, the bytes it refuses, its summary."""

from __future__ import annotations

import io
from collections import Counter

import pytest
from PIL import Image

from artcat.image_download import (
    FetchFailure,
    FetchOptions,
    check_host,
    decode,
    parse_rewrites,
    source_url,
)
from artcat.image_fetch import DEFAULT_VERSIONS, FetchReport, versions_of


def test_the_largest_version_is_fetched_from_the_rewritten_host() -> None:
    template = "http://www.tate.org.uk/art/images/work/T/T05/T05016_{image_version}.jpg"
    rewrites = parse_rewrites("http://www.tate.org.uk/=http://127.0.0.1:9000/tate/, x=y")
    assert rewrites == (("http://www.tate.org.uk/", "http://127.0.0.1:9000/tate/"), ("x", "y"))
    assert source_url(template, ["8", "10"], rewrites) == (
        "http://127.0.0.1:9000/tate/art/images/work/T/T05/T05016_10.jpg"
    )
    assert source_url("https://a.org/i.jpg", [], ()) == "https://a.org/i.jpg"
    assert parse_rewrites("") == ()


@pytest.mark.parametrize("bad", ["nothing", "=to", "from="])
def test_a_bad_rewrite_is_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="IMAGE_SOURCE_REWRITE"):
        parse_rewrites(bad)


def test_the_versions_built_are_the_listed_ones() -> None:
    assert versions_of("http://a/{image_version}.jpg", ["medium", "../x"]) == ("medium",)
    assert versions_of("http://a/plain.jpg", []) == tuple(DEFAULT_VERSIONS)
    assert versions_of("http://a/{image_version}.jpg", None) == tuple(DEFAULT_VERSIONS)


def encoded(image: Image.Image, kind: str) -> bytes:
    out = io.BytesIO()
    image.save(out, kind)
    return out.getvalue()


def test_decode_refuses_bombs_and_garbage() -> None:
    good = encoded(Image.new("RGB", (30, 20)), "JPEG")
    assert decode(good, 1_000).size == (30, 20)
    with pytest.raises(FetchFailure) as bomb:
        decode(encoded(Image.new("1", (2000, 2000)), "PNG"), 1_000_000)
    assert bomb.value.reason == "too_big"
    with pytest.raises(FetchFailure) as garbage:
        decode(b"\x89PNG\r\n\x1a\n" + b"\0" * 100, 1_000_000)
    assert garbage.value.reason == "undecodable"
    with pytest.raises(FetchFailure) as truncated:
        decode(good[: len(good) // 2], 1_000_000)
    assert truncated.value.reason == "undecodable"


def test_the_summary_counts_by_reason() -> None:
    report = FetchReport(to_do=3, mirrored=1, failed=Counter({"timeout": 2}),
                         failures=[("a" * 24, "http://x", "timeout: ReadTimeout")] * 2)  # fmt: skip
    lines = report.summary(shown=1).splitlines()
    assert lines[0] == "1 of 3 images mirrored, 2 failed."
    assert lines[1] == "  timeout: 2"
    assert lines[2] == f"  artwork {'a' * 24}: timeout: ReadTimeout (http://x)"
    assert lines[3] == "  ... and 1 more"
    assert FetchReport().summary().startswith("Nothing to fetch")


@pytest.mark.parametrize(
    "url",
    ["http://127.0.0.1/x.jpg", "http://169.254.169.254/latest/meta-data", "http://10.1.2.3/a",
     "http://[::1]:8080/a", "http://localhost/a", "file:///etc/passwd", "ftp://a.org/x",
     "http:///nohost"],
)  # fmt: skip
def test_a_host_that_is_not_public_is_refused(url: str) -> None:
    with pytest.raises(FetchFailure) as refused:
        check_host(url, FetchOptions())
    assert refused.value.reason == "refused"


def test_a_rewrite_target_is_trusted() -> None:
    options = FetchOptions(rewrites=(("http://museum.org/", "http://127.0.0.1:9/"),))
    check_host("http://127.0.0.1:9/x.jpg", options)  # no exception
    with pytest.raises(FetchFailure):
        check_host("http://127.0.0.1:10/x.jpg", options)
