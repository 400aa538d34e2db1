"""The audit log: one JSON line per credential event, never with a secret in it."""

from __future__ import annotations

import logging
from typing import Any

import orjson

from common.ids import format_ts, utcnow

log = logging.getLogger("artcat.audit")


def audit(event: str, **fields: Any) -> None:
    """Log a credential event (issue, expiry, revocation, failed sign-in, consent decision)."""
    if log.isEnabledFor(logging.INFO):
        record = {"ts": format_ts(utcnow()), "event": event, **fields}
        log.info(orjson.dumps(record).decode())
