"""The ``artcat apps`` commands: the operator's hand on client applications."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import timedelta
from typing import Any, TypeVar

import click
from sqlalchemy import select

from artcat.cli.accounts import add_enable_commands
from artcat.cli.support import emit, instance_settings
from artcat.loaders.demo import demo_credentials
from auth_server.accounts import (
    AccountError,
    create_application,
    find_user_by_email,
    rotate_secret,
)
from auth_server.applications import check_redirect_urls
from auth_server.disabling import set_application_enabled
from auth_server.keys import ALGORITHMS, ES256
from auth_server.redirects import parse_registered
from auth_server.registration import issue_initial_token
from common.api.errors import APIError
from common.db import make_engine, make_sessionmaker, upgrade
from common.ids import format_ts
from common.models import Application

ID_TOKEN_ALGS = list(ALGORITHMS)


F = TypeVar("F", bound=Callable[..., Any])


def id_token_alg_option(default: str | None) -> Callable[[F], F]:
    """The ``--id-token-alg`` option of ``apps create`` (its default) and ``apps set`` (none)."""
    return click.option(
        "--id-token-alg",
        type=click.Choice(ID_TOKEN_ALGS),
        default=default,
        help="How its OpenID Connect ID tokens are signed (ES256, the default, or RS256).",
    )


def refresh_tokens_option(default: bool | None) -> Callable[[F], F]:
    """The ``--refresh-tokens`` option of ``apps create`` (off) and ``apps set`` (unchanged)."""
    return click.option(
        "--refresh-tokens/--no-refresh-tokens",
        "refresh_tokens",
        default=default,
        help="With offline_access: a refresh token (rotated on each use) beside one-hour access "
        "tokens, instead of the reference API's 25-year access token.",
    )


def post_logout_option(help_text: str) -> Callable[[F], F]:
    """The repeatable ``--post-logout-redirect-uri`` of ``apps create`` and ``apps set``."""
    return click.option(
        "--post-logout-redirect-uri", "post_logout_uris", multiple=True, help=help_text
    )


def _post_logout_uris(given: tuple[str, ...]) -> list[str]:
    """Return the post-logout redirect URIs, or refuse them by the redirect URI policy."""
    try:
        return check_redirect_urls(list(given), "post_logout_redirect_uris")
    except APIError as ex:
        raise click.BadParameter(ex.message, param_hint="--post-logout-redirect-uri") from None


@click.group()
def apps() -> None:
    """Manage client applications."""


@apps.command("create")
@click.option("--name", required=True)
@click.option("--owner", "owner_email", required=True, help="The owning user's email.")
@click.option(
    "--redirect-uri",
    "redirect_uris",
    multiple=True,
    help="A redirect URI of the browser flow (repeat for more): https, http on a loopback "
    "address, or a private-use scheme in reverse-domain form (com.example.app:/callback). "
    "Matched exactly.",
)
@click.option(
    "--no-browser-flow",
    is_flag=True,
    help="No redirect URI: the application signs users in only with the credentials grant "
    "and uses XAPP and client-credentials tokens, never the browser flow.",
)
@click.option(
    "--standard-token-response/--reference-token-response",
    default=True,
    help="RFC 6749 token responses (integer expires_in; the default, what stock OAuth clients "
    "accept) or the reference API's (expires_in as a timestamp string).",
)
@click.option(
    "--first-party",
    is_flag=True,
    help="Operated by this service: its user tokens may manage the user's applications.",
)
@click.option(
    "--public",
    is_flag=True,
    help="A public client (native or browser app): no secret, PKCE required.",
)
@id_token_alg_option(default=ES256)
@refresh_tokens_option(default=False)
@post_logout_option(
    "Where an OpenID Connect sign-out it asks for may send the user back (repeat for more; the "
    "redirect URI rules)."
)
@click.option("--json", "as_json", is_flag=True)
def apps_create(
    name: str,
    owner_email: str,
    redirect_uris: tuple[str, ...],
    no_browser_flow: bool,
    standard_token_response: bool,
    first_party: bool,
    public: bool,
    id_token_alg: str,
    refresh_tokens: bool,
    post_logout_uris: tuple[str, ...],
    as_json: bool,
) -> None:
    """Create an application; its secret (none for a public client) is printed once only."""
    uris = _registered_uris(redirect_uris, browser_flow=not no_browser_flow, public=public)
    logout_uris = _post_logout_uris(post_logout_uris)
    settings = instance_settings()
    upgrade(settings)
    with make_sessionmaker(make_engine(settings))() as session, session.begin():
        owner = find_user_by_email(session, owner_email)
        if owner is None:
            raise click.ClickException(f"no user with email {owner_email}")
        try:
            new = create_application(
                session,
                name=name,
                owner=owner,
                redirect_uris=uris,
                standard_token_response=standard_token_response,
            )
        except AccountError as ex:
            raise click.ClickException(str(ex)) from None
        app = new.application
        app.first_party = first_party
        # A public client cannot keep a secret: the one just made is dropped unseen, so only
        # the ``none`` client authentication (with PKCE) can work for it.
        app.public_client = public
        # The default is stored as no choice, so that it follows the server's.
        app.id_token_signed_response_alg = None if id_token_alg == ES256 else id_token_alg
        app.refresh_tokens = refresh_tokens
        app.post_logout_redirect_uris = logout_uris
        data: dict[str, Any] = {"id": app.id, "name": app.name, "client_id": app.client_id}
        if not public:
            data["client_secret"] = new.client_secret
        data.update(
            first_party=first_party,
            public_client=public,
            redirect_uris=uris,
            standard_token_response=standard_token_response,
        )
        if refresh_tokens:
            data["refresh_tokens"] = True
        if logout_uris:
            data["post_logout_redirect_uris"] = logout_uris
    emit(as_json, data)
    if no_browser_flow and not as_json:
        click.echo(
            "no redirect URI: this application cannot sign users in through the browser; it "
            "can use the credentials grant, XAPP tokens and the client_credentials grant"
        )


def _registered_uris(given: tuple[str, ...], *, browser_flow: bool, public: bool) -> list[str]:
    """Return the redirect URIs to register, or refuse them with the policy's reasons."""
    if not browser_flow:
        if given:
            raise click.UsageError("--no-browser-flow registers no redirect URI: drop one or other")
        if public:
            raise click.UsageError("a public client signs users in through the browser only")
        return []
    if any("\n" in uri or "\r" in uri for uri in given):
        raise click.BadParameter("one URI per --redirect-uri", param_hint="--redirect-uri")
    uris, problems = parse_registered("\n".join(given))
    if problems:
        raise click.BadParameter(" ".join(problems), param_hint="--redirect-uri")
    if not uris:
        raise click.UsageError(
            "give at least one --redirect-uri (the browser flow sends codes only to a registered "
            "URI), or --no-browser-flow for an application that never uses the browser flow"
        )
    return uris


