"""The benchmark modules import, and the report turns fixed samples into the expected table.

No server and no wrk: the report is plain arithmetic on the figures wrk gives, checked here on
figures chosen by hand so that each ratio is exact.
"""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import bench
from bench import report
from bench.fixture import Fixture
from bench.harness import lua_requests, median_of
from bench.http_bench import parse_args, scenarios
from bench.scenarios import BASELINE

MODULES = sorted(m.name for m in pkgutil.iter_modules(bench.__path__))


@pytest.mark.parametrize("name", MODULES)
def test_every_bench_module_imports(name: str) -> None:
    """Each script imports as a module of the bench package (no path edits needed)."""
    importlib.import_module(f"bench.{name}")


def figures(rps: float, conns: int = 32, p99: float = 10.0) -> dict[str, float]:
    """One run's figures as the harness returns them."""
    return {"rps": rps, "p50": 1.0, "p90": 2.0, "p99": p99, "connections": conns}


RUNS = {
    "baseline c32": [figures(10_000), figures(8_000), figures(12_000)],
    "artwork c32": [figures(5_000), figures(4_800), figures(5_400)],
    "artwork c8": [figures(4_000, 8), figures(4_000, 8), figures(4_000, 8)],
    "baseline c8": [figures(8_000, 8), figures(8_000, 8), figures(8_000, 8)],
    "search uncached": [figures(500, p99=80.0), figures(400, p99=90.0), figures(600, p99=70.0)],
}


def test_the_median_of_each_figure_over_the_runs() -> None:
    """Every figure's median is kept, each on its own."""
    assert median_of(RUNS["baseline c32"])["rps"] == 10_000
    assert median_of(RUNS["search uncached"]) == figures(500, p99=80.0)


def test_the_table_of_a_setup() -> None:
    """Medians, the ratio to the baseline at the same connections, the ratios run by run."""
    res = {name: median_of(runs) for name, runs in RUNS.items()}
    assert report.paths_table("pinned", res, RUNS) == "\n".join(
        [
            "### pinned",
            "",
            "| path | req/s | of baseline | run by run | p50 ms | p90 ms | p99 ms |",
            "|---|---:|---:|---:|---:|---:|---:|",
            "| baseline c32 | 10,000 |  |  | 1.0 | 2.0 | 10.0 |",
            "| artwork c32 | 5,000 | 50% | 45%-60% | 1.0 | 2.0 | 10.0 |",
            "| artwork c8 | 4,000 | 50% | 50%-50% | 1.0 | 2.0 | 10.0 |",
            "| baseline c8 | 8,000 |  |  | 1.0 | 2.0 | 10.0 |",
            "| search uncached | 500 | 5% | 5%-5% | 1.0 | 2.0 | 80.0 |",
        ]
    )


def test_the_ratio_is_the_median_of_the_rounds_ratios() -> None:
    """Each round's path against the same round's baseline: a busy round moves both."""
    runs = {
        "baseline c32": [figures(10_000), figures(20_000), figures(30_000)],
        "search": [figures(9_000), figures(4_000), figures(6_000)],
    }
    res = {name: median_of(r) for name, r in runs.items()}
    assert "| search | 6,000 | 20% | 20%-90% |" in report.paths_table("pinned", res, runs)
    assert report.verdicts(res, runs)[0] == "search/baseline at 32 connections: 20% (target 10%)"
    assert report.verdicts(res)[0] == "search/baseline at 32 connections: 30% (target 10%)"


def test_no_ratio_without_a_baseline_at_the_same_load() -> None:
    """A path run at connections the baseline was not run at gets no ratio."""
    res = {"baseline c32": figures(10_000), "throttled sign-in c1": figures(800, 1)}
    assert "| throttled sign-in c1 | 800 |  |  |" in report.paths_table("auth", res)


def test_the_verdicts_against_the_targets() -> None:
    """Each target is stated with its measured ratio; a slow tail is named."""
    res = {name: median_of(runs) for name, runs in RUNS.items()}
    assert report.verdicts(res, RUNS) == [
        "artwork, document cached/baseline at 32 connections: 50% (target 50%)",
        "search, caches off/baseline at 32 connections: 5% (target 10%)",
        "p99 under 25 ms (search: 50 ms): not search uncached 80.0 ms",
    ]


def test_the_notes_under_a_setup() -> None:
    """Peak memory per worker, sorted, per server."""
    assert report.setup_notes({"resource": {2: 140.4, 1: 120.6}, "baseline": {3: 24.0}}) == [
        "peak resident size per worker (MiB): resource 121, 140; baseline 24"
    ]


def test_the_paths_option_keeps_the_baseline() -> None:
    """``--paths`` selects paths by the start of their names, and the ratios keep their base."""
    fx = Fixture("id", "secret", "bench@example.org", "pw", xapp_token="t", artwork_ids=["a1"])
    chosen = scenarios(parse_args(["--only", "catalog", "--paths", "search,list"]), fx)
    assert [s.name for s in chosen] == [
        BASELINE,
        "list size=20",
        "search",
        "list size=20 uncached",
        "search uncached",
    ]
    loads = scenarios(parse_args(["--only", "catalog", "--paths", "artwork c8"]), fx)
    assert [s.name for s in loads] == ["baseline c8", "artwork c8", BASELINE]
    compared = scenarios(parse_args(["--only", "catalog", "--compare", "."]), fx)
    assert "artwork uncached c32 (before)" in [s.name for s in compared]
    assert {s.server for s in compared} >= {"resource-before", "uncached-before", "baseline"}


def test_the_lua_request_table() -> None:
    """Requests are quoted for wrk's Lua script, a missing body as nil."""
    table = lua_requests([("GET", "/api/search?q=a", {"X-Xapp-Token": "t"}, None)])
    assert table == '{\n{"GET", "/api/search?q=a", {["X-Xapp-Token"] = "t"}, nil}\n}'
