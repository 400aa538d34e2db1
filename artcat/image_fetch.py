"""``artcat images fetch``: copy each artwork's published image into the instance's store.

The state of every copy is a row of ``image_mirrors`` (pending, mirrored, failed with its
reason and the number of attempts), written as each download ends: an interrupted run leaves
the rest pending and the next run takes them up; a mirrored image is never fetched again
while the artwork publishes the same image. Downloads run in a bounded thread pool; the
database is written from the calling thread only.

A download is refused, and the reason recorded, when the museum answers 404/410
(``not_found``) or another error (``http_error``), is too slow (``timeout``) or unreachable,
sends something other than an image (``content_type``), more than IMAGE_MAX_BYTES or more
than IMAGE_MAX_PIXELS pixels (``too_big``: the body is read in chunks and dropped past the
cap; the pixel count is checked before decoding), or bytes Pillow cannot decode
(``undecodable``); a URL on a host that is not public is never asked (``refused``, see
``check_host``). Images the museum no longer serves (every reason but a timeout, an
unreachable host or an HTTP error) keep their artwork, whose image becomes the placeholder.
"""

from __future__ import annotations

import hashlib
import io
import ipaddress
import socket
import threading
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin, urlsplit

import requests
from PIL import Image
from sqlalchemy import and_, exists, func, insert, literal, or_, select, update
from sqlalchemy.engine import Engine
from tqdm import tqdm

from common.ids import utcnow
from common.images.store import ImageStore
from common.images.versions import JPEG, instance_template, is_version, largest, make_version
from common.models import Artwork, ImageMirror
from common.models.mirrors import FAILED, MIRRORED, PENDING
from common.settings import Settings

# The versions built for a published image that names none (a plain URL, no template).
DEFAULT_VERSIONS = ["square", "medium", "large", "larger"]
# Reasons that mean the museum does not serve this image (any more): its page shows the
# placeholder. The others may pass (a slow or unreachable host, a server error).
GONE = frozenset({"not_found", "content_type", "too_big", "undecodable", "refused"})
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


@dataclass
class FetchReport:
    """What a run did: images mirrored, failures by reason, the failed images' detail."""

    to_do: int = 0
    mirrored: int = 0
    failed: Counter[str] = field(default_factory=Counter)
    failures: list[tuple[str, str, str]] = field(default_factory=list)  # id, url, reason

    def summary(self, shown: int = 20) -> str:
        """Return the lines printed at the end of a run."""
        if not self.to_do:
            return "Nothing to fetch: every image is mirrored or given up on."
        lines = [f"{self.mirrored:,} of {self.to_do:,} images mirrored, "
                 f"{sum(self.failed.values()):,} failed."]  # fmt: skip
        for reason, n in sorted(self.failed.items()):
            lines.append(f"  {reason}: {n:,}")
        for artwork_id, url, reason in self.failures[:shown]:
            lines.append(f"  artwork {artwork_id}: {reason} ({url})")
        if len(self.failures) > shown:
            lines.append(f"  ... and {len(self.failures) - shown:,} more")
        return "\n".join(lines)


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


@dataclass(frozen=True)
class Job:
    """One image to mirror: its artwork, its published template and the versions to build."""

    artwork_id: str
    template: str
    versions: tuple[str, ...]


@dataclass(frozen=True)
class Done:
    """A mirrored image: where its versions are, its size."""

    digest: str
    width: int
    height: int


class Sessions(threading.local):
    """One HTTP session per worker thread (its own connection pool, kept between images)."""

    def get(self) -> requests.Session:
        """Return this thread's session, made on its first use."""
        session: requests.Session | None = getattr(self, "session", None)
        if session is None:
            session = self.session = requests.Session()
            session.headers["User-Agent"] = "artcat-image-mirror"
        return session


def mirror(job: Job, sessions: Sessions, store: ImageStore, options: FetchOptions) -> Done:
    """Fetch, check and store every version of one image (a thread pool worker's task)."""
    data = download(
        sessions.get(), source_url(job.template, job.versions, options.rewrites), options
    )
    picture = decode(data, options.max_pixels)
    digest = hashlib.sha256(data).hexdigest()[:32]
    for version in job.versions:
        key = f"{digest}/{version}.jpg"
        if not store.exists(key):
            store.put(key, make_version(picture, version), JPEG)
    return Done(digest, picture.width, picture.height)


def versions_of(template: str, versions: Sequence[str] | None) -> tuple[str, ...]:
    """Return the versions to build: the listed ones, or the defaults for a plain URL."""
    listed = [v for v in versions or [] if is_version(v)]
    return tuple(listed) if "{image_version}" in template and listed else tuple(DEFAULT_VERSIONS)


def placeholder_template(artwork_id: str) -> str:
    """Return the site-relative template of an artwork's placeholder."""
    return f"/images/placeholder-{artwork_id}/{{image_version}}.svg"


_WEB = or_(Artwork.image_url.like("http://%"), Artwork.image_url.like("https://%"))


