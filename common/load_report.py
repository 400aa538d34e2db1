"""What a loader run did: rows per kind, the records it skipped and why, and how long it took."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

# The summary lists at most this many issues of each sort; the report keeps them all.
SUMMARY_ISSUES = 20


@dataclass(frozen=True)
class LoadIssue:
    """A problem with one input line: the file, the 1-based line number and a message."""

    file: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"


@dataclass
class LoadReport:
    """Counts per kind, skipped records (errors), non-fatal notes (warnings) and elapsed time."""

    source: str
    # Rows the run wrote or confirmed, per kind (the same on a re-run of the same input).
    counts: Counter[str] = field(default_factory=Counter)
    # Rows actually inserted or modified, per kind (zero on an idempotent re-run).
    changed: Counter[str] = field(default_factory=Counter)
    errors: list[LoadIssue] = field(default_factory=list)
    warnings: list[LoadIssue] = field(default_factory=list)
    elapsed: float = 0.0

    @property
    def ok(self) -> bool:
        """Tell whether every record was loaded."""
        return not self.errors

    def add(self, kind: str, count: int = 1, changed: int = 0) -> None:
        """Count ``count`` rows of ``kind``, ``changed`` of them new or modified."""
        self.counts[kind] += count
        if changed:
            self.changed[kind] += changed

    def error(self, file: str, line: int, message: str) -> None:
        """Record a skipped record."""
        self.errors.append(LoadIssue(file, line, message))

    def warn(self, file: str, line: int, message: str) -> None:
        """Record something worth knowing that did not stop the record from loading."""
        self.warnings.append(LoadIssue(file, line, message))

    def summary(self) -> str:
        """Return a short human-readable account of the run."""
        kinds = ", ".join(
            f"{kind} {n:,} ({self.changed.get(kind, 0):,} changed)"
            for kind, n in sorted(self.counts.items())
        )
        lines = [
            f"{self.source}: {kinds or 'nothing loaded'} in {self.elapsed:.1f}s; "
            f"{len(self.errors)} error(s), {len(self.warnings)} warning(s)"
        ]
        for title, issues in (("error", self.errors), ("warning", self.warnings)):
            for issue in issues[:SUMMARY_ISSUES]:
                lines.append(f"  {title}: {issue}")
            if len(issues) > SUMMARY_ISSUES:
                lines.append(f"  ... and {len(issues) - SUMMARY_ISSUES} more {title}(s)")
        return "\n".join(lines)
