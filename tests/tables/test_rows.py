"""The move path's SQL (apps/tables/rows.py) reads and writes exactly what the ORM does."""

from __future__ import annotations

import gc
import weakref
from datetime import datetime, timedelta

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.tables import rows, services
from apps.tables.models import Match, Move, Seat, Table, TableEvent

pytestmark = pytest.mark.django_db


def fields_of(obj) -> dict:
    return {f.attname: getattr(obj, f.attname) for f in type(obj)._meta.concrete_fields}


@pytest.fixture
def playing(full_table, people) -> Table:
    services.start_match(user=people["host"], table_id=full_table.pk)
    Table.objects.filter(pk=full_table.pk).update(paused_at=timezone.now(), name="Sala ñ")
    return Table.objects.get(pk=full_table.pk)


def test_the_locked_table_is_the_orm_s_row(playing):
    with transaction.atomic():
        got = rows.locked_table(playing.pk)
    assert fields_of(got) == fields_of(Table.objects.get(pk=playing.pk))
    assert isinstance(got.options, dict) and got.state == Table.State.PLAYING
    assert got._state.adding is False and got._state.db == "default"
    assert rows.locked_table(10**9) is None


def test_instances_built_without_from_db_are_what_from_db_builds(playing):
    orm = Table.objects.get(pk=playing.pk)
    with transaction.atomic():
        got = rows.locked_table(playing.pk)
    assert rows._shape(Table, "t").direct  # the fast way is the one these tests exercise
    assert got.__dict__.keys() == orm.__dict__.keys()
    assert {k: v for k, v in vars(got).items() if k != "_state"} == \
        {k: v for k, v in vars(orm).items() if k != "_state"}
    assert got == orm and hash(got) == hash(orm)
    assert got.created_at.tzinfo is orm.created_at.tzinfo  # the same zone object as Django's
    assert got.host == orm.host  # a relation is read when first asked for, as the ORM's
    got.name = "Mesa 2"
    got.save(update_fields=["name"])
    assert Table.objects.get(pk=playing.pk).name == "Mesa 2"


def test_a_model_with_init_receivers_is_built_by_from_db(playing):
    """Somebody listening to post_init (an image field's dimensions, an audit app) is called
    for every instance, as the ORM would call it."""
    from django.db.models.signals import post_init

    seen = []

    def heard(sender, instance, **kwargs):
        seen.append(instance.pk)

    post_init.connect(heard, sender=Table)
    try:
        shape = rows._Shape(Table, "t")
        assert not shape.direct
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(rows._locked_table_sql(), [playing.pk])
            got = shape.make(cursor.fetchall()[0])
    finally:
        post_init.disconnect(heard, sender=Table)
    assert seen == [playing.pk] and fields_of(got) == fields_of(playing)
    assert rows._Shape(Table, "t").direct


def test_seats_come_with_their_people_and_profiles_as_select_related_leaves_them(playing,
                                                                                  people):
    Seat.objects.filter(table=playing, index=3).update(user=None, is_bot=True,
                                                       bot_level="hard")
    people["ana"].profile.display_name = "Aninha"
    people["ana"].profile.save()
    expected = list(Seat.objects.filter(table=playing).select_related("user__profile")
                    .order_by("index"))
    with CaptureQueriesContext(connection) as queries:
        got = rows.seats_with_people(playing.pk)
        names = [(s.user.profile.display_name, s.user.username) if s.user else None
                 for s in got]
    assert len(queries) == 1  # people and profiles came with the seats
    assert [fields_of(s) for s in got] == [fields_of(s) for s in expected]
    assert [fields_of(s.user) if s.user else None for s in got] == \
        [fields_of(s.user) if s.user else None for s in expected]
    assert names == [(s.user.profile.display_name, s.user.username) if s.user else None
                     for s in expected]
    assert "Aninha" in [n[0] for n in names if n]


def test_seats_read_for_a_move_are_freed_without_the_cyclic_collector(playing):
    """Each move reads its seats' people: were a person and their profile to point at each other,
    every move would leave reference cycles for the collector, whose full passes stall a web
    process for a tenth of a second and more."""
    gc.collect()
    gc.disable()
    try:
        seats = rows.seats_with_people(playing.pk)
        people = [weakref.ref(s.user) for s in seats if s.user is not None]
        profiles = [weakref.ref(s.user.profile) for s in seats if s.user is not None]
        assert people and all(p() is not None for p in profiles)
        del seats
        assert [p() for p in people + profiles] == [None] * (2 * len(people))
    finally:
        gc.enable()


def test_the_current_match_is_the_latest(playing):
    first = Match.objects.get(table=playing)
    Match.objects.create(table=playing, number=first.number + 1, rules=first.rules,
                         players=first.players, position={"round_id": 1, "engine": {}})
    got = rows.current_match(playing.pk)
    assert fields_of(got) == fields_of(playing.current_match)
    assert got.number == first.number + 1 and got.position == {"round_id": 1, "engine": {}}


