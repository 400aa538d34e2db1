"""Typed, frozen settings for both services, read from the environment in this one module.

Nothing else in the project reads ``os.environ``. Tests construct settings directly.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import logging
import os
import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from limits import parse

S = TypeVar("S", bound="Settings")
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

log = logging.getLogger("artcat.settings")

DAY = 86_400
# The longest grace period of a used refresh token (RFC 9700 4.14.2 wants reuse detected).
MAX_REFRESH_GRACE = 10
ENVIRONMENTS = ("development", "staging", "production")
STAGING = "staging"
PRODUCTION = "production"
DEVELOPMENT = "development"
WSGI_SERVERS = ("auto", "granian", "waitress")
# URL_CREDENTIALS: take the reference API's URL forms of client credentials, codes and tokens
# (a password never), or refuse every secret in a URL.
URL_CREDENTIALS_ACCEPT = "accept"
URL_CREDENTIALS_REFUSE = "refuse"
URL_CREDENTIALS = (URL_CREDENTIALS_ACCEPT, URL_CREDENTIALS_REFUSE)
# CLIENT_REGISTRATION (RFC 7591): with an initial access token the operator issued, open to
# anyone, or off.
CLIENT_REGISTRATION = ("token", "open", "off")


class SettingsError(ValueError):
    """A setting that the services cannot run with (the message names it)."""


@dataclass(frozen=True)
class Settings:
    """Settings shared by both services."""

    instance_dir: Path = Path("instance")
    database_url: str = ""
    redis_url: str = ""
    public_url: str = ""
    secret_key: str = ""
    redis_prefix: str = "artcat"
    # Redis Sentinel (high availability): "host:port,host:port" of the sentinels and the name
    # of the master they watch. REDIS_URL then only gives the database number and password.
    redis_sentinels: str = ""
    redis_sentinel_service: str = "artcat"
    redis_sentinel_password: str = ""
    vendor: str = "artcat"
    # Base URL of another website that `permalink` links point to; when empty they point to
    # this service's own pages (artists, artworks, genes, partners, profiles, shows).
    web_url: str = ""
    # Token lifetimes, in seconds.
    xapp_token_ttl: int = 7 * DAY
    access_token_ttl: int = 60 * DAY
    offline_token_ttl: int = 25 * 365 * DAY + 6 * DAY  # 25 calendar years, leap days included
    # How long an unknown token digest is remembered as unknown in Redis.
    negative_cache_ttl: int = 30
    # argon2id parameters (OWASP: m=19 MiB, t=2, p=1 as the floor; these are stronger).
    argon2_time_cost: int = 3
    argon2_memory_cost: int = 65_536
    argon2_parallelism: int = 1
    sql_echo: bool = False
    # development | staging | production. Staging never sends email, and `artcat staging
    # rebuild` (which destroys the configured database) runs only where this is "staging".
    environment: str = "development"
    # Observability: log level, JSON access lines, GET /metrics, and how long SIGTERM waits for
    # the requests in flight (seconds). METRICS_DIR: where workers publish their metrics (a
    # temporary folder by default).
    log_level: str = "INFO"
    access_log: bool = True
    metrics_enabled: bool = True
    metrics_dir: str = ""
    # Who may read GET /metrics: comma-separated addresses or networks, matched against the
    # client's address (the one TRUSTED_PROXY forwards, when a proxy is trusted). Anyone else
    # gets the 404 of a path that does not exist. Loopback only by default.
    metrics_allow: str = "127.0.0.0/8, ::1"
    shutdown_grace: int = 10
    # The HTTP server of `artcat serve`: granian (HTTP in Rust, 1.3-1.8 times waitress's
    # throughput) or waitress (pure Python, one process: a debugger's breakpoint works);
    # "auto" is waitress in development, granian on staging and in production.
    wsgi_server: str = "auto"
    # The reverse proxy in front (an address, or "*" where nothing but the proxy can reach the
    # service): its X-Forwarded-For and X-Forwarded-Proto are believed, for the last
    # TRUSTED_PROXY_COUNT hops. Unset, those headers are removed from every request, so the
    # per-IP sign-in throttle and the logs see the peer's own address.
    trusted_proxy: str = ""
    trusted_proxy_count: int = 1
    # Strict-Transport-Security max-age (seconds) sent on every response when PUBLIC_URL is
    # https; 0 sends none.
    hsts_max_age: int = 365 * DAY
    # Where `artcat load tate|cmoa|moma-artists --download` fetches each museum's published
    # data (the museums' own GitHub repositories; MoMA's CSV is stored with Git LFS, hence
    # the media URL). Point them at a mirror to download from elsewhere.
    tate_archive_url: str = (
        "https://github.com/tategallery/collection/archive/refs/heads/master.zip"
    )
    cmoa_archive_url: str = "https://github.com/cmoa/collection/archive/refs/heads/master.zip"
    moma_artists_url: str = (
        "https://media.githubusercontent.com/media/MuseumofModernArt/collection/main/Artists.csv"
    )
    # The instance's images (README "Images"): where `artcat images fetch` keeps its copies and
    # /images/... reads them: a folder (default: images/ in the instance folder) or
    # s3://bucket/prefix (any S3-compatible store; IMAGE_S3_ENDPOINT_URL for one other than
    # AWS, credentials from the usual AWS_* variables or roles).
    image_store: str = ""
    image_s3_endpoint_url: str = ""
    # Fetching: parallel downloads, seconds per connect and per read, the largest body and the
    # most pixels an image may have (a decompression bomb is refused before it is decoded).
    image_fetch_workers: int = 4
    image_fetch_timeout: int = 20
    image_max_bytes: int = 30_000_000
    image_max_pixels: int = 60_000_000
    # "from=to,from=to": a published image URL starting with ``from`` is fetched from ``to``
    # instead (a local mirror of the museums' images; the tests' stand-in museum).
    image_source_rewrite: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "instance_dir", Path(self.instance_dir))
        choose(self, "environment", ENVIRONMENTS)
        check_public_url(self.public_url, self.environment)
        choose(self, "wsgi_server", WSGI_SERVERS)
        parse_networks(self.metrics_allow, "METRICS_ALLOW")  # refused at start, not at a scrape

    @property
    def metrics_networks(self) -> tuple[IPNetwork, ...]:
        """Return the networks METRICS_ALLOW lets read ``/metrics``."""
        return parse_networks(self.metrics_allow, "METRICS_ALLOW")

    @property
    def server(self) -> str:
        """Return the server ``artcat serve`` runs (WSGI_SERVER, "auto" resolved)."""
        if self.wsgi_server != "auto":
            return self.wsgi_server
        return "waitress" if self.environment == DEVELOPMENT else "granian"

    @property
    def https(self) -> bool:
        """Tell whether the public URL is https (secure cookies and HSTS follow from it)."""
        return self.public_url.lower().startswith("https://")

    @property
    def sqlalchemy_url(self) -> str:
        """Return the database URL, defaulting to a SQLite file in the instance folder."""
        if self.database_url:
            return normalise_database_url(self.database_url)
        return f"sqlite:///{self.default_sqlite_path}"

    @property
    def default_sqlite_path(self) -> Path:
        """Return the path of the SQLite database used when DATABASE_URL is unset."""
        return (self.instance_dir / "artcat.sqlite3").resolve()

    @property
    def embedded_redis(self) -> bool:
        """Tell whether the embedded Redis is used (no REDIS_URL and no sentinels)."""
        return not (self.redis_url or self.redis_sentinels)

    @property
    def embedded_redis_path(self) -> Path:
        """Return the path of the embedded Redis database file."""
        return (self.instance_dir / "redis.rdb").resolve()

    @classmethod
    def from_env(cls: type[S], environ: Mapping[str, str] | None = None, **overrides: Any) -> S:
        """Build settings from the environment (``os.environ`` by default)."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            raw = env.get(f.name.upper())
            if raw is None or raw == "":
                continue
            try:
                values[f.name] = _coerce(f, raw)
            except ValueError:
                raise SettingsError(f"{f.name.upper()}={raw!r} is not a valid {f.type}") from None
        values.update(overrides)
        instance_dir = Path(values.get("instance_dir", cls.instance_dir))
        # Refused before the instance folder and a secret key are created for nothing.
        environment = str(values.get("environment", cls.environment)).strip().lower()
        check_public_url(str(values.get("public_url", "")), environment)
        if not values.get("secret_key"):
            values["secret_key"] = load_or_create_secret_key(instance_dir)
        return cls(**values)


