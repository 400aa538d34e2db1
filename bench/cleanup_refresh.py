"""The storage cleanup benchmark's refresh scenario: chains of refresh-token grants over HTTP.

Every refresh rotates: it writes an access token (``tokens``) and a refresh token
(``refresh_tokens``), and leaves the token it presented rotated, in its row until that row's own
expiry (REFRESH_TOKEN_TTL after it was issued) plus the retention, so that its reuse still ends
the family. Each client thread keeps a few chains going, one refresh at a time each, and a
chain's client goes away after ``--chain`` refreshes (never revoking: its family just stops being
used, as most do): the chain starts again from a new family. So families expire too, through
their own sweep, once their last token has gone.

New families are written straight to the database, a small batch at a time as chains take them
(``bench.refresh_bench.seed``: no password grant and its argon2 on the shared machine); every
refresh is a real ``POST /oauth2/access_token``.

With ``rate`` refreshes a second, ``rate / chain`` families start a second, each with one token
issued without a refresh; a row leaves a run after its sweep's cutoff passes, half an interval
later on average (an interval and a half at most). So, with ``kept = retention + interval / 2``:

- ``tokens``: ``rate x (REFRESH_ACCESS_TOKEN_TTL + kept)``;
- ``refresh_tokens``: ``(rate + rate / chain) x (REFRESH_TOKEN_TTL + kept)``;
- ``refresh_families``: the chains being refreshed, plus those abandoned but still holding a
  row: ``chains + rate / chain x (REFRESH_TOKEN_TTL + kept)`` (a family goes in the run that
  removes its last token: both cutoffs fall REFRESH_TOKEN_TTL + retention after its last use).
"""

from __future__ import annotations

import argparse
import threading
from dataclasses import dataclass

import requests
from sqlalchemy import Engine, func, select

from bench.harness import paced
from bench.refresh_bench import prepare, seed
from common.models import RefreshFamily, RefreshToken, Token
from common.settings import AuthSettings

SCOPE = "offline_access"
COLUMNS = ("tokens", "refresh_tokens", "refresh_families")


@dataclass(frozen=True)
class Mix:
    """The refresh load and the settings the tables' sizes follow from."""

    rate: float  # refreshes a second
    chain: int  # refreshes of a family before its client goes away
    chains: int  # families refreshed at once
    refresh_ttl: int  # REFRESH_TOKEN_TTL
    access_ttl: int  # REFRESH_ACCESS_TOKEN_TTL
    retention: int  # CLEANUP_RETENTION
    interval: int  # CLEANUP_INTERVAL

    @classmethod
    def of(cls, args: argparse.Namespace) -> Mix:
        """Return the mix the command line asks for."""
        return cls(
            args.rate,
            args.chain,
            args.chains,
            args.refresh_ttl,
            args.access_ttl,
            args.retention,
            args.interval,
        )

    def estimates(self, waits: float = 0.5) -> dict[str, float]:
        """Return each table's rows in the steady state, a row waiting ``waits`` intervals for
        the run after its cutoff (0.5: on average; 1.5: at most)."""
        kept = self.retention + waits * self.interval
        started = self.rate / self.chain
        return {
            "tokens": self.rate * (self.access_ttl + kept),
            "refresh_tokens": (self.rate + started) * (self.refresh_ttl + kept),
            "refresh_families": self.chains + started * (self.refresh_ttl + kept),
        }

    def warm(self) -> float:
        """Return the seconds after which every table should have stopped growing."""
        return max(self.refresh_ttl, self.access_ttl) + self.retention + 1.5 * self.interval

    def formulas(self) -> dict[str, str]:
        """Return each estimate's formula with this mix's figures."""
        kept = f"{self.retention} + {self.interval / 2:g}"
        rate = f"{self.rate:g}"
        started = f"{self.rate / self.chain:g}"
        return {
            "tokens": f"{rate} x ({self.access_ttl} + {kept})",
            "refresh_tokens": f"({rate} + {started}) x ({self.refresh_ttl} + {kept})",
            "refresh_families": f"{self.chains} + {started} x ({self.refresh_ttl} + {kept})",
        }


