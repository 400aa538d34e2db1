"""Fetch a museum's published data: resumable, checked, unpacked into the instance folder.

The file is written to ``<instance>/downloads/<museum>/<name>.part`` as it arrives. Fetching
the same URL again after an interrupted transfer continues where it stopped (an HTTP Range
request), or starts over when the server ignores the range. A file shorter than the size the
server announced is an error (kept, to resume); a file whose SHA-256 is not the one given is
deleted, and nothing is unpacked or loaded. An archive (zip, tar, tar.gz) is unpacked into
``<instance>/museums/<museum>/``, refusing members that would land outside it; a plain file
(MoMA's CSV) is used as it is.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import tarfile
import zipfile
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlsplit

import requests
from tqdm import tqdm

from common.settings import Settings

# Bytes per read: what arrived before an interruption is kept up to the last whole read.
CHUNK = 1 << 14
# Seconds to wait for the server to connect or to send the next bytes (not the whole file).
TIMEOUT = 60
_CONTENT_RANGE = re.compile(r"bytes (?:(\d+)-\d+|\*)/(\d+)")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class DownloadError(Exception):
    """A download that cannot be used: nothing was loaded."""


def archive_url(settings: Settings, museum: str) -> str:
    """Return the configured URL of a museum's published data."""
    urls = {
        "tate": settings.tate_archive_url,
        "cmoa": settings.cmoa_archive_url,
        "moma-artists": settings.moma_artists_url,
    }
    return urls[museum]


def download(
    settings: Settings, museum: str, *, sha256: str | None = None, progress: bool = True
) -> Path:
    """Fetch a museum's data from its configured URL and return the path to load."""
    url = archive_url(settings, museum)
    folder = settings.instance_dir / "downloads" / museum
    fetched = fetch(url, folder, sha256=sha256, progress=progress)
    return unpack(fetched, settings.instance_dir / "museums" / museum)


def file_name(url: str) -> str:
    """Return a safe local file name for the last segment of ``url``'s path."""
    name = PurePosixPath(unquote(urlsplit(url).path)).name
    return _UNSAFE.sub("_", name).strip("._") or "download"


def fetch(url: str, folder: Path, *, sha256: str | None = None, progress: bool = True) -> Path:
    """Download ``url`` into ``folder`` (resuming a partial file); return the whole file."""
    if urlsplit(url).scheme not in ("http", "https"):
        raise DownloadError(f"{url}: only http and https URLs can be downloaded")
    expected = sha256.strip().lower() if sha256 else None
    if expected is not None and not re.fullmatch(r"[0-9a-f]{64}", expected):
        raise DownloadError(f"--sha256 {sha256!r} is not a SHA-256 digest (64 hex digits)")
    folder.mkdir(parents=True, exist_ok=True)
    name = file_name(url)
    target, part = folder / name, folder / f"{name}.part"
    total = _transfer(url, part, progress)
    size = part.stat().st_size
    if total is not None and size != total:
        raise DownloadError(
            f"{url}: got {size:,} of {total:,} bytes; run the command again to resume"
        )
    if expected is not None:
        digest = _sha256(part)
        if digest != expected:
            part.unlink()
            raise DownloadError(
                f"{url}: SHA-256 mismatch (expected {expected}, got {digest}); "
                "the file was deleted and nothing was loaded"
            )
    part.replace(target)
    return target


def _transfer(url: str, part: Path, progress: bool) -> int | None:
    """Write the rest of ``url`` to ``part``; return the whole file's size, if announced."""
    done = part.stat().st_size if part.exists() else 0
    headers = {"Range": f"bytes={done}-"} if done else {}
    total: int | None
    try:
        with requests.get(url, headers=headers, stream=True, timeout=TIMEOUT) as response:
            status = response.status_code
            announced = _CONTENT_RANGE.fullmatch(response.headers.get("Content-Range", ""))
            if status == 416 and announced and int(announced.group(2)) == done:
                return done  # the partial file was already whole
            if status == 206 and announced and int(announced.group(1) or -1) == done:
                mode, total = "ab", int(announced.group(2))
            elif status == 200:
                done, mode = 0, "wb"  # no (usable) range: start over
                length = response.headers.get("Content-Length", "")
                total = int(length) if length.isdigit() else None
            elif status in (206, 416):  # a range we did not ask for, or a changed file
                part.unlink(missing_ok=True)
                return _transfer(url, part, progress)
            else:
                raise DownloadError(f"{url}: the server answered HTTP {status}")
            with (
                part.open(mode) as out,
                tqdm(
                    total=total,
                    initial=done,
                    unit="B",
                    unit_scale=True,
                    desc=part.name.removesuffix(".part"),
                    disable=not progress,
                ) as bar,
            ):
                for chunk in response.iter_content(CHUNK):
                    out.write(chunk)
                    bar.update(len(chunk))
            return total
    except requests.RequestException as exc:
        got = part.stat().st_size if part.exists() else 0
        raise DownloadError(
            f"{url}: transfer interrupted after {got:,} bytes ({exc.__class__.__name__}); "
            "run the command again to resume"
        ) from exc


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as data:
        for block in iter(lambda: data.read(CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def unpack(archive: Path, target: Path) -> Path:
    """Unpack a zip or tar archive into ``target`` (replacing it); return the data's folder.

    GitHub's archives hold one top folder (``collection-master/``): that folder is returned.
    A file that is no archive is returned as it is.
    """
    is_zip = zipfile.is_zipfile(archive)
    if not is_zip and not tarfile.is_tarfile(archive):
        return archive
    fresh = target.with_name(f"{target.name}.unpacking")
    shutil.rmtree(fresh, ignore_errors=True)
    fresh.mkdir(parents=True)
    try:
        if is_zip:
            with zipfile.ZipFile(archive) as bundle:
                root = fresh.resolve()
                for member in bundle.namelist():
                    if not (root / member).resolve().is_relative_to(root):
                        raise DownloadError(f"{archive.name}: {member!r} would land outside")
                    bundle.extract(member, fresh)
        else:
            with tarfile.open(archive) as bundle:
                bundle.extractall(fresh, filter="data")  # refuses links and paths outside
    except DownloadError:
        shutil.rmtree(fresh, ignore_errors=True)
        raise
    except (zipfile.BadZipFile, tarfile.TarError, OSError) as exc:
        shutil.rmtree(fresh, ignore_errors=True)
        raise DownloadError(f"{archive.name}: cannot unpack: {exc}") from exc
    shutil.rmtree(target, ignore_errors=True)
    fresh.replace(target)
    entries = list(target.iterdir())
    return entries[0] if len(entries) == 1 and entries[0].is_dir() else target
