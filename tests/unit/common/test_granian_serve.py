"""The rules granian's workers apply before the app (``common.granian_serve``), in-process."""

from __future__ import annotations

import io
import multiprocessing
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from common.granian_serve import RequestRules, WorkerProcess, claim_slot, guarded
from common.serve import MAX_REQUEST_BODY
from common.settings import forget_settings, settings_names


class Stream(io.BytesIO):
    """A request body that counts what was read of it."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.taken = 0

    def read(self, size: int | None = -1) -> bytes:
        part = super().read(size)
        self.taken += len(part)
        return part


def environ(body: bytes = b"", **extra: Any) -> dict[str, Any]:
    env: dict[str, Any] = {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": "/api/collections",
        "QUERY_STRING": "",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "wsgi.url_scheme": "http",
        "wsgi.input": Stream(body),
    }
    env.update(extra)
    return env


class Echo:
    """An app that answers the body it read and the environ it saw."""

    def __init__(self) -> None:
        self.seen: dict[str, Any] | None = None

    def __call__(self, env: dict[str, Any], start_response: Any) -> list[bytes]:
        self.seen = dict(env)
        length = int(env.get("CONTENT_LENGTH") or 0)
        body = env["wsgi.input"].read(length)
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [body]


def call(app: Any, env: dict[str, Any]) -> tuple[str, dict[str, str], bytes]:
    answer: dict[str, Any] = {}

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> None:
        answer.update(status=status, headers=dict(headers))

    body = b"".join(app(env, start_response))
    return answer["status"], answer["headers"], body


def test_a_declared_length_over_the_limit_is_refused_unread() -> None:
    app = Echo()
    env = environ(b"x" * 10, CONTENT_LENGTH=str(MAX_REQUEST_BODY + 1))
    status, headers, body = call(RequestRules(app), env)
    assert status == "413 Request Entity Too Large"
    assert str(MAX_REQUEST_BODY) in orjson.loads(body)["message"]
    assert headers["Server"] == "artcat" and headers["Connection"] == "close"
    assert app.seen is None and env["wsgi.input"].taken == 0


@pytest.mark.parametrize("length", ["-1", "ten", "1e3"])
def test_a_malformed_length_is_a_400(length: str) -> None:
    app = Echo()
    status, _, body = call(RequestRules(app), environ(b"abc", CONTENT_LENGTH=length))
    assert status == "400 Bad Request" and b"Content-Length" in body
    assert app.seen is None


def test_a_chunked_body_under_the_limit_is_passed_on_whole_with_its_length() -> None:
    app = Echo()
    data = b"y" * (MAX_REQUEST_BODY - 3)
    env = environ(data, HTTP_TRANSFER_ENCODING="Chunked")
    status, headers, body = call(RequestRules(app), env)
    assert (status, body) == ("200 OK", data)
    assert headers["Server"] == "artcat"
    assert app.seen is not None
    assert app.seen["CONTENT_LENGTH"] == str(len(data))
    assert "HTTP_TRANSFER_ENCODING" not in app.seen


def test_a_chunked_body_over_the_limit_is_read_no_further() -> None:
    app = Echo()
    env = environ(b"z" * (8 * MAX_REQUEST_BODY), HTTP_TRANSFER_ENCODING="chunked")
    status, _, _ = call(RequestRules(app), env)
    assert status == "413 Request Entity Too Large" and app.seen is None
    assert MAX_REQUEST_BODY < env["wsgi.input"].taken <= MAX_REQUEST_BODY + 64 * 1024


def test_an_http2_body_of_no_stated_length_is_bounded_and_the_answer_has_no_connection() -> None:
    app = Echo()
    env = environ(b"z" * (2 * MAX_REQUEST_BODY), SERVER_PROTOCOL="HTTP/2")
    status, headers, _ = call(RequestRules(app), env)
    assert status.startswith("413") and "Connection" not in headers
    status, _, body = call(RequestRules(app), environ(b"small", SERVER_PROTOCOL="HTTP/2"))
    assert (status, body) == ("200 OK", b"small")


def test_a_body_with_its_length_goes_to_the_app_untouched() -> None:
    app = Echo()
    stream_env = environ(b"hello", CONTENT_LENGTH="5")
    stream = stream_env["wsgi.input"]
    status, _, body = call(RequestRules(app), stream_env)
    assert (status, body) == ("200 OK", b"hello")
    assert app.seen is not None and app.seen["wsgi.input"] is stream


FORGED = {"HTTP_X_FORWARDED_FOR": "203.0.113.9", "HTTP_X_FORWARDED_PROTO": "https"}


def test_forwarding_headers_of_an_untrusted_peer_are_dropped() -> None:
    app = Echo()
    call(guarded(app, {}), environ(CONTENT_LENGTH="0", **FORGED))
    assert app.seen is not None
    assert app.seen["REMOTE_ADDR"] == "127.0.0.1" and app.seen["wsgi.url_scheme"] == "http"
    assert not set(FORGED) & set(app.seen)
    # A proxy trusted elsewhere is not this peer.
    call(guarded(app, {"trusted_proxy": "10.0.0.1"}), environ(CONTENT_LENGTH="0", **FORGED))
    assert app.seen["REMOTE_ADDR"] == "127.0.0.1" and not set(FORGED) & set(app.seen)


def test_forwarding_headers_of_the_trusted_proxy_are_believed() -> None:
    app = Echo()
    proxy = {
        "trusted_proxy": "127.0.0.1",
        "trusted_proxy_count": 1,
        "trusted_proxy_headers": {"x-forwarded-for", "x-forwarded-proto"},
    }
    call(guarded(app, proxy), environ(CONTENT_LENGTH="0", **FORGED))
    assert app.seen is not None
    assert app.seen["REMOTE_ADDR"] == "203.0.113.9" and app.seen["wsgi.url_scheme"] == "https"


def test_a_worker_forgets_the_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    names = settings_names()
    assert {"SECRET_KEY", "DATABASE_URL", "REDIS_URL", "WSGI_SERVER"} <= set(names)
    monkeypatch.setenv("SECRET_KEY", "k" * 40)
    monkeypatch.setenv("UNRELATED_VARIABLE", "kept")
    forget_settings(names)
    assert "SECRET_KEY" not in os.environ
    assert os.environ["UNRELATED_VARIABLE"] == "kept"


def test_a_worker_takes_a_free_slot_or_the_slot_of_a_dead_or_oldest_one() -> None:
    slots = multiprocessing.Array("i", 3)
    assert [claim_slot(slots), claim_slot(slots)] == [0, 1]  # empty slots, in order
    dead = subprocess.Popen(["true"])
    dead.wait()
    zombie = subprocess.Popen(["true"])  # exits, and stays unreaped until wait()
    try:
        while Path(f"/proc/{zombie.pid}/stat").read_bytes().split(b") ")[1][:1] != b"Z":
            time.sleep(0.01)
        slots[0], slots[1], slots[2] = dead.pid, zombie.pid, os.getpid()
        assert claim_slot(slots) == 0 and slots[0] == os.getpid()  # the dead one's
        assert claim_slot(slots) == 1  # the zombie's: dead too
    finally:
        zombie.wait()
    # Every slot held by a live process (a reload): the oldest's, the lowest pid.
    live = [subprocess.Popen(["sleep", "30"]) for _ in range(2)]
    try:
        slots[0], slots[1], slots[2] = (
            max(p.pid for p in live),
            os.getpid(),
            min(p.pid for p in live),
        )
        expected = min(range(3), key=lambda i: slots[i])
        assert claim_slot(slots) == expected
    finally:
        for p in live:
            p.kill()
            p.wait()


def test_a_worker_reaped_by_another_thread_is_known_to_have_ended(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """granian's supervisor waits for a worker in two threads: the one that does not reap it
    still learns it ended, and how, however late the reaping thread runs on (multiprocessing's
    own start would call it alive, and granian kill a worker that had stopped at once)."""
    waitpid = os.waitpid

    def reaping_late(pid: int, options: int) -> tuple[int, int]:
        reaped = waitpid(pid, options)
        if reaped[0] and threading.current_thread() is not threading.main_thread():
            time.sleep(0.5)
        return reaped

    monkeypatch.setattr(os, "waitpid", reaping_late)
    worker = WorkerProcess(target=os._exit, args=(3,))
    worker.start()
    watcher = threading.Thread(target=worker.join)  # as granian's, for each worker
    watcher.start()
    end = time.monotonic() + 10
    while Path(f"/proc/{worker.pid}").exists() and time.monotonic() < end:  # until reaped
        time.sleep(0.01)
    assert not worker.is_alive()
    assert worker.exitcode == 3
    watcher.join()


@pytest.mark.skipif(sys.platform != "linux", reason="the parent-death signal is Linux's")
def test_a_worker_whose_supervisor_ended_before_it_could_watch_it_ends_at_once() -> None:
    """``end_with`` in a worker whose supervisor has ended already (before the kernel could be
    asked to end the worker with it): the worker ends there; with its supervisor alive, it
    goes on."""
    script = (
        "import os; from common.granian_serve import end_with; "
        "end_with(os.getppid()); print('with its supervisor', flush=True); "
        "end_with(os.getppid() + 1); print('without')"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert (out.returncode, out.stdout) == (0, "with its supervisor\n"), out.stderr
