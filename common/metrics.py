"""Prometheus metrics of both services: cheap to record, aggregated across worker processes.

Recording is a dict update under a lock (well under a microsecond), not a prometheus_client
metric call: in multi-process mode those write an mmap file per increment under a global lock
(2.5 us for a counter, 5 us for a histogram observation on the development machines), and every
catalog request records three of them. Instead each process keeps its own totals in memory and,
when it runs as one of several workers, publishes them to a file of its own once a second (and
when it exits). ``/metrics`` adds up the live totals of the process that answers and the files
of the others, so a scrape sees every worker's counts, at most a second old. prometheus_client
only renders the text format.

Files of dead workers are kept: the totals stay monotonic across worker restarts, as counters
must.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import threading
from bisect import bisect_left
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

# Latency buckets (seconds): fine at the low end, where the catalog's requests are.
BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
_BOUNDS = (*BUCKETS, float("inf"))
_NB = len(_BOUNDS)
PUBLISH_INTERVAL = 1.0  # seconds between two publications of a worker's totals

REQUESTS = "artcat_http_requests"
LATENCY = "artcat_http_request_duration_seconds"
REQUESTS_DOC = "HTTP requests answered, by service, route template, method and status."
LATENCY_DOC = "Time to answer an HTTP request, by service, route template and method."


class Counter:
    """A counter with labels, kept in this process's memory."""

    __slots__ = ("_lock", "_values", "doc", "labelnames", "name")

    def __init__(self, name: str, doc: str, labelnames: tuple[str, ...] = ()) -> None:
        self.name = name
        self.doc = doc
        self.labelnames = labelnames
        self._values: dict[tuple[str, ...], float] = {}
        self._lock = threading.Lock()

    def inc(self, *labels: str, by: float = 1) -> None:
        """Add ``by`` (one) to the series of ``labels`` (one value per label name)."""
        with self._lock:
            self._values[labels] = self._values.get(labels, 0) + by

    def value(self, *labels: str) -> float:
        """Return this process's count of one series (for tests)."""
        return self._values.get(labels, 0)

    def items(self) -> list[tuple[tuple[str, ...], float]]:
        """Return a copy of every series."""
        with self._lock:
            return list(self._values.items())

    def clear(self) -> None:
        """Forget every count (a forked worker starts from zero)."""
        with self._lock:
            self._values.clear()


class RequestMetrics:
    """Requests by (service, route, method, status): latency bucket counts and their sum."""

    def __init__(self) -> None:
        self._rows: dict[tuple[str, str, str, str], list[float]] = {}
        self._lock = threading.Lock()

    def observe(self, service: str, route: str, method: str, status: str, seconds: float) -> None:
        """Record one answered request."""
        key = (service, route, method, status)
        index = bisect_left(_BOUNDS, seconds)
        with self._lock:
            row = self._rows.get(key)
            if row is None:
                row = self._rows[key] = [0] * _NB + [0.0]
            row[index] += 1
            row[_NB] += seconds

    def count(self, service: str, route: str, method: str, status: str) -> int:
        """Return this process's number of requests of one series (for tests)."""
        row = self._rows.get((service, route, method, status))
        return int(sum(row[:_NB])) if row else 0

    def items(self) -> list[tuple[tuple[str, str, str, str], list[float]]]:
        """Return a copy of every row."""
        with self._lock:
            return [(k, list(v)) for k, v in self._rows.items()]

    def clear(self) -> None:
        """Forget every request (a forked worker starts from zero)."""
        with self._lock:
            self._rows.clear()