@apps.command("set")
@click.argument("client_id")
@click.option(
    "--first-party/--third-party",
    "first_party",
    default=None,
    help="Whether its user tokens may manage the user's applications.",
)
@click.option(
    "--redirect-uri",
    "redirect_uris",
    multiple=True,
    help="Replace the registered redirect URIs with these (repeat for several).",
)
@click.option(
    "--standard-token-response/--reference-token-response",
    "standard",
    default=None,
    help="RFC 6749 token responses (integer expires_in) or the reference API's (a timestamp).",
)
@id_token_alg_option(default=None)
@refresh_tokens_option(default=None)
@post_logout_option("Replace the post-logout redirect URIs with these (repeat for several).")
@click.option(
    "--no-post-logout-redirect-uri",
    "clear_post_logout",
    is_flag=True,
    help="Remove every post-logout redirect URI.",
)
def apps_set(
    client_id: str,
    first_party: bool | None,
    redirect_uris: tuple[str, ...],
    standard: bool | None,
    id_token_alg: str | None,
    refresh_tokens: bool | None,
    post_logout_uris: tuple[str, ...],
    clear_post_logout: bool,
) -> None:
    """Change how the service treats an application (first-party, redirect URIs, tokens)."""
    logout_change = bool(post_logout_uris) or clear_post_logout
    changes = (first_party, standard, id_token_alg, refresh_tokens)
    if not redirect_uris and not logout_change and all(change is None for change in changes):
        raise click.UsageError(
            "say what to change: --first-party, --third-party, --redirect-uri, "
            "--standard-token-response, --reference-token-response, --id-token-alg, "
            "--refresh-tokens, --no-refresh-tokens, "
            "--post-logout-redirect-uri or --no-post-logout-redirect-uri"
        )
    if post_logout_uris and clear_post_logout:
        raise click.UsageError(
            "--post-logout-redirect-uri and --no-post-logout-redirect-uri: choose one"
        )
    uris = _registered_uris(redirect_uris, browser_flow=True, public=False) if redirect_uris else []
    logout_uris = _post_logout_uris(post_logout_uris)
    with make_sessionmaker(make_engine(instance_settings()))() as session, session.begin():
        app = session.scalar(select(Application).where(Application.client_id == client_id))
        if app is None:
            raise click.ClickException(f"no application with client id {client_id}")
        if first_party is not None:
            app.first_party = first_party
        if uris:
            app.redirect_uris = uris
        if standard is not None:
            app.standard_token_response = standard
        if id_token_alg is not None:
            # The default is stored as no choice, so that it follows the server's.
            app.id_token_signed_response_alg = None if id_token_alg == ES256 else id_token_alg
        if refresh_tokens is not None:
            # Turned off, the families already granted keep working until revoked or expired.
            app.refresh_tokens = refresh_tokens
        if logout_change:
            app.post_logout_redirect_uris = logout_uris
    if first_party is not None:
        click.echo(f"application {client_id} is {'first' if first_party else 'third'}-party")
    if uris:
        click.echo(f"application {client_id} redirect URIs: {' '.join(uris)}")
    if standard is not None:
        shape = "RFC 6749 (integer expires_in)" if standard else "the reference API's (timestamp)"
        click.echo(f"application {client_id} token responses: {shape}")
    if id_token_alg is not None:
        click.echo(f"application {client_id} ID tokens: {id_token_alg}")
    if refresh_tokens is not None:
        state = "on" if refresh_tokens else "off"
        click.echo(f"application {client_id} refresh tokens: {state}")
    if logout_change:
        shown = " ".join(logout_uris) or "none"
        click.echo(f"application {client_id} post-logout redirect URIs: {shown}")


