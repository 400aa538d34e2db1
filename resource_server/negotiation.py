"""Media types: request bodies must be form-urlencoded or JSON; the vendor Accept is honoured."""

from __future__ import annotations

from typing import Any

import falcon

from common.api.errors import ParamError, TooLarge
from common.serve import MAX_REQUEST_BODY
from common.urlencoding import is_utf8_urlencoded

BODY_TYPES = ("application/x-www-form-urlencoded", "application/json")
NOT_UTF8 = "is not valid UTF-8"
HAL = "application/hal+json"


class UnsupportedContentType(Exception):
    """A request body of a type the API does not read (406 ``{error}``)."""

    def __init__(self, content_type: str) -> None:
        super().__init__(content_type)
        self.content_type = content_type


class NegotiationMiddleware:
    """Check body types before routing, and answer in the media type the client asked for."""

    def __init__(self, vendor: str) -> None:
        self.vendor_types = vendor_types(vendor)

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Refuse bodies over 1 MiB, NUL bytes anywhere in the URL, and bodies neither
        form-urlencoded nor JSON."""
        # Waitress refuses a larger body before the app runs; under any other WSGI server the
        # limit is here. (Without a Content-Length, Falcon reads no body at all.)
        if (req.content_length or 0) > MAX_REQUEST_BODY:
            raise TooLarge(f"The request body is larger than {MAX_REQUEST_BODY} bytes.")
        if not is_utf8_urlencoded(req.query_string.encode("latin-1")):
            raise ParamError("The query string is not valid UTF-8.", {"query": [NOT_UTF8]})
        # No text column on any backend can hold NUL (PostgreSQL refuses it outright), so a
        # NUL in the path or a parameter is malformed input, answered before any lookup.
        if "\x00" in req.path:
            raise ParamError("The path contains a NUL byte.", {"path": ["contains a NUL byte"]})
        for name, value in req.params.items():
            values = value if isinstance(value, list) else [value]
            if "\x00" in name or any("\x00" in str(v) for v in values):
                raise ParamError.invalid(name.replace("\x00", ""), "contains a NUL byte")
        if req.method in ("POST", "PUT", "PATCH") and (req.content_length or req.content_type):
            mimetype = (req.content_type or "").split(";", 1)[0].strip().lower()
            if mimetype not in BODY_TYPES:
                raise UnsupportedContentType(req.content_type or "")
        resp.content_type = self.response_type(req.get_header("ACCEPT") or "")

    def response_type(self, accept: str) -> str:
        """Return the response media type for an Accept header (JSON unless asked otherwise).

        The vendor type of version 2 (the only version) is echoed; HAL is echoed; anything
        else, including ``*/*`` and unknown versions, gets plain JSON.
        """
        accept = accept.lower()
        for media_type in self.vendor_types:
            if media_type in accept:
                return media_type
        if HAL in accept:
            return HAL
        return falcon.MEDIA_JSON


def vendor_types(vendor: str) -> tuple[str, ...]:
    """Return the vendor media types this API answers in."""
    return (f"application/vnd.{vendor}-v2+json", f"application/vnd.{vendor}+json")


def handle_unsupported(
    req: falcon.Request, resp: falcon.Response, ex: UnsupportedContentType, _p: Any
) -> None:
    """Render the reference API's 406 body."""
    resp.status = falcon.HTTP_406
    resp.media = {"error": f"The requested content-type '{ex.content_type}' is not supported."}
