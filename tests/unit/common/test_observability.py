"""The observability middleware: request ids, JSON access lines, redaction and metrics."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from common import logs, metrics, observability
from common.logs import configure_logging
from common.observability import REQUEST_ID_KEY, ROUTE_KEY, Observer
from common.redaction import REDACTED, redact_path, redact_query
from common.settings import Settings, SettingsError, parse_networks

Lines = Callable[[], list[dict[str, Any]]]


class Recorder:
    """A start_response that keeps what it was given."""

    def __init__(self) -> None:
        self.status = ""
        self.headers: list[tuple[str, str]] = []

    def __call__(self, status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> None:
        self.status = status
        self.headers = headers

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)


def hello(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    environ[ROUTE_KEY] = "/api/things/{id}"
    start_response("200 OK", [("Content-Type", "application/json")])
    return [b'{"hello":', b'"world"}']


def call(app: Any, path: str = "/api/things/1", **environ: str) -> tuple[Recorder, bytes]:
    env = {"REQUEST_METHOD": "GET", "PATH_INFO": path, "REMOTE_ADDR": "10.0.0.1", **environ}
    rec = Recorder()
    result = app(env, rec)
    try:
        body = b"".join(result)
    finally:
        if hasattr(result, "close"):
            result.close()
    return rec, body


@pytest.fixture
def access(caplog: pytest.LogCaptureFixture) -> Iterator[Callable[[], list[dict[str, Any]]]]:
    """Return the access lines logged so far in the test, parsed."""
    with caplog.at_level(logging.INFO, logger="artcat.access"):
        yield lambda: [
            json.loads(r.getMessage()) for r in caplog.records if r.name == "artcat.access"
        ]


def test_a_sane_request_id_is_echoed() -> None:
    seen = {}

    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        seen["id"] = environ[REQUEST_ID_KEY]
        return hello(environ, start_response)

    rec, _ = call(Observer(app, service="t"), HTTP_X_REQUEST_ID="req-1.A_b")
    assert rec.header("X-Request-Id") == "req-1.A_b" == seen["id"]


@pytest.mark.parametrize(
    "incoming",
    [None, "", "a\r\nSet-Cookie: x=1", "a b", "x" * 129, "id;drop", "é", '"quoted"'],
)
def test_a_missing_or_insane_request_id_is_replaced(incoming: str | None) -> None:
    extra = {} if incoming is None else {"HTTP_X_REQUEST_ID": incoming}
    rec, _ = call(Observer(hello, service="t"), **extra)
    rid = rec.header("X-Request-Id")
    assert rid is not None and len(rid) == 32 and int(rid, 16) >= 0
    assert [k for k, _ in rec.headers].count("X-Request-Id") == 1


def test_two_generated_ids_differ() -> None:
    app = Observer(hello, service="t")
    assert call(app)[0].header("X-Request-Id") != call(app)[0].header("X-Request-Id")


def test_one_json_access_line_per_request(access: Lines) -> None:
    app = Observer(hello, service="resource")
    call(app, QUERY_STRING="size=5", HTTP_USER_AGENT="ua/1", HTTP_X_REQUEST_ID="r1")
    call(app, HTTP_AUTHORIZATION="Bearer abcdefghijklmnop", HTTP_COOKIE="session=zyxwvut")
    assert len(access()) == 2
    line = access()[0]
    assert line["service"] == "resource" and line["request_id"] == "r1"
    assert line["method"] == "GET" and line["path"] == "/api/things/1"
    assert line["query"] == "size=5" and line["route"] == "/api/things/{id}"
    assert line["status"] == 200 and line["bytes"] == len(b'{"hello":"world"}')
    assert line["remote_addr"] == "10.0.0.1" and line["user_agent"] == "ua/1"
    assert line["duration_ms"] >= 0 and line["ts"].endswith("Z") and "T" in line["ts"]
    assert "abcdefghijklmnop" not in json.dumps(access()) and "zyxwvut" not in json.dumps(access())


def test_secret_query_values_and_reset_tokens_are_redacted(access: Lines) -> None:
    app = Observer(hello, service="auth")
    query = (
        "xapp_token=T1secret&access_token=T2secret&client_secret=S3&code=C4&password=P5"
        "&refresh_token=R6&state=S7&code_verifier=V8&email=a%40b.c&size=5&client_id=app1"
    )
    call(app, QUERY_STRING=query)
    call(app, path="/account/password/reset/ResetTok9")
    logged = json.dumps(access())
    for secret in ("T1secret", "T2secret", "S3", "C4", "P5", "R6", "S7", "V8", "a%40b.c"):
        assert secret not in logged
    assert "size=5" in access()[0]["query"] and "client_id=app1" in access()[0]["query"]
    assert "xapp_token=[redacted]" in access()[0]["query"]
    assert access()[1]["path"] == "/account/password/reset/[redacted]"
    assert "ResetTok9" not in logged


def test_access_log_can_be_switched_off(access: Lines) -> None:
    call(Observer(hello, service="t", access_log=False))
    assert access() == []


def test_requests_are_counted_by_route_template_and_status() -> None:
    app = Observer(hello, service="unit")
    before = metrics.REGISTRY.requests.count("unit", "/api/things/{id}", "GET", "200")
    call(app, path="/api/things/1")
    call(app, path="/api/things/2")
    assert metrics.REGISTRY.requests.count("unit", "/api/things/{id}", "GET", "200") == before + 2

    def nothing(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        start_response("404 Not Found", [])
        return []

    before = metrics.REGISTRY.requests.count("unit", "unmatched", "other", "404")
    call(Observer(nothing, service="unit"), path="/whatever", REQUEST_METHOD="BREW")
    assert metrics.REGISTRY.requests.count("unit", "unmatched", "other", "404") == before + 1


def test_a_streamed_body_is_logged_when_closed(access: Lines) -> None:
    closed = []

    class Stream:
        def __iter__(self) -> Iterator[bytes]:
            yield b"abc"
            yield b"de"

        def close(self) -> None:
            closed.append(True)

    def app(environ: dict[str, Any], start_response: Any) -> Stream:
        start_response("201 Created", [])
        return Stream()

    rec, body = call(Observer(app, service="t"))
    assert body == b"abcde" and closed == [True] and rec.header("X-Request-Id")
    assert access()[0]["status"] == 201 and access()[0]["bytes"] == 5


def test_an_app_that_raises_is_counted_as_500(access: Lines) -> None:
    def broken(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        raise RuntimeError("boom")

    before = metrics.REGISTRY.requests.count("t", "unmatched", "GET", "500")
    with pytest.raises(RuntimeError):
        call(Observer(broken, service="t"))
    assert metrics.REGISTRY.requests.count("t", "unmatched", "GET", "500") == before + 1
    assert access()[0]["status"] == 500


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def test_metrics_are_served_before_the_app() -> None:
    counter = metrics.counter("artcat_unit_things", "Things.", ("kind",))
    counter.inc("a")
    app = Observer(hello, service="unit")
    call(app, path="/api/things/7")
    rec, body = call(app, path="/metrics", REMOTE_ADDR="127.0.0.1")
    assert rec.status.startswith("200") and (rec.header("Content-Type") or "").startswith(
        "text/plain"
    )
    found = samples(body.decode())
    key = (("method", "GET"), ("route", "/api/things/{id}"), ("service", "unit"), ("status", "200"))
    assert found[("artcat_http_requests_total", key)] >= 1
    assert found[("artcat_http_request_duration_seconds_count", key[:3])] >= 1
    assert found[("artcat_unit_things_total", (("kind", "a"),))] >= 1
    local = {"REMOTE_ADDR": "::1"}
    assert call(app, path="/metrics", REQUEST_METHOD="POST", **local)[0].status.startswith("405")
    head, empty = call(app, path="/metrics", REQUEST_METHOD="HEAD", **local)
    assert head.status.startswith("200") and empty == b""


def test_metrics_are_answered_only_to_the_allowed_addresses() -> None:
    # Anyone else's request goes on to the app, as for a path that does not exist.
    app = Observer(hello, service="unit")  # loopback only, as METRICS_ALLOW's default
    for address in ("127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1"):
        assert b"artcat_http_requests_total" in call(app, "/metrics", REMOTE_ADDR=address)[1]
    for address in ("10.0.0.1", "203.0.113.7", "2001:db8::1", "::ffff:10.0.0.1", "", "unix"):
        assert call(app, "/metrics", REMOTE_ADDR=address)[1] == b'{"hello":"world"}', address
    assert call(app, "/metrics", REMOTE_ADDR="10.0.0.1")[0].status.startswith("200")  # hello's
    monitoring = Observer(
        hello, service="unit", metrics_from=parse_networks("10.9.0.0/16, 2001:db8::7", "X")
    )
    for address in ("10.9.3.4", "2001:db8::7"):
        assert b"artcat_http" in call(monitoring, "/metrics", REMOTE_ADDR=address)[1], address
    for address in ("127.0.0.1", "10.8.0.1", "2001:db8::8"):
        assert call(monitoring, "/metrics", REMOTE_ADDR=address)[1] == b'{"hello":"world"}'


def test_metrics_allow_is_checked_at_start() -> None:
    assert Settings(secret_key="x").metrics_networks == parse_networks("127.0.0.0/8,::1", "X")
    with pytest.raises(SettingsError, match="METRICS_ALLOW: 'localhost'"):
        Settings(secret_key="x", metrics_allow="127.0.0.1, localhost")


def test_metrics_can_be_switched_off() -> None:
    _, body = call(Observer(hello, service="t", expose_metrics=False), path="/metrics")
    assert body == b'{"hello":"world"}'


def test_workers_totals_are_added_up(tmp_path: Path) -> None:
    other = metrics.Registry()
    other.counter("artcat_unit_merged", "Merged.", ("k",)).inc("x")
    other.requests.observe("w", "/r", "GET", "200", 0.002)
    other.start_publishing(tmp_path, interval=3600)
    other.counter("artcat_unit_merged", "Merged.", ("k",)).inc("x")
    other.requests.observe("w", "/r", "GET", "200", 0.002)  # after the reset of start_publishing
    other.requests.observe("w", "/r", "GET", "500", 0.2)
    other.stop_publishing()  # the final publication
    assert len(list(tmp_path.glob("*.json"))) == 1

    here = metrics.Registry()
    here.counter("artcat_unit_merged", "Merged.", ("k",)).inc("x")
    here.requests.observe("w", "/r", "GET", "200", 0.004)
    here.directory = tmp_path
    found = samples(metrics.render(here)[0].decode())
    labels = (("method", "GET"), ("route", "/r"), ("service", "w"))
    assert found[("artcat_http_requests_total", (*labels, ("status", "200")))] == 2
    assert found[("artcat_http_requests_total", (*labels, ("status", "500")))] == 1
    assert found[("artcat_http_request_duration_seconds_count", labels)] == 3
    assert found[("artcat_http_request_duration_seconds_bucket", (("le", "0.0025"), *labels))] == 1
    assert found[("artcat_unit_merged_total", (("k", "x"),))] == 2
    assert not any(name.startswith("process_") for name, _ in found)  # per process only


def test_configure_logging_writes_json_lines(tmp_path: Path) -> None:
    root = logging.getLogger()
    saved = (root.level, list(root.handlers), logs.access_log.level)
    flags = (logging.logThreads, logging.logProcesses, logging.logMultiprocessing)
    read_fd, write_fd = os.pipe()
    err = (tmp_path / "err").open("w")
    try:
        configure_logging("INFO", stream=err, fd=write_fd)
        call(Observer(hello, service="t"), HTTP_X_REQUEST_ID="piped")
        logging.getLogger("artcat.test").warning("careful: %s", "x")
        line = json.loads(os.read(read_fd, 65536).decode().splitlines()[0])
        assert line["request_id"] == "piped" and line["status"] == 200
        err.flush()
        other = json.loads((tmp_path / "err").read_text().splitlines()[-1])
        assert other["level"] == "WARNING" and other["message"] == "careful: x"
        configure_logging("WARNING", stream=err, fd=write_fd)
        assert logs.SINK.fd is None
        assert not logs.access_log.isEnabledFor(logging.INFO)
    finally:
        logs.SINK.fd = None
        root.handlers[:] = saved[1]
        root.setLevel(saved[0])
        logs.access_log.setLevel(saved[2])
        logging.logThreads, logging.logProcesses, logging.logMultiprocessing = flags
        os.close(read_fd)
        os.close(write_fd)
        err.close()


def test_request_ids_are_unique_across_draws_and_forks() -> None:
    ids = [observability.new_request_id() for _ in range(3 * observability._IDS_PER_DRAW)]
    assert len(set(ids)) == len(ids) and all(len(i) == 32 for i in ids)
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its next id must not be the parent's next one
        os.write(write_fd, observability.new_request_id().encode())
        os._exit(0)
    os.waitpid(pid, 0)
    child = os.read(read_fd, 64).decode()
    os.close(read_fd)
    os.close(write_fd)
    assert child != observability.new_request_id()


@pytest.mark.parametrize(
    ("query", "kept"),
    [
        ("c%6Fde=S1&size=2", "size=2"),
        ("%63lient%5Fsecret=S1", ""),
        ("%2561ccess_token=S1", ""),  # encoded twice
        ("%252525252561ccess_token=S1", ""),  # encoded too often to be a mistake
        ("pass%77ord=S1&page=3", "page=3"),
        ("client+secret=S1", ""),
        ("x=1;access_token=S1", "x=1;"),
        ("XAPP_TOKEN=S1", ""),
        ("%E2%82%AC=euro", "%E2%82%AC=euro"),
    ],
)
def test_encoded_secret_names_are_redacted(query: str, kept: str) -> None:
    redacted = redact_query(query)
    assert "S1" not in redacted and kept in redacted


@pytest.mark.parametrize(
    ("query", "kept"),
    [
        ("next=%2Factivate%3Fuser_code%3DS1", "next=/activate%3Fuser_code=[redacted]"),
        ("next=/activate?user_code=S1&x=2", "&x=2"),
        ("next=%252Factivate%253Fuser_code%253DS1", "next=/activate"),  # encoded twice
        ("next=%2Foauth2%2Fauthorize%3Fclient_id%3Dc1%26state%3DS1", "client_id=c1"),
    ],
)
def test_the_secrets_of_a_url_in_a_parameter_are_redacted(query: str, kept: str) -> None:
    redacted = redact_query(query)
    assert "S1" not in redacted and kept in redacted, redacted


@pytest.mark.parametrize("query", ["next=%2Faccount", "next=/activate", "q=a%3Fb", "q=why?"])
def test_a_parameter_without_secrets_is_kept(query: str) -> None:
    assert redact_query(query) == query


@pytest.mark.parametrize(
    "path",
    [
        "/account/password/reset/S1",
        "//account//password/reset/S1",
        "/Account/Password/Reset/S1",
        "/account/password/./reset/S1",
        "/account/password/%72eset/S1",
        "/account/password/reset/%2553%31",
    ],
)
def test_reset_tokens_are_redacted_however_the_path_is_spelt(path: str) -> None:
    redacted = redact_path(path)
    assert redacted.lower().endswith("/reset/" + REDACTED) and "S1" not in redacted


def test_paths_without_secrets_are_kept() -> None:
    assert redact_path("/api/artists/a%20b") == "/api/artists/a%20b"
    assert redact_path("/api/artists/reset") == "/api/artists/reset"