def sync(engine: Engine) -> None:
    """Queue every artwork's published image not yet queued, and re-queue changed ones."""
    now = utcnow()
    queued = exists().where(ImageMirror.artwork_id == Artwork.id)
    with engine.begin() as conn:
        conn.execute(
            insert(ImageMirror).from_select(
                ["artwork_id", "source_url", "status", "attempts", "updated_at"],
                select(
                    Artwork.id,
                    Artwork.image_url,
                    literal(PENDING),
                    literal(0),
                    literal(now, ImageMirror.updated_at.type),
                ).where(_WEB, ~queued),
            )
        )
        # A reload that publishes another image: mirror it afresh; one that publishes the same
        # image again: point the artwork back at its copy, with no download.
        rows = conn.execute(
            select(
                Artwork.id,
                Artwork.image_url,
                Artwork.image_versions,
                ImageMirror.source_url,
                ImageMirror.status,
                ImageMirror.digest,
            )
            .join(ImageMirror, ImageMirror.artwork_id == Artwork.id)
            .where(_WEB)
        ).all()
        for artwork_id, url, versions, source, status, digest in rows:
            if url != source:
                conn.execute(
                    update(ImageMirror)
                    .where(ImageMirror.artwork_id == artwork_id)
                    .values(source_url=url, status=PENDING, attempts=0, reason=None, digest=None)
                )
            elif status == MIRRORED and digest:
                conn.execute(
                    update(Artwork)
                    .where(Artwork.id == artwork_id)
                    .values(
                        image_url=instance_template(digest),
                        image_versions=list(versions_of(url, versions)),
                    )
                )


def jobs(engine: Engine, options: FetchOptions) -> list[Job]:
    """Return the images to fetch this run (pending ones, and failed ones when retried)."""
    states = [PENDING, FAILED] if options.retry_failed else [PENDING]
    stmt = (
        select(ImageMirror.artwork_id, ImageMirror.source_url, Artwork.image_versions)
        .join(Artwork, Artwork.id == ImageMirror.artwork_id)
        .where(ImageMirror.status.in_(states))
        .order_by(ImageMirror.artwork_id)
        .limit(options.limit)
    )
    with engine.connect() as conn:
        return [Job(i, url, versions_of(url, v)) for i, url, v in conn.execute(stmt)]


def record(engine: Engine, job: Job, outcome: Done | FetchFailure) -> None:
    """Write one outcome: the mirror's state, and the artwork's image URL when it changes."""
    # The artwork still publishes what was fetched (or shows its placeholder already).
    same = and_(
        Artwork.id == job.artwork_id,
        Artwork.image_url.in_([job.template, placeholder_template(job.artwork_id)]),
    )
    at = ImageMirror.artwork_id == job.artwork_id
    with engine.begin() as conn:
        if isinstance(outcome, Done):
            conn.execute(
                update(ImageMirror)
                .where(at)
                .values(
                    status=MIRRORED,
                    reason=None,
                    attempts=ImageMirror.attempts + 1,
                    digest=outcome.digest,
                    width=outcome.width,
                    height=outcome.height,
                )
            )
            url = instance_template(outcome.digest)
            conn.execute(
                update(Artwork).where(same).values(image_url=url, image_versions=list(job.versions))
            )
            return
        conn.execute(
            update(ImageMirror)
            .where(at)
            .values(status=FAILED, reason=str(outcome)[:500], attempts=ImageMirror.attempts + 1)
        )
        if outcome.reason in GONE:
            conn.execute(
                update(Artwork).where(same).values(image_url=placeholder_template(job.artwork_id))
            )


def fetch_images(engine: Engine, store: ImageStore, options: FetchOptions) -> FetchReport:
    """Mirror every pending image (see the module's docstring) and report what happened."""
    guard = Image.MAX_IMAGE_PIXELS
    Image.MAX_IMAGE_PIXELS = options.max_pixels  # Pillow's decompression-bomb guard
    try:
        return _fetch(engine, store, options)
    finally:
        Image.MAX_IMAGE_PIXELS = guard


def _fetch(engine: Engine, store: ImageStore, options: FetchOptions) -> FetchReport:
    sync(engine)
    todo = jobs(engine, options)
    report = FetchReport(to_do=len(todo))
    if not todo:
        return report
    sessions = Sessions()
    with (
        ThreadPoolExecutor(max_workers=options.workers, thread_name_prefix="image") as pool,
        tqdm(total=len(todo), desc="images", unit="image", disable=not options.progress) as bar,
    ):
        futures: dict[Future[Done], Job] = {
            pool.submit(mirror, job, sessions, store, options): job for job in todo
        }
        try:
            for future in as_completed(futures):
                job = futures[future]
                try:
                    outcome: Done | FetchFailure = future.result()
                except FetchFailure as failure:
                    outcome = failure
                record(engine, job, outcome)
                if isinstance(outcome, Done):
                    report.mirrored += 1
                else:
                    report.failed[outcome.reason] += 1
                    report.failures.append((job.artwork_id, job.template, str(outcome)))
                bar.update()
        except BaseException:
            # The store or the database failed (or Ctrl-C): nothing more is started; what is
            # not recorded stays pending for the next run.
            pool.shutdown(wait=True, cancel_futures=True)
            raise
    return report


def mirror_counts(engine: Engine) -> dict[str, int]:
    """Return how many images are in each state, and the failed ones by reason."""
    with engine.connect() as conn:
        states: dict[str, int] = {
            status: n
            for status, n in conn.execute(
                select(ImageMirror.status, func.count()).group_by(ImageMirror.status)
            )
        }
        failed = conn.execute(
            select(ImageMirror.reason, func.count())
            .where(ImageMirror.status == FAILED)
            .group_by(ImageMirror.reason)
        ).all()
    counts = {state: int(states.get(state, 0)) for state in (PENDING, MIRRORED, FAILED)}
    by_reason: Counter[str] = Counter()
    for text, n in failed:
        by_reason[str(text or "").split(":")[0] or "unknown"] += int(n)
    counts.update({f"failed {name}": n for name, n in sorted(by_reason.items())})
    return counts