@dataclass(frozen=True)
class AuthSettings(Settings):
    """Settings of the authorization server."""

    # Password attempts (sign-in page, password change, credentials and password grants; a right
    # password gives its attempt back). Per client IP, whatever the account; per account from
    # one IP; per account from every IP together (the ceiling: above what one IP can reach, so a
    # guesser at one address cannot lock the owner out at another); and per device cookie (a
    # browser that signed in with the password before counts there instead, ceiling or not).
    login_attempts_per_account: str = "100/hour"
    login_attempts_per_ip: str = "30/minute"
    login_attempts_per_account_ip: str = "10/10minutes"
    login_attempts_per_device: str = "10/10minutes"
    code_ttl: int = 600
    # "accept": client_id, client_secret, code, tokens... in the query string of the reference
    # API's routes, and GET on the token endpoint, as the reference documents (a password is
    # refused in any URL); "refuse": secrets only in the body (or a header), token requests by
    # POST only.
    url_credentials: str = URL_CREDENTIALS_ACCEPT
    # None (unset): secure cookies exactly when PUBLIC_URL is https; see ``cookie_secure``.
    session_cookie_secure: bool | None = None
    # Outgoing email (password reset links). Off by default, as on a staging instance; reset
    # links are built from ``public_url`` only, never from a request's Host header.
    email_enabled: bool = False
    smtp_host: str = "localhost"
    smtp_port: int = 587
    smtp_user: str = ""
    smtp_password: str = ""
    smtp_from: str = ""
    smtp_security: str = "starttls"  # starttls | tls (implicit, usually port 465) | none
    smtp_timeout: int = 10
    # How long a password reset link stays valid, in seconds.
    password_reset_ttl: int = 3600
    # How long a browser sign-in lasts before the user must sign in again, in seconds.
    signed_in_ttl: int = 12 * 3600
    # Social sign-in (the ``oauth_token`` grant); a provider is off while its app id/key is empty.
    # The base URLs are settings so that tests (and proxies) can point them elsewhere.
    facebook_app_id: str = ""
    facebook_app_secret: str = ""
    facebook_graph_url: str = "https://graph.facebook.com"
    twitter_consumer_key: str = ""
    twitter_consumer_secret: str = ""
    twitter_api_url: str = "https://api.twitter.com"
    # Seconds allowed for each call to a social provider.
    social_timeout: int = 5
    # XAPP token issuance: tokens issued per client id (only the right secret counts here; far
    # above an application's needs, its token lasts 7 days), attempts per client IP (counted
    # before any secret is checked), and wrong-secret attempts per client id from one IP (a
    # guesser uses up the budget of its own address, never the application's).
    xapp_attempts_per_client: str = "300/minute"
    xapp_attempts_per_ip: str = "3000/minute"
    xapp_failures_per_client_ip: str = "10/minute"
    # Applications a user may create (API and developer page together) in a moving window: each
    # application has a rate limit of its own, so minting them would multiply the user's.
    applications_created_per_user: str = "10/day"
    # Sign-up: accounts created per client IP (a ``limits`` rate string, counted before any
    # hashing), and how long an email verification link stays valid, in seconds.
    sign_up_attempts_per_ip: str = "5/hour"
    email_verification_ttl: int = 3 * DAY
    # OpenID Connect: how long each ID token signing key signs before the next one takes over,
    # in seconds (at least a day). The next key is published hours before it signs, and a key
    # stays published until the last token it signed has expired.
    signing_key_rotation: int = 30 * DAY
    # The device flow (RFC 8628): how long a device code and its user code live, in seconds; the
    # seconds a device waits between polls (5 more after each slow_down); and the wrong user
    # codes /activate takes per client IP and per signed-in account (a right code gives its
    # attempt back), ``limits`` rate strings.
    device_code_ttl: int = 900
    device_poll_interval: int = 5
    device_code_failures_per_ip: str = "20/hour"
    device_code_failures_per_account: str = "10/hour"
    # Device authorization requests per client IP (each stores a pending grant; a public
    # client's id is no secret, so anyone could ask).
    device_authorizations_per_ip: str = "30/minute"
    # Refresh tokens (applications registered for them, with the offline_access scope): how
    # long a refresh token lives unused, how long the access tokens issued beside it live, and
    # the seconds (0 to 10) during which a refresh token already used buys the same new pair
    # again (concurrent refreshes by one client) instead of ending its family.
    refresh_token_ttl: int = 30 * DAY
    refresh_access_token_ttl: int = 3600
    refresh_grace_period: int = 5
    # Dynamic client registration (POST /oauth2/register): "token" (an initial access token
    # from ``artcat apps registration-token``), "open" or "off"; and registrations per client
    # address (every attempt counts, a refused one too).
    client_registration: str = "token"
    client_registrations_per_ip: str = "20/hour"
    # Storage cleanup (``auth_server.cleanup``): seconds between two background runs (one
    # process at a time; 0 turns the background cleaner off, e.g. for `artcat db clean` from
    # cron), rows deleted per transaction, and how long expired or revoked rows are kept.
    cleanup_interval: int = 300
    cleanup_batch_size: int = 500
    cleanup_retention: int = DAY

    def __post_init__(self) -> None:
        super().__post_init__()
        choose(self, "url_credentials", URL_CREDENTIALS)
        choose(self, "client_registration", CLIENT_REGISTRATION)
        if self.cleanup_interval < 0 or self.cleanup_retention < 0:
            raise SettingsError("CLEANUP_INTERVAL and CLEANUP_RETENTION may not be negative")
        if not 1 <= self.cleanup_batch_size <= 100_000:
            raise SettingsError("CLEANUP_BATCH_SIZE must be between 1 and 100000")
        if self.signing_key_rotation < DAY:
            raise SettingsError("SIGNING_KEY_ROTATION must be at least 86400 seconds (a day)")
        if not 0 <= self.refresh_grace_period <= MAX_REFRESH_GRACE:
            raise SettingsError(f"REFRESH_GRACE_PERIOD must be 0 to {MAX_REFRESH_GRACE} seconds")
        if self.refresh_token_ttl < 60 or self.refresh_access_token_ttl < 60:
            raise SettingsError("REFRESH_TOKEN_TTL and REFRESH_ACCESS_TOKEN_TTL are 60 s at least")
        check_rates(
            self,
            "login_attempts_per_account",
            "login_attempts_per_ip",
            "login_attempts_per_account_ip",
            "login_attempts_per_device",
            "xapp_attempts_per_client",
            "xapp_attempts_per_ip",
            "xapp_failures_per_client_ip",
            "applications_created_per_user",
            "sign_up_attempts_per_ip",
            "device_code_failures_per_ip",
            "device_code_failures_per_account",
            "device_authorizations_per_ip",
            "client_registrations_per_ip",
        )
        if self.session_cookie_secure is False and self.https:
            log.warning(
                "SESSION_COOKIE_SECURE=false although PUBLIC_URL is https: the session cookie "
                "will also be sent over plain http"
            )

    @property
    def url_credentials_accepted(self) -> bool:
        """Tell whether the reference API's URL forms of credentials are taken (the default)."""
        return self.url_credentials == URL_CREDENTIALS_ACCEPT

    @property
    def cookie_secure(self) -> bool:
        """Tell whether the session cookie is Secure: as set, else when PUBLIC_URL is https."""
        if self.session_cookie_secure is None:
            return self.https
        return self.session_cookie_secure


