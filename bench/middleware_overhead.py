"""Per-request cost of the observability middleware (``common.observability.Observer``).

Calls a falcon hello-world app in-process (no network), bare and wrapped in the middleware
(request id, metrics, and the JSON access line written to /dev/null, as ``artcat serve`` writes
it to stderr), and prints the best of several runs in microseconds of CPU time per request
(CPU time: on a shared machine, wall time mostly measures the neighbours).

    python -m bench.middleware_overhead
"""

from __future__ import annotations

import os
import platform
import time
import timeit
from functools import partial
from typing import Any

import falcon
import falcon.testing

from common import logs
from common.observability import ROUTE_KEY, Observer


class Hello:
    """Answer a small JSON document."""

    def on_get(self, _req: falcon.Request, resp: falcon.Response, id: str) -> None:
        """Say hello."""
        resp.media = {"hello": "world"}


class RouteLabel:
    """What the catalog does to hand its route template to the middleware."""

    def process_response(self, req: falcon.Request, *_: Any) -> None:
        """Label the request."""
        req.env[ROUTE_KEY] = req.uri_template


def main() -> None:
    """Measure and print."""
    bare = falcon.App()
    bare.add_route("/hello/{id}", Hello())
    labelled = falcon.App(middleware=[RouteLabel()])
    labelled.add_route("/hello/{id}", Hello())
    quiet = Observer(labelled, service="bench", access_log=False)
    logged = Observer(labelled, service="bench")
    logs.SINK.fd = os.open(os.devnull, os.O_WRONLY)
    environ = falcon.testing.create_environ(
        "/hello/42", query_string="size=5", headers={"User-Agent": "bench"}
    )

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> None:
        return None

    def run(app: Any) -> None:
        app(dict(environ), start_response)

    cases = {
        "falcon hello-world": bare,
        "+ route label middleware": labelled,
        "+ Observer, no access line": quiet,
        "+ Observer with access line": logged,
    }
    n = 20_000
    results: dict[str, float] = {}
    for _ in range(2):  # interleaved, so that a busy moment hurts every case alike
        for name, app in cases.items():
            times = timeit.repeat(partial(run, app), number=n, repeat=7, timer=time.process_time)
            best = min(times) / n * 1e6
            results[name] = min(best, results.get(name, best))
    print(f"{platform.processor() or platform.machine()}, Python {platform.python_version()}")
    print(f"load average: {os.getloadavg()[0]:.2f}")
    base = results["falcon hello-world"]
    for name, us in results.items():
        print(f"{name:32s} {us:7.2f} us/request  (+{us - base:5.2f} us)")


if __name__ == "__main__":
    main()
