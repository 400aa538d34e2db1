import pytest

from common.hardening import hsts_value, loopback_host_header
from common.settings import Settings


@pytest.mark.parametrize(
    "host", ["localhost", "LOCALHOST:8000", "127.0.0.1", "127.8.9.10:80", "[::1]", "[::1]:8000"]
)
def test_loopback_hosts(host: str) -> None:
    assert loopback_host_header(host)


@pytest.mark.parametrize(
    "host",
    [
        "",
        "evil.example",
        "localhost.evil.example",
        "127.0.0.1.evil.example",
        "127.0.0.1:99999",
        "127.0.0.1:x",
        "127.0.0.1@evil.example",
        "evil.example#@127.0.0.1",
        "[::1",
        "::1",
        "localhost/evil",
        "10.0.0.1",
        "[::2]",
    ],
)
def test_other_hosts(host: str) -> None:
    assert not loopback_host_header(host)


def test_hsts_only_behind_https() -> None:
    assert hsts_value(Settings()) is None
    assert hsts_value(Settings(public_url="http://localhost:8000")) is None
    https = Settings(public_url="https://api.example.org")
    assert hsts_value(https) == "max-age=31536000; includeSubDomains"
    assert hsts_value(Settings(public_url="https://a.example", hsts_max_age=60)) == (
        "max-age=60; includeSubDomains"
    )
    assert hsts_value(Settings(public_url="https://a.example", hsts_max_age=0)) is None
