"""HAL building blocks shared by both services: absolute URLs, links, templates, paged envelopes."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any
from urllib.parse import quote, urlencode

from uritemplate import URITemplate

Link = dict[str, Any]
PAGING_PARAMS = ("total_count", "size", "cursor", "offset", "sample")


@dataclass(frozen=True)
class Urls:
    """Build absolute hrefs under a base such as ``https://example.org`` (no trailing slash)."""

    base: str

    @cached_property
    def root(self) -> str:
        """Return the href of ``/api``: the prefix of every link a representation builds.

        Representations write their links as ``f"{urls.root}/artworks/{id}"``: ids are plain
        (hex), so the result is what :meth:`api` would build, without its per-link work.
        """
        return f"{self.base}/api"

    def api(self, path: str, query: Mapping[str, Any] | None = None) -> str:
        """Return the absolute href of ``/api<path>`` with the query in alphabetical order."""
        href = f"{self.base}/api{path}"
        return href + encode_query(query) if query else href

    def absolute(self, path: str) -> str:
        """Return the absolute href of a site path (outside ``/api``)."""
        return f"{self.base}{path}"


# What ``quote`` leaves as it is: a query made only of these needs no escaping.
_unescaped = re.compile(r"[A-Za-z0-9_.~-]*").fullmatch


def encode_query(query: Mapping[str, Any]) -> str:
    """Encode a query string with keys in alphabetical order, dropping None values."""
    items = []
    plain = True
    for key in sorted(query):
        value = query[key]
        if value is None:
            continue
        if isinstance(value, bool):
            value = "true" if value else "false"
        text = str(value)
        plain = plain and _unescaped(key) is not None and _unescaped(text) is not None
        items.append((key, text))
    if not items:
        return ""
    if plain:  # ids, numbers, slugs: every link of a page; urlencode would change nothing
        return "?" + "&".join(f"{k}={v}" for k, v in items)
    return "?" + urlencode(items, quote_via=quote)


def link(href: str) -> Link:
    """Return a plain link object."""
    return {"href": href}


def templated(href: str) -> Link:
    """Return a templated link object (RFC 6570), checking that the template parses."""
    _check_template(href)
    return {"href": href, "templated": True}


@lru_cache(maxsize=4096)
def _check_template(href: str) -> None:
    URITemplate(href)  # raises on a malformed template; most hrefs repeat on every request


def query_template(href: str, params: Sequence[str], *, continuation: bool = False) -> str:
    """Append an RFC 6570 form-style query expression (``{?a,b}`` or ``{&a,b}``) to ``href``."""
    if not params:
        return href
    op = "&" if continuation else "?"
    return f"{href}{{{op}{','.join(params)}}}"


def image_links(
    image_url: str | None, versions: Sequence[str], preferred: Iterable[str] = (), base: str = ""
) -> dict[str, Link]:
    """Return the ``thumbnail`` and ``image`` links of an image template, when there is one.

    A site-relative template (``/images/...``: an image the instance serves itself) is made
    absolute under ``base``.
    """
    if not image_url:
        return {}
    if image_url.startswith("/"):
        image_url = base + image_url
    if "{image_version}" not in image_url:
        return {"thumbnail": link(image_url), "image": link(image_url)}
    version = next((v for v in preferred if v in versions), versions[0] if versions else None)
    links: dict[str, Link] = {}
    if version is not None:
        links["thumbnail"] = link(image_url.replace("{image_version}", version))
    links["image"] = templated(image_url)
    return links


@dataclass
class Page:
    """One page of a collection, ready to render as a HAL envelope."""

    plural: str
    items: list[dict[str, Any]]
    self_href: str
    next_href: str | None = None
    total_count: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def render(self) -> dict[str, Any]:
        """Return the HAL document: ``total_count``, ``_links`` (self, next) and ``_embedded``."""
        links: dict[str, Link] = {"self": link(self.self_href)}
        if self.next_href:
            links["next"] = link(self.next_href)
        return {
            "total_count": self.total_count,
            **self.extra,
            "_links": links,
            "_embedded": {self.plural: self.items},
        }
