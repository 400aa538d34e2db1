"""The HTML forms of the auth server (every one carries a session-bound CSRF token)."""

from __future__ import annotations

from typing import Any

from flask_wtf import FlaskForm
from wtforms import HiddenField, PasswordField, StringField, SubmitField, TextAreaField
from wtforms.fields import BooleanField  # the checkbox of ApplicationForm
from wtforms.validators import DataRequired, EqualTo, Length, ValidationError

from auth_server.accounts import undeliverable
from auth_server.passwords import PASSWORD_MAX
from auth_server.passwords import STRENGTH_HINT as STRENGTH_HINT
from auth_server.passwords import password_problem as password_problem
from auth_server.redirects import parse_registered

# The password rule lives in auth_server.passwords (the operator's CLI applies it too).
EMAIL_MAX = 320


class _StrongPassword:
    """Validate a new password's strength against the form's email and name fields."""

    def __call__(self, form: Any, field: Any) -> None:
        email = getattr(form, "email", None)
        name = getattr(form, "name", None)
        problem = password_problem(
            field.data or "",
            email=email.data or "" if email else "",
            name=name.data or "" if name else "",
        )
        if problem:
            raise ValidationError(problem)


def _chosen_password(label: str) -> PasswordField:
    """Return the field of a password the user chooses (held to the password rule)."""
    return PasswordField(label, [DataRequired("Choose a password."), _StrongPassword()])


def _typed_again(label: str, of: str = "password") -> PasswordField:
    """Return the field that repeats the chosen password ``of``."""
    return PasswordField(
        label, [DataRequired("Type the password again."), EqualTo(of, "The passwords differ.")]
    )


def _printable(form: Any, field: Any) -> None:
    """Refuse control characters (PostgreSQL text cannot even hold a NUL)."""
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in field.data or ""):
        raise ValidationError("Remove the control characters.")


def _email(form: Any, field: Any) -> None:
    value = (field.data or "").strip()
    local, _, domain = value.rpartition("@")
    if not local or "." not in domain or any(c.isspace() for c in value):
        raise ValidationError("Enter an email address like name@example.org.")


def _deliverable(form: Any, field: Any) -> None:
    """Refuse reserved domains: no link sent there can arrive, and social sign-in uses one."""
    if undeliverable(field.data or ""):
        raise ValidationError("This address cannot receive email. Use an address you read.")


class SignInForm(FlaskForm):
    """Email and password."""

    email = StringField(
        "Email", [DataRequired("Enter your email address."), Length(max=EMAIL_MAX), _printable]
    )
    password = PasswordField(
        "Password", [DataRequired("Enter your password."), Length(max=PASSWORD_MAX)]
    )
    next = HiddenField()
    submit = SubmitField("Sign in")


class SignUpForm(FlaskForm):
    """Name, email and a new password (the view drops the password where mail confirms
    addresses: the owner of the address chooses it on the confirmation page)."""

    name = StringField("Name", [DataRequired("Enter your name."), Length(max=200), _printable])
    email = StringField(
        "Email",
        [
            DataRequired("Enter your email address."),
            Length(max=EMAIL_MAX),
            _printable,
            _email,
            _deliverable,
        ],
    )
    password = _chosen_password("Password")
    next = HiddenField()
    submit = SubmitField("Create account")


class ForgotPasswordForm(FlaskForm):
    """The email address to send a reset link to."""

    email = StringField(
        "Email",
        [DataRequired("Enter your email address."), Length(max=EMAIL_MAX), _printable, _email],
    )
    submit = SubmitField("Send reset link")


class ResetPasswordForm(FlaskForm):
    """A new password, typed twice."""

    password = _chosen_password("New password")
    confirm = _typed_again("New password again")
    submit = SubmitField("Set password")


class ChangePasswordForm(FlaskForm):
    """The current password, and a new one typed twice."""

    current_password = PasswordField(
        "Current password", [DataRequired("Enter your current password."), Length(max=PASSWORD_MAX)]
    )
    new_password = PasswordField(
        "New password", [DataRequired("Choose a password."), Length(max=PASSWORD_MAX)]
    )
    confirm = _typed_again("New password again", "new_password")
    submit = SubmitField("Change password")


class ConfirmEmailForm(FlaskForm):
    """The emailed confirmation token, carried from the link's page to its button, and the
    password the owner of the address chooses there (typed twice)."""

    token = HiddenField()
    password = _chosen_password("Choose a password")
    confirm = _typed_again("Password again")
    submit = SubmitField("Confirm and sign in")


def valid_with_password(form: FlaskForm, field: Any, *, email: str, name: str) -> bool:
    """Validate ``form``, and its new password ``field`` by the one password rule, with the
    account's email and name as context (which the form's own validators do not know)."""
    valid = bool(form.validate())
    problem = password_problem(field.data or "", email=email, name=name)
    if problem and not field.errors:
        field.errors = [problem]
        valid = False
    return valid


class ConsentForm(FlaskForm):
    """The authorization request, carried through the consent page, and the user's decision."""

    client_id = HiddenField()
    redirect_uri = HiddenField()
    response_type = HiddenField()
    state = HiddenField()
    scope = HiddenField()
    code_challenge = HiddenField()
    code_challenge_method = HiddenField()
    nonce = HiddenField()
    prompt = HiddenField()
    max_age = HiddenField()
    approve = SubmitField("Allow")
    deny = SubmitField("Deny")


class ApplicationForm(FlaskForm):
    """A new application: its name and, when it signs users in through the browser, its
    redirect URIs (one per line; at least one)."""

    name = StringField(
        "Application name", [DataRequired("Name the application."), Length(max=200), _printable]
    )
    browser_flow = BooleanField(
        "Signs users in through the browser (the authorization code flow)", default=True
    )
    redirect_uris = TextAreaField("Redirect URIs (one per line)", [Length(max=20_000)])
    reference_token_response = BooleanField(
        "Answer tokens in the reference API's form (expires_in as a timestamp)", default=False
    )
    post_logout_redirect_uris = TextAreaField(
        "Post-logout redirect URIs (one per line; optional)", [Length(max=20_000)]
    )
    submit = SubmitField("Register application")

    def validate_post_logout_redirect_uris(self, field: Any) -> None:
        """Check the URIs a sign-out may go back to against the redirect policy."""
        uris, problems = parse_registered(field.data or "")
        if problems:
            raise ValidationError(" ".join(problems))
        self.parsed_post_logout_redirect_uris = uris

    def validate_redirect_uris(self, field: Any) -> None:
        """Check every redirect URI against the redirect policy; require one for the browser."""
        uris, problems = parse_registered(field.data or "")
        if problems:
            raise ValidationError(" ".join(problems))
        if self.browser_flow.data and not uris:
            raise ValidationError(
                "Give at least one redirect URI, or untick “Signs users in through the browser”."
            )
        if not self.browser_flow.data and uris:
            raise ValidationError(
                "An application that does not sign users in through the browser has no redirect "
                "URI: remove them, or tick “Signs users in through the browser”."
            )
        self.parsed_redirect_uris = uris


class ButtonForm(FlaskForm):
    """A form that is only a button (sign out, revoke, rotate): the CSRF token is its content."""

    submit = SubmitField("Confirm")
