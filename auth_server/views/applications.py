"""``/api/applications``: a user's own applications (user access token), rendered as HAL.

Only a token issued to a first-party application may read or write them (see
``auth_server.applications``): a third-party application the user signed in to learns nothing
of the user's other applications (their client ids and redirect URIs), and no secret is ever
shown but in the answer that creates one. No answer of these routes may be cached: they
describe credentials.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from flask import Response, after_this_request, jsonify, request
from flask.views import MethodView

from auth_server.accounts import AccountError, create_application
from auth_server.applications import (
    check_name,
    check_redirect_urls,
    delete_application,
    find_owned,
    issued_to_first_party,
    owned_page,
)
from auth_server.audit import audit
from auth_server.bearer import require_user
from auth_server.context import services
from auth_server.inputs import request_list
from auth_server.oauth import no_store
from auth_server.params import JSON, json_body, request_params
from auth_server.throttles import APPLICATION_CREATION, throttle
from auth_server.views.described import Described
from common.api.constants import INVALID_TOKEN
from common.api.errors import AuthError, Forbidden, NotFound, ParamError
from common.api.paging import parse_page_params
from common.api.params import parse_bool
from common.hal import Page, Urls, link
from common.ids import format_ts
from common.models import Application, User
from common.openapi.parts import (
    ERROR_RESPONSES,
    FLAG,
    ID,
    ID_PATH,
    NAME,
    STRINGS,
    USER,
    WRITE_ERRORS,
    Op,
    Schema,
    body,
    json_response,
    obj,
    op,
    ref,
)
from common.tokens import TokenRecord

THIRD_PARTY = (
    "This application cannot list, create, change or delete applications: only the service's "
    "own (first-party) applications may. Manage your applications at /account/applications."
)


def never_stored(view: Callable[..., Any]) -> Callable[..., Any]:
    """Mark every answer of a view ``Cache-Control: no-store``, its error answers included."""

    @wraps(view)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        after_this_request(no_store)  # runs for the answers of the error handlers too
        return view(*args, **kwargs)

    return wrapped


def require_manager() -> TokenRecord:
    """Return the record of a user token issued to a first-party application, or refuse (403)."""
    record = require_user(request)
    with services().stores.reads() as session:
        allowed = issued_to_first_party(session, record.application_id)
    if not allowed:
        raise Forbidden(THIRD_PARTY)
    return record


def application(a: Application, urls: Urls, client_secret: str | None = None) -> dict[str, Any]:
    """Render an application; the secret only when it was just created."""
    body: dict[str, Any] = {
        "id": a.id,
        "created_at": format_ts(a.created_at),
        "updated_at": format_ts(a.updated_at),
        "name": a.name,
        "client_id": a.client_id,
    }
    if client_secret is not None:
        body["client_secret"] = client_secret
    body.update(
        enabled=a.enabled,
        redirect_urls=list(a.redirect_uris or []),
        standard_token_response=a.standard_token_response,
        _links={
            "self": link(urls.api(f"/applications/{a.id}")),
            "user": link(urls.api(f"/users/{a.user_id}")),
        },
    )
    return body


# The JSON types each field of a write must have (a form's values are all strings).
JSON_TYPES: dict[str, tuple[type, ...]] = {"name": (str,), "standard_token_response": (bool, str)}


def typed_params() -> dict[str, str]:
    """Return the request's parameters, refusing a JSON body's value of the wrong type (400).

    ``request_params`` turns a JSON number into text: ``{"name": -1.1}`` would be the name
    "-1.1". Here a field given in JSON must be of its type (a flag may be "true"/"false").
    """
    params = request_params(request)
    mimetype = request.mimetype or ""
    body = json_body(request) if mimetype == JSON or mimetype.endswith("+json") else None
    if isinstance(body, dict):
        for name, types in JSON_TYPES.items():
            value = body.get(name)
            if value is not None and not isinstance(value, types):
                kind = "true or false" if bool in types else "a string"
                label = name.replace("_", " ").capitalize()
                raise ParamError(f"{label} must be {kind}.", {name: [f"must be {kind}"]})
    return params


def _urls() -> Urls:
    return Urls((services().settings.public_url or request.host_url).rstrip("/"))


class Applications(MethodView):
    """The caller's applications: list (``?user_id=``) and create."""

    decorators = [never_stored]

    def get(self) -> Response:
        """List the caller's applications; without ``user_id``, redirect to the caller's list."""
        record = require_manager()
        params = request_params(request)
        urls = _urls()
        user_id = params.get("user_id")
        if not user_id:
            keep = {k: params[k] for k in ("size", "cursor", "total_count") if params.get(k)}
            location = urls.api("/applications", {**keep, "user_id": record.user_id})
            resp = jsonify({"_links": {"location": link(location)}})
            resp.status_code = 302
            resp.headers["Location"] = location
            return resp
        if user_id != record.user_id:
            raise NotFound("User")
        page = parse_page_params(params, default_size=5, max_size=100, extras=False)
        with services().stores.sessions() as session:
            rows, next_cursor, total = owned_page(session, user_id, page)
        query: dict[str, Any] = {"user_id": user_id, **page.echo()}
        self_query = {**query, "cursor": params.get("cursor") if page.cursor else None}
        doc = Page(
            "applications",
            [application(a, urls) for a in rows],
            urls.api("/applications", self_query),
            urls.api("/applications", {**query, "cursor": next_cursor}) if next_cursor else None,
            total,
        ).render()
        return jsonify(doc)

    def post(self) -> tuple[Response, int]:
        """Create an application (201); its client secret is in this answer and never again."""
        record = require_manager()
        params = typed_params()
        name = check_name(params.get("name", ""))
        redirect_urls = check_redirect_urls(request_list(request, "redirect_urls") or [])
        # RFC 6749 answers unless asked otherwise: the reference API has no such field, and
        # stock OAuth clients refuse its timestamp form.
        raw_standard = params.get("standard_token_response")
        standard = (
            True if raw_standard is None else parse_bool("standard_token_response", raw_standard)
        )
        creation = throttle(APPLICATION_CREATION)
        wait = creation.hit(record.user_id or "")
        if wait is not None:
            audit("application.throttled", user_id=record.user_id, retry_after=wait)
            message = (
                f"Too many applications created: the limit is {creation.describe()} per user. "
                f"Try again in {wait} seconds."
            )
            resp = jsonify({"type": "rate_limit_error", "message": message})
            resp.headers["Retry-After"] = str(wait)
            return resp, 429
        svc = services()
        with svc.stores.sessions() as session, session.begin():
            owner = session.get(User, record.user_id)
            if owner is None or not owner.enabled:
                raise AuthError(INVALID_TOKEN)
            try:
                new = create_application(
                    session,
                    name=name,
                    owner=owner,
                    redirect_uris=redirect_urls,
                    standard_token_response=standard,
                )
            except AccountError as ex:
                raise ParamError(str(ex) + ".", {ex.field: [ex.reason]}) from None
        audit("application.created", application_id=new.application.id, user_id=owner.id)
        urls = _urls()
        resp = jsonify(application(new.application, urls, new.client_secret))
        resp.headers["Location"] = urls.api(f"/applications/{new.application.id}")
        return resp, 201