DURATION = re.compile(r"^([1-9][0-9]{0,5})([dhm])$")
UNITS = {"d": "days", "h": "hours", "m": "minutes"}


def _duration(_ctx: Any, _param: Any, value: str) -> timedelta:
    """Read a lifetime such as 7d, 12h or 30m."""
    found = DURATION.match(value.strip().lower())
    if found is None:
        raise click.BadParameter("a number of days, hours or minutes, such as 7d, 12h or 30m")
    return timedelta(**{UNITS[found.group(2)]: int(found.group(1))})


@apps.command("registration-token")
@click.option(
    "--expires",
    default="7d",
    show_default=True,
    callback=_duration,
    help="How long the token is valid: days, hours or minutes (7d, 12h, 30m).",
)
@click.option(
    "--uses",
    type=click.IntRange(1, 100_000),
    default=1,
    show_default=True,
    help="How many clients may register with it.",
)
@click.option("--json", "as_json", is_flag=True)
def apps_registration_token(expires: timedelta, uses: int, as_json: bool) -> None:
    """Issue an initial access token for dynamic client registration (printed once only)."""
    settings = instance_settings()
    upgrade(settings)
    with make_sessionmaker(make_engine(settings))() as session, session.begin():
        row, value = issue_initial_token(session, uses=uses, expires_in=expires)
        data = {
            "initial_access_token": value,
            "uses": uses,
            "expires_at": format_ts(row.expires_at),
        }
    emit(as_json, data)


@apps.command("rotate-secret")
@click.argument("client_id")
@click.option("--json", "as_json", is_flag=True)
def apps_rotate(client_id: str, as_json: bool) -> None:
    """Give an application a new secret (the old one stops working at once)."""
    settings = instance_settings()
    with make_sessionmaker(make_engine(settings))() as session, session.begin():
        app = session.scalar(select(Application).where(Application.client_id == client_id))
        if app is None:
            raise click.ClickException(f"no application with client id {client_id}")
        if app.public_client:
            raise click.ClickException(f"{client_id} is a public client: it has no secret")
        secret = rotate_secret(session, app)
    emit(as_json, {"client_id": client_id, "client_secret": secret})


@apps.command("list")
@click.option("--json", "as_json", is_flag=True, help="One JSON array of the applications.")
def apps_list(as_json: bool) -> None:
    """List the applications, never a secret: name, client id, kind, redirect URIs, enabled.

    The demo application is marked: its secret is printed by ``artcat demo credentials``
    (and by ``make run``); any other secret was shown once, and ``apps rotate-secret`` gives
    a new one.
    """
    settings = instance_settings()
    demo_id = demo_credentials(settings).client_id if settings.secret_key else ""
    with make_sessionmaker(make_engine(settings))() as session:
        found = session.scalars(select(Application).order_by(Application.name, Application.id))
        listed: list[dict[str, Any]] = [
            {
                "name": app.name,
                "client_id": app.client_id,
                "kind": ", ".join(
                    (
                        "public" if app.public_client else "confidential",
                        "first-party" if app.first_party else "third-party",
                    )
                ),
                "redirect_uris": list(app.redirect_uris or []),
                "enabled": bool(app.enabled),
                "demo": app.client_id == demo_id,
            }
            for app in found
        ]
    if as_json:
        click.echo(json.dumps(listed))
        return
    if not listed:
        click.echo("no applications")
    for entry in listed:
        demo = " (the demo application: artcat demo credentials)" if entry["demo"] else ""
        uris = ", ".join(entry["redirect_uris"]) or "none (no browser flow)"
        click.echo(f"{entry['name']}{demo}")
        click.echo(f"  client_id:     {entry['client_id']}")
        click.echo(f"  kind:          {entry['kind']}")
        click.echo(f"  redirect URIs: {uris}")
        click.echo(f"  enabled:       {'yes' if entry['enabled'] else 'no'}")


add_enable_commands(
    apps,
    "application",
    set_application_enabled,
    "client_id",
    disable_help="Disable an application: end every token and pending code it holds, at once.",
    enable_help="Let a disabled application be granted tokens again (its old tokens stay expired).",
)
