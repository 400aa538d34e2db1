"""Rendered catalog documents kept in memory, valid for one catalog version.

A catalog item changes only when a catalog writer (an importer, the staging rebuild) commits,
and every writer bumps the catalog version afterwards (``common.catalog_version``). The request
gate reads that version in the same Redis round trip as the token, so a document filed under
the version a request saw is exactly as current as one read from SQL: the first request after
a bump finds the memory emptied.

Two guards for what the version cannot tell:
- a missing version (a Redis that was flushed or restarted) is never cached under; the gate
  seeds a new random one, which no earlier version equals;
- documents are forgotten ``max_age`` seconds after the first was filed, so a change made
  without a bump (an operator's hand-written SQL) is served within that time.

Documents are kept serialised (a few KB each), at most ``max_entries`` per process.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Hashable

MAX_AGE = 300.0  # seconds


class DocumentCache:
    """Serialised documents by key, for the catalog version they were read at."""

    def __init__(self, max_entries: int = 10_000, max_age: float = MAX_AGE) -> None:
        self.max_entries = max_entries
        self.max_age = max_age
        self._version: bytes | None = None
        self._expires = 0.0
        self._docs: dict[Hashable, bytes] = {}
        self._lock = threading.Lock()

    def get(self, version: bytes | None, key: Hashable) -> bytes | None:
        """Return the document filed under ``key`` at ``version``, if there is one."""
        if version is None or version != self._version or time.monotonic() >= self._expires:
            return None
        return self._docs.get(key)

    def put(self, version: bytes | None, key: Hashable, data: bytes) -> None:
        """File a document read at ``version`` (another version empties the memory)."""
        if version is None or self.max_entries <= 0:
            return
        with self._lock:
            now = time.monotonic()
            if version != self._version or now >= self._expires:
                self._docs = {}
                self._version = version
                self._expires = now + self.max_age
            elif len(self._docs) >= self.max_entries:
                self._docs = {}  # start afresh: cheaper than tracking recency on every hit
            self._docs[key] = data

    def __len__(self) -> int:
        return len(self._docs)
