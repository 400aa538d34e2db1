"""The redirect URI policy of the authorization endpoint and of application registration.

Only ``https`` URIs, loopback ``http`` URIs (127.0.0.1, [::1], localhost) and private-use schemes in
reverse-domain form (``com.example.app:/cb``, RFC 8252 7.1) may be registered; never a fragment,
user info or a control character. The browser flow needs a registered URI and an exact match
(RFC 9700 2.1), except that a loopback URI matches on any port (RFC 8252 7.3): a native app
listens on whatever port is free. An application that registered none cannot use the browser flow
(the reference API accepted any URI there, which sent codes wherever a crafted link said).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlencode, urlsplit

MAX_LENGTH = 2000  # the authorization_codes.redirect_uri column
MAX_REGISTERED = 10

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "[::1]", "localhost"})
# Schemes that run code, read local data or hand the URI to another program: never a client.
FORBIDDEN_SCHEMES = frozenset(
    {
        "javascript",
        "data",
        "vbscript",
        "file",
        "about",
        "blob",
        "filesystem",
        "view-source",
        "jar",
        "intent",
        "chrome",
        "chrome-extension",
        "moz-extension",
        "resource",
        "ftp",
        "ws",
        "wss",
        "mailto",
        "tel",
        "sms",
    }
)
SCHEME_RE = re.compile(r"^[a-z][a-z0-9+.-]*$")
# Host names and IP literals only: the host ends up in a CSP header and on the consent page.
_LABEL = r"[a-z0-9](?:[a-z0-9-]*[a-z0-9])?"
HOST_RE = re.compile(rf"^(?:{_LABEL}(?:\.{_LABEL})*|\[[0-9a-f:.]+\])$")
UNSAFE_CHARS = re.compile(r"[\x00-\x20\x7f\\<>\"'`]")


@dataclass(frozen=True)
class Target:
    """A redirect URI that passed the safety checks, with what the consent page shows of it."""

    uri: str
    scheme: str
    host: str  # host[:port] for http(s); empty for a private-use scheme without authority
    kind: str  # "web" | "loopback" | "app"

    @property
    def display(self) -> str:
        """Return where the user will be sent, as shown in plain sight."""
        if self.kind == "app":
            return f"{self.scheme}:" + (f"//{self.host}" if self.host else "")
        return self.host

    @property
    def csp_source(self) -> str:
        """Return the CSP source expression that lets a form submission redirect here."""
        if self.kind == "app":
            return f"{self.scheme}:"
        return f"{self.scheme}://{self.host}"


def parse_target(uri: str) -> tuple[Target | None, str]:
    """Check a URI against the rules that hold whatever was registered; return it or a reason."""
    if not uri:
        return None, "is missing"
    if len(uri) > MAX_LENGTH:
        return None, "is too long"
    if UNSAFE_CHARS.search(uri):
        return None, "contains characters that are not allowed"
    if "#" in uri:
        return None, "must not contain a fragment (#)"
    try:
        parts = urlsplit(uri)
        port = parts.port
    except ValueError:
        return None, "is not a valid URI"
    scheme = parts.scheme.lower()
    if not scheme or not SCHEME_RE.match(scheme) or not uri.lower().startswith(scheme + ":"):
        return None, "must be an absolute URI"
    if scheme in FORBIDDEN_SCHEMES:
        return None, f"must not use the {scheme}: scheme"
    if "@" in parts.netloc:
        return None, "must not contain user information"
    host = (parts.hostname or "").lower()
    if parts.hostname is not None and ":" in host:
        host = f"[{host}]"  # urlsplit strips the brackets of an IPv6 literal
    if parts.netloc and (not host or not HOST_RE.match(host)):
        return None, "has an invalid host"
    hostport = host + (f":{port}" if port is not None else "")
    if scheme == "https":
        if not host:
            return None, "must name a host"
        return Target(uri, scheme, hostport, "web"), ""
    if scheme == "http":
        if host not in LOOPBACK_HOSTS:
            return None, "must use https (http is allowed only for 127.0.0.1, [::1] or localhost)"
        return Target(uri, scheme, hostport, "loopback"), ""
    if "." not in scheme:
        # RFC 8252 7.1: a private-use scheme is a reverse domain name the app's owner controls,
        # so that no other app on the device claims it.
        return None, (
            "must use https, http on a loopback address, or a private-use scheme in "
            "reverse-domain form (com.example.app:/callback)"
        )
    if not (parts.netloc or parts.path):
        return None, "must name a path or host after the scheme"
    return Target(uri, scheme, hostport, "app"), ""


def check_redirect_uri(uri: str, registered: list[str]) -> tuple[Target | None, str]:
    """Apply the policy to an authorization request's redirect URI; return it or a reason."""
    if not registered:
        return None, "cannot be used: this application has registered no redirect URI"
    target, reason = parse_target(uri)
    if target is None:
        return None, reason
    if uri in registered:
        return target, ""
    if target.kind == "loopback" and _without_port(uri) in {_without_port(r) for r in registered}:
        return target, ""
    return None, "does not match a redirect URI registered for this application"


def _without_port(uri: str) -> str:
    """Return a loopback http URI with its port removed (other URIs unchanged)."""
    parts = urlsplit(uri)
    if parts.scheme != "http" or parts.port is None:
        return uri
    host = parts.netloc.rsplit(":", 1)[0]
    return parts._replace(netloc=host).geturl()


def parse_registered(text: str) -> tuple[list[str], list[str]]:
    """Split a one-per-line list of redirect URIs; return the URIs and a problem per bad line."""
    uris: list[str] = []
    problems: list[str] = []
    for line in text.splitlines():
        uri = line.strip()
        if not uri or uri in uris:
            continue
        target, reason = parse_target(uri)
        if target is None:
            problems.append(f"{uri[:100]} {reason}.")
        else:
            uris.append(uri)
    if len(uris) > MAX_REGISTERED:
        problems.append(f"Register at most {MAX_REGISTERED} redirect URIs.")
    return uris, problems


def with_params(uri: str, params: dict[str, str]) -> str:
    """Append query parameters to a validated redirect URI (which has no fragment)."""
    sep = "" if uri.endswith(("?", "&")) else ("&" if "?" in uri else "?")
    return uri + sep + urlencode(params)