def test_insert_and_update_write_what_the_orm_reads_back(playing, people):
    rnd = Match.objects.get(table=playing).rounds.get(number=0)
    now = timezone.now()
    rows.insert(Move, round_id=rnd.pk, ply=90, seat=2, tile="6-6", end="A", by=Move.By.TABLE,
                user_id=people["bea"].pk, due_at=now - timedelta(seconds=1), created_at=now)
    move = Move.objects.get(round=rnd, ply=90)
    assert (move.seat, move.tile, move.end, move.is_pass, move.by, move.user, move.due_at,
            move.created_at) == (2, "6-6", "A", False, "table", people["bea"],
                                 now - timedelta(seconds=1), now)
    events = [{"kind": "move", "ply": 90, "play": "6-6", "name": "Sala ñ"}]
    rows.insert(TableEvent, table=playing, version=999, events=events, created_at=now)
    assert TableEvent.objects.get(table=playing, version=999).events == events
    with pytest.raises(TypeError):
        rows.insert(TableEvent, table=playing, version=1000, colour="red")
    old = playing.version
    assert rows.update(Table, playing.pk, where={"version": old + 5}, version=old + 6) == 0
    assert rows.update(Table, playing.pk, where={"version": old}, version=old + 1,
                       turn_deadline=None, updated_at=now) == 1
    table = Table.objects.get(pk=playing.pk)
    assert (table.version, table.turn_deadline, table.updated_at) == (old + 1, None, now)
    position = {"round_id": rnd.pk, "engine": {"totals": [1, 2], "over": False}}
    assert rows.update(Match, rnd.match_id, position=position) == 1
    assert Match.objects.get(pk=rnd.match_id).position == position


def test_json_columns_round_trip_as_the_orm_writes_and_reads_them(playing):
    """The move path's JSON columns go through orjson (``apps.core.wire``): the same values
    come back through the ORM and through ``rows``, and None is SQL NULL as in the ORM."""
    match = Match.objects.get(table=playing)
    position = {"round_id": 7, "engine": {"hands": [["6-6", "5-4"], []], "name": "João ñ 🂓",
                                          "ends": None, "big": 2**40, "ratio": 0.5}}
    assert rows.update(Match, match.pk, position=position) == 1
    assert Match.objects.get(pk=match.pk).position == position
    assert rows.current_match(playing.pk).position == position
    Match.objects.filter(pk=match.pk).update(position={"from": "the ORM", "n": [1, "ç"]})
    assert rows.current_match(playing.pk).position == {"from": "the ORM", "n": [1, "ç"]}
    assert rows.update(Match, match.pk, position=None) == 1
    assert Match.objects.filter(pk=match.pk, position__isnull=True).exists()
    assert rows.current_match(playing.pk).position is None


@pytest.mark.postgres
def test_the_move_path_s_statements_are_prepared_once_per_connection(playing):
    """PostgreSQL plans a prepared statement once per connection, not on every move."""
    with transaction.atomic():
        for _ in range(3):
            assert rows.locked_table(playing.pk).pk == playing.pk
            assert len(rows.seats_with_people(playing.pk)) == 4
        with connection.cursor() as cursor:
            cursor.execute("SELECT statement FROM pg_prepared_statements")
            prepared = [row[0] for row in cursor.fetchall()]
    assert any("FOR UPDATE" in sql and '"t"."id" = $1' in sql for sql in prepared), prepared
    assert sum('FROM "tables_seat"' in sql for sql in prepared) == 1, prepared


@pytest.mark.postgres
def test_prepared_reads_count_as_queries_and_keep_the_time_zone(playing):
    with CaptureQueriesContext(connection) as seen:
        table = rows.locked_table(playing.pk)
    assert len(seen.captured_queries) == 1
    assert "FOR UPDATE" in seen.captured_queries[0]["sql"]
    assert table.created_at == Table.objects.get(pk=playing.pk).created_at
    assert table.created_at.utcoffset() == timedelta(0)


@pytest.mark.postgres
def test_times_are_read_by_psycopg_s_own_loader_when_the_session_is_in_utc(playing):
    """Django's loader parses in Python; where the session is in UTC psycopg's own gives the
    same aware datetime, and the move path's cursors take it."""
    import psycopg
    from psycopg.pq import Format

    oid = psycopg.adapters.types["timestamptz"].oid
    with rows._cursor() as cursor:
        loader = cursor.cursor.adapters.get_loader(oid, Format.TEXT)
    assert loader is psycopg.adapters.get_loader(oid, Format.TEXT)
    with connection.cursor() as cursor:
        cursor.execute("SET TIME ZONE 'America/Sao_Paulo'")
    try:
        with rows._cursor() as cursor:  # another zone: Django's loader, in the setting's zone
            assert cursor.cursor.adapters.get_loader(oid, Format.TEXT) is not \
                psycopg.adapters.get_loader(oid, Format.TEXT)
        table = rows.locked_table(playing.pk)
        assert table.created_at == Table.objects.get(pk=playing.pk).created_at
        assert table.created_at.utcoffset() == timedelta(0)
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SET TIME ZONE 'UTC'")


