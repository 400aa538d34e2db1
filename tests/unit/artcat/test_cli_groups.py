"""The root command line lists its groups without importing them, with their own help lines."""

from __future__ import annotations

import importlib
import subprocess
import sys

import click
import pytest

from artcat.cli.main import GROUPS


@pytest.mark.parametrize("name", sorted(GROUPS))
def test_a_group_is_listed_with_its_own_one_line_help(name: str) -> None:
    target, line = GROUPS[name]
    module, _, attribute = target.partition(":")
    command = getattr(importlib.import_module(module), attribute)
    assert isinstance(command, click.Command)
    assert command.name == name
    assert command.get_short_help_str(limit=200) == line


def test_the_root_help_imports_no_group() -> None:
    code = (
        "import sys; from click.testing import CliRunner; from artcat.cli.main import main; "
        "r = CliRunner().invoke(main, ['--help']); assert r.exit_code == 0, r.output; "
        "print(sorted(m for m in sys.modules if m.startswith(('artcat.cli.', 'artcat.loaders'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "['artcat.cli.main', 'artcat.cli.support']"
