"""An unpublished artwork is indistinguishable from a missing one, on every entry that takes an
artwork id, over real HTTP.

The attack: the rule "an unpublished artwork is never shown, cannot be read by id" held on
``/api/artworks/{id}``, but ``/api/artists?artwork_id=``, ``/api/genes?artwork_id=`` and
``/api/artworks?similar_to_artwork_id=`` answered for an unpublished artwork (so confirming
that it exists and whose it is), and ``/api/images/{id}`` served the image of one. Whoever
held or guessed the id of a work not yet published could read around the rule.

What holds: the entries are not listed by hand but walked from what the server declares, so a
route or filter added later is covered without touching this test:

- every operation of the served OpenAPI document (generated from the route declarations) with
  an artwork id in its path (``/artworks/{id}``), a query parameter naming one (``artwork_id``,
  ``*_artwork_id``) or a request body field named so;
- every item route ``/api/<table>/{id}`` of a table whose rows hang off an artwork (a foreign
  key to ``artworks.id`` in the models): an image, an edition, a lot, a collection item;
- every HTML page whose path takes an artwork (``/artwork/{key}``).

For each, first with the artwork published, the answer must differ from the answer for a
missing id: that proves the entry was exercised (a route the test cannot call with what it
knows fails here, naming itself). Then, the artwork unpublished, its answer must be the
missing one's: the same status and the same body, once the ids in it are swapped. Finally no
list filtered by one of the artwork's neighbours (its artist, gene, partner, show, sale,
collection), no search and no neighbour's page names the hidden artwork.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from itertools import product
from typing import Any

import pytest
import requests
from sqlalchemy import Table, select, update

from common.models import (
    Artwork,
    ArtworkArtist,
    ArtworkGene,
    Base,
    Collection,
    Edition,
    Image,
    Sale,
    SaleArtwork,
    ShowArtwork,
)
from resource_server.web import PAGE_PATHS
from tests.functional.catalog_support import Catalog

pytestmark = pytest.mark.functional

ARTWORK_PARAM = re.compile(r"^(.+_)?artwork_id$")
PLACEHOLDER = re.compile(r"\{([^}]+)\}")


def new_id() -> str:
    """Return an id that names nothing."""
    return os.urandom(12).hex()


@dataclass(frozen=True)
class Entry:
    """One way into the server that takes an artwork (or a row hanging off one).

    ``where`` is ``path`` (the artwork in the path), ``query`` or ``body`` (a parameter
    ``name``), or ``row`` (the item route of the table ``name``, whose row hangs off it).
    """

    method: str
    path: str
    where: str
    name: str
    operation: dict[str, Any]

    def __str__(self) -> str:
        return f"{self.method.upper()} {self.path} ({self.where} {self.name})"


def takes_artwork_in_path(path: str) -> str | None:
    """Return the placeholder of a path that takes an artwork (``/artworks/{id}``,
    ``/artwork/{key}``), else None."""
    found = re.search(r"/artworks?/\{([^}]+)\}", path)
    return found.group(1) if found else None


def artwork_tables() -> dict[str, Table]:
    """Return the tables whose rows hang off an artwork (a foreign key to ``artworks.id``)."""
    return {
        name: table
        for name, table in Base.metadata.tables.items()
        if name != "artworks"
        and any(fk.target_fullname == "artworks.id" for fk in table.foreign_keys)
    }


def body_fields(operation: dict[str, Any]) -> dict[str, Any]:
    """Return the properties of an operation's JSON request body (none without one)."""
    content = operation.get("requestBody", {}).get("content", {})
    schema = content.get("application/json", {}).get("schema", {})
    return dict(schema.get("properties", {}))


