"""compose.yaml, checked without a Docker engine: commands, settings, health, order, routing.

Every ``artcat`` command a service runs must parse (options included) against the real command
line; every variable it sets must be a setting; the proxy must route each path to the service
``common.serve.is_auth_path`` (the ``serve all`` dispatcher) gives it, and every route of both
apps must be reachable through it, but ``/metrics``, which it refuses. The proxy's config is
``deploy/nginx.conf`` (``tests/functional/security/test_metrics_not_public.py`` runs it in nginx).
"""

from __future__ import annotations

import dataclasses
import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import jsonschema
import pytest
import yaml

from artcat.cli.main import main
from common.serve import AUTH_PREFIXES, is_auth_path
from common.settings import AuthSettings, ResourceSettings, Settings
from resource_server.web import PAGE_PATHS
from tests import edge_config
from tests.routes import auth_routes, concrete, resource_routes

ROOT = Path(__file__).resolve().parents[2]
APP_SERVICES = ("migrate", "auth", "resource")
# Paths each service answers for itself (health and readiness probes); the proxy need not.
PROBES = {"/healthz", "/readyz", "/metrics"}  # and the edge refuses them to the public


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    """Return compose.yaml, parsed (YAML merge keys resolved)."""
    data: dict[str, Any] = yaml.safe_load((ROOT / "compose.yaml").read_text())
    return data


