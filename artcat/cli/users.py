"""The ``artcat users`` commands: the operator's hand on user accounts."""

from __future__ import annotations

import sys

import click

from artcat.cli.accounts import add_enable_commands
from artcat.cli.support import emit, load_settings
from auth_server.accounts import AccountError, create_user, password_hasher
from auth_server.disabling import set_user_enabled
from auth_server.passwords import password_problem
from common.db import make_engine, make_sessionmaker, upgrade
from common.ids import utcnow
from common.settings import AuthSettings


@click.group()
def users() -> None:
    """Manage user accounts."""


@users.command("create")
@click.option("--email", required=True)
@click.option("--name", required=True)
@click.option(
    "--confirmed",
    is_flag=True,
    help="The operator vouches for the address: the account starts confirmed (applications "
    "are told email_verified: true). Without it, where email is on, the owner confirms the "
    "address by a password reset before the password signs in.",
)
@click.option("--json", "as_json", is_flag=True)
def users_create(email: str, name: str, confirmed: bool, as_json: bool) -> None:
    """Create a user; the password is read from standard input or a prompt."""
    if sys.stdin.isatty():
        password = click.prompt("Password", hide_input=True, confirmation_prompt=True)
    else:
        password = sys.stdin.readline().rstrip("\r\n")
    # The rule of the sign-up, reset and change forms, with the same context (email, name).
    problem = password_problem(password, email=email, name=name)
    if problem:
        raise click.ClickException(problem)
    settings = load_settings(AuthSettings)
    upgrade(settings)
    with make_sessionmaker(make_engine(settings))() as session, session.begin():
        try:
            user = create_user(
                session, password_hasher(settings), email=email, name=name, password=password
            )
        except AccountError as ex:
            raise click.ClickException(str(ex)) from None
        if confirmed:
            user.email_verified_at = utcnow()
        data = {
            "id": user.id,
            "email": user.email,
            "name": user.name,
            "email_verified": user.email_verified_at is not None,
        }
    emit(as_json, data)


add_enable_commands(
    users,
    "user",
    set_user_enabled,
    "email",
    disable_help="Disable a user: end every token, pending code and browser session of theirs "
    "at once.",
    enable_help="Let a disabled user sign in again (their old tokens stay expired).",
)
