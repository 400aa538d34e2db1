"""The staging data policy: every table decided, nothing private crossing by accident."""

from __future__ import annotations

import importlib
import pkgutil
import re

import pytest
from sqlalchemy import Table

from artcat.staging_policy import POLICY, Action, copied_tables
from common.models import Base

# Column names that smell of credentials or personal data. A copied table may keep such a
# column only if the policy replaces it, or if it is listed here with the reason it is public.
SENSITIVE = re.compile(r"email|password|secret|digest|token|phone|birthday|pin|uid|redirect")
PUBLIC_ANYWAY = {
    ("partners", "email"): "a partner's public contact address, served by GET /api/partners",
    ("artists", "birthday"): "an artist's birth date or year, part of the public biography",
    ("image_mirrors", "digest"): "the hash of a public image's bytes: its copy's public URL",
}


def _import_every_module() -> None:
    """Import every module of the services, so that every model is in the metadata."""
    for package in ("common", "auth_server", "resource_server"):
        root = importlib.import_module(package)
        for module in pkgutil.walk_packages(root.__path__, f"{package}."):
            importlib.import_module(module.name)


def test_the_policy_covers_every_table_of_the_metadata() -> None:
    _import_every_module()
    tables = set(Base.metadata.tables)
    assert set(POLICY) - tables == set(), "the policy names tables that do not exist"
    assert tables - set(POLICY) == set(), "decide in common/staging_policy.py what crosses"


@pytest.mark.parametrize("name", sorted(POLICY))
def test_each_rule_is_complete(name: str) -> None:
    rule = POLICY[name]
    table = Base.metadata.tables[name]
    assert rule.why.strip()
    if rule.action in (Action.PUBLIC, Action.SCRUB):
        assert rule.where is not None, "only some rows are public: say which"
    else:
        assert rule.where is None
    if rule.action is Action.SCRUB:
        columns = set(table.columns.keys())
        assert rule.keep.isdisjoint(rule.replace)
        assert rule.keep | set(rule.replace) == columns, "a scrubbed table names every column"
    else:
        assert not rule.keep and not rule.replace


def test_copied_rows_never_point_at_rows_left_behind() -> None:
    copied = {t.name for t in copied_tables()}
    for table in copied_tables():
        for fk in table.foreign_keys:
            assert fk.column.table.name in copied, f"{table.name}.{fk.parent.name}"


def test_no_credential_or_personal_column_crosses_unreplaced() -> None:
    for table in copied_tables():
        for column in table.columns:
            if not SENSITIVE.search(column.name):
                continue
            key = (table.name, column.name)
            assert key in PUBLIC_ANYWAY or column.name in POLICY[table.name].replace, key


def test_credentials_and_private_tables_never_cross() -> None:
    for name in ("tokens", "authorization_codes", "applications", "social_identities",
                 "user_details", "bidders", "partner_users"):  # fmt: skip
        assert POLICY[name].action is Action.NEVER
    for name in ("search_documents", "search_words"):
        assert POLICY[name].action is Action.REBUILD


def test_users_are_scrubbed() -> None:
    users = POLICY["users"]
    row = {
        "id": "0123456789abcdef01234567",
        "name": "Ada",
        "email": "ada@example.org",
        "password_hash": "$argon2id$v=19$...",
        "type": "Admin",
        "enabled": True,
    }
    scrubbed = users.apply(dict(row))
    assert scrubbed["email"] == "user-0123456789abcdef01234567@staging.invalid"
    assert scrubbed["password_hash"] is None and scrubbed["type"] == "User"
    assert scrubbed["name"] == "Ada"


def test_parents_come_before_children() -> None:
    seen: set[str] = set()
    for table in copied_tables():
        assert isinstance(table, Table)
        for fk in table.foreign_keys:
            if fk.column.table is not table:
                assert fk.column.table.name in seen
        seen.add(table.name)