def discover(document: dict[str, Any]) -> list[Entry]:
    """Walk the OpenAPI document and the pages: every entry that takes an artwork."""
    tables = artwork_tables()
    entries: list[Entry] = []
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            if method == "head":
                continue  # HEAD answers as GET does, without the body
            placeholder = takes_artwork_in_path(path)
            if placeholder is not None:
                entries.append(Entry(method, path, "path", placeholder, operation))
            for param in operation.get("parameters", []):
                if param["in"] == "query" and ARTWORK_PARAM.match(param["name"]):
                    entries.append(Entry(method, path, "query", param["name"], operation))
            for name in body_fields(operation):
                if ARTWORK_PARAM.match(name):
                    entries.append(Entry(method, path, "body", name, operation))
            table = re.fullmatch(r"/api/(\w+)/\{id\}", path)
            if method == "get" and table and table.group(1) in tables:
                entries.append(Entry(method, path, "row", table.group(1), operation))
    for page in PAGE_PATHS:
        placeholder = takes_artwork_in_path(page)
        if placeholder is not None:
            entries.append(Entry("get", page, "path", placeholder, {"security": []}))
    return entries


@dataclass
class Subject:
    """The artwork under test, its neighbours, and the rows hanging off it."""

    artwork: Artwork
    context: dict[str, str]  # a value for each parameter a request may need besides it
    rows: dict[str, str]  # table name -> the id of one of its rows hanging off the artwork


def prepare(catalog: Catalog) -> Subject:
    """Pick a published artwork with artists, genes, editions and images, and give it a lot
    in a published sale and a place in the user's public collection."""
    with catalog.sessions() as s, s.begin():
        work = s.scalar(
            select(Artwork)
            .where(
                Artwork.published.is_(True),
                Artwork.id.in_(select(ArtworkArtist.artwork_id)),
                Artwork.id.in_(select(ArtworkGene.artwork_id)),
                Artwork.id.in_(select(Edition.artwork_id)),
                Artwork.id.in_(select(Image.artwork_id)),
            )
            .order_by(Artwork.id)
            .limit(1)
        )
        assert work is not None
        sale = s.scalar(select(Sale.id).where(Sale.published.is_(True)).limit(1))
        assert sale is not None
        lot = s.scalar(
            select(SaleArtwork.id).where(
                SaleArtwork.sale_id == sale, SaleArtwork.artwork_id == work.id
            )
        )
        if lot is None:
            s.add(SaleArtwork(sale_id=sale, artwork_id=work.id, lot_number="999"))
        collection = s.scalar(
            select(Collection.id).where(
                Collection.user_id == catalog.user_id, Collection.private.is_(False)
            )
        )
        assert collection is not None
        s.expunge(work)
    catalog.bump()
    added = requests.post(
        catalog.api("/collection_items"),
        json={"collection_id": collection, "user_id": catalog.user_id, "artwork_id": work.id},
        headers=catalog.user,
        timeout=10,
    )
    assert added.status_code in (201, 400), added.text  # 400: it was there already
    with catalog.sessions() as s:
        rows = {}
        for name, table in artwork_tables().items():
            if "id" in table.c:
                rows[name] = s.scalar(
                    select(table.c.id).where(table.c.artwork_id == work.id).limit(1)
                )
        neighbours = {
            "artist_id": s.scalar(
                select(ArtworkArtist.artist_id).where(ArtworkArtist.artwork_id == work.id)
            ),
            "gene_id": s.scalar(
                select(ArtworkGene.gene_id).where(ArtworkGene.artwork_id == work.id)
            ),
            "show_id": s.scalar(
                select(ShowArtwork.show_id).where(ShowArtwork.artwork_id == work.id)
            ),
        }
    context = {
        "artwork_id": work.id,  # where a row's item route names its artwork too
        "user_id": catalog.user_id,
        "collection_id": collection,
        "sale_id": sale,
        "partner_id": work.partner_id or "",
        "q": work.title or "",
        **{k: v or "" for k, v in neighbours.items()},
    }
    return Subject(
        work, {k: v for k, v in context.items() if v}, {k: v for k, v in rows.items() if v}
    )


