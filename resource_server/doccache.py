"""Rendered catalog documents kept in memory, valid for the versions they were read at.

A catalog item changes only when a catalog writer (an importer, the staging rebuild) commits,
and every writer bumps the versions of what it wrote afterwards (``common.catalog_version``):
one counter per resource type, or the whole catalog's when it does not say. The request gate
reads them all in the same round trip as the token, so a document filed under the versions a
request saw is exactly as current as one read from SQL.

A cache declares the resource types its documents are built from (an artwork document:
``artworks`` and ``editions``); a document is filed under the versions of those types, so a
write to another type (artists, sales, ...) leaves it in memory, and a write to one of its
types makes every process read it afresh on its next request. A bump of the whole catalog
empties the memory.

Two guards for what the versions cannot tell:
- a missing catalog version (a Redis that was flushed or restarted) is never cached under; the
  gate seeds a new random one, which no earlier version equals (type versions start again from
  nothing after a flush, but always next to a new catalog version);
- documents are forgotten ``max_age`` seconds after the first was filed, so a change made
  without a bump (an operator's hand-written SQL) is served within that time.
- with read replicas, a document read in the first ``settle`` seconds after the process first
  saw its versions is served but not kept: a replica may not have replayed the write that the
  bump follows yet (``settle`` is the replicas' lag bound plus their check interval, beyond
  which a replica is not read).

Documents are kept serialised (a few KB each; a list page up to a few hundred), at most
``max_entries`` of them and, when ``max_bytes`` is set, at most that many bytes per cache.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Hashable, Sequence
from typing import Any

from common.catalog_version import CATALOG_TYPES

MAX_AGE = 300.0  # seconds
# The memory a process gives to each cache of whole pages (an artworks page of 100 is about
# 200 KB, a search page of 50 about 33 KB): a bound that the entry count alone would not set.
PAGE_BYTES = 8 * 1024 * 1024


class DocumentCache:
    """Serialised documents by key, for the catalog versions they were read at."""

    def __init__(
        self,
        max_entries: int = 10_000,
        max_age: float = MAX_AGE,
        kinds: Sequence[str] = (),
        max_bytes: int | None = None,
        settle: float = 0.0,
    ) -> None:
        self.max_entries = max_entries
        self.settle = settle
        # When this process first saw each combination of the versions documents are filed
        # under (with ``settle`` only; emptied with the memory).
        self._seen: dict[tuple[bytes | None, ...], float] = {}
        self.max_age = max_age
        self.max_bytes = max_bytes
        self._bytes = 0
        # Where each declared type's version sits in the gate's ``type_versions``.
        self._positions = tuple(CATALOG_TYPES.index(kind) for kind in kinds)
        self._version: bytes | None = None
        self._expires = 0.0
        self._docs: dict[Hashable, bytes] = {}
        self._lock = threading.Lock()

    def _key(self, key: Hashable, types: Sequence[bytes | None]) -> Hashable | None:
        """Return ``key`` with the versions of the declared types; None when they are unknown."""
        if not self._positions:
            return key
        if len(types) != len(CATALOG_TYPES):
            return None  # a request the gate did not read the versions for: never cached
        return (key, *[types[i] for i in self._positions])

    def get(
        self, version: bytes | None, key: Hashable, types: Sequence[bytes | None] = ()
    ) -> bytes | None:
        """Return the document filed under ``key`` at ``version`` and ``types``, if any."""
        if version is None or version != self._version or time.monotonic() >= self._expires:
            return None
        filed = self._key(key, types)
        return None if filed is None else self._docs.get(filed)

    def put(
        self,
        version: bytes | None,
        key: Hashable,
        data: bytes,
        types: Sequence[bytes | None] = (),
    ) -> None:
        """File a document read at ``version`` and ``types`` (another version empties it)."""
        filed = self._key(key, types)
        if version is None or filed is None or self.max_entries <= 0:
            return
        with self._lock:
            now = time.monotonic()
            full = len(self._docs) >= self.max_entries or (
                self.max_bytes is not None and self._bytes + len(data) > self.max_bytes
            )
            if version != self._version or now >= self._expires:
                self._docs, self._bytes, self._seen = {}, 0, {}
                self._version = version
                self._expires = now + self.max_age
            if self.settle and not self._settled(version, types, now):
                return
            elif full:
                # Start afresh: cheaper than tracking recency on every hit.
                self._docs, self._bytes = {}, 0
            if self.max_bytes is not None and len(data) > self.max_bytes:
                return
            self._bytes += len(data) - len(self._docs.get(filed, b""))
            self._docs[filed] = data

    def _settled(self, version: bytes, types: Sequence[bytes | None], now: float) -> bool:
        """Tell whether these versions were first seen ``settle`` seconds ago or more."""
        seen = (version, *[types[i] for i in self._positions])
        if len(self._seen) >= 1024:  # versions of types bumped again and again: start afresh
            self._seen = {}
        return now - self._seen.setdefault(seen, now) >= self.settle

    def lookup(self, context: Any, key: Hashable) -> bytes | None:
        """Return the document filed under ``key`` at the versions the request gate put in a
        request's ``context``, if any."""
        version, types = _versions(context)
        return self.get(version, key, types)

    def keep(self, context: Any, key: Hashable, data: bytes) -> None:
        """File a document under the versions of a request's ``context`` (see ``lookup``)."""
        version, types = _versions(context)
        self.put(version, key, data, types)

    def __len__(self) -> int:
        return len(self._docs)


def _versions(context: Any) -> tuple[bytes | None, Sequence[bytes | None]]:
    """Return the versions the request gate read (none for a request it did not gate)."""
    return getattr(context, "catalog_version", None), getattr(context, "catalog_versions", ())
