"""A stand-in museum: a real HTTP server on a free loopback port serving every kind of image
answer ``artcat images fetch`` must handle (good JPEG and PNG, 404, slow, not an image, too
big, corrupt, a decompression bomb), and counting what it is asked."""

from __future__ import annotations

import contextlib
import io
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from PIL import Image

# The published URLs of the test artworks start with this; IMAGE_SOURCE_REWRITE points it at
# the stand-in (nothing is ever asked of this host: ``.invalid`` never resolves).
PUBLISHED = "http://museum.invalid/"
SLOW_SECONDS = 5


def jpeg(width: int, height: int) -> bytes:
    """Return a JPEG of a given size."""
    out = io.BytesIO()
    Image.new("RGB", (width, height), (180, 60, 40)).save(out, "JPEG")
    return out.getvalue()


def png(width: int, height: int) -> bytes:
    """Return a PNG (with transparency) of a given size."""
    out = io.BytesIO()
    Image.new("RGBA", (width, height), (20, 90, 160, 128)).save(out, "PNG")
    return out.getvalue()


def bomb(width: int, height: int) -> bytes:
    """Return a small PNG of many pixels (one bit each: a few KB for 36 million pixels)."""
    out = io.BytesIO()
    Image.new("1", (width, height)).save(out, "PNG")
    return out.getvalue()


# case -> (status, content type, body); "huge" and "slow" are written by the handler.
BODIES: dict[str, tuple[int, str, bytes]] = {
    "good-jpeg": (200, "image/jpeg", jpeg(800, 600)),
    "good-png": (200, "image/png", png(300, 500)),
    "missing": (404, "text/html", b"<h1>Not found</h1>"),
    "html": (200, "text/html; charset=utf-8", b"<html>a page, not an image</html>"),
    "corrupt": (200, "image/jpeg", b"\xff\xd8\xff\xe0" + b"not really a jpeg" * 50),
    "bomb": (200, "image/png", bomb(6000, 6000)),
}
# The reason each case fails with (the good ones are mirrored).
EXPECTED = {
    "missing": "not_found",
    "slow": "timeout",
    "html": "content_type",
    "huge": "too_big",
    "corrupt": "undecodable",
    "bomb": "too_big",
}
CASES = ("good-jpeg", "good-png", *EXPECTED)


@dataclass
class Museum:
    """The running stand-in: its URL and the paths asked of it."""

    url: str
    asked: Counter[str] = field(default_factory=Counter)


@contextmanager
def museum() -> Iterator[Museum]:
    """Serve the stand-in museum until the block ends."""
    stopping = threading.Event()
    asked: Counter[str] = Counter()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            case = self.path.strip("/").split("/")[0]
            asked[self.path] += 1
            if case == "slow":
                stopping.wait(SLOW_SECONDS)  # past the fetch's timeout
            if case == "redirect":  # to the good JPEG, on the same host
                self.send_response(302)
                self.send_header("Location", "/good-jpeg/large.jpg")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if case == "recovers":  # gone at first, back from the second request on
                case = "missing" if asked[self.path] == 1 else "good-jpeg"
            if case == "huge":
                self.send_response(200)
                self.send_header("Content-Type", "image/jpeg")  # no length: read until cut
                self.end_headers()
                chunk = b"\0" * 65536
                try:
                    for _ in range(64):  # 4 MiB, past the cap
                        self.wfile.write(chunk)
                except OSError:
                    pass  # the fetch stopped reading at the cap
                return
            status, kind, body = BODIES.get(case, (404, "text/plain", b"no such case"))
            if case == "slow":
                status, kind, body = BODIES["good-jpeg"]
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            with contextlib.suppress(OSError):
                self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Museum(f"http://127.0.0.1:{server.server_address[1]}/", asked)
    finally:
        stopping.set()
        server.shutdown()
        server.server_close()
