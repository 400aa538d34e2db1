"""The pages' limit per client address (PAGE_RATE_LIMIT): one Redis round trip a page.

The API is limited per application (its token says which); the pages take no token, so they are
limited per source address: the client's address as the server derives it (``REMOTE_ADDR``,
which waitress and granian take from ``X-Forwarded-For`` only when the request comes from
TRUSTED_PROXY), an IPv6 address by its /64 (one subscriber's usual share). Static files, the
docs' assets and the health routes are not limited: only resources marked ``per_address``.

What it costs: a page served is one hit of ``limits``' sliding-window script, written on the
request gate's kept connections (``RequestGate.exchange``): one round trip, as an API request's
token check and hit are. The first refusal of an address reads its window once more, for
``Retry-After``; the process then remembers the refusal until that time and refuses that
address's next pages without asking Redis. A flood from one address costs Redis nothing past
its first refusal in each process. Redis errors propagate (503, as for the API).
"""

from __future__ import annotations

import ipaddress
import math
import time
from typing import Any

import falcon
from limits.strategies import SlidingWindowCounterRateLimiter
from redis.exceptions import NoScriptError

from common.metrics import counter
from common.redis_store import limits_storage
from resource_server.gate import RequestGate
from resource_server.ratelimit import burst_limit, sliding_hit_command
from resource_server.web.render import render

MAX_REFUSED = 100_000  # addresses whose refusal is remembered; past this, afresh
REJECTIONS = counter(
    "artcat_page_rate_limit_rejections", "Page requests refused 429 by the per-address limit."
)


def source_of(address: str | None) -> str:
    """Return what the limit counts an address under: an IPv4 address itself, an IPv6 address
    its /64 network (an IPv4-mapped one its IPv4 address)."""
    try:
        ip = ipaddress.ip_address((address or "").split("%", 1)[0])
    except ValueError:
        return (address or "")[:100] or "unknown"
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


class PageLimiter:
    """Count page requests per client address in a sliding window in Redis."""

    def __init__(self, gate: RequestGate, *, rate: str, burst: int, prefix: str) -> None:
        self.gate = gate
        self.storage = limits_storage(gate.redis, "redis://", f"{prefix}:pl")
        self.limiter = SlidingWindowCounterRateLimiter(self.storage)
        self.item = burst_limit(rate, burst)
        # Refused sources and the monotonic time until which they stay refused.
        self._refused: dict[str, float] = {}

    def admit(self, address: str | None) -> int | None:
        """Count one page for ``address``; return None when it is within the limit, else the
        seconds to wait (for ``Retry-After``)."""
        source = source_of(address)
        until = self._refused.get(source)
        if until is not None:
            wait = until - time.monotonic()
            if wait > 0:
                return max(1, math.ceil(wait))
            self._refused.pop(source, None)
        command = sliding_hit_command(self.storage, self.item, "page", source)
        try:
            acquired = self.gate.run([command])[0]
        except NoScriptError:  # a restarted or flushed Redis forgot the script
            self.gate.limiter.load_script()
            acquired = self.gate.run([command])[0]
        if acquired:
            return None
        stats = self.limiter.get_window_stats(self.item, "page", source)
        retry = max(1, math.ceil(stats.reset_time - time.time()))
        if len(self._refused) >= MAX_REFUSED:
            self._refused.clear()
        self._refused[source] = time.monotonic() + retry
        return retry


def too_many_requests(resp: falcon.Response, retry_after: int) -> None:
    """Answer the HTML 429 page, with Retry-After."""
    render(resp, "too_many_requests.html", status=falcon.HTTP_429, retry_after=retry_after)
    resp.set_header("Retry-After", str(retry_after))
    resp.set_header("Cache-Control", "no-store")


class PageLimitMiddleware:
    """Refuse a page over its address's limit (429) before its responder runs."""

    def __init__(self, limiter: PageLimiter) -> None:
        self.limiter = limiter

    def process_resource(
        self, req: falcon.Request, resp: falcon.Response, resource: Any, params: dict[str, Any]
    ) -> None:
        """Count a page request; answer 429 when its address is over the limit."""
        if not getattr(resource, "per_address", False) or req.method == "OPTIONS":
            return
        retry = self.limiter.admit(req.remote_addr)
        if retry is not None:
            REJECTIONS.inc()
            too_many_requests(resp, retry)
            resp.complete = True
