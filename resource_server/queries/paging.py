"""Keyset pages ordered by id: the catalog lists' pager, with a cursor that must name one id."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

from sqlalchemy import Select
from sqlalchemy.orm import InstrumentedAttribute, Session

from common.api.errors import ParamError
from common.api.keyset import PageResult, paginate
from common.api.paging import PageParams
from common.ids import is_id


def page_by_id(
    session: Session,
    stmt: Select[Any],
    id_column: InstrumentedAttribute[str],
    page: PageParams,
    *,
    shape: Hashable | None = None,
    values: Mapping[str, Any] | None = None,
) -> PageResult:
    """Run one page of ``stmt`` ordered by id; a cursor that is not one id is a forged one.

    ``shape`` and ``values``: a statement with bound parameters, built once (``paginate``).
    Checking the value before it reaches SQL also keeps odd strings (NUL bytes, which
    PostgreSQL text cannot hold) from turning into a server error.
    """
    if page.cursor is not None and not (len(page.cursor) == 1 and is_id(str(page.cursor[0]))):
        raise ParamError.invalid("cursor")
    return paginate(session, stmt, [id_column], page, shape=shape, values=values)
