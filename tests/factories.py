"""Test data factories (factory_boy): realistic rows with overridable fields.

Each factory writes through the session a test passes (``session=``), so rows land in that
test's transaction. Users and applications are made the way the service makes them
(``create_user``, ``create_application``): with their details, profile, default collection
and hashed secrets. The functions below keep the short call form the tests use.
"""

from __future__ import annotations

from typing import Any

import factory
from factory.alchemy import SQLAlchemyModelFactory
from sqlalchemy.orm import Session

from auth_server.accounts import NewApplication, create_application, create_user, password_hasher
from common.ids import new_id
from common.models import Artist, User
from common.settings import Settings


class ArtistFactory(SQLAlchemyModelFactory):
    """An artist with a name, life dates, a nationality and an image."""

    class Meta:
        model = Artist
        sqlalchemy_session_persistence = "flush"

    id = factory.LazyFunction(new_id)
    slug = factory.Sequence(lambda n: f"artist-{n}")
    name = factory.Sequence(lambda n: f"Artist {n}")
    sortable_name = factory.Sequence(lambda n: f"{n} Artist")
    gender = "female"
    birthday = "1900"
    deathday = "1980"
    nationality = "French"
    image_url = factory.Sequence(lambda n: f"https://images.example.org/a{n}/{{image_version}}.jpg")
    image_versions = factory.LazyFunction(lambda: ["four_thirds", "large", "square", "tall"])

    @classmethod
    def _create(cls, model_class: type[Artist], *args: Any, session: Session, **kwargs: Any) -> Any:
        """Add the artist to the given session (not a session fixed on the class)."""
        return cls._save(model_class, session, args, kwargs)


class UserFactory(factory.Factory):
    """A user with details and a default collection, made by ``create_user``."""

    class Meta:
        model = User

    email = factory.Sequence(lambda n: f"user{n}@example.org")
    name = factory.Sequence(lambda n: f"User {n}")
    password = "correct horse"

    @classmethod
    def _create(
        cls, model_class: type[User], *, session: Session, settings: Settings, **kwargs: Any
    ) -> User:
        """Create the user in ``session`` with the instance's password hasher.

        ``email_verified_at`` (default None: unconfirmed) says when the owner proved the address.
        """
        verified_at = kwargs.pop("email_verified_at", None)
        user = create_user(session, password_hasher(settings), **kwargs)
        user.email_verified_at = verified_at
        return user


# Application settings ``create_application`` does not take (the command line sets them after).
SET_AFTER = ("refresh_tokens", "post_logout_redirect_uris")


class ApplicationFactory(factory.Factory):
    """An application made by ``create_application``; the result carries the clear secret."""

    class Meta:
        model = NewApplication

    name = factory.Sequence(lambda n: f"App {n}")
    owner = None

    @classmethod
    def _create(
        cls, model_class: type[NewApplication], *, session: Session, **kwargs: Any
    ) -> NewApplication:
        """Create the application in ``session``; what ``artcat apps set`` sets besides
        (``refresh_tokens``, ``post_logout_redirect_uris``) is set on the row after."""
        settable = {k: kwargs.pop(k) for k in SET_AFTER if k in kwargs}
        new = create_application(session, **kwargs)
        for name, value in settable.items():
            setattr(new.application, name, value)
        session.flush()
        return new


def artist(session: Session, **fields: Any) -> Artist:
    """Add an artist."""
    row: Artist = ArtistFactory.create(session=session, **fields)
    return row


def user(session: Session, settings: Settings, **fields: Any) -> User:
    """Add a user (with details and a default collection)."""
    row: User = UserFactory.create(session=session, settings=settings, **fields)
    return row


def application(session: Session, owner: User | None = None, **fields: Any) -> NewApplication:
    """Add an application; the returned object carries the clear secret."""
    new: NewApplication = ApplicationFactory.create(session=session, owner=owner, **fields)
    return new
