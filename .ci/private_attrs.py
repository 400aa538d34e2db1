"""Production code reads no private name of another library: what ruff's SLF001 cannot see.

ruff's SLF001 (``make lint``'s ``ruff check``) refuses ``obj._name`` outside ``self`` and
``cls``, and pyproject.toml lists the files allowed to do it, each with its reason. Its
exceptions are whole files, and it does not read strings or comments. This check adds:

- in each allowed file, only the private names listed below for it (a new one fails);
- no private name read through ``getattr``, ``hasattr``, ``setattr`` or ``delattr`` with a
  literal name, outside ``self`` and ``cls``;
- no ``noqa`` naming SLF001 (an exception is a line of pyproject.toml, with its reason, and
  of the list below);
- no codec error handler that another library registers for its own use, named in a literal
  (``errors="werkzeug.url_quote"``, ``codecs.lookup_error("...")``): only Python's own
  handlers (no dot in their names) are a public interface.

Dunder names and the underscore names documented as public (a named tuple's ``_make``,
``_asdict``, ``_replace``, ``_fields``, as ruff allows them; ``os._exit``) are not private.

    python .ci/private_attrs.py                 # artcat common auth_server resource_server
    python .ci/private_attrs.py PATH ...        # these files or folders
"""

from __future__ import annotations

import ast
import io
import re
import sys
import tokenize
from collections.abc import Iterator
from pathlib import Path

PRODUCTION = ("artcat", "common", "auth_server", "resource_server")

# The private names each allowed file may read (the reasons are in pyproject.toml).
ALLOWED: dict[str, frozenset[str]] = {
    "resource_server/ratelimit.py": frozenset({"_current_window_key", "_previous_window_key"}),
}

OWN = frozenset({"self", "cls", "mcs"})
PUBLIC = frozenset({"_make", "_asdict", "_replace", "_fields", "_field_defaults"})
PUBLIC_OF = frozenset({("os", "_exit")})
BY_NAME = frozenset({"getattr", "hasattr", "setattr", "delattr"})
NOQA_SLF = re.compile(r"#\s*(?:ruff\s*:\s*)?noqa\b[^#]*\bSLF001\b", re.IGNORECASE)


def private(name: str) -> bool:
    """Tell whether ``name`` is private: one leading underscore, not a dunder."""
    dunder = name.startswith("__") and name.endswith("__")
    return name.startswith("_") and not dunder and name not in PUBLIC


def owner_is_own(node: ast.expr, name: str) -> bool:
    """Tell whether ``node`` is ``self``, ``cls`` or ``super()`` (or a module whose ``name``
    is public)."""
    if isinstance(node, ast.Name):
        return node.id in OWN or (node.id, name) in PUBLIC_OF
    return (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"
    )


def foreign_error_handlers(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """Yield (line, name) for each codec error handler named with a dot (another library's)."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        named = [k.value for k in node.keywords if k.arg == "errors"]
        func = node.func
        if (isinstance(func, ast.Attribute) and func.attr == "lookup_error") or (
            isinstance(func, ast.Name) and func.id == "lookup_error"
        ):
            named.extend(node.args[:1])
        for value in named:
            name = value.value if isinstance(value, ast.Constant) else None
            if isinstance(name, str) and "." in name:
                yield node.lineno, name


def private_reads(tree: ast.AST) -> Iterator[tuple[int, str, bool]]:
    """Yield (line, name, by_name) for each private name of another object in ``tree``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            if private(node.attr) and not owner_is_own(node.value, node.attr):
                yield node.lineno, node.attr, False
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in BY_NAME
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
            and private(node.args[1].value)
            and not owner_is_own(node.args[0], node.args[1].value)
        ):
            yield node.lineno, node.args[1].value, True


def problems(path: Path, name: str) -> Iterator[str]:
    """Yield each problem of the file at ``path`` (``name``: its path from the repository)."""
    source = path.read_text(encoding="utf-8")
    allowed = ALLOWED.get(name, frozenset())
    tree = ast.parse(source, filename=name)
    for line, handler in sorted(foreign_error_handlers(tree)):
        yield f"{name}:{line}: codec error handler {handler!r} of another library"
    for line, attr, by_name in sorted(private_reads(tree)):
        if by_name:
            yield f"{name}:{line}: private name {attr!r} read by name (getattr and the like)"
        elif attr not in allowed:
            yield f"{name}:{line}: private attribute {attr!r} of another object"
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT and NOQA_SLF.search(token.string):
            yield f"{name}:{token.start[0]}: noqa for SLF001 (list the exception in pyproject)"


def files(paths: list[str]) -> Iterator[Path]:
    """Yield the Python files of ``paths`` (files or folders), in order."""
    for given in map(Path, paths):
        yield from sorted(given.rglob("*.py")) if given.is_dir() else [given]


def main(argv: list[str]) -> int:
    """Print each problem; return 1 when there is one."""
    found = []
    for path in files(argv or list(PRODUCTION)):
        name = path.as_posix().removeprefix("./")
        found.extend(problems(path, name))
    for problem in found:
        print(problem)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
