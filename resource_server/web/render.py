"""Render the HTML pages: one autoescaping Jinja2 environment, security headers, page URLs."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import falcon
from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup

from common.hal import Urls, encode_query
from common.site import TEMPLATES
from resource_server.web.browse import is_blank_title

HERE = Path(__file__).resolve().parent
HTML = "text/html; charset=utf-8"

# Autoescape everything: catalog data comes from museums' files and from users.
ENV = Environment(
    loader=FileSystemLoader([HERE / "templates", TEMPLATES]),
    autoescape=select_autoescape(default=True, default_for_string=True),
    trim_blocks=True,
    lstrip_blocks=True,
)

# Pages load only this server's stylesheet and script (static/images.js: an image that fails
# gives way to its placeholder; no inline script runs), and the museums' images, over http(s)
# or from here; no form posts anywhere else, nothing may frame them.
PAGE_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' https: http: data:; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
# The docs run Swagger UI from this server's own files and read the document from here.
# Swagger UI sets inline style attributes and draws SVG icons from data: URIs.
DOCS_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; "
    "frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "strict-origin-when-cross-origin",
}


def page_url(path: str, query: dict[str, Any] | None = None) -> str:
    """Return a site-relative page URL with its query (keys sorted, None dropped)."""
    return path + encode_query(query) if query else path


def http_url(value: str | None) -> str | None:
    """Return a URL only when it is http(s): data may hold ``javascript:`` links."""
    text = (value or "").strip()
    return text if text.lower().startswith(("https://", "http://")) else None


# The demo's and the museums' texts use a little Markdown: **bold** and [label](/kind/slug)
# links to other catalog pages. The text is escaped first; only those two forms become tags,
# and a link only to a site path made of safe characters.
_MARKS = re.compile(
    r"\*\*(?P<bold>.+?)\*\*|\[(?P<label>[^\]]+)\]\((?P<href>/[a-z]+/[A-Za-z0-9_.-]+)\)"
)


def prose(value: str | None) -> Markup:
    """Return catalog text as safe HTML: escaped, with its bold and catalog links kept."""
    raw, out, pos = value or "", Markup(""), 0
    for m in _MARKS.finditer(raw):
        out += raw[pos : m.start()]  # Markup + str escapes the str
        if m.group("bold") is not None:
            out += Markup("<strong>{}</strong>").format(m.group("bold"))
        else:
            out += Markup('<a href="{}">{}</a>').format(m.group("href"), m.group("label"))
        pos = m.end()
    return out + raw[pos:]


def work_title(value: str | None) -> str:
    """Return an artwork's title as pages show it: "Untitled" for the blank ones."""
    title = (value or "").strip()
    return "Untitled" if is_blank_title(title) else title


ENV.globals["page_url"] = page_url
ENV.filters["work_title"] = work_title
ENV.filters["prose"] = prose
ENV.filters["http_url"] = http_url


def render(
    resp: falcon.Response,
    template: str,
    *,
    status: str = falcon.HTTP_200,
    csp: str = PAGE_CSP,
    **context: Any,
) -> None:
    """Answer with a rendered template and the page security headers."""
    resp.status = status
    resp.content_type = HTML
    resp.text = ENV.get_template(template).render(**context)
    resp.set_header("Content-Security-Policy", csp)
    for name, value in SECURITY_HEADERS.items():
        resp.set_header(name, value)


def error_page(resp: falcon.Response, status: str, title: str, message: str) -> None:
    """Answer an HTML error page."""
    render(resp, "error.html", status=status, title=title, message=message)


def site_base(public_url: str, req: falcon.Request) -> str:
    """Return the base URL of the pages: PUBLIC_URL, or the request's in development."""
    return Urls((public_url or req.prefix).rstrip("/")).base
