"""The HTTP benchmark's report: medians, ratios against the same run's baseline, the targets.

Absolute requests a second say as much about the machine and its neighbours as about the
service; a ratio against the falcon hello-world measured in the same run, on the same server
and the same cores, says what the service costs above a minimal app. So the targets are
ratios. Each is taken run by run, a path against the baseline of the same round, and the
median kept; the lowest and highest show how much the machine moved under the figures.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import Any

Figures = Mapping[str, float]

# (path, at least this share of the baseline at 32 connections, what it is)
RATIO_TARGETS = [
    ("artwork c32", 0.50, "artwork, document cached"),
    ("artwork uncached c32", 0.30, "artwork, caches off"),
    ("list size=20 uncached", 0.15, "list size=20, caches off"),
    ("search", 0.10, "search"),
    ("search uncached", 0.10, "search, caches off"),
]
# (a path, the path it is compared with, at least this share of it)
PAIR_TARGETS = [
    ("deep cursor", "list size=20", 0.95),
    ("deep cursor uncached", "list size=20 uncached", 0.95),
    ("artwork c64", "artwork c8", 0.90),
]
P99_MS, SEARCH_P99_MS = 25, 50
XAPP_PER_S = 1000
THROTTLED_MS = 1.0


Runs = Mapping[str, Sequence[Figures]]


def baseline_for(name: str, figures: Figures) -> str | None:
    """Return the name of the baseline at the path's connections (None for a baseline)."""
    if name.startswith("baseline"):
        return None
    return f"baseline c{int(figures.get('connections', 32))}"


def paired(name: str, other: str, runs: Runs) -> list[float]:
    """Return the ratios of ``name`` to ``other`` run by run, each within one round."""
    pairs = zip(runs.get(name, []), runs.get(other, []), strict=False)  # a path left out: none
    return [a["rps"] / b["rps"] for a, b in pairs if b["rps"]]


def ratio(name: str, other: str | None, res: Mapping[str, Figures], runs: Runs) -> float | None:
    """Return the median of the run-by-run ratios (without runs, the ratio of the medians).

    Two paths of one round ran a minute apart at most; the median of such pairs holds better
    than a ratio of medians when the machine's load moves between rounds.
    """
    if other is None or other not in res or name not in res:
        return None
    pairs = paired(name, other, runs)
    if pairs:
        return statistics.median(pairs)
    return res[name]["rps"] / res[other]["rps"] if res[other]["rps"] else None


def table(rows: Sequence[Sequence[str]], header: Sequence[str]) -> str:
    """Render a markdown table (the first column left-aligned, the others right)."""
    lines = ["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def paths_table(title: str, res: Mapping[str, Figures], runs: Runs | None = None) -> str:
    """Render the figures of one setup: medians, and each path's ratio to the baseline."""
    rows = []
    for name, r in res.items():
        base = baseline_for(name, r)
        share = ratio(name, base, res, runs or {})
        pairs = paired(name, base, runs or {}) if base else []
        rows.append(
            [
                name,
                f"{r['rps']:,.0f}",
                f"{share:.0%}" if share is not None else "",
                f"{min(pairs):.0%}-{max(pairs):.0%}" if len(pairs) > 1 else "",
                f"{r['p50']:.1f}",
                f"{r['p90']:.1f}",
                f"{r['p99']:.1f}",
            ]
        )
    header = ["path", "req/s", "of baseline", "run by run", "p50 ms", "p90 ms", "p99 ms"]
    return f"### {title}\n\n" + table(rows, header)


def verdicts(res: Mapping[str, Figures], runs: Runs | None = None) -> list[str]:
    """Check the targets against one setup's figures."""
    out = []
    for name, target, label in RATIO_TARGETS:
        share = ratio(name, "baseline c32", res, runs or {})
        if share is not None:
            out.append(f"{label}/baseline at 32 connections: {share:.0%} (target {target:.0%})")
    for name, other, target in PAIR_TARGETS:
        share = ratio(name, other, res, runs or {})
        if share is not None:
            out.append(f"{name}/{other}: {share:.0%} (target at least {target:.0%})")
    slow = [
        f"{name} {r['p99']:.1f} ms"
        for name, r in res.items()
        if not name.startswith("baseline")
        and r["p99"] >= (SEARCH_P99_MS if "search" in name else P99_MS)
    ]
    out.append(
        f"p99 under {P99_MS} ms (search: {SEARCH_P99_MS} ms): "
        + ("every path" if not slow else "not " + ", ".join(slow))
    )
    if "xapp c32" in res:
        rps = res["xapp c32"]["rps"]
        xapp = ratio("xapp c32", "baseline c32", res, runs or {})
        of_base = f", {xapp:.0%} of the baseline" if xapp is not None else ""
        out.append(
            f"XAPP token issuance at 32 connections: {rps:,.0f}/s{of_base} "
            f"(target at least {XAPP_PER_S:,}/s)"
        )
    if "throttled sign-in c1" in res:
        p50 = res["throttled sign-in c1"]["p50"]
        out.append(
            f"throttled sign-in attempt: {p50:.2f} ms median, over HTTP "
            f"(target under {THROTTLED_MS:g} ms)"
        )
    return out


def setup_notes(
    peak_rss: Mapping[str, Mapping[int, float]],
    cred: Mapping[str, Any] | None = None,
    throttle: Mapping[str, Any] | None = None,
) -> list[str]:
    """The lines under a setup's table: memory, the password check, a refused attempt."""
    rss = {name: ", ".join(f"{v:.0f}" for v in sorted(p.values())) for name, p in peak_rss.items()}
    out = ["peak resident size per worker (MiB): " + "; ".join(f"{k} {v}" for k, v in rss.items())]
    if cred is not None:
        out.append(
            f"credentials grant ({cred['params']}): {cred['grant_ms']:.0f} ms median, "
            f"argon2 verify alone {cred['verify_ms']:.0f} ms"
        )
    if throttle is not None:
        out.append(
            f"throttled sign-in, the server's own work (in-process, no network): "
            f"{throttle['p50_ms']:.3f} ms median, p99 {throttle['p99_ms']:.3f} ms over "
            f"{throttle['rejected']:,} rejected of {throttle['attempts']:,} attempts; "
            f"argon2 verifications: {throttle['hashed']} in all (the allowance), "
            f"{throttle['hashed_when_rejected']} for a rejected attempt "
            f"(target under {THROTTLED_MS:g} ms, no hashing)"
        )
    return out


def machine_section(info: Mapping[str, str], notes: Sequence[str]) -> list[str]:
    """The report's opening: the machine and how the run was made."""
    return ["## Machine", "", *(f"- {k}: {v}" for k, v in info.items()), *notes, ""]


def setup_section(
    title: str,
    res: Mapping[str, Figures],
    runs: Mapping[str, Sequence[Figures]],
    notes: Sequence[str],
) -> list[str]:
    """One serving setup's table, its verdicts and notes."""
    lines = [*verdicts(res, runs), *notes]
    return [paths_table(title, res, runs), "", *(f"- {v}" for v in lines), ""]
