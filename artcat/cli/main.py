"""The ``artcat`` command line: the root group; each command group lives in its own module."""

from __future__ import annotations

import click

from artcat.cli.support import LazyGroup
from common import startup

# Command -> (its module and attribute, imported only when it runs; its line in ``--help``).
GROUPS = {
    "apps": ("artcat.cli.apps:apps", "Manage client applications."),
    "db": ("artcat.cli.db:db", "Manage the database schema."),
    "images": ("artcat.cli.images:images", "Manage the instance's copies of the artworks' images."),
    "demo": ("artcat.cli.demo:demo", "Manage the demo catalog."),
    "keys": ("artcat.cli.keys:keys", "Manage the keys that sign ID tokens."),
    "load": ("artcat.cli.load:load", "Load catalog data."),
    "search": ("artcat.cli.search:search", "Manage the search index."),
    "serve": ("artcat.cli.serve:serve", "Serve both services on one port (all), or one of them."),
    "staging": ("artcat.cli.staging:staging", "Manage a staging instance."),
    "users": ("artcat.cli.users:users", "Manage user accounts."),
}


@click.group(cls=LazyGroup, lazy_subcommands=GROUPS)
@click.pass_context
def main(ctx: click.Context) -> None:
    """Run and manage the art catalog service."""
    if ctx.invoked_subcommand != "serve":  # serve settles once its app is built
        startup.settle()


def run() -> None:
    """The ``artcat`` script and ``python -m artcat``: the collector off while starting up."""
    startup.quiet()
    try:
        main()
    finally:
        startup.settle()


if __name__ == "__main__":
    run()
