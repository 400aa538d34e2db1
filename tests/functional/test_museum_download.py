"""``--download``: a museum's archive from a local HTTP server, resumed, checked, then loaded."""

from __future__ import annotations

import hashlib
import io
import threading
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from sqlalchemy import create_engine, text

from artcat.cli.main import main
from artcat.loaders.download import fetch
from tests.constants import SAMPLE_DATA

pytestmark = [pytest.mark.functional, pytest.mark.data]


@dataclass
class Server:
    """A loopback HTTP server of in-memory files that honours ``Range: bytes=N-``."""

    url: str
    files: dict[str, bytes] = field(default_factory=dict)
    # Path -> bytes after which the next response for it is cut off (once).
    cut: dict[str, int] = field(default_factory=dict)
    ranges: bool = True
    # (path, Range header) of every request, in order.
    seen: list[tuple[str, str | None]] = field(default_factory=list)


def _handler(server: Server) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            wanted = self.headers.get("Range")
            server.seen.append((self.path, wanted))
            data = server.files.get(self.path)
            if data is None:
                self.send_error(404)
                return
            start = 0
            if wanted and server.ranges:
                start = int(wanted.removeprefix("bytes=").rstrip("-"))
                if start >= len(data):
                    self.send_response(416)
                    self.send_header("Content-Range", f"bytes */{len(data)}")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
            else:
                self.send_response(200)
            body = data[start:]
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            cut = server.cut.pop(self.path, None)
            self.wfile.write(body if cut is None else body[:cut])
            self.close_connection = True

        def log_message(self, format: str, *args: object) -> None:
            """Keep the test output quiet."""

    return Handler


@pytest.fixture
def server() -> Iterator[Server]:
    """Serve files on a free loopback port for one test."""
    state = Server(url="")
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield state
    httpd.shutdown()
    httpd.server_close()
    thread.join()


def github_zip(folder: Path, top: str = "collection-master") -> bytes:
    """Return a zip of ``folder`` laid out as GitHub's repository archives are."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as bundle:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                bundle.write(path, f"{top}/{path.relative_to(folder).as_posix()}")
    return buffer.getvalue()


def run(instance: Path, *args: str, **urls: str) -> Result:
    """Run ``artcat`` on a fresh SQLite instance with the given archive URL settings."""
    env = {"INSTANCE_DIR": str(instance), "DATABASE_URL": "", "REDIS_URL": ""}
    env |= {name.upper(): url for name, url in urls.items()}
    return CliRunner().invoke(main, [*args, "--no-progress"], env=env)


def artworks(instance: Path) -> int:
    """Return the number of artworks in an instance's database."""
    engine = create_engine(f"sqlite:///{instance}/artcat.sqlite3")
    try:
        with engine.connect() as conn:
            return int(conn.execute(text("SELECT count(*) FROM artworks")).scalar_one())
    finally:
        engine.dispose()


def test_download_checks_unpacks_and_loads(server: Server, tmp_path: Path) -> None:
    archive = github_zip(SAMPLE_DATA / "tate")
    server.files["/tate/master.zip"] = archive
    digest = hashlib.sha256(archive).hexdigest()
    url = f"{server.url}/tate/master.zip"
    result = run(tmp_path, "load", "tate", "--download", "--sha256", digest, tate_archive_url=url)
    assert result.exit_code == 0, result.output
    assert "artworks 350" in result.output
    assert (tmp_path / "museums" / "tate" / "collection-master" / "artworks").is_dir()
    assert artworks(tmp_path) == 350
    assert server.seen == [("/tate/master.zip", None)]


def test_an_interrupted_download_resumes_where_it_stopped(server: Server, tmp_path: Path) -> None:
    archive = github_zip(SAMPLE_DATA / "cmoa")
    server.files["/cmoa.zip"] = archive
    stop = len(archive) // 3
    server.cut["/cmoa.zip"] = stop
    url = f"{server.url}/cmoa.zip"

    first = run(tmp_path, "load", "cmoa", "--download", cmoa_archive_url=url)
    assert first.exit_code == 1
    assert "run the command again to resume" in first.output
    # What arrived is kept (up to the last whole read) for the next run to continue from.
    kept = (tmp_path / "downloads" / "cmoa" / "cmoa.zip.part").stat().st_size
    assert 0 < kept <= stop
    assert artworks(tmp_path) == 0  # nothing half-loaded

    digest = hashlib.sha256(archive).hexdigest()
    second = run(tmp_path, "load", "cmoa", "--download", "--sha256", digest, cmoa_archive_url=url)
    assert second.exit_code == 0, second.output
    assert server.seen[-1] == ("/cmoa.zip", f"bytes={kept}-")
    assert (tmp_path / "downloads" / "cmoa" / "cmoa.zip").read_bytes() == archive
    assert artworks(tmp_path) == 155


def test_a_checksum_mismatch_loads_nothing(server: Server, tmp_path: Path) -> None:
    server.files["/cmoa.zip"] = github_zip(SAMPLE_DATA / "cmoa")
    result = run(
        tmp_path,
        "load",
        "cmoa",
        "--download",
        "--sha256",
        "0" * 64,
        cmoa_archive_url=f"{server.url}/cmoa.zip",
    )
    assert result.exit_code == 1
    assert "SHA-256 mismatch" in result.output and "nothing was loaded" in result.output
    assert list((tmp_path / "downloads" / "cmoa").iterdir()) == []  # not kept to resume
    assert not (tmp_path / "museums").exists()
    assert artworks(tmp_path) == 0


def test_a_server_that_ignores_ranges_gives_the_whole_file(server: Server, tmp_path: Path) -> None:
    data = (SAMPLE_DATA / "moma" / "Artists.csv").read_bytes()
    server.files["/Artists.csv"] = data
    server.ranges = False
    (tmp_path / "Artists.csv.part").write_bytes(b"stale bytes")
    fetched = fetch(f"{server.url}/Artists.csv", tmp_path, progress=False)
    assert fetched.read_bytes() == data
    assert server.seen == [("/Artists.csv", "bytes=11-")]


def test_moma_artists_downloads_the_csv(server: Server, tmp_path: Path) -> None:
    server.files["/media/Artists.csv"] = (SAMPLE_DATA / "moma" / "Artists.csv").read_bytes()
    result = run(
        tmp_path,
        "load",
        "moma-artists",
        "--download",
        moma_artists_url=f"{server.url}/media/Artists.csv",
    )
    assert result.exit_code == 0, result.output
    assert "moma artists not in the catalog" in result.output


def test_path_or_download_not_both(tmp_path: Path) -> None:
    both = run(tmp_path, "load", "tate", str(SAMPLE_DATA / "tate"), "--download")
    assert both.exit_code == 2 and "either PATH or --download" in both.output
    neither = run(tmp_path, "load", "cmoa")
    assert neither.exit_code == 2
    no_download = run(tmp_path, "load", "cmoa", str(SAMPLE_DATA / "cmoa"), "--sha256", "ab")
    assert no_download.exit_code == 2 and "--sha256" in no_download.output
    # Refused before any request (and the URL is a closed loopback port besides).
    bad_digest = run(
        tmp_path,
        "load",
        "cmoa",
        "--download",
        "--sha256",
        "xyz",
        cmoa_archive_url="http://127.0.0.1:9/cmoa.zip",
    )
    assert bad_digest.exit_code == 1 and "not a SHA-256 digest" in bad_digest.output
