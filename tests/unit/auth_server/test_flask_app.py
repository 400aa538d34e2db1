"""The auth server's Flask class (``auth_server.flask_app``): a body in memory handed to the
server whole, and a response's close callbacks called after the server wrote it."""

from __future__ import annotations

from typing import Any

from flask import Response
from werkzeug.test import EnvironBuilder

from auth_server.flask_app import AuthFlask


def app_with(events: list[str]) -> AuthFlask:
    app = AuthFlask(__name__)

    @app.get("/plain")
    def _plain() -> str:
        return "plain"

    @app.get("/callback")
    def _callback() -> Response:
        response = app.make_response("answered")
        response.call_on_close(lambda: events.append("closed"))
        return response

    return app


def call(app: AuthFlask, path: str) -> tuple[Any, list[str]]:
    started: list[str] = []
    body = app(EnvironBuilder(path=path).get_environ(), lambda status, *_: started.append(status))
    return body, started


def test_a_body_in_memory_is_handed_over_whole() -> None:
    body, started = call(app_with([]), "/plain")
    assert type(body) is list and body == [b"plain"] and started == ["200 OK"]


def test_close_callbacks_run_after_the_body_was_written() -> None:
    """As a WSGI server does: the body iterated (sent), then closed; the callbacks then."""
    events: list[str] = []
    body, started = call(app_with(events), "/callback")
    assert started == ["200 OK"]
    assert events == []  # not before the server has written the body
    for chunk in body:
        events.append(chunk.decode())
    assert events == ["answered"]
    body.close()
    assert events == ["answered", "closed"]
