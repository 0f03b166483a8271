"""The base every repository stands on: the session, held once, and the statements all of them
need. Every read of a table starts at ``_select``, which is where the tenant filter lives: a
repository built for a tenant sees only that tenant's rows of any table with a ``tenant_id``
column, so no query can forget it. Writes carry their tenant in the row."""

from __future__ import annotations

import json
import operator
import uuid
from collections.abc import Sequence
from datetime import datetime
from functools import cache
from itertools import chain
from typing import Any, TypeVar

from sqlalchemy import JSON, Select, Text, bindparam, cast, func, literal_column, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from service.db.base import Base

M = TypeVar("M", bound=Base)


class Repository:
    def __init__(self, session: Session, tenant_id: str | None = None) -> None:
        self.session = session
        # None: not on behalf of a tenant (the worker writing by decision id, the CLI).
        self.tenant_id = tenant_id

    def _select(self, model: type[M]) -> Select[M]:
        query = select(model)
        tenant_column = model.__table__.c.get("tenant_id")
        if self.tenant_id is not None and tenant_column is not None:
            query = query.where(tenant_column == self.tenant_id)
        return query

    @property
    def dialect(self) -> str:
        return self.session.get_bind().dialect.name

    def _insert(self, model: type[Base]) -> Any:
        """A Core insert that supports ON CONFLICT (Postgres and SQLite); see ``dialect_insert``."""
        return dialect_insert(model, self.dialect)

    def _insert_ignoring_conflicts(self, model: type[Base], rows: Sequence[dict[str, Any]]) -> None:
        """Insert in one batched statement; rows whose key exists are left as they are."""
        if rows:
            statement = insert_ignoring_conflicts(model, self.dialect)
            self.session.connection().execute(statement, list(rows))


def dialect_insert(model: type[Base], dialect: str) -> Any:
    """A Core insert that supports ON CONFLICT (Postgres and SQLite).

    Core on the table, executed with a list of rows, so SQLAlchemy caches the compiled
    statement and batches the rows ("insertmanyvalues"); a multi-VALUES insert would be
    recompiled every time.
    """
    table = model.__table__
    if dialect == "postgresql":
        return postgresql.insert(table)  # type: ignore[arg-type]
    if dialect == "sqlite":
        return sqlite.insert(table)  # type: ignore[arg-type]
    raise RuntimeError(f"unsupported database dialect {dialect!r}")


@cache
def insert_ignoring_conflicts(model: type[Base], dialect: str) -> Any:
    """``dialect_insert`` leaving rows whose key exists as they are; built once per process:
    building it and its cache key again for every chunk cost more than SQLite spent on it."""
    return dialect_insert(model, dialect).on_conflict_do_nothing()


class SqliteRows:
    """SQLite: rows of one table inserted through the driver, existing keys left as they are;
    each value converted by its column type's own bind processor, so what is stored is what
    SQLAlchemy would store, with less Python a row than Core's executemany with RETURNING
    (through the service the saving is within the run-to-run spread: README, "Measured").
    Built once per table (``sqlite_rows``)."""

    # SQLite's default cap on a statement's parameters (SQLITE_MAX_VARIABLE_NUMBER).
    MAX_PARAMETERS = 32766

    def __init__(self, model: type[Base], dialect: Any) -> None:
        table: Any = model.__table__
        self.names = [column.name for column in table.columns]
        # A tuple of the row's values in column order (itemgetter of one name gives the value).
        getter = operator.itemgetter(*self.names)
        self.values = getter if len(self.names) > 1 else lambda row: (getter(row),)
        # (position, processor) of the columns whose values are converted: the rest go as they
        # are, taken out of each row in one call.
        self.processors = [
            (position, process)
            for position, column in enumerate(table.columns)
            if (process := column.type._cached_bind_processor(dialect)) is not None
        ]
        self.dialect = dialect
        # SQL text by statement (an Insert hashes by identity; the statements are built once).
        self._compiled: dict[Any, str] = {}
        columns = ", ".join(f'"{name}"' for name in self.names)
        self.head = f'INSERT INTO "{table.name}" ({columns}) VALUES '
        self.one = "(" + ", ".join("?" for _ in self.names) + ")"
        self.per_statement = self.MAX_PARAMETERS // len(self.names)

    def _params(self, rows: Sequence[dict[str, Any]]) -> list[tuple[Any, ...]]:
        values, processors = self.values, self.processors
        params = []
        for row in rows:
            converted = list(values(row))
            for position, process in processors:
                converted[position] = process(converted[position])
            params.append(tuple(converted))
        return params

    def insert(self, session: Session, rows: Sequence[dict[str, Any]]) -> None:
        """Insert ``rows`` (each carrying every column)."""
        sql = self.head + self.one + " ON CONFLICT DO NOTHING"
        session.connection().exec_driver_sql(sql, self._params(rows))

    def execute(self, session: Session, statement: Any, rows: Sequence[dict[str, Any]]) -> None:
        """Run ``statement``, an insert of this table whose only parameters are the values of
        every column in column order (an upsert built once: ``on_conflict_do_update``), once
        for each of ``rows`` through the driver's executemany: Core's executemany spent more
        Python on each row's parameters than SQLite spent on the row."""
        sql = self._compiled.get(statement)
        if sql is None:
            compiled: Any = statement.compile(dialect=self.dialect)
            if list(compiled.positiontup or ()) != self.names:
                raise RuntimeError("the statement's parameters are not the table's columns")
            sql = self._compiled[statement] = compiled.string
        session.connection().exec_driver_sql(sql, self._params(rows))

    def insert_returning(
        self, session: Session, rows: Sequence[dict[str, Any]], key: str
    ) -> list[dict[str, Any]]:
        """Insert ``rows``; the ones actually inserted (their ``key`` was new), in order."""
        position = self.names.index(key)
        params = self._params(rows)
        inserted: set[Any] = set()
        connection = session.connection()
        for start in range(0, len(params), self.per_statement):
            batch = params[start : start + self.per_statement]
            values = ", ".join(self.one for _ in batch)
            sql = f'{self.head}{values} ON CONFLICT DO NOTHING RETURNING "{key}"'
            flat = tuple(chain.from_iterable(batch))
            inserted.update(found for (found,) in connection.exec_driver_sql(sql, flat))
        return [
            row for row, values in zip(rows, params, strict=True) if values[position] in inserted
        ]