class Registry:
    """Every metric of this process, and where the other workers publish theirs."""

    def __init__(self) -> None:
        self.requests = RequestMetrics()
        self.counters: dict[str, Counter] = {}
        self.directory: Path | None = None  # set in multi-process mode
        self._file: Path | None = None
        self._published = b""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def counter(self, name: str, doc: str, labelnames: tuple[str, ...] = ()) -> Counter:
        """Return the counter of that name, creating it on first use."""
        found = self.counters.get(name)
        if found is None:
            found = self.counters.setdefault(name, Counter(name, doc, labelnames))
        return found

    # -- multi-process -------------------------------------------------------------------------

    def start_publishing(self, directory: str | Path, interval: float = PUBLISH_INTERVAL) -> None:
        """Become one worker among several: start from zero, publish totals to ``directory``."""
        self.requests.clear()
        for counter in self.counters.values():
            counter.clear()
        self.directory = Path(directory)
        self._file = self.directory / f"{os.getpid()}-{secrets.token_hex(4)}.json"
        self._published = b""
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._publish_loop, args=(interval,), name="metrics-publisher", daemon=True
        )
        self._thread.start()

    def stop_publishing(self) -> None:
        """Publish the final totals (a worker that exits)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        self.publish()

    def _publish_loop(self, interval: float) -> None:
        while not self._stop.wait(interval):
            with contextlib.suppress(OSError):
                self.publish()

    def publish(self) -> None:
        """Write this process's totals to its file, when they changed."""
        if self._file is None:
            return
        data = orjson.dumps(self.snapshot())
        if data == self._published:
            return
        tmp = self._file.with_suffix(".tmp")
        tmp.write_bytes(data)
        tmp.replace(self._file)  # atomic: a reader sees the old totals or the new
        self._published = data

    def snapshot(self) -> dict[str, Any]:
        """Return this process's totals as plain data."""
        return {
            "requests": [[*key, row] for key, row in self.requests.items()],
            "counters": {
                name: [[list(labels), value] for labels, value in c.items()]
                for name, c in self.counters.items()
            },
        }

    def _snapshots(self) -> Iterator[dict[str, Any]]:
        yield self.snapshot()
        if self.directory is None:
            return
        for path in sorted(self.directory.glob("*.json")):
            if path == self._file:
                continue  # this process's live totals are newer than its file
            try:
                yield orjson.loads(path.read_bytes())
            except (OSError, orjson.JSONDecodeError):
                continue

    def merged(self) -> tuple[dict[tuple[str, ...], list[float]], dict[str, dict[Any, float]]]:
        """Add up the totals of every process."""
        rows: dict[tuple[str, ...], list[float]] = {}
        counters: dict[str, dict[Any, float]] = {name: {} for name in self.counters}
        for snap in self._snapshots():
            for *key, row in snap.get("requests", []):
                if len(row) != _NB + 1:
                    continue  # published by another version with other buckets
                total = rows.setdefault(tuple(key), [0.0] * (_NB + 1))
                for i, v in enumerate(row):
                    total[i] += v
            for name, series in snap.get("counters", {}).items():
                into = counters.setdefault(name, {})
                for labels, value in series:
                    into[tuple(labels)] = into.get(tuple(labels), 0) + value
        return rows, counters


REGISTRY = Registry()


def counter(name: str, doc: str, labelnames: tuple[str, ...] = ()) -> Counter:
    """Return a counter of the process registry (exposed as ``<name>_total``)."""
    return REGISTRY.counter(name, doc, labelnames)


class _Collector:
    """Hand the merged totals to prometheus_client as metric families."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily
        from prometheus_client.utils import floatToGoString

        rows, counters = self.registry.merged()
        requests = CounterMetricFamily(
            REQUESTS, REQUESTS_DOC, labels=("service", "route", "method", "status")
        )
        by_route: dict[tuple[str, ...], list[float]] = {}
        for key, row in sorted(rows.items()):
            requests.add_metric(key, sum(row[:_NB]))
            total = by_route.setdefault(key[:3], [0.0] * (_NB + 1))
            for i, v in enumerate(row):
                total[i] += v
        yield requests
        latency = HistogramMetricFamily(LATENCY, LATENCY_DOC, labels=("service", "route", "method"))
        for key, row in by_route.items():
            cumulative, buckets = 0.0, []
            for bound, n in zip(_BOUNDS, row[:_NB], strict=True):
                cumulative += n
                buckets.append((floatToGoString(bound), cumulative))
            latency.add_metric(key, buckets, row[_NB])
        yield latency
        for name, series in sorted(counters.items()):
            known = self.registry.counters.get(name)
            family = CounterMetricFamily(
                name,
                known.doc if known else name,
                labels=known.labelnames if known else None,
            )
            for labels, value in sorted(series.items()):
                family.add_metric(labels, value)
            yield family


def render(registry: Registry = REGISTRY) -> tuple[bytes, str]:
    """Return the Prometheus text exposition of every process's metrics, and its media type."""
    from prometheus_client import (
        CONTENT_TYPE_LATEST,
        CollectorRegistry,
        ProcessCollector,
        generate_latest,
    )

    out = CollectorRegistry(auto_describe=False)
    out.register(_Collector(registry))
    if registry.directory is None:
        ProcessCollector(registry=out)  # CPU, memory, fds: meaningful for one process only
    return generate_latest(out), CONTENT_TYPE_LATEST
