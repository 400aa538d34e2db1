"""A load of concurrent HTTP requests whose every outcome is kept (the resilience tests)."""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest
import requests
from sqlalchemy import Engine
from sqlalchemy.exc import OperationalError

from tests.functional.process_support import REQUEST_TIMEOUT


@dataclass(frozen=True)
class Call:
    """One kind of request the load sends."""

    label: str
    method: str
    url: str
    headers: dict[str, str] = field(default_factory=dict)
    expect: int = 200  # the status when every store answers
    data: dict[str, str] | None = None  # a form body


@dataclass(frozen=True)
class Outcome:
    """What one request of the load got, and when (monotonic seconds)."""

    call: Call
    started: float
    ended: float
    status: int  # 0: no HTTP answer (see ``error``)
    content_type: str = ""
    body: Any = None
    retry_after: str | None = None
    error: str = ""

    @property
    def ok(self) -> bool:
        """Tell whether the request got its normal answer."""
        return self.status == self.call.expect

    def describe(self) -> str:
        """Return a one-line account of the outcome, for failure messages."""
        what = self.error or f"{self.status} {self.content_type} {str(self.body)[:200]}"
        return f"{self.call.label} {self.call.url} @{self.started:.3f}-{self.ended:.3f}: {what}"


def _parse(response: requests.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


class Load:
    """Threads that send the calls round-robin, each on its own keep-alive session."""

    def __init__(self, calls: Sequence[Call], *, threads: int = 6, pause: float = 0.002) -> None:
        self.calls = list(calls)
        self.threads = threads
        self.pause = pause
        self.outcomes: list[Outcome] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._workers: list[threading.Thread] = []

    def __enter__(self) -> Load:
        for n in range(self.threads):
            worker = threading.Thread(target=self._run, args=(n,), daemon=True)
            worker.start()
            self._workers.append(worker)
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> list[Outcome]:
        """Stop sending (letting requests in flight finish) and return every outcome."""
        self._stopping.set()
        for worker in self._workers:
            worker.join(timeout=REQUEST_TIMEOUT + 5)
        assert not any(w.is_alive() for w in self._workers), "a load thread hung"
        return self.snapshot()

    def snapshot(self) -> list[Outcome]:
        """Return the outcomes so far, by start time."""
        with self._lock:
            return sorted(self.outcomes, key=lambda o: o.started)

    def _run(self, n: int) -> None:
        with requests.Session() as http:
            i = n
            while not self._stopping.is_set():
                call = self.calls[i % len(self.calls)]
                i += 1
                outcome = send(http, call)
                with self._lock:
                    self.outcomes.append(outcome)
                time.sleep(self.pause)

    def wait_for(self, count: int, *, since: float, deadline: float = 30.0) -> None:
        """Wait until ``count`` requests started after ``since`` have been answered."""
        end = time.monotonic() + deadline
        while sum(o.started > since for o in self.snapshot()) < count:
            if time.monotonic() > end:
                pytest.fail(f"the load got fewer than {count} answers in {deadline}s")
            time.sleep(0.01)

    def wait_for_recovery(self, since: float, *, streak: int = 30, deadline: float = 30.0) -> float:
        """Wait until ``streak`` requests in a row (by start) got their normal answer.

        Return the recovery time: from ``since`` until the first request of that streak was
        answered (the service answers normally again). Fails after the hang guard.
        """
        end = time.monotonic() + deadline
        while True:
            after = [o for o in self.snapshot() if o.started >= since]
            failures = [o for o in after if not o.ok]
            good = [o for o in after if o.ok]
            last_failure = failures[-1].started if failures else since
            later = [o for o in good if o.started >= last_failure]
            if len(later) >= streak:
                return later[0].ended - since
            if time.monotonic() > end:
                tail = "\n".join(o.describe() for o in failures[-5:])
                pytest.fail(f"no recovery {deadline}s after the store came back:\n{tail}")
            time.sleep(0.01)


def send(http: requests.Session, call: Call) -> Outcome:
    """Send one call; never raise (a client-side failure is an outcome with status 0)."""
    started = time.monotonic()
    try:
        r = http.request(
            call.method, call.url, headers=call.headers, data=call.data, timeout=REQUEST_TIMEOUT
        )
    except Exception as ex:  # any failure to get an answer is recorded, not raised in a thread
        return Outcome(call, started, time.monotonic(), 0, error=f"{type(ex).__name__}: {ex}")
    return Outcome(
        call,
        started,
        time.monotonic(),
        r.status_code,
        r.headers.get("Content-Type", ""),
        _parse(r),
        r.headers.get("Retry-After"),
    )


def unavailable_problems(outcomes: Sequence[Outcome]) -> list[str]:
    """Return the outcomes that are neither their normal answer nor a well-formed 503 JSON error."""
    problems = []
    for o in outcomes:
        if o.ok:
            continue
        if o.status == 503 and is_unavailable_body(o.content_type, o.body) and o.retry_after:
            continue
        problems.append(o.describe())
    return problems


def is_unavailable_body(content_type: str, body: Any) -> bool:
    """Tell whether a 503 carries the API's JSON error (any JSON media type: plain, HAL, vendor)."""
    return (
        "json" in content_type
        and isinstance(body, dict)
        and body.get("type") == "other_error"
        and isinstance(body.get("message"), str)
    )


def within(outcomes: Sequence[Outcome], start: float, end: float) -> list[Outcome]:
    """Return the outcomes of requests started after ``start`` and answered before ``end``."""
    return [o for o in outcomes if o.started > start and o.ended < end]


def report(name: str, seconds: Sequence[float]) -> str:
    """Print and return a line with measured recovery times (seen with ``pytest -s``)."""
    line = (
        f"{name}: recovery {', '.join(f'{s:.3f}' for s in seconds)} s "
        f"(median {statistics.median(seconds):.3f} s)"
    )
    print(f"\n[resilience] {line}")
    return line


def media_types(outcomes: Sequence[Outcome]) -> dict[str, set[str]]:
    """Return the media types each call was answered in (a 503 keeps the negotiated one)."""
    found: dict[str, set[str]] = {}
    for o in outcomes:
        found.setdefault(o.call.label, set()).add(o.content_type.split(";")[0].strip())
    return found


@contextmanager
def database_down() -> Iterator[None]:
    """Make every new database connection of this process fail, as while the server restarts
    (in-process servers only: the connections they open inside the block are refused)."""

    def down(*_: object, **__: object) -> None:
        raise OperationalError("SELECT", {}, Exception("the database is restarting"))

    with pytest.MonkeyPatch.context() as outage:
        outage.setattr(Engine, "connect", down)
        yield