_sqlite_rows: dict[type[Base], SqliteRows] = {}


def sqlite_rows(model: type[Base], session: Session) -> SqliteRows:
    dialect = session.get_bind().dialect
    if dialect.name != "sqlite":
        raise RuntimeError(f"SqliteRows writes SQLite only, not {dialect.name}")
    writer = _sqlite_rows.get(model)
    if writer is None:
        writer = _sqlite_rows[model] = SqliteRows(model, dialect)
    return writer


def json_rows(model: type[Base], prefix: str) -> Select[Any]:
    """Postgres: rows of ``model``'s table given as one JSON array of objects (``json_rows_param``),
    as a SELECT of every column (``json_populate_recordset``, typed as the table's columns)."""
    table: Any = model.__table__
    names = [c.name for c in table.columns]
    document = cast(bindparam(f"{prefix}_rows", type_=Text), postgresql.JSON)
    source = func.json_populate_recordset(
        literal_column(f"NULL::{table.name}"), document
    ).table_valued(*names, name=f"{prefix}_rows")
    return select(*(_as_stored(source.c[c.name], c) for c in table.columns))


def _as_stored(value: Any, column: Any) -> Any:
    # JSON null arrives as SQL NULL; SQLAlchemy's JSON type stores Python None as JSON null
    # (a null ground truth is legal), and so must this path.
    if isinstance(column.type, JSON):
        return func.coalesce(value, literal_column("'null'::jsonb")).label(column.name)
    return value


def json_insert(model: type[Base], prefix: str, where: Any = None) -> Any:
    """A Postgres insert of ``json_rows`` (only while ``where`` holds, if given).

    One parameter whatever the number of rows, so psycopg converts the statement once and the
    server prepares it once per connection; the same rows as VALUES lists make a statement of
    hundreds of parameters that psycopg converts again on every execution (it caches short
    ones only), and as arrays psycopg escapes every backslash of every LaTeX completion in
    Python. Build it once (add ON CONFLICT, RETURNING, a CTE) and keep it.
    """
    rows = json_rows(model, prefix)
    if where is not None:
        rows = rows.where(where)
    table: Any = model.__table__
    return postgresql.insert(table).from_select([c.name for c in table.columns], rows)


def _json_value(value: Any) -> str:
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not a column value json_rows_param knows")


def json_rows_param(
    model: type[Base], prefix: str, rows: Sequence[dict[str, Any]]
) -> dict[str, Any]:
    """The parameter of ``json_insert(model, prefix)`` for these rows: every row carries every
    column, but those with a constant default."""
    table: Any = model.__table__
    defaults = {
        column.name: column.default.arg
        for column in table.columns
        if column.default is not None and column.default.is_scalar
    }
    if defaults:
        rows = [{**defaults, **row} for row in rows]
    text = json.dumps(rows, default=_json_value, ensure_ascii=False, separators=(",", ":"))
    return {f"{prefix}_rows": text}