def test_a_moves_reads_come_together_as_their_own_statements_give_them(playing):
    """``locked_for_move``: the locked row, the seats with their people and the current match,
    in one round trip on PostgreSQL, the same as the three statements read them."""
    with transaction.atomic():
        table, seats, match = rows.locked_for_move(playing.pk)
        alone = rows.locked_table(playing.pk), rows.seats_with_people(playing.pk)
    assert fields_of(table) == fields_of(alone[0])
    assert [fields_of(s) for s in seats] == [fields_of(s) for s in alone[1]]
    assert [fields_of(s.user) for s in seats] == [fields_of(s.user) for s in alone[1]]
    assert fields_of(match) == fields_of(rows.current_match(playing.pk))
    with transaction.atomic():
        assert rows.locked_for_move(10**9) == (None, [], None)


def test_a_versions_writes_go_together_or_not_at_all(playing):
    """``write_version``: the table moved to the next version, the moves, the version's events
    and the engine's position, all of them only when the table is still at ``old``."""
    table, match = Table.objects.get(pk=playing.pk), Match.objects.get(table=playing)
    rnd = match.rounds.get(number=0)
    now = timezone.now()
    move = {"round_id": rnd.pk, "ply": 0, "seat": 0, "tile": "6-6", "end": "", "is_pass": False,
            "by": "player", "user_id": table.host_id, "due_at": None, "created_at": now}
    passed = dict(move, ply=1, seat=1, tile="", is_pass=True, by="table", user_id=None)
    event = {"table_id": table.pk, "version": table.version + 1, "events": [{"kind": "move"}],
             "created_at": now}
    position = {"round_id": rnd.pk, "engine": {"marker": "ñ"}}
    fields = {"version": table.version + 1, "updated_at": now, "turn_started_at": now,
              "turn_deadline": now + timedelta(seconds=45)}
    counts = (Move.objects.count(), TableEvent.objects.count())
    with transaction.atomic():
        assert rows.write_version(table.pk, old=table.version - 1, table=fields, event=event,
                                  moves=[move, passed], position=(match.pk, position)) is False
    assert (Move.objects.count(), TableEvent.objects.count()) == counts
    assert Table.objects.get(pk=table.pk).version == table.version
    assert Match.objects.get(pk=match.pk).position != position
    with transaction.atomic():
        assert rows.write_version(table.pk, old=table.version, table=fields, event=event,
                                  moves=[move, passed], position=(match.pk, position)) is True
    written = list(Move.objects.filter(round=rnd).order_by("ply").values_list(
        "ply", "seat", "tile", "is_pass", "by", "user_id"))
    assert written == [(0, 0, "6-6", False, "player", table.host_id),
                       (1, 1, "", True, "table", None)]
    assert TableEvent.objects.get(table=table, version=table.version + 1).events == [
        {"kind": "move"}]
    again = Table.objects.get(pk=table.pk)
    assert (again.version, again.turn_deadline) == (table.version + 1, fields["turn_deadline"])
    assert Match.objects.get(pk=match.pk).position == position



@pytest.mark.postgres
def test_values_written_as_they_are_are_what_django_would_write():
    """``_db_value`` skips Django's preparing only where it would give the value back as it
    is: for every column the move path writes, on values of every kind, the same value of
    the same type, or the same refusal."""
    import warnings
    from decimal import Decimal
    from enum import StrEnum

    class Word(StrEnum):
        A = "a"

    now = timezone.now()
    values = [None, 0, 7, -3, 2**40, "", "6-6", "ç", True, False, now, now.replace(tzinfo=None),
              now.astimezone(timezone.get_fixed_timezone(-180)), Move.By.PLAYER, Word.A,
              Decimal("2"), 2.5, "12"]
    checked = 0
    for model in (Table, Move, TableEvent, Match, Seat):
        for field in model._meta.concrete_fields:
            if rows._plain_json(field):
                continue
            for value in values:
                outcomes = []
                for prepare in (rows._db_value,
                                lambda f, v, c: f.get_db_prep_save(v, c)):
                    try:
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            got = prepare(field, value, connection)
                        outcomes.append(("value", got, type(got)))
                    except Exception as err:  # noqa: BLE001 - the same refusal is the point
                        outcomes.append(("error", type(err)))
                assert outcomes[0] == outcomes[1], (model.__name__, field.name, value)
                checked += 1
    assert checked > 500
    assert rows._plain(Move._meta.get_field("ply"))[0] is int  # the fast way is taken at all
    assert rows._plain(Move._meta.get_field("user"))[0] is int
    assert rows._plain(Table._meta.get_field("turn_deadline")) == (datetime, None)