@dataclass(frozen=True)
class ResourceSettings(Settings):
    """Settings of the catalog (resource) server."""

    page_size_default: int = 5
    page_size_max: int = 100
    # The reference API's sustained rate, with room for a client to follow every link of a
    # page at once (100 in any 20 seconds; see resource_server.ratelimit.burst_limit).
    rate_limit: str = "5/second"
    rate_limit_burst: int = 100
    # The HTML pages (front door, docs, search, the catalog's lists and items; not their static
    # files) per client address (an IPv6 address per /64), as the server derives it (see
    # TRUSTED_PROXY): a ``limits`` rate and a burst, as RATE_LIMIT's. 429 with Retry-After.
    page_rate_limit: str = "2/second"
    page_rate_limit_burst: int = 60
    # Rendered artwork documents kept in memory per process (a few KB each; 0 turns it off).
    document_cache_size: int = 10_000
    # Read replicas (README "Read replicas"): comma-separated PostgreSQL URLs the catalog's
    # reads go to (none: every read on DATABASE_URL), the replay lag in seconds beyond which a
    # replica is skipped, and the seconds a connection to one may take.
    database_replica_urls: str = ""
    replica_max_lag: int = 5
    replica_connect_timeout: int = 2

    def __post_init__(self) -> None:
        super().__post_init__()
        check_rates(self, "rate_limit", "page_rate_limit")
        if self.replica_max_lag < 1 or self.replica_connect_timeout < 1:
            raise SettingsError("REPLICA_MAX_LAG and REPLICA_CONNECT_TIMEOUT are 1 s at least")
        for url in self.database_replica_urls.split(","):
            if url.strip() and not normalise_database_url(url.strip()).startswith("postgresql"):
                raise SettingsError("DATABASE_REPLICA_URLS must list postgresql:// URLs")


