"""``python -m artcat``: the operator command line (the same as the ``artcat`` script)."""

from artcat.cli.main import run

run()
