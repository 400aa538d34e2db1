"""``artcat images fetch``: copy each artwork's published image into the instance's store.

The state of every copy is a row of ``image_mirrors`` (pending, mirrored, failed with its
reason and the number of attempts), written as each download ends: an interrupted run leaves
the rest pending and the next run takes them up; a mirrored image is never fetched again
while the artwork publishes the same image. Downloads run in a bounded thread pool; the
database is written from the calling thread only.

Why a download is not kept is recorded with it (``artcat.image_download``). Images the museum
no longer serves (every reason but a timeout, an unreachable host or an HTTP error) keep their
artwork, whose image becomes the placeholder.
"""

from __future__ import annotations

import hashlib
import threading
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field

import requests
from PIL import Image
from sqlalchemy import and_, exists, func, insert, literal, or_, select, update
from sqlalchemy.engine import Engine
from tqdm import tqdm

from artcat.image_download import FetchFailure, FetchOptions, decode, download, source_url
from common.ids import utcnow
from common.images.store import ImageStore
from common.images.versions import JPEG, instance_template, is_version, make_version
from common.models import Artwork, ImageMirror
from common.models.mirrors import FAILED, MIRRORED, PENDING

# The versions built for a published image that names none (a plain URL, no template).
DEFAULT_VERSIONS = ["square", "medium", "large", "larger"]
# Reasons that mean the museum does not serve this image (any more): its page shows the
# placeholder. The others may pass (a slow or unreachable host, a server error).
GONE = frozenset({"not_found", "content_type", "too_big", "undecodable", "refused"})


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
