"""The few statements every move runs, sent as SQL composed once from the models' own fields.

Every move locks its table, reads the seats with their people and the current match, and
writes the move, the new version, the version's events and the engine's position. Through the
ORM each of those costs 0.5-1.4 ms of CPU in the query compiler on this machine, against about
0.16 ms for the same statement as SQL (``tests/tables/test_rows.py`` compares them); with seven
of them on every move, the compiler was most of a move's CPU in the web process and the worker
(issue 11). So these statements are composed here once per process, from ``_meta``: a field
added to a model is read and written with no change here. What they return are the ORM's own
instances (``Model.from_db``, with the database's converters applied, and related objects
cached as ``select_related`` caches them), so the callers see nothing different.

Everything else stays in the ORM; only the move path comes here.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

from django.contrib.auth import get_user_model
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import Model
from django.utils import timezone

from .models import Match, Seat, Table


def _connection():
    return connections[DEFAULT_DB_ALIAS]


def _quote(name: str) -> str:
    return _connection().ops.quote_name(name)


class _Shape:
    """One model's columns in a SELECT under ``alias``, and how its slice of a row becomes an
    instance."""

    def __init__(self, model: type[Model], alias: str) -> None:
        conn = _connection()
        self.model = model
        self.fields = list(model._meta.concrete_fields)
        self.names = [f.attname for f in self.fields]
        self.columns = ", ".join(f"{_quote(alias)}.{_quote(f.column)}" for f in self.fields)
        self.converters: list[list[tuple[Any, Any]]] = []
        for field in self.fields:
            col = field.get_col(alias)
            found = conn.ops.get_db_converters(col) + field.get_db_converters(conn)
            self.converters.append([(fn, col) for fn in found])

    def __len__(self) -> int:
        return len(self.fields)

    def make(self, values: Iterable[Any]) -> Model:
        conn = _connection()
        out = []
        for value, converters in zip(values, self.converters, strict=True):
            for fn, col in converters:
                value = fn(value, col, conn)
            out.append(value)
        return self.model.from_db(DEFAULT_DB_ALIAS, self.names, out)


@functools.cache
def _shape(model: type[Model], alias: str) -> _Shape:
    return _Shape(model, alias)


def _table_name(model: type[Model]) -> str:
    return _quote(model._meta.db_table)


def _fetch(sql: str, params: list) -> list[tuple]:
    with _connection().cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


@functools.cache
def _locked_table_sql() -> str:
    shape = _shape(Table, "t")
    lock = " FOR UPDATE" if _connection().features.has_select_for_update else ""
    return (f"SELECT {shape.columns} FROM {_table_name(Table)} {_quote('t')} "
            f"WHERE {_quote('t')}.{_quote('id')} = %s{lock}")


def locked_table(table_id: int) -> Table | None:
    """The table's row, locked until the transaction ends (SQLite locks the whole database on
    the first write instead)."""
    rows = _fetch(_locked_table_sql(), [table_id])
    return _shape(Table, "t").make(rows[0]) if rows else None


class _SeatsQuery:
    """The seats of a table joined with their people and profiles: the SQL and the three
    shapes its rows are cut into, worked out once."""

    def __init__(self) -> None:
        user_model = get_user_model()
        self.profile_rel = user_model._meta.get_field("profile")
        self.seat_user = Seat._meta.get_field("user")
        self.seat = _shape(Seat, "s")
        self.user = _shape(user_model, "u")
        self.profile = _shape(self.profile_rel.related_model, "p")
        q = _quote
        self.sql = (
            f"SELECT {self.seat.columns}, {self.user.columns}, {self.profile.columns} "
            f"FROM {_table_name(Seat)} {q('s')} "
            f"LEFT JOIN {_table_name(user_model)} {q('u')} "
            f"ON {q('u')}.{q('id')} = {q('s')}.{q('user_id')} "
            f"LEFT JOIN {_table_name(self.profile_rel.related_model)} {q('p')} "
            f"ON {q('p')}.{q(self.profile_rel.field.column)} = {q('u')}.{q('id')} "
            f"WHERE {q('s')}.{q('table_id')} = %s ORDER BY {q('s')}.{q('index')}")


@functools.cache
def _seats_query() -> _SeatsQuery:
    return _SeatsQuery()


def seats_with_people(table_id: int) -> list[Seat]:
    """The table's seats by index, each with its person and their profile cached, as
    ``select_related("user__profile")`` leaves them."""
    query = _seats_query()
    a = len(query.seat)
    b = a + len(query.user)
    seats = []
    for row in _fetch(query.sql, [table_id]):
        seat = query.seat.make(row[:a])
        user = None
        if seat.user_id is not None:
            user = query.user.make(row[a:b])
            profile = query.profile.make(row[b:]) if row[b] is not None else None
            query.profile_rel.set_cached_value(user, profile)
            if profile is not None:
                query.profile_rel.field.set_cached_value(profile, user)
        query.seat_user.set_cached_value(seat, user)
        seats.append(seat)
    return seats


@functools.cache
def _current_match_sql() -> str:
    shape = _shape(Match, "m")
    q = _quote
    return (f"SELECT {shape.columns} FROM {_table_name(Match)} {q('m')} "
            f"WHERE {q('m')}.{q('table_id')} = %s ORDER BY {q('m')}.{q('number')} DESC LIMIT 1")


def current_match(table_id: int) -> Match | None:
    """The table's latest match (``Table.current_match``)."""
    rows = _fetch(_current_match_sql(), [table_id])
    return _shape(Match, "m").make(rows[0]) if rows else None


def _prepared(model: type[Model], values: dict[str, Any]) -> tuple[list[str], list[Any]]:
    conn = _connection()
    columns, params = [], []
    for name, value in values.items():
        field = model._meta.get_field(name)
        columns.append(_quote(field.column))
        params.append(field.get_db_prep_save(value, conn))
    return columns, params


def insert(model: type[Model], **values: Any) -> None:
    """INSERT one row of ``model``: the fields given, every other one at its default (the
    primary key from the database). No signals are sent: these models have no receivers."""
    row: dict[str, Any] = {}
    for field in model._meta.concrete_fields:
        if field.primary_key:
            continue
        if field.attname in values:
            row[field.attname] = values.pop(field.attname)
        elif field.name in values:
            row[field.attname] = values.pop(field.name)
            if isinstance(row[field.attname], Model):
                row[field.attname] = row[field.attname].pk
        elif getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
            row[field.attname] = timezone.now()
        else:
            row[field.attname] = field.get_default()
    if values:
        raise TypeError(f"{model.__name__} has no field {', '.join(values)}")
    columns, params = _prepared(model, row)
    sql = (f"INSERT INTO {_table_name(model)} ({', '.join(columns)}) "
           f"VALUES ({', '.join(['%s'] * len(params))})")
    with _connection().cursor() as cursor:
        cursor.execute(sql, params)


def update(model: type[Model], pk: int, *, where: dict[str, Any] | None = None,
           **values: Any) -> int:
    """UPDATE the row ``pk`` of ``model`` (and only if ``where`` holds): the number of rows
    changed, 0 or 1."""
    columns, params = _prepared(model, values)
    sql = (f"UPDATE {_table_name(model)} SET {', '.join(c + ' = %s' for c in columns)} "
           f"WHERE {_quote(model._meta.pk.column)} = %s")
    params.append(pk)
    for name, value in (where or {}).items():
        field = model._meta.get_field(name)
        sql += f" AND {_quote(field.column)} = %s"
        params.append(field.get_db_prep_value(value, _connection()))
    with _connection().cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount
