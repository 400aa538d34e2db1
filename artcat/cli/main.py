"""The ``artcat`` command line: the root group; each command group lives in its own module."""

from __future__ import annotations

import sys

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
    """The ``artcat`` script and ``python -m artcat``: the collector off while starting up.

    A store that cannot be reached ends the command with one line saying so (exit status 1),
    not a traceback."""
    startup.quiet()
    try:
        main()
    except Exception as ex:
        unreachable(ex)
        raise
    finally:
        startup.settle()


def unreachable(ex: Exception) -> None:
    """End the command with an error line if ``ex`` says that a store could not be reached
    (imported here: the stores' libraries are not loaded for ``--help``)."""
    from redis.exceptions import RedisError
    from sqlalchemy.exc import OperationalError

    from common.client_versions import ChangeNotAnnounced

    if isinstance(ex, ChangeNotAnnounced):  # the commit was refused (``common.client_versions``)
        fail(
            "Redis could not be reached, so the application was not changed: every serving "
            "process is told of a change through it (check REDIS_URL and that Redis runs)."
        )
    if isinstance(ex, RedisError):
        fail(f"Redis could not be reached ({type(ex).__name__}: {ex}); check REDIS_URL.")
    if isinstance(ex, OperationalError):
        cause = ex.orig or ex
        fail(f"the database could not be reached ({type(cause).__name__}: {cause}); check "
             "DATABASE_URL.")  # fmt: skip


def fail(message: str) -> None:
    """Print ``message`` as click prints an error and exit with status 1."""
    click.echo(f"Error: {message}", err=True)
    sys.exit(1)


if __name__ == "__main__":
    run()
