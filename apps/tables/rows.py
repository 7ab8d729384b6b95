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

On PostgreSQL they are also prepared, once per connection (a server-binding cursor): planning
them again on every move was about half of PostgreSQL's CPU per move. Their JSON columns are
encoded and decoded with orjson (``apps.core.wire``).

Everything else stays in the ORM; only the move path comes here.
"""

from __future__ import annotations

import datetime
import functools
from collections.abc import Sequence
from typing import Any

from django.contrib.auth import get_user_model
from django.db import DEFAULT_DB_ALIAS, connections, models
from django.db.models import JSONField, Model, signals
from django.db.models.base import ModelState
from django.utils import timezone

from apps.core import wire

from .models import Match, Move, Seat, Table, TableEvent


def _connection():
    return connections[DEFAULT_DB_ALIAS]


@functools.cache
def _quote(name: str) -> str:
    # Once per name: the version's statement is composed on every move, and each lookup of
    # the connection goes through asgiref's Local (a third of that statement's composing).
    return _connection().ops.quote_name(name)


def _plain_json(field: Any) -> bool:
    """A JSON column with the standard encoder and decoder: read and written with orjson
    here (the position, the events and the rules are a move's largest values; the standard
    library's json took 8% of a web process's CPU on them)."""
    return isinstance(field, JSONField) and field.encoder is None and field.decoder is None


def _json_from_db(value: Any, expression: Any, connection: Any) -> Any:
    # JSONField.from_db_value, for a whole column: text from the database, or None.
    if not isinstance(value, (str, bytes)):
        return value
    try:
        return wire.loads(value)
    except wire.JSONDecodeError:
        return value


def _json_to_db(value: Any, connection: Any) -> Any:
    # JSONField.get_db_prep_save with orjson's encoding (``adapt_json_value`` takes the
    # encoding function on PostgreSQL; elsewhere the column holds the text).
    if value is None:
        return None
    if connection.vendor == "postgresql":
        from psycopg.types.json import Jsonb

        return Jsonb(value, dumps=wire.dumps)
    return wire.dumps(value)


class _Shape:
    """One model's columns in a SELECT under ``alias``, and how its slice of a row becomes an
    instance."""

    def __init__(self, model: type[Model], alias: str) -> None:
        conn = _connection()
        self.model = model
        self.fields = list(model._meta.concrete_fields)
        self.names = [f.attname for f in self.fields]
        self.columns = ", ".join(f"{_quote(alias)}.{_quote(f.column)}" for f in self.fields)
        # Only the columns that have converters (on PostgreSQL, the JSON ones): the rest are
        # taken as the driver gives them, as the ORM takes them.
        self.converting: list[tuple[int, list[tuple[Any, Any]]]] = []
        for index, field in enumerate(self.fields):
            col = field.get_col(alias)
            found = conn.ops.get_db_converters(col) + field.get_db_converters(conn)
            if _plain_json(field):
                found = [_json_from_db if fn == field.from_db_value else fn for fn in found]
            if found:
                self.converting.append((index, [(fn, col) for fn in found]))
        # ``Model.from_db`` is ``cls(*values)``: a call per field through the descriptors, and
        # the pre_init and post_init signals; 8-14 us an instance against 2-3 us for what it
        # leaves behind, built here (fourteen instances a move: a tenth of a move's CPU in
        # the process that applies it). Only where nothing could tell the difference: no
        # model of its own ``from_db`` or ``__init__``, no receiver of those signals.
        self.direct = (model.from_db.__func__ is Model.from_db.__func__
                       and model.__init__ is Model.__init__
                       and not signals.pre_init.has_listeners(model)
                       and not signals.post_init.has_listeners(model))

    def __len__(self) -> int:
        return len(self.fields)

    def make(self, values: Sequence[Any]) -> Model:
        if self.converting:
            values = list(values)
            conn = _connection()
            for index, converters in self.converting:
                value = values[index]
                for fn, col in converters:
                    value = fn(value, col, conn)
                values[index] = value
        if not self.direct:
            return self.model.from_db(DEFAULT_DB_ALIAS, self.names, values)
        instance = self.model.__new__(self.model)
        state = ModelState()
        state.adding, state.db = False, DEFAULT_DB_ALIAS
        # What Model.__init__ leaves for positional values: each field's attname (a foreign
        # key's ``*_id``) in the instance's dict, nothing cached yet.
        instance.__dict__.update(zip(self.names, values, strict=True))
        instance._state = state
        return instance


@functools.cache
def _shape(model: type[Model], alias: str) -> _Shape:
    return _Shape(model, alias)


def _table_name(model: type[Model]) -> str:
    return _quote(model._meta.db_table)


@functools.cache
def _prepared_cursor_class(*, logged: bool) -> type:
    """A psycopg cursor that binds its parameters on the server and prepares every statement
    (psycopg keeps a connection's prepared statements keyed by the SQL and the parameters'
    types). Django's own cursors bind on the client and never prepare, so PostgreSQL planned
    each of a move's statements again on every move: about half of its CPU per move at 600
    tables (pg_stat_statements), and the client-side quoting a tenth of a web process's."""
    if logged:
        class LoggedPreparedCursor(_prepared_cursor_class(logged=False)):
            # psycopg leaves a prepared execution's query unrecorded, where Django's query log
            # (DEBUG, the tests' query counts) reads it back: put it there.
            def execute(self, query, params=None, *, prepare=None, binary=None):
                done = super().execute(query, params, binary=binary)
                self._query = self._convert_query(query, params)
                return done

        return LoggedPreparedCursor

    from django.db.backends.postgresql.base import ServerBindingCursor

    class PreparedCursor(ServerBindingCursor):
        # Prepared at once (the connection's prepare_threshold must be set: None, Django's
        # default, turns preparing off altogether): these run on every move.
        def execute(self, query, params=None, *, prepare=None, binary=None):
            return super().execute(query, params, prepare=True, binary=binary)

    return PreparedCursor


