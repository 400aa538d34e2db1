"""``/images/{folder}/{name}``: the instance's own images, cacheable for good.

Three kinds of folder, each under a URL that never changes meaning:

- ``<32 hex>``: a museum's image copied by ``artcat images fetch``, its folder named by the
  digest of the fetched bytes (content-addressed: another image is another folder);
- ``demo-<token>``: a demo catalog picture, drawn from its token on first request and kept in
  the store (the same bytes for a token and version on every machine);
- ``placeholder-<artwork id>``: what is shown for an image the museum no longer serves (an SVG
  with the artwork's title and artist, not immutable: both may be edited); ``placeholder``
  alone: the same drawing without text (any other record's missing image).

Every answer carries an ETag and answers ``If-None-Match`` with 304.
"""

from __future__ import annotations

import hashlib
import logging
import re
from typing import Any

import falcon
from sqlalchemy import select
from sqlalchemy.orm import Session

from common.images.art import DEMO_STYLE, demo_picture, placeholder_svg
from common.images.store import open_store
from common.images.versions import BOXES, DIGEST, JPEG
from common.models import Artist, Artwork, ArtworkArtist
from resource_server.resources.base import Resource
from resource_server.web.render import SECURITY_HEADERS

LOG = logging.getLogger("artcat.images")
IMMUTABLE = ("public", "max-age=31536000", "immutable")
PLACEHOLDER_CACHE = ("public", "max-age=3600")
# An SVG opened on its own is a document: it may run nothing and load nothing.
SVG_CSP = "default-src 'none'; style-src 'unsafe-inline'"
_DEMO = re.compile(r"demo-[A-Za-z0-9_-]{10,43}")
_PLACEHOLDER = re.compile(r"placeholder(?:-([0-9a-f]{24}))?")
_NAME = re.compile(r"([A-Za-z0-9_-]{1,40})\.(jpg|svg)")


class ImageFile(Resource):
    """One version of one image of the instance (see the module's docstring)."""

    auth = "none"

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.store = open_store(self.settings)

    def on_get(self, req: falcon.Request, resp: falcon.Response, folder: str, name: str) -> None:
        """Answer the image, 304 when the client has it, 404 for anything else."""
        named = _NAME.fullmatch(name)
        if named is None:
            raise falcon.HTTPNotFound()
        version, extension = named.groups()
        placeholder = _PLACEHOLDER.fullmatch(folder)
        if placeholder and extension == "svg" and version in BOXES:
            self.placeholder(req, resp, placeholder.group(1), version)
            return
        if extension != "jpg":
            raise falcon.HTTPNotFound()
        key = f"{folder}/{version}.jpg"
        if DIGEST.fullmatch(folder):
            etag = f"{folder}-{version}"
            data = None if _fresh(req, etag) else self.store.get(key)
            if data is None and not _fresh(req, etag):
                raise falcon.HTTPNotFound()
        elif _DEMO.fullmatch(folder) and version in BOXES:
            etag = f"{folder}-{version}-{DEMO_STYLE}"
            data = None if _fresh(req, etag) else self.demo(key, folder, version)
        else:
            raise falcon.HTTPNotFound()
        _answer(req, resp, etag, data, JPEG, IMMUTABLE)

    def demo(self, key: str, folder: str, version: str) -> bytes:
        """Return a demo picture, drawn and kept in the store on its first request."""
        data = self.store.get(key)
        if data is None:
            data = demo_picture(folder.removeprefix("demo-"), version)
            try:
                self.store.put(key, data, JPEG)
            except Exception:  # a read-only store: the picture is drawn again next time
                LOG.warning("could not keep demo picture %s in the image store", key)
        return data

    def placeholder(
        self, req: falcon.Request, resp: falcon.Response, artwork_id: str | None, version: str
    ) -> None:
        """Answer the placeholder of an artwork (its title and first artist when published;
        without text for any other)."""
        if artwork_id is None:
            data = placeholder_svg(None, None, version)
            _answer(req, resp, f"ph-{version}", data, "image/svg+xml", PLACEHOLDER_CACHE)
            resp.set_header("Content-Security-Policy", SVG_CSP)
            return

        def fetch(session: Session) -> tuple[str | None, str | None]:
            title = session.scalar(
                select(Artwork.title).where(Artwork.id == artwork_id, Artwork.published.is_(True))
            )
            if title is None:
                return None, None
            artist = session.scalar(
                select(Artist.name)
                .join(ArtworkArtist, ArtworkArtist.artist_id == Artist.id)
                .where(ArtworkArtist.artwork_id == artwork_id)
                .order_by(ArtworkArtist.position)
                .limit(1)
            )
            return title, artist

        title, artist = self.stores.catalog_read(fetch)
        data = placeholder_svg(title, artist, version)
        etag = f"ph-{hashlib.sha256(data).hexdigest()[:20]}"
        _answer(req, resp, etag, data, "image/svg+xml", PLACEHOLDER_CACHE)
        resp.set_header("Content-Security-Policy", SVG_CSP)


def _fresh(req: falcon.Request, etag: str) -> bool:
    """Tell whether the client's If-None-Match names this ETag."""
    return any(str(tag) == etag for tag in req.if_none_match or [])


def _answer(
    req: falcon.Request,
    resp: falcon.Response,
    etag: str,
    data: bytes | None,
    content_type: str,
    cache: tuple[str, ...],
) -> None:
    resp.etag = etag
    resp.cache_control = list(cache)
    for header, value in SECURITY_HEADERS.items():
        resp.set_header(header, value)
    if data is None or _fresh(req, etag):
        resp.status = falcon.HTTP_304
        resp.content_type = None  # a 304 has no body, hence no type
        return
    resp.content_type = content_type
    resp.data = data