@dataclass(frozen=True)
class Answer:
    """What a request got: its status and its body (JSON, or the page's text)."""

    status: int
    body: Any


def ask(
    catalog: Catalog,
    entry: Entry,
    subject: Subject,
    value: str,
    headers: dict[str, str],
    extra: dict[str, str],
) -> Answer:
    """Send the entry's request with ``value`` as its artwork (or row), the rest from the
    subject's context; fail, naming the entry, when something it requires is not known."""
    fills: dict[str, str] = {}
    for name in PLACEHOLDER.findall(entry.path):
        if entry.where == "row" or (entry.where == "path" and name == entry.name):
            fills[name] = value
        else:  # the item route of a row that hangs off the artwork (an edition, say)
            table = entry.path.split("/")[2]
            assert table in subject.rows, f"{entry}: no {table} row of the artwork to call it with"
            fills[name] = subject.rows[table]
    path = PLACEHOLDER.sub(lambda m: fills[m.group(1)], entry.path)
    params: dict[str, str] = dict(extra)
    for param in entry.operation.get("parameters", []):
        if param["in"] != "query":
            continue
        if entry.where == "query" and param["name"] == entry.name:
            params[param["name"]] = value
        elif param.get("required"):
            assert param["name"] in subject.context, f"{entry}: no value for {param['name']}"
            params[param["name"]] = subject.context[param["name"]]
    data: dict[str, str] | None = None
    if entry.where == "body":
        data = {}
        required = entry.operation["requestBody"]["content"]["application/json"]["schema"]
        for name in required.get("required", []):
            if name == entry.name:
                data[name] = value
            else:
                assert name in subject.context, f"{entry}: no value for {name}"
                data[name] = subject.context[name]
    url = f"{catalog.url}{path}"
    r = requests.request(
        entry.method.upper(),
        url,
        params=params,
        json=data,
        headers=headers,
        allow_redirects=False,
        timeout=20,
    )
    is_json = r.headers.get("Content-Type", "").split(";")[0].endswith("json")
    return Answer(r.status_code, r.text if not is_json or not r.text else r.json())


def swapped(answer: Answer, swaps: dict[str, str]) -> Answer:
    """Return the answer with each id (or slug) in it replaced by its stand-in."""
    text = answer.body if isinstance(answer.body, str) else json.dumps(answer.body)
    for old, new in swaps.items():
        text = text.replace(old, new)
    return Answer(answer.status, text if isinstance(answer.body, str) else json.loads(text))


def callers(catalog: Catalog, entry: Entry) -> list[dict[str, str]]:
    """Return the callers an entry serves: none for a page, a user and an app where allowed."""
    schemes = {name for option in entry.operation.get("security", []) for name in option}
    if not entry.operation.get("security"):
        return [{}]
    out = [catalog.user]
    if "xappToken" in schemes:
        out.append(catalog.xapp)
    return out


def variants(entry: Entry) -> list[dict[str, str]]:
    """Return the ways to ask a list: as it is, counted, and for a random element (``sample``
    redirects to one), as far as the operation declares them."""
    declared = {p["name"] for p in entry.operation.get("parameters", []) if p["in"] == "query"}
    out: list[dict[str, str]] = [{}]
    out += [{name: "true"} for name in ("total_count", "sample") if name in declared]
    return out


def values(entry: Entry, subject: Subject) -> list[tuple[str, str]]:
    """Return the (subject's value, a missing one's) pairs to try an entry with: a row's id;
    an artwork's id, and its slug where a path takes one."""
    if entry.where == "row":
        return [(subject.rows.get(entry.name) or "", new_id())]
    pairs = [(subject.artwork.id, new_id())]
    if entry.where == "path":
        pairs.append((subject.artwork.slug, f"no-such-artwork-{new_id()}"))
    return pairs


