"""Serve a WSGI app to ``requests`` in the test's own process, without a socket.

The functional tests speak to the services through ``requests``: most of them test what the
services answer, not how HTTP carries it, and a request over loopback costs a connection, a
server thread hand-off and a parse each time. An app served here gets an address of its own
(``http://127.0.0.1:<port>``, a port held by a socket bound and never listening, so that no
server started later is given it, and a stray connection is refused) and
every ``requests`` session, in any thread, sends what is addressed there straight to the app
(``route``). Everything above the transport stays as it is: ``requests.Session.send`` (where
the suite checks every response against the OpenAPI document and collects the secrets the
exchange carried), cookies, redirects.

The WSGI environment is the one waitress builds (``waitress.task.WSGITask.get_environment``):
the same keys, header names folded the same way (a header with an underscore in its name is
dropped, as waitress does), and the app wrapped in waitress's own proxy-header middleware with
the options the servers run with. What only a socket shows (waitress's request limits, framing,
keep-alive, a raw or malformed request) is tested on real servers (``start_server``).
"""

from __future__ import annotations

import http.client
import io
import socket
import sys
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from email.utils import formatdate
from typing import Any
from urllib.parse import unquote_to_bytes, urlsplit

import requests
from requests.adapters import HTTPAdapter
from requests.structures import CaseInsensitiveDict
from urllib3 import HTTPHeaderDict, HTTPResponse
from waitress.proxy_headers import proxy_headers_middleware

from common.serve import WAITRESS_OPTIONS

# Addresses served in-process: "127.0.0.1:<port>" -> adapter.
_SERVED: dict[str, WSGIAdapter] = {}
_LOCK = threading.Lock()


class _Original:
    """What ``requests`` reads the Set-Cookie headers from (``http.client``'s response)."""

    def __init__(self, headers: list[tuple[str, str]]) -> None:
        self.msg = http.client.HTTPMessage()
        for name, value in headers:
            self.msg[name] = value

    def isclosed(self) -> bool:
        """Tell urllib3 the exchange is over (there is no connection)."""
        return True


def _body_bytes(body: Any) -> bytes:
    if body is None:
        return b""
    if isinstance(body, bytes):
        return body
    if isinstance(body, str):
        return body.encode("utf-8")
    if hasattr(body, "read"):
        data = body.read()
        return data.encode("utf-8") if isinstance(data, str) else bytes(data)
    return b"".join(c.encode("utf-8") if isinstance(c, str) else bytes(c) for c in body)


