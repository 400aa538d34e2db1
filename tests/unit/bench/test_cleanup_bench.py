"""The storage cleanup benchmark's estimates: the arithmetic its report holds the tables to.

No server: each table's steady state follows from the sweeps' cutoffs, checked here on figures
chosen by hand so that every product is exact.
"""

from __future__ import annotations

import pytest

from bench.cleanup_bench import parse_args
from bench.cleanup_refresh import Mix

# 40 refreshes a second over 20 chains of 10: 4 families start a second.
MIX = Mix(rate=40, chain=10, chains=20, refresh_ttl=90, access_ttl=60, retention=30, interval=20)


def test_each_table_holds_its_rows_lifetime_retention_and_half_an_interval() -> None:
    assert MIX.estimates() == {
        # every refresh writes an access token, kept 60 + 30 + 10 s
        "tokens": 40 * 100,
        # and a refresh token, as does every new family, kept 90 + 30 + 10 s
        "refresh_tokens": (40 + 4) * 130,
        # the 20 chains being refreshed, and the abandoned families until their last token goes
        "refresh_families": 20 + 4 * 130,
    }


def test_the_ceiling_waits_an_interval_and_a_half() -> None:
    assert MIX.estimates(1.5) == {
        "tokens": 40 * 120,
        "refresh_tokens": 44 * 150,
        "refresh_families": 20 + 4 * 150,
    }
    assert MIX.warm() == 90 + 30 + 30


def test_the_formulas_say_the_figures_the_estimates_multiply() -> None:
    assert MIX.formulas() == {
        "tokens": "40 x (60 + 30 + 10)",
        "refresh_tokens": "(40 + 4) x (90 + 30 + 10)",
        "refresh_families": "20 + 4 x (90 + 30 + 10)",
    }


def test_the_refresh_scenario_reads_its_mix_from_the_command_line() -> None:
    args = parse_args(["--grant", "refresh", "--rate", "40", "--chain", "10", "--interval", "20"])
    assert Mix.of(args) == MIX
    with pytest.raises(SystemExit):
        parse_args(["--grant", "refresh", "--chains", "6", "--clients", "4"])
