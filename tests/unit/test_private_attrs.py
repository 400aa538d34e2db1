"""The check that production code reads no private name of another library (``make lint``):
ruff's SLF001 with the exceptions pyproject.toml lists, and ``.ci/private_attrs.py``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHECK = ROOT / ".ci" / "private_attrs.py"
RUFF = Path(sys.executable).with_name("ruff")

PLANTED = """\
import redis

class Line:
    def __init__(self, conn: redis.Connection) -> None:
        self._conn = conn

    def read(self) -> object:
        return self._conn._sock
"""

OWN = """\
from collections import namedtuple
import os

Row = namedtuple("Row", "a b")

class Gate:
    _idle: list[int] = []

    def __init__(self) -> None:
        self._pid = os.getpid()

    def take(self) -> object:
        return self._idle, super().__init__, Row._make([1, 2])._asdict()

    def __repr__(self) -> str:
        return getattr(self, "_pid").__repr__()

def _helper() -> None:
    os._exit(0)
"""


def check(*paths: Path) -> subprocess.CompletedProcess[str]:
    """Run the checker on ``paths`` from the repository's root."""
    return subprocess.run(
        [sys.executable, str(CHECK), *map(str, paths)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )


def ruff(source: str, name: str) -> subprocess.CompletedProcess[str]:
    """Run the project's ruff rules on ``source`` as if it were the file ``name``."""
    return subprocess.run(
        [str(RUFF), "check", "--select", "SLF001", "--stdin-filename", name, "-"],
        cwd=ROOT,
        input=source,
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_production_code_passes() -> None:
    done = check()
    assert (done.returncode, done.stdout) == (0, "")


def test_a_private_attribute_of_another_object_fails(tmp_path: Path) -> None:
    planted = tmp_path / "planted.py"
    planted.write_text(PLANTED)
    done = check(planted)
    assert done.returncode == 1
    assert done.stdout.strip().endswith("planted.py:8: private attribute '_sock' of another object")
    assert "_conn" not in done.stdout  # self._conn is the class's own


def test_our_own_private_names_and_the_public_underscore_names_pass(tmp_path: Path) -> None:
    (tmp_path / "own.py").write_text(OWN)
    done = check(tmp_path)
    assert (done.returncode, done.stdout) == (0, "")


def test_a_private_name_read_by_name_or_a_noqa_fails(tmp_path: Path) -> None:
    planted = tmp_path / "planted.py"
    planted.write_text(
        "def f(conn: object) -> object:\n"
        "    return getattr(conn, '_parser', None)\n"
        "x = f._y  # noqa: SLF001\n"
    )
    done = check(planted)
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert "private name '_parser' read by name" in lines[0]
    assert "private attribute '_y'" in lines[1]
    assert "noqa for SLF001" in lines[2]


def test_an_allowed_file_may_read_its_listed_names_only(tmp_path: Path) -> None:
    """The limiter's file may read limits' window keys, and nothing else private."""
    source = (ROOT / "resource_server" / "ratelimit.py").read_text()
    copy = tmp_path / "resource_server" / "ratelimit.py"
    copy.parent.mkdir()
    copy.write_text(source)
    run = [sys.executable, str(CHECK), "resource_server/ratelimit.py"]
    done = subprocess.run(run, cwd=tmp_path, capture_output=True, text=True, check=False)
    assert (done.returncode, done.stdout) == (0, "")
    copy.write_text(source + "\n\ndef more(storage: object) -> object:\n    return storage._pool\n")
    done = subprocess.run(run, cwd=tmp_path, capture_output=True, text=True, check=False)
    assert done.returncode == 1
    assert "private attribute '_pool' of another object" in done.stdout
    assert "_window_key" not in done.stdout


def test_ruff_refuses_a_private_attribute_in_production_code_only() -> None:
    assert "SLF001" in ruff(PLANTED, "resource_server/planted.py").stdout
    assert ruff(PLANTED, "tests/unit/planted.py").returncode == 0
    assert ruff(OWN, "common/own.py").returncode == 0


def test_another_librarys_codec_error_handler_fails(tmp_path: Path) -> None:
    """A handler a library registers for itself (werkzeug's ``werkzeug.url_quote``) is none of
    its public interface; Python's own handlers are."""
    planted = tmp_path / "planted.py"
    planted.write_text(
        "import codecs\n"
        "from urllib.parse import parse_qsl\n"
        "a = parse_qsl('a=%FF', errors='werkzeug.url_quote')\n"
        "b = codecs.lookup_error('werkzeug.url_quote')\n"
        "c = parse_qsl('a=%FF', errors='strict'), b'x'.decode(errors='replace')\n"
    )
    done = check(planted)
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert len(lines) == 2
    found = "codec error handler 'werkzeug.url_quote' of another library"
    assert lines[0].endswith(f"planted.py:3: {found}")
    assert lines[1].endswith(f"planted.py:4: {found}")