def choose(settings: Settings, name: str, choices: Sequence[str]) -> None:
    """Set a setting that takes one of ``choices`` to its normal form (trimmed, lower case), or
    refuse it naming them."""
    value = getattr(settings, name).strip().lower()
    if value not in choices:
        raise SettingsError(f"{name.upper()} must be one of {', '.join(choices)}")
    object.__setattr__(settings, name, value)


def check_rates(settings: Settings, *names: str) -> None:
    """Refuse a rate setting ``limits`` cannot read, at start rather than at the first request."""
    for name in names:
        value = getattr(settings, name)
        try:
            parse(value)
        except ValueError:
            raise SettingsError(
                f"{name.upper()} must be a rate such as 10/minute or 5/second, not {value!r}"
            ) from None


def parse_networks(value: str, name: str) -> tuple[IPNetwork, ...]:
    """Return the networks of a comma-separated list of addresses or networks (an address is
    a network of one); say which item is wrong otherwise."""
    networks = []
    for item in value.split(","):
        if not item.strip():
            continue
        try:
            networks.append(ipaddress.ip_network(item.strip(), strict=False))
        except ValueError:
            raise SettingsError(f"{name}: {item.strip()!r} is not an address or network") from None
    return tuple(networks)


def normalise_database_url(url: str) -> str:
    """Return a SQLAlchemy URL, mapping ``postgres://`` and ``postgresql://`` to psycopg 3."""
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def is_loopback_host(host: str) -> bool:
    """Tell whether a host name (no port) is ``localhost`` or a loopback address."""
    host = host.lower().removeprefix("[").removesuffix("]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_public_url(url: str, environment: str) -> None:
    """Refuse a PUBLIC_URL that is not absolute, or a production instance without one.

    Without PUBLIC_URL links and the issuer would be taken from each request's Host header,
    which the client chooses; production therefore needs it, and https unless on loopback.
    """
    advice = "the absolute https URL clients reach the service at, e.g. https://api.example.org"
    if not url:
        if environment == PRODUCTION:
            raise SettingsError(f"PUBLIC_URL must be set when ENVIRONMENT=production: {advice}")
        return
    try:
        parts = urlsplit(url)
        _ = parts.port  # a port that is not a number raises here
    except ValueError:
        parts = urlsplit("")
    host = parts.hostname or ""
    if parts.scheme not in ("http", "https") or not host or parts.query or parts.fragment:
        raise SettingsError(f"PUBLIC_URL {url!r} is not an absolute http(s) URL: {advice}")
    if environment == PRODUCTION and parts.scheme == "http" and not is_loopback_host(host):
        raise SettingsError(
            f"PUBLIC_URL must be https when ENVIRONMENT=production (http only for a loopback "
            f"host), not {url!r}"
        )


def prepare_instance_dir(instance_dir: Path) -> None:
    """Create the instance folder for its owner only (0700), or tighten an existing one.

    It holds the secret key and, by default, the database: nobody else on the host may read it.
    """
    instance_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    tighten(instance_dir)


def tighten(path: Path) -> None:
    """Take every group and other permission off ``path`` (when it exists), with a log line."""
    try:
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        return
    if not mode & 0o077:
        return
    try:
        path.chmod(mode & 0o700)
    except OSError as ex:
        log.warning("could not restrict %s to its owner (mode %o): %s", path, mode, ex.strerror)
        return
    log.warning("restricted %s to its owner: mode %o, was %o", path, mode & 0o700, mode)


def load_or_create_secret_key(instance_dir: Path) -> str:
    """Return the secret key persisted in the instance folder, creating it on first use."""
    prepare_instance_dir(instance_dir)
    path = instance_dir / "secret_key"
    if path.exists():
        tighten(path)
        return path.read_text().strip()
    key = secrets.token_urlsafe(48)
    tmp = instance_dir / f".secret_key.{os.getpid()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(key)
    try:
        os.link(tmp, path)  # atomic: of two racing processes, exactly one key wins
    except FileExistsError:
        pass
    finally:
        tmp.unlink()
    return path.read_text().strip()


def _coerce(f: dataclasses.Field[Any], raw: str) -> Any:
    kind = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", "str")
    kind = kind.removesuffix(" | None")
    if kind == "bool":
        return raw.strip().lower() in {"1", "true", "yes", "on"}
    if kind == "int":
        return int(raw)
    if kind == "Path":
        return Path(raw)
    return raw


def settings_names() -> tuple[str, ...]:
    """Return the environment variables the settings read (each field's name, upper-cased)."""
    fields = {f.name for cls in (AuthSettings, ResourceSettings) for f in dataclasses.fields(cls)}
    return tuple(sorted(name.upper() for name in fields))


def forget_settings(names: Iterable[str]) -> None:
    """Remove these variables from this process's environment (read once, never again)."""
    for name in names:
        os.environ.pop(name, None)