class WSGIAdapter(HTTPAdapter):
    """A transport adapter that calls a WSGI app with the environment waitress would build."""

    def __init__(self, app: Any, host: str, port: int) -> None:
        super().__init__()
        self.app = proxy_headers_middleware(app, clear_untrusted=True)
        self.host = host
        self.port = port
        self.ident = str(WAITRESS_OPTIONS.get("ident", "waitress"))

    def environ(self, request: requests.PreparedRequest, body: bytes) -> dict[str, Any]:
        """Return the WSGI environment of a prepared request."""
        url = request.url or ""
        target = url.split("://", 1)[1]
        target = target[target.find("/") :] if "/" in target else "/"
        target = target.split("#", 1)[0]
        raw_path, _, query = target.partition("?")
        path = unquote_to_bytes(raw_path).decode("latin-1")
        if path.startswith("/"):
            path = "/" + path.lstrip("/")
        environ: dict[str, Any] = {
            "REMOTE_ADDR": "127.0.0.1",
            "REMOTE_HOST": "127.0.0.1",
            "REMOTE_PORT": "50000",
            "REQUEST_METHOD": (request.method or "GET").upper(),
            "SERVER_PORT": str(self.port),
            "SERVER_NAME": self.host,
            "SERVER_SOFTWARE": self.ident,
            "SERVER_PROTOCOL": "HTTP/1.1",
            "SCRIPT_NAME": "",
            "PATH_INFO": path,
            "REQUEST_URI": target,
            "QUERY_STRING": query,
            "wsgi.url_scheme": "http",
            "wsgi.version": (1, 0),
            "wsgi.errors": sys.stderr,
            "wsgi.multithread": True,
            "wsgi.multiprocess": False,
            "wsgi.run_once": False,
            "wsgi.input": io.BytesIO(body),
            "wsgi.input_terminated": True,
        }
        sent = CaseInsensitiveDict({"Host": f"{self.host}:{self.port}"})
        sent.update(request.headers)  # a Host the test set wins
        headers: dict[str, str] = {}
        for name, value in sent.items():
            if "_" in name:
                continue  # waitress drops them: X_Forwarded_For must not pass as X-Forwarded-For
            key = name.upper().replace("-", "_")
            if key == "TRANSFER_ENCODING":
                continue  # the body is whole here (waitress removes it once it has de-chunked)
            value = value.decode("latin-1") if isinstance(value, bytes) else str(value)
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        if body or "CONTENT_LENGTH" in headers:
            headers["CONTENT_LENGTH"] = str(len(body))
        for key, value in headers.items():
            wsgi_key = key if key in ("CONTENT_LENGTH", "CONTENT_TYPE") else f"HTTP_{key}"
            environ.setdefault(wsgi_key, value)
        return environ

    def send(
        self,
        request: requests.PreparedRequest,
        stream: bool = False,
        timeout: Any = None,
        verify: Any = True,
        cert: Any = None,
        proxies: Any = None,
    ) -> requests.Response:
        """Call the app and answer as ``HTTPAdapter`` would from the network."""
        body = _body_bytes(request.body)
        environ = self.environ(request, body)
        started: list[Any] = []

        def start_response(
            status: str, headers: list[tuple[str, str]], exc_info: Any = None
        ) -> Any:
            if exc_info and started:
                raise exc_info[1].with_traceback(exc_info[2])
            started[:] = [status, headers]
            return lambda data: None  # the write() callable: no app here uses it

        result: Iterable[bytes] = self.app(environ, start_response)
        try:
            content = b"".join(result)
        finally:
            close = getattr(result, "close", None)
            if close is not None:
                close()
        status, headers = started
        headers = list(headers)
        names = {name.lower() for name, _ in headers}
        if "server" not in names:
            headers.append(("Server", self.ident))
        if "date" not in names:
            headers.append(("Date", formatdate(usegmt=True)))
        if environ["REQUEST_METHOD"] == "HEAD" or status.startswith(("1", "204", "304")):
            content = b""
        elif "content-length" not in names:
            headers.append(("Content-Length", str(len(content))))
        code, _, reason = status.partition(" ")
        raw = HTTPResponse(
            body=io.BytesIO(content),
            headers=HTTPHeaderDict(headers),
            status=int(code),
            reason=reason,
            preload_content=False,
            decode_content=True,
            original_response=_Original(headers),  # type: ignore[arg-type]
            request_method=request.method,
            request_url=request.url,
        )
        return self.build_response(request, raw)


@dataclass
class InProcessServer:
    """An app served in-process at ``url`` (the same surface as a live server's ``url``)."""

    url: str
    app: Any
    adapter: WSGIAdapter
    holder: socket.socket

    @property
    def port(self) -> int:
        """Return the port of the address (no socket listens on it)."""
        return self.adapter.port

    def stop(self) -> None:
        """Stop routing the address to the app."""
        with _LOCK:
            _SERVED.pop(f"127.0.0.1:{self.adapter.port}", None)
        self.holder.close()


def serve_in_process(app: Any) -> InProcessServer:
    """Route requests to a new address to ``app`` until ``stop``."""
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    port = int(holder.getsockname()[1])
    adapter = WSGIAdapter(app, "127.0.0.1", port)
    with _LOCK:
        _SERVED[f"127.0.0.1:{port}"] = adapter
    return InProcessServer(f"http://127.0.0.1:{port}", app, adapter, holder)


@contextmanager
def in_process(app: Any) -> Iterator[InProcessServer]:
    """Serve ``app`` in-process for the duration of a block."""
    served = serve_in_process(app)
    try:
        yield served
    finally:
        served.stop()


def route(original: Any) -> Any:
    """Wrap ``requests.Session.get_adapter``: addresses served in-process get their app."""

    def get_adapter(self: requests.Session, url: str) -> Any:
        adapter = _SERVED.get(urlsplit(url).netloc) if _SERVED else None
        return adapter if adapter is not None else original(self, url)

    return get_adapter
