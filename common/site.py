"""What the auth server's pages and the catalog's pages share: the site header's template
(``site_header.html`` in ``TEMPLATES``), which both Jinja environments load after their own."""

from __future__ import annotations

from pathlib import Path

TEMPLATES = Path(__file__).resolve().parent / "templates"
