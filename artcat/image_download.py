"""Fetching one published image: the URL asked, the host allowed, the bytes read and checked.

``download`` reads an image over HTTP(S) and raises ``FetchFailure`` with a short reason when it
must not be kept: ``not_found`` (404/410), ``http_error``, ``timeout``, ``unreachable``,
``content_type`` (not an image), ``too_big`` (past IMAGE_MAX_BYTES, read in chunks and dropped
at the cap), ``refused`` (a host that is not public, see ``check_host``); ``decode`` adds
``too_big`` (past IMAGE_MAX_PIXELS, checked before decoding) and ``undecodable``.
"""

from __future__ import annotations

import io
import ipaddress
import socket
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit

import requests
from PIL import Image

from common.images.versions import largest
from common.settings import Settings

CHUNK = 64 * 1024
MAX_REDIRECTS = 5


class FetchFailure(Exception):
    """Why one image could not be mirrored: a short reason and its detail."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True)
class FetchOptions:
    """How images are fetched (from the settings, or a test's own)."""

    workers: int = 4
    timeout: float = 20
    max_bytes: int = 30_000_000
    max_pixels: int = 60_000_000
    rewrites: tuple[tuple[str, str], ...] = ()
    retry_failed: bool = False
    limit: int | None = None
    progress: bool = True

    @classmethod
    def from_settings(cls, settings: Settings, **overrides: Any) -> FetchOptions:
        """Return the options the settings give, with these overrides."""
        values: dict[str, Any] = {
            "workers": settings.image_fetch_workers,
            "timeout": settings.image_fetch_timeout,
            "max_bytes": settings.image_max_bytes,
            "max_pixels": settings.image_max_pixels,
            "rewrites": parse_rewrites(settings.image_source_rewrite),
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        if values["workers"] < 1:
            raise ValueError("the number of workers must be at least 1")
        return cls(**values)


def parse_rewrites(text: str) -> tuple[tuple[str, str], ...]:
    """Parse IMAGE_SOURCE_REWRITE: ``from=to`` pairs separated by commas."""
    pairs = []
    for item in text.split(","):
        if not item.strip():
            continue
        source, sep, target = item.strip().partition("=")
        if not sep or not source or not target:
            raise ValueError(f"IMAGE_SOURCE_REWRITE: {item.strip()!r} is not from=to")
        pairs.append((source, target))
    return tuple(pairs)


def source_url(template: str, versions: Sequence[str], rewrites: Sequence[tuple[str, str]]) -> str:
    """Return the URL to fetch: the template's largest version, rewritten to a mirror."""
    version = largest(list(versions))
    url = template.replace("{image_version}", version) if version else template
    for prefix, target in rewrites:
        if url.startswith(prefix):
            return target + url[len(prefix) :]
    return url


def check_host(url: str, options: FetchOptions) -> None:
    """Refuse a URL that is not http(s), or whose host has an address that is not public
    (loopback, private, link-local such as a cloud's metadata service...): the museums' files
    are anyone's to edit, and the instance would publish what it fetched. A URL under a
    rewrite's target is the operator's own mirror, trusted as it is."""
    if any(url.startswith(target) for _, target in options.rewrites):
        return
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise FetchFailure("refused", "not an http(s) URL")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        found = socket.getaddrinfo(parts.hostname, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError, ValueError):
        raise FetchFailure("unreachable", "no such host") from None
    for *_, sockaddr in found:
        if not ipaddress.ip_address(str(sockaddr[0]).split("%")[0]).is_global:
            raise FetchFailure("refused", f"{parts.hostname} is not a public address")


def _open(session: requests.Session, url: str, options: FetchOptions) -> requests.Response:
    """Return the response at the end of a URL's redirects, each hop's host checked first."""
    for _ in range(MAX_REDIRECTS + 1):
        check_host(url, options)
        reply = session.get(url, stream=True, timeout=options.timeout, allow_redirects=False)
        if not reply.is_redirect:
            return reply
        url = urljoin(url, reply.headers.get("Location", ""))
        reply.close()
    raise FetchFailure("http_error", f"more than {MAX_REDIRECTS} redirects")


def download(session: requests.Session, url: str, options: FetchOptions) -> bytes:
    """Return an image's bytes, or raise ``FetchFailure`` (read in chunks, stopped at the cap)."""
    deadline = time.monotonic() + 4 * options.timeout
    try:
        with _open(session, url, options) as reply:
            if reply.status_code in (404, 410):
                raise FetchFailure("not_found", f"HTTP {reply.status_code}")
            if reply.status_code != 200:
                raise FetchFailure("http_error", f"HTTP {reply.status_code}")
            kind = reply.headers.get("Content-Type", "").split(";")[0].strip().lower()
            if not kind.startswith("image/"):
                raise FetchFailure("content_type", kind or "none")
            declared = reply.headers.get("Content-Length", "")
            if declared.isdigit() and int(declared) > options.max_bytes:
                raise FetchFailure("too_big", f"{int(declared):,} bytes declared")
            body = bytearray()
            for chunk in reply.iter_content(CHUNK):
                body += chunk
                if len(body) > options.max_bytes:
                    raise FetchFailure("too_big", f"over {options.max_bytes:,} bytes")
                if time.monotonic() > deadline:
                    raise FetchFailure("timeout", f"not read in {4 * options.timeout:g} s")
            return bytes(body)
    except requests.Timeout as error:
        raise FetchFailure("timeout", type(error).__name__) from None
    except requests.ConnectionError as error:
        # A read that times out mid-body surfaces as a ConnectionError wrapping urllib3's.
        if "timed out" in str(error).lower():
            raise FetchFailure("timeout", "read timed out") from None
        raise FetchFailure("unreachable", type(error).__name__) from None
    except requests.RequestException as error:
        raise FetchFailure("unreachable", type(error).__name__) from None


def decode(data: bytes, max_pixels: int) -> Image.Image:
    """Return the decoded picture, or raise ``FetchFailure`` (a bomb is refused undecoded).

    ``fetch_images`` sets Pillow's own guard (``Image.MAX_IMAGE_PIXELS``) to the cap: Pillow
    refuses twice the cap at ``open`` (and warns past it); the size read from the header is
    checked here before a pixel is decoded.
    """
    try:
        with Image.open(io.BytesIO(data)) as probe:
            if probe.width * probe.height > max_pixels:
                raise FetchFailure("too_big", f"{probe.width}x{probe.height} pixels")
            probe.verify()
        picture = Image.open(io.BytesIO(data))
        picture.load()
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as error:
        raise FetchFailure("too_big", str(error)[:120]) from None
    except FetchFailure:
        raise
    except Exception as error:  # any decoder error means the bytes are bad
        raise FetchFailure("undecodable", type(error).__name__) from None
    return picture
