"""The user and user detail representations."""

from __future__ import annotations

from typing import Any

from common.hal import Link, Urls, link
from common.ids import format_ts
from common.models import User, UserDetail


def user(u: User, urls: Urls, caller: str, profile_id: str | None = None) -> dict[str, Any]:
    """Render a user: ``{id, name}`` for anyone, plus email and timestamps for itself.

    ``email_verified`` is true only when the owner proved the address (a confirmation or reset
    link, or a provider that verified it): an application must not take the address as the
    user's otherwise.
    """
    links: dict[str, Link] = {"self": link(urls.api(f"/users/{u.id}"))}
    if profile_id:
        links["profile"] = link(urls.api(f"/profiles/{profile_id}"))
    if u.id == caller:
        links["user_details"] = link(urls.api(f"/user_details/{u.id}"))
    links["collections"] = link(urls.api("/collections", {"user_id": u.id}))
    body: dict[str, Any] = {"id": u.id, "name": u.name}
    if u.id == caller:
        body.update(
            email=u.email,
            email_verified=u.email_verified_at is not None,
            created_at=format_ts(u.created_at),
            updated_at=format_ts(u.updated_at),
        )
    body["_links"] = links
    return body


def user_detail(d: UserDetail, u: User, urls: Urls) -> dict[str, Any]:
    """Render a user's private details (for that user only)."""
    return {
        "id": d.id,
        "created_at": format_ts(d.created_at),
        "updated_at": format_ts(d.updated_at),
        "type": u.type,
        "email": u.email,
        "email_verified": u.email_verified_at is not None,
        "birthday": d.birthday,
        "phone": d.phone,
        "gender": d.gender,
        "_links": {
            "self": link(urls.api(f"/user_details/{d.id}")),
            "user": link(urls.api(f"/users/{d.id}")),
            "partners": link(urls.api("/partners", {"user_id": d.id})),
            "collections": link(urls.api("/collections", {"user_id": d.id})),
        },
    }