def environment(args: argparse.Namespace) -> dict[str, str]:
    """Return the auth server's settings for the scenario (lifetimes)."""
    return {
        "REFRESH_TOKEN_TTL": str(args.refresh_ttl),
        "REFRESH_ACCESS_TOKEN_TTL": str(args.access_ttl),
    }


class Families:
    """New families for the chains, written a small batch at a time as they are taken (each
    batch is used within seconds: its tokens are far from their expiry)."""

    def __init__(self, settings: AuthSettings, app_id: str, user_id: str, batch: int) -> None:
        self.settings = settings
        self.app_id = app_id
        self.user_id = user_id
        self.batch = batch
        self.fresh: list[str] = []
        self.guard = threading.Lock()

    def take(self) -> str:
        """Return the first refresh token of a new family."""
        with self.guard:
            if not self.fresh:
                self.fresh = seed(self.settings, self.app_id, self.user_id, self.batch, SCOPE)
            return self.fresh.pop()


class Load:
    """The refresh scenario: its application, its client threads and its counts."""

    def __init__(self, settings: AuthSettings, args: argparse.Namespace) -> None:
        self.mix = Mix.of(args)
        self.clients = args.clients
        client_id, secret, self.app_id, user_id = prepare(settings)
        self.form = {"grant_type": "refresh_token", "client_id": client_id}
        self.form["client_secret"] = secret
        batch = max(1, min(args.chains, round(self.mix.rate / self.mix.chain * 5)))
        self.families = Families(settings, self.app_id, user_id, batch)

    def issue(self, url: str, rate: float, until: float, errors: list[int], first: int) -> int:
        """Refresh at ``rate`` a second (paced on a schedule) until ``until``, over this
        thread's chains (the ``first`` of them overall, to stagger their ends); return how
        many refreshes were asked."""
        session = requests.Session()
        mine = self.mix.chains // self.clients
        # Each chain's token and its refreshes so far: the chains start staggered, so that
        # they end spread out.
        tokens = [self.families.take() for _ in range(mine)]
        made = [(first + i) * self.mix.chain // self.mix.chains for i in range(mine)]
        done = 0
        for i in (sent % mine for sent in paced(rate, until)):
            form = {**self.form, "refresh_token": tokens[i]}
            resp = session.post(url + "/oauth2/access_token", data=form, timeout=10)
            done += 1
            if resp.status_code == 200:
                tokens[i] = resp.json()["refresh_token"]
                made[i] += 1
            else:  # a broken chain starts again
                errors.append(resp.status_code)
                made[i] = self.mix.chain
            if made[i] >= self.mix.chain:
                tokens[i], made[i] = self.families.take(), 0
        return done

    def threads(self, url: str, until: float, errors: list[int]) -> list[threading.Thread]:
        """Return the client threads (not started)."""
        per = self.mix.chains // self.clients
        return [
            threading.Thread(
                target=self.issue, args=(url, self.mix.rate / self.clients, until, errors, i * per)
            )
            for i in range(self.clients)
        ]

    def counts(self, engine: Engine) -> dict[str, int]:
        """Return the application's rows of each table."""
        queries = (
            select(func.count()).select_from(Token).where(Token.application_id == self.app_id),
            select(func.count())
            .select_from(RefreshToken)
            .where(RefreshToken.application_id == self.app_id),
            select(func.count())
            .select_from(RefreshFamily)
            .where(RefreshFamily.application_id == self.app_id),
        )
        with engine.connect() as conn:
            return {
                name: int(conn.scalar(query) or 0)
                for name, query in zip(COLUMNS, queries, strict=True)
            }

    def estimates(self, waits: float = 0.5) -> dict[str, float]:
        """Return each table's rows in the steady state (``Mix.estimates``)."""
        return self.mix.estimates(waits)

    def formulas(self) -> dict[str, str]:
        """Return each estimate's formula with this run's figures."""
        return self.mix.formulas()

    def warm(self) -> float:
        """Return the seconds after which every table should have stopped growing."""
        return self.mix.warm()

    def describe(self) -> str:
        """Return the scenario's settings, as the report says them."""
        m = self.mix
        return (
            f"REFRESH_TOKEN_TTL={m.refresh_ttl}, REFRESH_ACCESS_TOKEN_TTL={m.access_ttl}; "
            f"{m.chains} chains of {m.chain} refreshes (then a new family), "
            f"{m.rate / m.chain:g} families started a second"
        )