def services(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Return the services."""
    found: dict[str, dict[str, Any]] = compose["services"]
    return found


# -- commands ----------------------------------------------------------------------------------


def artcat_invocations(command: list[str] | str) -> list[list[str]]:
    """Return the argument lists of every ``artcat`` run by a command (exec or shell form)."""
    argv = shlex.split(command) if isinstance(command, str) else list(command)
    if argv[:1] in (["sh"], ["bash"]) and argv[1:2] == ["-c"]:
        steps = re.split(r"&&|\|\||;", argv[2])
        return [words[1:] for step in steps if (words := shlex.split(step))[:1] == ["artcat"]]
    return [argv[1:]] if argv[:1] == ["artcat"] else []


@dataclass(frozen=True)
class Resolved:
    """An ``artcat`` command line resolved through click: the command path and its parameters."""

    path: tuple[str, ...]
    params: dict[str, Any]


def resolve(args: list[str]) -> Resolved:
    """Resolve arguments to a leaf command and parse its options (click raises on any error)."""
    command: click.Command = main
    ctx = click.Context(main, info_name="artcat")
    path = ["artcat"]
    rest = list(args)
    while isinstance(command, click.Group):
        assert not command.params, "group options are not parsed here"
        name, sub, rest = command.resolve_command(ctx, rest)
        assert name is not None and sub is not None
        path.append(name)
        command = sub
        ctx = click.Context(command, info_name=name, parent=ctx)
    leaf = command.make_context(path[-1], rest, parent=ctx.parent, resilient_parsing=False)
    return Resolved(tuple(path), dict(leaf.params))


def test_resolve_rejects_unknown_commands_and_options() -> None:
    assert resolve(["db", "upgrade"]) == Resolved(("artcat", "db", "upgrade"), {"revision": "head"})
    for bad in (["db", "upgrad"], ["serve", "auth", "--hots", "x"], ["serve", "nothing"]):
        with pytest.raises(click.UsageError):
            resolve(bad)
    assert artcat_invocations(["sh", "-c", "pip install . && artcat db upgrade"]) == [
        ["db", "upgrade"]
    ]


def test_every_app_service_runs_a_real_artcat_command(compose: dict[str, Any]) -> None:
    resolved = {}
    for name in APP_SERVICES:
        runs = artcat_invocations(services(compose)[name]["command"])
        assert runs, f"{name} runs no artcat command"
        for args in runs:
            resolved[name] = resolve(args)  # raises on an unknown command or option
    assert resolved["migrate"].path == ("artcat", "db", "upgrade")
    for name in ("auth", "resource"):
        serve = resolved[name]
        assert serve.path == ("artcat", "serve") and serve.params["service"] == name
        assert serve.params["host"] == "0.0.0.0"  # noqa: S104 - the proxy reaches it


# -- environment -------------------------------------------------------------------------------


def setting_names() -> set[str]:
    """Return every variable ``from_env`` reads: the upper-cased field names of the settings."""
    return {
        f.name.upper()
        for cls in (Settings, AuthSettings, ResourceSettings)
        for f in dataclasses.fields(cls)
    }


def test_every_variable_set_is_a_setting(compose: dict[str, Any]) -> None:
    known = setting_names()
    for name in APP_SERVICES:
        env = services(compose)[name].get("environment", {})
        names = set(env) if isinstance(env, dict) else {item.split("=")[0] for item in env}
        assert names, name
        assert names - known == set(), f"{name} sets variables no setting reads"
        assert {"DATABASE_URL", "REDIS_URL", "SECRET_KEY", "PUBLIC_URL"} <= names, name


# -- health and start order --------------------------------------------------------------------


def test_health_checks(compose: dict[str, Any]) -> None:
    svc = services(compose)
    for name in ("postgres", "redis", "auth", "resource"):
        test = svc[name].get("healthcheck", {}).get("test")
        assert test and test[0] in ("CMD", "CMD-SHELL"), name
    for name in ("auth", "resource"):
        probe = " ".join(svc[name]["healthcheck"]["test"])
        port = resolve(artcat_invocations(svc[name]["command"])[0]).params["port"]
        assert f"127.0.0.1:{port}/readyz" in probe, name


def test_start_order(compose: dict[str, Any]) -> None:
    svc = services(compose)
    healthy = {"condition": "service_healthy"}
    for name in APP_SERVICES:
        deps = svc[name]["depends_on"]
        assert deps.get("postgres") == healthy and deps.get("redis") == healthy, name
    for name in ("auth", "resource"):
        assert svc[name]["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}
    assert svc["migrate"].get("restart") == "no"
    assert svc["proxy"]["depends_on"] == {"auth": healthy, "resource": healthy}


def test_the_image_is_built_not_installed_at_start(compose: dict[str, Any]) -> None:
    # A read-only source mount cannot be pip-installed (setuptools writes into the tree), and
    # installing on every start needs the network: the services run a built image.
    dockerfile = (ROOT / "Dockerfile").read_text()
    for name in APP_SERVICES:
        svc = services(compose)[name]
        assert svc.get("build") == "." and "pip install" not in str(svc["command"]), name
    # Every package the console script needs, the CLI (artcat) included.
    for package in ("artcat", "common", "auth_server", "resource_server", "migrations"):
        assert f"COPY {package} " in dockerfile
    assert "pyproject.toml README.md" in dockerfile  # the readme is part of the metadata


# -- the proxy ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Location:
    """An nginx location: exact (``=``) or prefix, and the upstream it proxies to."""

    path: str
    exact: bool
    upstream: str


# What a location that proxies nothing answers: the operator's paths are not public.
REFUSED = "refused"


def proxy_config(compose: dict[str, Any]) -> edge_config.Directive:
    """Return the proxy's config, parsed: the file compose mounts (relative to itself)."""
    assert (ROOT / compose["configs"]["nginx"]["file"]).resolve() == edge_config.SHIPPED
    return edge_config.parse()


def locations_of(server: edge_config.Directive) -> list[Location]:
    """Return a server block's locations: where each proxies to, or that it refuses."""
    found = []
    for loc in server.all("location"):
        exact = loc.args[0] == "="
        assert len(loc.args) == (2 if exact else 1), f"unsupported location {loc.args}"
        inside = {d.name: d.args for d in loc.block or []}
        if "proxy_pass" in inside:
            assert set(inside) == {"proxy_pass"}, loc
            upstream = re.fullmatch(r"http://([\w-]+)(/\S*)?", inside["proxy_pass"][0])
            assert upstream, loc
            target = upstream.group(1)
        else:
            assert inside == {"return": ["404"]} or inside == {"return": ["403"]}, loc
            target = REFUSED
        found.append(Location(loc.args[-1], exact, target))
    return found


def public_locations(compose: dict[str, Any]) -> list[Location]:
    """Return the public listener's locations."""
    return locations_of(edge_config.servers(proxy_config(compose))[edge_config.PUBLIC_PORT])


def route(locations: list[Location], path: str) -> str:
    """Return the upstream nginx picks: an exact match, else the longest matching prefix."""
    for loc in locations:
        if loc.exact and loc.path == path:
            return loc.upstream
    prefixes = [loc for loc in locations if not loc.exact and path.startswith(loc.path)]
    return max(prefixes, key=lambda loc: len(loc.path)).upstream


def test_upstreams_are_the_services(compose: dict[str, Any]) -> None:
    conf = proxy_config(compose)
    found = edge_config.upstreams(conf)
    assert {name: [s.args for s in u.all("server")] for name, u in found.items()} == {
        "auth": [["auth:8000", "fail_timeout=2s"]],
        "resource": [["resource:8000", "fail_timeout=2s"]],
    }
    for name, upstream in found.items():  # idle connections to the services are reused
        assert int(upstream.one("keepalive").args[0]) > 0
        assert upstream.one("zone").args[0] == name  # the workers share the servers' state
    assert {loc.upstream for loc in public_locations(compose)} == {"auth", "resource", REFUSED}
    proxy = services(compose)["proxy"]
    assert proxy["configs"][0]["source"] == "nginx"
    assert proxy["configs"][0]["target"].startswith("/etc/nginx/conf.d/")
    # The public listener is published; the internal one is not.
    assert proxy["ports"] == [f"8080:{edge_config.PUBLIC_PORT}"]


def test_both_listeners_keep_upstream_connections_alive(compose: dict[str, Any]) -> None:
    for server in edge_config.servers(proxy_config(compose)).values():
        assert server.one("proxy_http_version").args == ["1.1"]
        headers = {d.args[0]: d.args[1] for d in server.all("proxy_set_header")}
        assert headers["Connection"] == ""  # not "close": the connection is kept
        assert headers["X-Forwarded-For"] == "$remote_addr"  # the first hop: overwritten
        assert headers["X-Request-Id"] == "$artcat_request_id"


def test_the_operator_paths_are_refused_on_the_public_side(compose: dict[str, Any]) -> None:
    locations = public_locations(compose)
    for path in PROBES:
        assert route(locations, path) == REFUSED, path
    assert sorted(loc.path for loc in locations if loc.upstream == REFUSED) == sorted(PROBES)
    assert all(loc.exact for loc in locations if loc.upstream == REFUSED)


def test_the_internal_listener_is_loopback_only(compose: dict[str, Any]) -> None:
    internal = edge_config.servers(proxy_config(compose))[edge_config.INTERNAL_PORT]
    assert [d.args for d in internal.all("allow")] == [["127.0.0.1"], ["::1"]]
    assert [d.args for d in internal.all("deny")] == [["all"]]
    passes = {
        loc.args[-1]: (loc.block or [])[0].args[0]
        for loc in internal.all("location")
        if loc.args[0] == "="
    }
    assert passes == {
        f"/{service}{probe}": f"http://{service}{probe}"
        for service in ("auth", "resource")
        for probe in PROBES
    }


def test_locations_agree_with_the_dispatcher(compose: dict[str, Any]) -> None:
    locations = public_locations(compose)
    prefixes = {loc.path for loc in locations if not loc.exact}
    assert set(AUTH_PREFIXES) <= prefixes and "/" in prefixes
    for loc in locations:
        if loc.path != "/" and loc.upstream != REFUSED:
            assert (loc.upstream == "auth") == is_auth_path(loc.path), loc
    samples = [loc.path for loc in locations if loc.upstream != REFUSED]
    samples += [p.rstrip("/") for p in AUTH_PREFIXES]
    samples += [p + "x" for p in AUTH_PREFIXES] + ["/", "/api", "/api/tokensx", "/accounts"]
    for path in samples:
        assert (route(locations, path) == "auth") == is_auth_path(path), path


def test_every_route_is_reachable_through_the_proxy(compose: dict[str, Any]) -> None:
    locations = public_locations(compose)
    for service, rules in (("auth", auth_routes()), ("resource", resource_routes())):
        public = {r for r in rules if r not in PROBES}
        assert public, service
        for rule in public:
            assert route(locations, concrete(rule)) == service, (service, rule)
    # Outside /api the catalog serves only its pages (the front door, the docs, the catalog).
    assert {r for r in resource_routes() if r not in PROBES} == {
        r for r in resource_routes() if r == "/api" or r.startswith("/api/")
    } | set(PAGE_PATHS)


def test_compose_follows_the_compose_specification(compose: dict[str, Any]) -> None:
    """compose.yaml against the Compose Specification's JSON schema (vendored under
    tests/data/compose-spec, Apache-2.0, with its notice)."""
    schema = json.loads((ROOT / "tests/data/compose-spec/compose-spec.json").read_text())
    validator = jsonschema.Draft201909Validator(schema)
    errors = sorted(validator.iter_errors(compose), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors]
    # The schema is strict: a misspelt key is an error (so this test can fail).
    broken = {**compose, "services": {**compose["services"], "proxy": {"imagee": "nginx"}}}
    assert list(validator.iter_errors(broken))
