"""The cyclic garbage collector during start-up: off while the process imports and builds.

Starting a server imports a few hundred modules and builds its apps: hundreds of thousands of
objects that live as long as the process. The collector's passes over them find nothing to
free and cost a fifth of the start-up time. ``artcat`` (``artcat.cli.main.run``) turns it off
first thing, and a granian worker while it builds its app; ``settle`` turns it back on once
the command is ready to work, and freezes what start-up made (moves it out of the
collector's sight): as Python's documentation of ``gc.freeze`` advises for a server that
forks workers, whose collectors would otherwise write to every inherited object and copy the
parent's memory page by page.
"""

from __future__ import annotations

import gc


def quiet() -> None:
    """Turn the collector off for start-up."""
    gc.disable()


def settle() -> None:
    """End start-up: freeze what it made and turn the collector back on (if ``quiet`` turned it
    off: a process that never called it, a test running a command in-process, is left alone)."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()
