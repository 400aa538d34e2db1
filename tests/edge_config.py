"""deploy/nginx.conf, read and rendered for the tests: the one description of the edge's routing.

``parse`` reads the file into its directives (enough of nginx's syntax for it: words, quoted
strings, blocks); ``render`` returns the file with only what differs on a test machine
replaced: the ports it listens on and the servers of its upstreams. Everything else (routing,
headers, limits, keep-alive) runs as shipped.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "deploy" / "nginx.conf"
PUBLIC_PORT = 80  # the ports the shipped file listens on
INTERNAL_PORT = 8081

_TOKEN = re.compile(
    r"""\s+|#[^\n]*|"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|([{};])|([^\s{};"'#]+)"""
)


@dataclass
class Directive:
    """One directive: its name, arguments and, for a block, the directives inside."""

    name: str
    args: list[str]
    block: list[Directive] | None = None

    def all(self, name: str) -> list[Directive]:
        """Return the directives of this block called ``name``."""
        return [d for d in self.block or [] if d.name == name]

    def one(self, name: str) -> Directive:
        """Return the one directive of this block called ``name``."""
        found = self.all(name)
        assert len(found) == 1, (name, found)
        return found[0]


def _tokens(text: str) -> Iterator[str]:
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        assert m, f"cannot read the nginx config at {text[pos : pos + 40]!r}"
        pos = m.end()
        if m.group(1) is not None or m.group(2) is not None:
            yield m.group(1) if m.group(1) is not None else m.group(2)
        elif m.group(3) or m.group(4):
            yield m.group(3) or m.group(4)


def parse(text: str | None = None) -> Directive:
    """Parse the config (the shipped file by default) into a top-level block."""
    tokens = list(_tokens(SHIPPED.read_text() if text is None else text))
    pos = 0

    def block() -> list[Directive]:
        nonlocal pos
        found: list[Directive] = []
        words: list[str] = []
        while pos < len(tokens):
            tok = tokens[pos]
            pos += 1
            if tok == ";":
                found.append(Directive(words[0], words[1:]))
                words = []
            elif tok == "{":
                found.append(Directive(words[0], words[1:], block()))
                words = []
            elif tok == "}":
                assert not words, words
                return found
            else:
                words.append(tok)
        assert not words, words
        return found

    return Directive("main", [], block())


def servers(conf: Directive) -> dict[int, Directive]:
    """Return the server blocks by the port they listen on."""
    return {int(s.one("listen").args[0].rsplit(":", 1)[-1]): s for s in conf.all("server")}


def upstreams(conf: Directive) -> dict[str, Directive]:
    """Return the upstream blocks by name."""
    return {u.args[0]: u for u in conf.all("upstream")}


def render(
    public_port: int, internal_port: int, upstream_servers: Mapping[str, Sequence[str]]
) -> str:
    """Return the shipped file listening on loopback ports, its upstreams' servers replaced."""
    text = SHIPPED.read_text()
    for old, new in (
        (f"listen {PUBLIC_PORT};", f"listen 127.0.0.1:{public_port};"),
        (f"listen {INTERNAL_PORT};", f"listen 127.0.0.1:{internal_port};"),
    ):
        assert text.count(old) == 1, f"deploy/nginx.conf no longer says {old!r}"
        text = text.replace(old, new)
    assert set(upstream_servers) == set(upstreams(parse(text))), upstream_servers
    for name, addresses in upstream_servers.items():
        block = re.search(rf"upstream {name} \{{\n(.*?)\n\}}", text, re.S)
        assert block, name
        shipped = re.findall(r"^\s*server \S+(.*);$", block.group(1), flags=re.M)
        assert len(shipped) == 1, (name, shipped)  # the parameters kept for each address
        body = re.sub(r"^\s*server [^;]+;\n?", "", block.group(1), flags=re.M)
        lines = "".join(f"  server {address}{shipped[0]};\n" for address in addresses)
        text = text.replace(block.group(0), f"upstream {name} {{\n{lines}{body}\n}}")
    return text
