"""The record through the real table services: a match started, finished, left mid-round,
left between rounds, away until a stand-in, closed by staff or emptied; practice and bots
alone count for nothing; a version replayed counts once (docs/fairplay.md)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from apps.core.errors import ServiceError
from apps.fairplay import record
from apps.fairplay.models import Record, Stint
from apps.tables import hooks, services
from apps.tables.models import Table, TableEvent

from .conftest import block_table, counts, finish_match, finish_round, play_one, stint_states


def test_a_match_played_to_its_end_is_finished_by_everyone_seated(people):
    table = block_table(people)
    assert stint_states(table) == {"host": "playing", "ana": "playing", "bea": "playing"}
    assert counts(people["ana"]) == (1, 0, 0)
    finish_match(table)
    assert stint_states(table) == {"host": "finished", "ana": "finished", "bea": "finished"}
    for name in ("host", "ana", "bea"):
        assert counts(people[name]) == (1, 1, 0), name
    assert counts(people["outsider"]) == (0, 0, 0)


def test_leaving_during_a_round_counts_against_the_leaver_alone(people):
    import random

    table = block_table(people)
    play_one(table, random.Random(3))
    services.leave_table(user=people["ana"], table_id=table.pk)
    assert table.seats.get(index=1).leaving
    assert counts(people["ana"]) == (1, 0, 1)
    record_row = Record.objects.get(user=people["ana"])
    assert len(record_row.abandoned_at) == 1
    finish_match(table)  # the bot plays ana's hand out; her seat frees at the round's end
    assert stint_states(table) == {"host": "finished", "ana": "abandoned", "bea": "finished"}
    assert counts(people["ana"]) == (1, 0, 1)  # the "left" at the round's end: not twice
    assert counts(people["bea"]) == (1, 1, 0)


def test_away_until_a_stand_in_counts_against_even_when_they_come_back(people):
    table = block_table(people)
    later = timezone.now() + timedelta(minutes=3)  # nobody holds a socket: all are away
    services.stand_in(table_id=table.pk, seat_index=2, now=later)
    assert counts(people["bea"]) == (1, 0, 1)
    services.connect(user=people["bea"], table_id=table.pk, channel_name="test-bea")
    finish_match(table)
    assert stint_states(table)["bea"] == "abandoned"
    assert counts(people["bea"]) == (1, 0, 1)
    assert counts(people["host"]) == (1, 1, 0)


def test_leaving_between_rounds_counts_and_a_newcomer_starts_the_match(people):
    table = block_table(people, target=1000)
    finish_round(table)
    assert table.current_match.finished_at is None
    services.leave_table(user=people["ana"], table_id=table.pk)  # no round on: left at once
    assert table.seats.get(index=1).user is None
    assert counts(people["ana"]) == (1, 0, 1)
    services.join_table(user=people["outsider"], table_id=table.pk)
    assert stint_states(table)["outsider"] == "playing"
    assert counts(people["outsider"]) == (1, 0, 0)
    # Ana sitting down again does not start the same match a second time.
    services.leave_table(user=people["outsider"], table_id=table.pk)
    services.join_table(user=people["ana"], table_id=table.pk)
    assert counts(people["ana"]) == (1, 0, 1)
    assert stint_states(table)["ana"] == "abandoned"


def test_a_table_closed_by_staff_counts_neither_way(people):
    table = block_table(people, target=1000)
    services.leave_table(user=people["ana"], table_id=table.pk)
    services.close_by_staff(table_id=table.pk, reason="abuse")
    assert stint_states(table) == {"host": "void", "ana": "abandoned", "bea": "void"}
    assert counts(people["host"]) == (1, 0, 0)
    assert counts(people["ana"]) == (1, 0, 1)  # what happened before the closing stays


def test_a_table_nobody_is_left_at_counts_neither_way(people):
    table = block_table(people, target=1000)
    finish_round(table)  # between rounds: nobody's hand for a bot to take
    now = timezone.now()
    Table.objects.filter(pk=table.pk).update(empty_since=now - timedelta(minutes=5))
    services.close_empty(table_id=table.pk, now=now)
    assert set(stint_states(table).values()) == {"void"}
    assert Stint.objects.get(user=people["host"]).how == "closed"
    assert counts(people["bea"]) == (1, 0, 0)


def test_staff_removing_a_player_counts_neither_way(people):
    table = block_table(people)
    services.remove_seated_player(table_id=table.pk, seat_index=1)
    assert stint_states(table)["ana"] == "void"
    assert counts(people["ana"]) == (1, 0, 0)


def test_taking_a_reserved_seat_mid_match_starts_it(people):
    table = services.create_table(host=people["host"], preset="block", players=3, public=True,
                                  allow_bots=True,
                                  options={"turn_seconds": None, "target": 1000})
    services.join_table(user=people["ana"], table_id=table.pk)
    services.add_bot(user=people["host"], table_id=table.pk)
    services.start_match(user=people["host"], table_id=table.pk)
    services.join_table(user=people["outsider"], table_id=table.pk)  # reserves the bot's seat
    assert "outsider" not in stint_states(table)
    finish_round(table)
    assert table.seats.get(index=2).user == people["outsider"]
    assert stint_states(table)["outsider"] == "playing"
    assert counts(people["outsider"]) == (1, 0, 0)


def test_practice_and_bots_alone_count_for_nothing(people):
    practice = services.open_practice(user=people["dani"], preset="block", players=2)
    finish_match(practice)
    assert counts(people["dani"]) == (0, 0, 0)
    alone = services.create_table(host=people["caio"], preset="block", players=2,
                                  allow_bots=True, options={"turn_seconds": None, "target": 1})
    services.add_bot(user=people["caio"], table_id=alone.pk)
    services.start_match(user=people["caio"], table_id=alone.pk)
    # The host keeps their seat: away long enough, a bot takes his hand; nobody was let down.
    services.stand_in(table_id=alone.pk, seat_index=0,
                      now=timezone.now() + timedelta(minutes=3))
    assert counts(people["caio"]) == (0, 0, 0)
    assert not Stint.objects.filter(match__table=alone).exists()


def test_a_version_replayed_counts_once(people):
    table = block_table(people)
    finish_match(table)
    before = {n: counts(people[n]) for n in ("host", "ana", "bea")}
    table = Table.objects.get(pk=table.pk)
    seats = list(table.seats.select_related("user").order_by("index"))
    for version in TableEvent.objects.filter(table=table).order_by("version"):
        with transaction.atomic():
            record.table_changing(table=table, seats=seats, events=version.events,
                                  now=timezone.now())
    assert {n: counts(people[n]) for n in ("host", "ana", "bea")} == before
    assert Stint.objects.filter(match__table=table).count() == 3


def test_a_change_the_table_rolls_back_leaves_no_record(people):
    table = block_table(people, start=False)

    def refuse(*, events, **_kw):
        if any(e.get("kind") == "match_started" for e in events):
            raise ServiceError("not now", code="test")

    hooks.on_change("zz-test-refuser", refuse)  # registered after fair play: runs after it
    try:
        with pytest.raises(ServiceError):
            services.start_match(user=people["host"], table_id=table.pk)
    finally:
        hooks._changes.pop("zz-test-refuser")
    assert not Stint.objects.exists()
    assert counts(people["host"]) == (0, 0, 0)


def test_a_move_costs_the_hook_no_query(people, django_assert_num_queries):
    table = block_table(people)
    seats = list(table.seats.order_by("index"))
    events = [{"kind": "move", "ply": 3, "seat": 1, "play": "6-4", "end": "A", "by": "player"}]
    with django_assert_num_queries(0):
        for _ in range(100):
            record.table_changing(table=table, seats=seats, events=events, now=timezone.now())
