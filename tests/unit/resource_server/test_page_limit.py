"""The pages' limit per client address: what it counts under, its window, its round trips."""

from __future__ import annotations

import time

import pytest
from limits import parse
from redis import Redis
from sqlalchemy.orm import Session, sessionmaker

from common.settings import ResourceSettings, SettingsError
from common.tokens import TokenStore
from resource_server.gate import RequestGate
from resource_server.ratelimit import RateLimiter, burst_limit
from resource_server.web.limit import PageLimiter, source_of
from tests.unit.resource_server.test_gate import CountingPool


@pytest.fixture
def pages(redis_client: Redis, sessions: sessionmaker[Session]) -> PageLimiter:
    """Three pages a second per address, under a Redis prefix of the test's own."""
    prefix = f"page-limit-test-{time.monotonic_ns()}"
    tokens = TokenStore(redis_client, sessions, prefix=prefix)
    limiter = RateLimiter(redis_client, sessions, rate="100/second", burst=100, prefix=prefix)
    gate = RequestGate(redis_client, tokens, limiter, prefix=prefix)
    return PageLimiter(gate, rate="3/second", burst=3, prefix=prefix)


@pytest.mark.parametrize(
    ("address", "source"),
    [
        ("203.0.113.9", "203.0.113.9"),
        ("2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"),
        ("2001:db8:1:2::ffff", "2001:db8:1:2::/64"),  # one subscriber's /64: one budget
        ("fe80::1%eth0", "fe80::/64"),
        ("::ffff:198.51.100.4", "198.51.100.4"),  # an IPv4 client on a dual-stack socket
        ("not an address", "not an address"),
        ("", "unknown"),
        (None, "unknown"),
    ],
)
def test_what_an_address_is_counted_under(address: str | None, source: str) -> None:
    assert source_of(address) == source


def test_the_default_lets_a_person_browse_and_stops_a_flood() -> None:
    settings = ResourceSettings(secret_key="x")
    item = burst_limit(settings.page_rate_limit, settings.page_rate_limit_burst)
    assert (item.amount, item.get_expiry()) == (60, 30)  # 60 pages in any 30 seconds
    with pytest.raises(SettingsError, match="PAGE_RATE_LIMIT"):
        ResourceSettings(secret_key="x", page_rate_limit="lots")
    assert parse(ResourceSettings(secret_key="x", page_rate_limit="10/minute").page_rate_limit)


def test_an_address_over_its_window_waits_and_others_do_not(pages: PageLimiter) -> None:
    assert [pages.admit("203.0.113.1") for _ in range(3)] == [None, None, None]
    retry = pages.admit("203.0.113.1")
    assert retry is not None and 1 <= retry <= 1  # the window is a second
    assert pages.admit("203.0.113.2") is None
    assert pages.admit("2001:db8::1") is None


def test_a_page_costs_one_round_trip_and_a_refused_address_none(pages: PageLimiter) -> None:
    for _ in range(4):  # the scripts are loaded (a first hit and a first window read load them)
        pages.admit("198.51.100.9")
    pages.admit("198.51.100.1")
    counting = CountingPool(pages.gate.redis)
    try:
        pages.admit("198.51.100.1")
        pages.admit("198.51.100.1")
        assert counting.trips == 2  # one a page served
        counting.trips = 0
        assert pages.admit("198.51.100.1") is not None
        assert counting.trips == 2  # the refused hit, then its window read for Retry-After
        counting.trips = 0
        for _ in range(20):
            assert pages.admit("198.51.100.1") is not None
        assert counting.trips == 0  # remembered until Retry-After: Redis is not asked
    finally:
        counting.restore()


def test_the_address_is_served_again_after_retry_after(pages: PageLimiter) -> None:
    for _ in range(3):
        pages.admit("192.0.2.7")
    retry = pages.admit("192.0.2.7")
    assert retry is not None
    deadline = time.monotonic() + retry + 5
    while pages.admit("192.0.2.7") is not None:
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_a_forgotten_script_is_loaded_again(pages: PageLimiter) -> None:
    pages.admit("192.0.2.8")
    pages.gate.redis.script_flush()
    assert pages.admit("192.0.2.8") is None  # NOSCRIPT: loaded, then the same hit again
    assert pages.admit("192.0.2.8") is None
    assert pages.admit("192.0.2.8") is not None  # the reloaded hit counted