def _same_time_zone(conn, cursor) -> None:
    # As the backend's create_cursor: times read in the connection's zone, should the
    # setting have changed since the connection was made.
    from django.db.backends.postgresql.psycopg_any import register_tzloader
    from psycopg import adapters
    from psycopg.pq import Format

    oid = adapters.types["timestamptz"].oid
    if conn.timezone is datetime.UTC \
            and conn.connection.pgconn.parameter_status(b"TimeZone") == b"UTC":
        # Django's loader parses each time in Python (2 us) and then sets the zone; psycopg's
        # own (in C, with the binary package) gives the very same aware datetime when the
        # session is in UTC, as Django keeps it: thirteen of them are read on every move.
        cursor.adapters.register_loader(oid, adapters.get_loader(oid, Format.TEXT))
        return
    loader = conn.connection.adapters.get_loader(oid, Format.TEXT)
    if conn.timezone != loader.timezone:
        register_tzloader(conn.timezone, cursor)


def _cursor():
    """Django's cursor (its wrapper: errors translated, queries counted in tests and under
    DEBUG) around a preparing cursor on PostgreSQL; Django's own elsewhere."""
    conn = _connection()
    if conn.vendor != "postgresql":
        return conn.cursor()
    # What BaseDatabaseWrapper.cursor() does before it makes a cursor.
    conn.close_if_health_check_failed()
    conn.ensure_connection()
    conn.validate_thread_sharing()
    with conn.wrap_database_errors:
        raw = _prepared_cursor_class(logged=conn.queries_logged)(conn.connection)
    _same_time_zone(conn, raw)
    return conn.make_debug_cursor(raw) if conn.queries_logged else conn.make_cursor(raw)


