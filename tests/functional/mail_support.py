"""A real SMTP server for the tests of mail-sending pages (aiosmtpd on a free loopback port)."""

from __future__ import annotations

import dataclasses
import re
import threading
import time
from collections.abc import Iterator
from email import message_from_bytes
from email.message import Message
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller

from auth_server.app import create_app
from common.settings import AuthSettings
from common.stores import Stores
from tests.functional.process_support import free_port
from tests.pages import serving
from tests.servers import LiveServer

SENDER = "catalog@example.org"


class Inbox:
    """An aiosmtpd handler keeping every message it receives."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.envelopes: list[tuple[str, list[str]]] = []
        self._arrived = threading.Condition()

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
        """Store a received message (aiosmtpd's hook)."""
        with self._arrived:
            self.messages.append(message_from_bytes(envelope.content))
            self.envelopes.append((envelope.mail_from, list(envelope.rcpt_tos)))
            self._arrived.notify_all()
        return "250 OK"

    def wait_for(self, count: int, deadline: float = 10.0) -> list[Message]:
        """Wait (up to a deadline) until ``count`` messages have arrived."""
        end = time.monotonic() + deadline
        with self._arrived:
            while len(self.messages) < count:
                left = end - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"{len(self.messages)} of {count} messages arrived")
                self._arrived.wait(left)
            return list(self.messages)


@pytest.fixture
def inbox() -> Iterator[tuple[Inbox, int]]:
    """A real SMTP server on a free loopback port, and its inbox."""
    handler = Inbox()
    port = free_port()
    controller = Controller(handler, hostname="127.0.0.1", port=port)
    controller.start()
    yield handler, port
    controller.stop()


class LateApp:
    """A WSGI app set after the server has its port (the links need the public URL)."""

    app: Any = None

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        """Serve with the app set later."""
        return self.app(environ, start_response)


@pytest.fixture
def mail_server(
    auth_settings: AuthSettings, stores: Stores, inbox: tuple[Inbox, int]
) -> Iterator[LiveServer]:
    """An auth server that sends email through the local SMTP server."""
    late = LateApp()
    with serving(late) as live:
        settings = dataclasses.replace(
            auth_settings,
            email_enabled=True,
            smtp_host="127.0.0.1",
            smtp_port=inbox[1],
            smtp_security="none",
            smtp_from=SENDER,
            public_url=live.url,
        )
        late.app = create_app(settings, stores)
        yield live
    late.app.extensions["artcat.mailer"].close()
    stores.redis.delete(*stores.redis.keys(f"{settings.redis_prefix}:pwreset:*") or ["-"])


def link_in(message: Message, path: str = "/account/password/reset/") -> str:
    """Return the link to ``path`` in a message."""
    payload = message.get_payload(decode=True)
    assert isinstance(payload, bytes)
    found = re.search(rf"https?://\S+{re.escape(path)}\S+", payload.decode())
    assert found, payload
    return found.group(0)


def body_of(message: Message) -> str:
    """Return the text of a message."""
    payload = message.get_payload(decode=True)
    assert isinstance(payload, bytes)
    return payload.decode()


def outbox_messages(
    instance_dir: Path, to: str, count: int = 1, deadline: float = 10.0
) -> list[Message]:
    """Wait (up to a deadline) for ``count`` messages to ``to`` in a development outbox."""
    end = time.monotonic() + deadline
    while True:
        found = []
        for path in sorted((instance_dir / "outbox").glob("*.eml")):
            message = message_from_bytes(path.read_bytes())
            if message["To"] == to:
                found.append(message)
        if len(found) >= count or time.monotonic() > end:
            assert len(found) >= count, f"{len(found)} of {count} messages to {to} in the outbox"
            return found
        time.sleep(0.02)