def test_an_unpublished_artwork_answers_as_a_missing_one(catalog: Catalog) -> None:
    document = requests.get(catalog.api("/openapi.json"), timeout=20).json()
    entries = discover(document)
    described = {str(e) for e in entries}
    # The walk finds what the review found, so it is not walking nothing.
    for known in (
        "GET /api/artists (query artwork_id)",
        "GET /api/genes (query artwork_id)",
        "GET /api/artworks (query similar_to_artwork_id)",
        "GET /api/artworks/{id} (path id)",
        "GET /api/images/{id} (row images)",
        "GET /api/images (query artwork_id)",
        "GET /artwork/{key} (path key)",
        "POST /api/collection_items (body artwork_id)",
    ):
        assert known in described, (known, sorted(described))
    subject = prepare(catalog)
    for entry in entries:
        if entry.where == "row":
            assert subject.rows.get(entry.name), f"{entry}: the artwork has no {entry.name} row"

    # Published: every entry answers for it otherwise than for a missing one (it was exercised).
    for entry in entries:
        for (value, missing), headers, extra in product(
            values(entry, subject), callers(catalog, entry), variants(entry)
        ):
            shown = ask(catalog, entry, subject, value, headers, extra)
            absent = ask(catalog, entry, subject, missing, headers, extra)
            assert shown.status < 500 and absent.status < 500, (str(entry), shown, absent)
            assert swapped(shown, {value: missing}) != absent, (
                f"{entry} was not exercised: the published artwork answers as a missing one",
                extra,
                shown,
            )

    with catalog.sessions() as s, s.begin():
        s.execute(update(Artwork).where(Artwork.id == subject.artwork.id).values(published=False))
    catalog.bump()

    # Unpublished: the same status and body as a missing one, the ids swapped.
    leaks = []
    for entry in entries:
        for (value, missing), headers, extra in product(
            values(entry, subject), callers(catalog, entry), variants(entry)
        ):
            hidden = ask(catalog, entry, subject, value, headers, extra)
            absent = ask(catalog, entry, subject, missing, headers, extra)
            if swapped(hidden, {value: missing}) != absent:
                leaks.append((str(entry), value, list(headers), extra, hidden, absent))
    assert not leaks, "\n".join(map(str, leaks))

    # Nothing filtered by a neighbour, no search and no neighbour's page names it.
    marks = (subject.artwork.id, subject.artwork.slug)
    for path, operations in document["paths"].items():
        operation = operations.get("get")
        if operation is None or "{" in path:
            continue
        declared = {p["name"]: p for p in operation.get("parameters", []) if p["in"] == "query"}
        required = {n: subject.context.get(n) for n, p in declared.items() if p.get("required")}
        if not all(required.values()) or any(ARTWORK_PARAM.match(n) for n in required):
            continue
        neighbours = [n for n in declared if n in subject.context and not ARTWORK_PARAM.match(n)]
        for name in neighbours or [None]:
            params = dict(required)
            if name is not None:
                params[name] = subject.context[name]
            if "size" in declared:
                params["size"] = "100"
            for headers in callers(catalog, Entry("get", path, "", "", operation)):
                r = requests.get(f"{catalog.url}{path}", params=params, headers=headers, timeout=20)
                assert r.status_code < 500, (path, params, r.text)
                assert not any(mark in r.text for mark in marks), (path, params)
    for page in PAGE_PATHS:
        kind = re.fullmatch(r"/(\w+)/\{key\}", page)
        key = subject.context.get(f"{kind.group(1)}_id") if kind else None
        if kind and kind.group(1) != "artwork" and key:
            r = requests.get(f"{catalog.url}/{kind.group(1)}/{key}", timeout=20)
            assert r.status_code == 200 and not any(mark in r.text for mark in marks), page
    r = requests.get(f"{catalog.url}/search", params={"q": subject.context["q"]}, timeout=20)
    assert r.status_code == 200 and subject.artwork.id not in r.text
