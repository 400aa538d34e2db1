"""The HTML pages of both services: the authorization server's sign-in and account pages, and
the catalog's own pages (``resource_server.web``)."""

from __future__ import annotations

from common.authorize_params import AUTHORIZE_PARAMS
from resource_server.openapi.parts import ERROR, TOO_LARGE, URL_TEXT, Op, op
from resource_server.openapi.parts import html_response as _html

PAGES: list[tuple[str, list[str], str]] = [
    ("/oauth2/authorize", ["get", "post"], "Authorization: sign-in, consent, redirect with a code"),
    ("/account", ["get"], "Account home"),
    ("/account/sign_in", ["get", "post"], "Sign in"),
    ("/account/sign_up", ["get", "post"], "Sign up"),
    ("/account/sign_out", ["get", "post"], "Sign out"),
    ("/account/password/forgot", ["get", "post"], "Ask for a password reset email"),
    ("/account/password/reset/{token}", ["get", "post"], "Set a new password"),
    ("/account/password/change", ["get", "post"], "Change the password"),
    ("/account/email/verify", ["get", "post"], "Confirm the email address"),
    ("/account/email/resend", ["post"], "Send a new email confirmation link"),
    ("/account/authorizations", ["get"], "Authorized applications"),
    ("/account/authorizations/{application_id}/revoke", ["post"], "Revoke an authorization"),
    ("/account/applications", ["get", "post"], "Your applications"),
    ("/account/applications/{application_id}/rotate", ["post"], "Rotate a client secret"),
    ("/account/static/{filename}", ["get"], "Stylesheet"),
    # The catalog's own pages (resource_server.web): the front door also answers the API root
    # document to a client that asks for JSON.
    ("/", ["get"], "The front door (HTML; the API root for Accept: application/json)"),
    ("/docs", ["get"], "The API docs (Swagger UI)"),
    ("/docs/assets/{name}", ["get"], "A file of Swagger UI"),
    ("/static/{name}", ["get"], "The pages' stylesheet and script"),
    ("/search", ["get"], "Search the catalog (a results page)"),
    ("/artists", ["get"], "Artists (a page)"),
    ("/artist/{key}", ["get"], "An artist, by id or slug (a page)"),
    ("/artworks", ["get"], "Artworks (a page)"),
    ("/artwork/{key}", ["get"], "An artwork, by id or slug (a page)"),
    ("/genes", ["get"], "Genes (a page)"),
    ("/gene/{key}", ["get"], "A gene, by id or slug (a page)"),
    ("/partners", ["get"], "Partners (a page)"),
    ("/partner/{key}", ["get"], "A partner, by id or slug (a page)"),
    ("/profiles", ["get"], "Profiles (a page)"),
    ("/profile/{key}", ["get"], "A profile, by id or handle (a page)"),
    ("/shows", ["get"], "Shows (a page)"),
    ("/show/{key}", ["get"], "A show, by id or slug (a page)"),
]

AUTHORIZE_GET = ("/oauth2/authorize", "get")
PAGE_RESPONSES: dict[str, Op] = {
    "200": _html("An HTML page"),
    "201": _html("An application registered (its secret is shown once)"),
    "302": {"description": "A redirect"},
    "400": _html("Error"),
    # An unknown application is an HTML page; an unknown route or file is JSON.
    "404": {
        "description": "Not found",
        "content": {**_html("")["content"], **ERROR["content"]},
    },
    "413": TOO_LARGE,
    "429": _html("Too many requests (sign-in attempts, or pages from one address): Retry-After"),
}

AUTHORIZE_QUERY = [{"name": name, "in": "query", "schema": URL_TEXT} for name in AUTHORIZE_PARAMS]

AUTH_PAGES: dict[tuple[str, str], Op] = {
    (path, method): op(
        f"{summary} ({method.upper()})",
        PAGE_RESPONSES,
        tags=["pages"],
        **({"parameters": AUTHORIZE_QUERY} if (path, method) == AUTHORIZE_GET else {}),
    )
    for path, methods, summary in PAGES
    for method in methods
}
