"""Applications as their owners manage them through ``/api/applications``.

Only user tokens issued to a first-party application (one the operator marked with ``artcat apps
create --first-party`` or ``artcat apps set --first-party``) may create, change or delete
applications: a third-party application acting for a user must not mint credentials or move
redirect URIs. The developer page (``/account/applications``) is the browser's way in.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from auth_server.inputs import is_clean
from auth_server.redirects import parse_registered
from common.api.errors import ParamError
from common.api.keyset import paginate
from common.api.paging import PageParams, id_cursor
from common.ids import is_id
from common.models import Application, Token
from common.tokens import TokenStore


def owned_page(
    session: Session, user_id: str, params: PageParams
) -> tuple[list[Application], str | None, int | None]:
    """Return a page of the user's applications (the user_id index, keyset by id)."""
    stmt = select(Application).where(Application.user_id == user_id)
    page = paginate(session, stmt, [Application.id], id_cursor(params))
    return page.rows, page.next_cursor, page.total_count


def issued_to_first_party(session: Session, application_id: str) -> bool:
    """Tell whether a token's application is an enabled first-party application."""
    row = session.execute(
        select(Application.first_party, Application.enabled).where(Application.id == application_id)
    ).first()
    return row is not None and bool(row.first_party) and bool(row.enabled)


def find_owned(session: Session, app_id: str, user_id: str) -> Application | None:
    """Return the application if it exists and belongs to the user."""
    if not is_id(app_id):
        return None
    app = session.get(Application, app_id)
    return app if app is not None and app.user_id == user_id else None


def check_name(name: str) -> str:
    """Return a usable application name, or raise a ParamError."""
    name = name.strip()
    if not name:
        raise ParamError.missing("name")
    if not is_clean(name, 200):
        raise ParamError.invalid("name")
    return name


def check_redirect_urls(urls: list[str], field: str = "redirect_urls") -> list[str]:
    """Validate redirect URLs with the registration policy of ``auth_server.redirects``
    (``field``: the parameter named in the error; post-logout URIs follow the same policy).

    None at all is allowed: such an application cannot use the browser flow.
    """
    label = field.replace("_", " ").capitalize()
    unclean = [u for u in urls if not is_clean(u) or "\n" in u or "\r" in u]
    if unclean:
        raise ParamError(
            f"{label} must be valid text, one URL each.",
            {field: ["must be valid text, one URL each"]},
        )
    unique, problems = parse_registered("\n".join(urls))
    if problems:
        raise ParamError(f"{label}: " + " ".join(problems), {field: problems})
    return unique


def delete_application(session: Session, tokens: TokenStore, app: Application) -> list[Token]:
    """Expire the application's tokens and delete it; tombstone the returned rows after commit."""
    expired = tokens.expire_where(session, Token.application_id == app.id)
    session.delete(app)
    session.flush()
    return expired