class ApplicationItem(MethodView):
    """One of the caller's applications: show, update, delete (others' are 404)."""

    decorators = [never_stored]

    def get(self, app_id: str) -> Response:
        """Show the application."""
        record = require_manager()
        with services().stores.sessions() as session:
            app = find_owned(session, app_id, record.user_id or "")
        if app is None:
            raise NotFound("Application")
        return jsonify(application(app, _urls()))

    def put(self, app_id: str) -> Response:
        """Update the name, redirect URLs and token response format."""
        record = require_manager()
        params = typed_params()
        name = check_name(params["name"]) if "name" in params else None
        raw_urls = request_list(request, "redirect_urls")
        redirect_urls = check_redirect_urls(raw_urls) if raw_urls is not None else None
        raw_standard = params.get("standard_token_response")
        standard = (
            None if raw_standard is None else parse_bool("standard_token_response", raw_standard)
        )
        with services().stores.sessions() as session, session.begin():
            app = find_owned(session, app_id, record.user_id or "")
            if app is None:
                raise NotFound("Application")
            if name is not None:
                app.name = name
            if redirect_urls is not None:
                app.redirect_uris = redirect_urls
            if standard is not None:
                app.standard_token_response = standard
            session.flush()
            doc = application(app, _urls())
        audit("application.updated", application_id=app_id, user_id=record.user_id)
        return jsonify(doc)

    def delete(self, app_id: str) -> Response:
        """Delete the application and expire every token it holds (204)."""
        record = require_manager()
        tokens = services().stores.tokens
        with services().stores.sessions() as session, session.begin():
            app = find_owned(session, app_id, record.user_id or "")
            if app is None:
                raise NotFound("Application")
            expired = delete_application(session, tokens, app)
        tokens.tombstone(expired)
        audit(
            "application.deleted",
            application_id=app_id,
            user_id=record.user_id,
            tokens_expired=len(expired),
        )
        return Response(status=204)


APP_FIELDS: dict[str, Schema] = {
    "name": NAME,
    "redirect_urls": STRINGS,
    "standard_token_response": FLAG,
}
# Only a first-party application's user token may read the user's applications (as write them).
APP_READ_ERRORS: dict[str, Op] = {
    **ERROR_RESPONSES,
    "403": json_response(ref("Error"), "A token of a third-party application"),
}
APP_PAGE = {
    "type": "object",
    "required": ["total_count", "_links", "_embedded"],
    "properties": {
        "_embedded": obj({"applications": {"type": "array", "items": ref("Application")}})
    },
}
APP_ID = {**ID_PATH, "name": "app_id"}

bp = Described("applications", __name__, tag="accounts")
bp.declare(
    "/api/applications",
    Applications.as_view("list"),
    get=op(
        "list_applications",
        "List the caller's applications",
        {
            "200": json_response(APP_PAGE, "A page of applications"),
            "302": json_response(ref("Redirect"), "Without user_id: the caller's list"),
            **APP_READ_ERRORS,
        },
        security=USER,
        # An empty user_id is an absent one: the caller's list.
        parameters=[{"name": "user_id", "in": "query", "schema": {"anyOf": [ID, {"const": ""}]}}],
    ),
    post=op(
        "create_application",
        "Register an application (its secret is shown once)",
        {"201": json_response(ref("Application"), "Created"), **WRITE_ERRORS},
        security=USER,
        # A new application needs a name.
        requestBody=body(APP_FIELDS, ["name"]),
    ),
)
bp.declare(
    "/api/applications/<app_id>",
    ApplicationItem.as_view("item"),
    get=op(
        "get_application",
        "Show one of the caller's applications",
        {"200": json_response(ref("Application"), "The application"), **APP_READ_ERRORS},
        security=USER,
        parameters=[APP_ID],
    ),
    put=op(
        "update_application",
        "Update an application",
        {"200": json_response(ref("Application"), "Updated"), **WRITE_ERRORS},
        security=USER,
        parameters=[APP_ID],
        # An update changes only what it names.
        requestBody=body(APP_FIELDS),
    ),
    delete=op(
        "delete_application",
        "Delete an application (its tokens expire)",
        {"204": {"description": "Deleted"}, **WRITE_ERRORS},
        security=USER,
        parameters=[APP_ID],
    ),
)
