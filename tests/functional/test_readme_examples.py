"""The README's Python example runs as written against a live server, and the default rate
limit lets a client follow every link of a page of results at once."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session

from artcat.loaders.demo import demo_credentials, load_demo
from auth_server.app import create_app as create_auth
from common.models import Artist
from common.serve import PathDispatcher
from common.settings import AuthSettings, ResourceSettings, Settings
from common.stores import Stores
from resource_server.app import create_app as create_resource
from tests.servers import LiveServer, start_server

pytestmark = pytest.mark.functional

README = Path(__file__).resolve().parents[2] / "README.md"


def python_example() -> str:
    """Return the code of the README's "Use it from Python" section."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Use it from Python") :]
    found = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert found is not None
    return found.group(1)


def serving(base: Settings, stores: Stores, **limits: Any) -> LiveServer:
    """Both services over real HTTP, with the resource server's rate limits given."""
    fields = {f: getattr(base, f) for f in base.__dataclass_fields__}
    resource = ResourceSettings(**fields, **limits)
    app = PathDispatcher(
        create_auth(AuthSettings(**fields), stores), create_resource(resource, stores)
    )
    return start_server(app)


@pytest.fixture
def demo(clean_db: Engine, base_settings: Settings) -> Iterator[int]:
    """The demo catalog; yields its number of artists."""
    load_demo(clean_db, base_settings, artworks=30)
    with Session(clean_db) as s:
        yield int(s.scalar(select(func.count()).select_from(Artist)) or 0)


def test_the_python_example_runs_and_waits_out_the_rate_limit(
    demo: int,
    base_settings: Settings,
    stores: Stores,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With a limit small enough that the walk meets 429s, it still lists every artist."""
    live = serving(base_settings, stores, rate_limit="4/second", rate_limit_burst=4)
    creds = demo_credentials(base_settings)
    code = python_example()
    assert 'API = "http://127.0.0.1:8000/api"' in code and "?size=20" in code
    code = code.replace("http://127.0.0.1:8000", live.url).replace("?size=20", "?size=4")
    sleeps: list[float] = []
    namespace = {"CLIENT_ID": creds.client_id, "CLIENT_SECRET": creds.client_secret}
    real_sleep = time.sleep

    def counted_sleep(seconds: float) -> None:
        sleeps.append(seconds)
        real_sleep(seconds)

    monkeypatch.setattr(time, "sleep", counted_sleep)  # the example's own ``import time``
    try:
        exec(compile(code, str(README), "exec"), namespace)  # noqa: S102 - the README's own code
    finally:
        live.stop()
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == demo
    assert all(f"{live.url}/api/artists/" in line for line in lines)
    assert sleeps, "the walk met no 429: the limit of this test is too high to show anything"


def api_links(document: dict[str, Any], base: str) -> list[str]:
    """Return the untemplated API links of a document and of its embedded items."""
    found = []
    for link in document.get("_links", {}).values():
        href = link.get("href", "") if isinstance(link, dict) else ""
        if href.startswith(f"{base}/api") and not link.get("templated"):
            found.append(href)
    for items in document.get("_embedded", {}).values():
        for item in items if isinstance(items, list) else []:
            found += api_links(item, base)
    return found


def test_the_default_limit_lets_a_client_follow_every_link_of_a_page(
    demo: int, base_settings: Settings, stores: Stores
) -> None:
    """The reference's 5 a second, with a burst: a page of artists and one of artworks, each
    with every link of every item followed at once, meet no 429."""
    live = serving(base_settings, stores)  # the default RATE_LIMIT and RATE_LIMIT_BURST
    try:
        assert (ResourceSettings.rate_limit, ResourceSettings.rate_limit_burst) == ("5/second", 100)
        creds = demo_credentials(base_settings)
        token = requests.post(
            f"{live.url}/api/tokens/xapp_token",
            data={"client_id": creds.client_id, "client_secret": creds.client_secret},
            timeout=20,
        ).json()["token"]
        http = requests.Session()
        http.headers["X-Xapp-Token"] = token
        sent = 0
        for kind in ("artists", "artworks"):
            page = http.get(f"{live.url}/api/{kind}", timeout=20)
            sent += 1
            assert page.status_code == 200
            for href in api_links(page.json(), live.url):
                answer = http.get(href, timeout=20)
                sent += 1
                assert answer.status_code != 429, (sent, href)
        assert sent > 40  # far more than the reference's bare 5 a second allowed at once
    finally:
        live.stop()
