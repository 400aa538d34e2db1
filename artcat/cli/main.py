"""The ``artcat`` command line: the root group; each command group lives in its own module."""

from __future__ import annotations

import click

from artcat.cli.support import LazyGroup

# Each group's module, imported only when that group runs (see ``LazyGroup``).
GROUPS = {
    "apps": "artcat.cli.apps:apps",
    "db": "artcat.cli.db:db",
    "load": "artcat.cli.load:load",
    "search": "artcat.cli.search:search",
    "serve": "artcat.cli.serve:serve",
    "staging": "artcat.cli.staging:staging",
    "users": "artcat.cli.users:users",
}


@click.group(cls=LazyGroup, lazy_subcommands=GROUPS)
def main() -> None:
    """Run and manage the art catalog service."""


if __name__ == "__main__":
    main()