def _fetch(sql: str, params: list) -> list[tuple]:
    with _cursor() as cursor:
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
    ``select_related("user__profile")`` leaves them, except that a profile does not point back
    at its person (see below)."""
    return _seats_from(_fetch(_seats_query().sql, [table_id]))


def _seats_from(rows: list[tuple]) -> list[Seat]:
    query = _seats_query()
    a = len(query.seat)
    b = a + len(query.user)
    seats = []
    for row in rows:
        seat = query.seat.make(row[:a])
        user = None
        if seat.user_id is not None:
            user = query.user.make(row[a:b])
            profile = query.profile.make(row[b:]) if row[b] is not None else None
            # One way only: ``profile.user`` cached too would make each pair a reference cycle,
            # which only the cyclic collector frees, four per move: work for the collector
            # whose passes paused a web process 110-340 ms (nothing reads ``profile.user``).
            query.profile_rel.set_cached_value(user, profile)
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


#: Django's fields whose ``get_db_prep_save`` gives back, on PostgreSQL, a value of this exact
#: Python type as it is, or (integers) wrapped in the column's psycopg type.
_PLAIN = {
    models.AutoField: int, models.BigAutoField: int, models.SmallAutoField: int,
    models.IntegerField: int, models.BigIntegerField: int, models.SmallIntegerField: int,
    models.PositiveIntegerField: int, models.PositiveBigIntegerField: int,
    models.PositiveSmallIntegerField: int,
    models.CharField: str, models.TextField: str, models.BooleanField: bool,
    models.DateTimeField: datetime.datetime,
}


@functools.cache
def _plain(field: Any) -> tuple[type, Any] | None:
    """For a column whose values of one Python type Django writes unchanged (or, integers,
    in the column's psycopg type): that type, and the wrapping. None: always ask Django.
    Exact classes only: a subclass may prepare its values its own way."""
    conn = _connection()
    if conn.vendor != "postgresql":
        return None  # SQLite stores times and booleans its own way
    if isinstance(field, models.ForeignKey):
        return _plain(field.target_field)
    kind = _PLAIN.get(type(field))
    if kind is int:
        # Auto fields are written as plain ints, the others in their column's psycopg type.
        return int, getattr(conn.ops, "integerfield_type_map", {}).get(field.get_internal_type())
    return None if kind is None else (kind, None)


def _db_value(field: Any, value: Any, conn: Any) -> Any:
    # A move writes some twenty values; Django's preparing of each (to_python, the naive time
    # check, the backend's adapting) was a tenth of the version's statement.
    if value is None:
        return None
    plain = _plain(field)
    if plain is None or type(value) is not plain[0] \
            or (plain[0] is datetime.datetime and value.tzinfo is None):
        return field.get_db_prep_save(value, conn)
    return value if plain[1] is None else plain[1](value)


def _prepared(model: type[Model], values: dict[str, Any]) -> tuple[list[str], list[Any]]:
    conn = _connection()
    columns, params = [], []
    for name, value in values.items():
        field = model._meta.get_field(name)
        columns.append(_quote(field.column))
        if _plain_json(field):
            params.append(_json_to_db(value, conn))
        else:
            params.append(_db_value(field, value, conn))
    return columns, params


def _row(model: type[Model], values: dict[str, Any]) -> dict[str, Any]:
    """Every column of a new row of ``model``: the fields given, every other one at its
    default (the primary key from the database)."""
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
    return row


def insert(model: type[Model], **values: Any) -> None:
    """INSERT one row of ``model``: the fields given, every other one at its default (the
    primary key from the database). No signals are sent: these models have no receivers."""
    columns, params = _prepared(model, _row(model, values))
    sql = (f"INSERT INTO {_table_name(model)} ({', '.join(columns)}) "
           f"VALUES ({', '.join(['%s'] * len(params))})")
    with _cursor() as cursor:
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
    with _cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


# -- a move's reads and writes, each in one round trip ------------------------------------------

def locked_for_move(table_id: int) -> tuple[Table | None, list[Seat], Match | None]:
    """The table's row locked, its seats with their people and its current match: what every
    move reads. On PostgreSQL the three go in one round trip (psycopg's pipeline: sent at once,
    run in that order, so the seats and the match are read after the lock is held)."""
    conn = _connection()
    query = _seats_query()
    statements = [(_locked_table_sql(), [table_id]), (query.sql, [table_id]),
                  (_current_match_sql(), [table_id])]
    if conn.vendor == "postgresql":
        # The cursors first: making the first one runs the connection's health check, which
        # must not run inside the pipeline.
        cursors = [_cursor() for _statement in statements]
        try:
            with conn.wrap_database_errors, conn.connection.pipeline():
                for cursor, (sql, params) in zip(cursors, statements, strict=True):
                    cursor.execute(sql, params)
            results = [cursor.fetchall() for cursor in cursors]
        finally:
            for cursor in cursors:
                cursor.close()
    else:
        results = [_fetch(sql, params) for sql, params in statements]
    table_rows, seat_rows, match_rows = results
    if not table_rows:
        return None, [], None
    match = _shape(Match, "m").make(match_rows[0]) if match_rows else None
    return _shape(Table, "t").make(table_rows[0]), _seats_from(seat_rows), match


def write_version(table_id: int, *, old: int, table: dict[str, Any], event: dict[str, Any],
                  moves: list[dict[str, Any]], position: tuple[int, dict] | None) -> bool:
    """A version's writes: the table's row moved from version ``old`` (only if it is still
    there), the moves made since the lock, the version's events and the engine's position.
    False, and nothing written, when the table had moved on. On PostgreSQL one statement (a
    WITH of data-modifying statements, each conditioned on the table's UPDATE), where the ORM
    took four round trips."""
    if _connection().vendor != "postgresql":
        if update(Table, table_id, where={"version": old}, **table) != 1:
            return False
        for move in moves:
            insert(Move, **move)
        insert(TableEvent, **event)
        if position is not None:
            update(Match, position[0], position=position[1])
        return True
    sql, params = _version_statement(table_id, old, table, event, moves, position)
    return _fetch(sql, params)[0][0] == 1


def _version_statement(table_id: int, old: int, table: dict[str, Any], event: dict[str, Any],
                       moves: list[dict[str, Any]], position: tuple[int, dict] | None
                       ) -> tuple[str, list[Any]]:
    q = _quote
    columns, params = _prepared(Table, table)
    parts = [f"v AS (UPDATE {_table_name(Table)} SET {', '.join(c + ' = %s' for c in columns)} "
             f"WHERE {q('id')} = %s AND {q('version')} = %s RETURNING {q('id')})"]
    params += [table_id, old]
    for k, values in enumerate([*moves, event]):
        model = Move if k < len(moves) else TableEvent
        row_columns, row_params = _prepared(model, _row(model, dict(values)))
        # INSERT ... SELECT ... FROM v: written only where the table's UPDATE was; the
        # parameters take their types from the columns they go to.
        parts.append(f"w{k} AS (INSERT INTO {_table_name(model)} ({', '.join(row_columns)}) "
                     f"SELECT {', '.join(['%s'] * len(row_params))} FROM v)")
        params += row_params
    if position is not None:
        match_columns, match_params = _prepared(Match, {"position": position[1]})
        parts.append(f"p AS (UPDATE {_table_name(Match)} SET {match_columns[0]} = %s "
                     f"WHERE {q('id')} = %s AND EXISTS (SELECT 1 FROM v))")
        params += [*match_params, position[0]]
    return f"WITH {', '.join(parts)} SELECT count(*) FROM v", params
