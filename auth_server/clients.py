"""Applications as Authlib sees its clients: authentication, grants, redirect URIs, scopes."""

from __future__ import annotations

import time
from collections.abc import Callable

from authlib.oauth2.rfc6749 import ClientMixin
from flask import current_app
from sqlalchemy import Table, bindparam, select

from auth_server.context import services
from auth_server.inputs import is_clean
from auth_server.oauth import parse_scope
from auth_server.redirects import check_redirect_uri
from common.client_versions import current_version
from common.models import Application
from common.stores import Stores
from common.tokens import digests_match

SECRET_METHODS = ("client_secret_basic", "client_secret_post")
GRANT_ROLE = "grant:"
APPLICATIONS: Table = Application.__table__  # type: ignore[assignment]
# Every token request looks its client up: one Core statement, built once (an ORM query costs
# three times its CPU), answered as a plain ``Application`` that belongs to no session.
_BY_CLIENT_ID = select(APPLICATIONS).where(APPLICATIONS.c.client_id == bindparam("client_id"))
# Grants that act for no user: only a client that can keep a secret may use them.
CONFIDENTIAL_ONLY = frozenset({"client_credentials"})
# How long a process keeps an application at most (changes made outside the services' engines,
# by hand in SQL, are seen this late: see common.client_versions), and how many it keeps.
CACHE_TTL = 60.0
CACHE_SIZE = 1024
EXTENSION_KEY = "artcat.clients"


def grant_allowed(app: Application, grant_type: str) -> bool:
    """Tell whether an application may use a grant.

    Every grant is open by default (as in the reference API). An operator restricts an
    application by giving it ``grant:<type>`` roles: then only those grants are allowed.
    """
    allowed = {r[len(GRANT_ROLE) :] for r in app.roles or [] if r.startswith(GRANT_ROLE)}
    return not allowed or grant_type in allowed


class OAuthClient(ClientMixin):
    """An enabled application, with the checks Authlib's grants and endpoints ask of a client."""

    def __init__(self, app: Application) -> None:
        self.app = app

    @property
    def public(self) -> bool:
        """Tell whether the application holds no secret (a native or browser app)."""
        return bool(self.app.public_client)

    @property
    def client_metadata(self) -> dict[str, list[str]]:
        """Return the registered metadata Authlib's end-session endpoint reads."""
        return {"post_logout_redirect_uris": list(self.app.post_logout_redirect_uris or [])}

    def get_client_id(self) -> str:
        """Return the client id."""
        return self.app.client_id

    def get_default_redirect_uri(self) -> None:
        """Return None: every authorization request names its redirect URI (RFC 9700 2.1)."""
        return None

    def get_allowed_scope(self, scope: str | None) -> str:
        """Return the normalised scope; every application may ask for every scope."""
        return parse_scope(scope) or ""

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        """Tell whether the URI matches one the application registered."""
        return check_redirect_uri(redirect_uri, list(self.app.redirect_uris or []))[0] is not None

    def check_client_secret(self, client_secret: str) -> bool:
        """Compare a presented secret with the stored digest, in constant time."""
        if self.public or not is_clean(client_secret, 200):
            return False
        return digests_match(client_secret, self.app.client_secret_digest)

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        """A public client authenticates with ``none`` only; any other with its secret, by the
        method it registered when it registered one (RFC 7591), at every endpoint."""
        if self.public:
            return method == "none"
        registered = self.app.token_endpoint_auth_method
        return method == registered if registered else method in SECRET_METHODS

    def check_response_type(self, response_type: str) -> bool:
        """Every application may use the code flow (its redirect URIs decide where it goes)."""
        return response_type == "code"

    def check_grant_type(self, grant_type: str) -> bool:
        """Apply the operator's ``grant:`` roles, and keep public clients off secret-only grants."""
        if self.public and grant_type in CONFIDENTIAL_ONLY:
            return False
        return grant_allowed(self.app, grant_type)


def read_client(stores: Stores, client_id: str) -> OAuthClient | None:
    """Return the enabled application with this client id, read from the database, or None."""
    with stores.read_engine.connect() as conn:
        row = conn.execute(_BY_CLIENT_ID, {"client_id": client_id}).first()
    if row is None or not row.enabled:
        return None
    return OAuthClient(Application(**row._asdict()))


class ClientCache:
    """The applications this process looked up (enabled or not found), filed under the
    applications' version (``common.client_versions``), which each lookup reads first.

    A lookup uses only what was read from the database after the version it read itself was
    set: an application changed before the request began (its change committed, then the
    version moved) is never answered as it was. The entries are never changed, only replaced
    (threads share them): an ``OAuthClient`` and its ``Application`` are read-only.
    """

    def __init__(
        self, stores: Stores, prefix: str, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.stores = stores
        self.prefix = prefix
        self.clock = clock
        # (version, {client id: (read until, client or None)}), replaced whole on a new version.
        self._filed: tuple[bytes | None, dict[str, tuple[float, OAuthClient | None]]] = (None, {})

    def get(self, client_id: str) -> OAuthClient | None:
        """Return the enabled application with this client id, or None."""
        version = current_version(self.stores.redis, self.prefix)
        if version is None:  # unknown (Redis unreachable or its key unset): the database says
            return read_client(self.stores, client_id)
        filed = self._filed
        if filed[0] != version:
            filed = self._filed = (version, {})
        entries = filed[1]
        now = self.clock()
        found = entries.get(client_id)
        if found is not None and found[0] > now:
            return found[1]
        client = read_client(self.stores, client_id)
        if len(entries) >= CACHE_SIZE:
            entries.clear()
        entries[client_id] = (now + CACHE_TTL, client)  # under the version read before
        return client


def client_cache() -> ClientCache:
    """Return the current app's cache of applications (made on first use)."""
    cache: ClientCache | None = current_app.extensions.get(EXTENSION_KEY)
    if cache is None:
        svc = services()
        cache = ClientCache(svc.stores, svc.settings.redis_prefix)
        cache = current_app.extensions.setdefault(EXTENSION_KEY, cache)
    return cache


def query_client(client_id: str | None) -> OAuthClient | None:
    """Return the enabled application with this client id, or None."""
    if not client_id or not is_clean(client_id, 64):
        return None  # a NUL byte or a lone surrogate would make PostgreSQL refuse the query
    return client_cache().get(client_id)
