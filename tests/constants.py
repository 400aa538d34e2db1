"""Values several test modules share (imported from here, never from a conftest)."""

from __future__ import annotations

from pathlib import Path

# Small CC0 slices of the museums' data in their own formats (tests/data/*/README.md).
SAMPLE_DATA = Path(__file__).resolve().parent / "data"

# Cheap argon2 parameters: tests hash many passwords.
CHEAP_ARGON2 = {"argon2_time_cost": 1, "argon2_memory_cost": 1024, "argon2_parallelism": 1}
