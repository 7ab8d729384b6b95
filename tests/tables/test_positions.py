"""The moves are the truth: every table, rebuilt from its moves, is where its saved position
says; and a move never replays the round (``Match.position`` is played on)."""

from __future__ import annotations

import random

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from apps.rules.engine import legal_dict
from apps.tables import game, services
from apps.tables.management.commands.check_positions import mismatches
from apps.tables.models import Match, Table

SETUPS = [("partners", 4, {}), ("partners-66", 4, {}), ("draw", 3, {}), ("block", 4, {}),
          ("all-fives", 2, {}), ("tranca", 4, {"hand_size": 5}),
          ("pairs-series", 4, {"best_of": 3, "target": 50})]


def _play(table: Table, rng: random.Random, moves: int) -> None:
    for _ in range(moves):
        table.refresh_from_db()
        match = table.current_match
        engine = game.restore(match)
        if engine.over:
            services.new_match(user=table.host, table_id=table.pk)
            continue
        rnd = engine.current
        if rnd is None:
            services.next_round(user=table.host, table_id=table.pk)
            continue
        move = legal_dict(*rng.choice(rnd.legal()))
        services.play_move(user=table.seats.get(index=rnd.turn).user, table_id=table.pk,
                           round_number=len(engine.rounds) - 1, ply=len(rnd.history),
                           tile=move.get("play"), end=move.get("end"),
                           is_pass=bool(move.get("pass")))


@pytest.fixture
def tables(make_user):
    users = [make_user(f"p{i}") for i in range(4)]
    out = []
    for preset, players, options in SETUPS:
        table = services.create_table(host=users[0], preset=preset, players=players,
                                      options={"turn_seconds": None, **options})
        for user in users[1:players]:
            services.join_table(user=user, table_id=table.pk, code=table.code)
        services.start_match(user=users[0], table_id=table.pk)
        out.append(Table.objects.get(pk=table.pk))
    return out


def test_every_table_rebuilt_from_its_moves_is_where_its_position_says(tables):
    rng = random.Random(11)
    for table in tables:
        _play(table, rng, moves=120)  # several rounds, and matches over in the short ones
    assert Match.objects.filter(table__in=tables).count() >= len(tables)
    assert mismatches(Match.objects.filter(table__in=tables)) == []
    call_command("check_positions")


def test_a_wrong_position_is_found_and_repaired(tables):
    table = tables[0]
    _play(table, random.Random(3), moves=5)
    match = table.current_match
    match.position["engine"]["last"]["hands"][0] = []
    match.save(update_fields=["position"])
    assert mismatches([match]) == [match]
    with pytest.raises(CommandError):
        call_command("check_positions")
    call_command("check_positions", "--repair")
    assert mismatches(Match.objects.filter(pk=match.pk)) == []


def test_a_move_plays_on_from_the_position_without_replaying(tables, monkeypatch):
    from apps.rules import harness

    def no_replay(*args, **kwargs):
        raise AssertionError("a move replayed the match")

    monkeypatch.setattr(harness, "load", no_replay)
    _play(tables[1], random.Random(5), moves=40)  # through a round's end and the next deal
    from apps.tables.selectors import table_state

    assert table_state(table_id=tables[1].pk, user=tables[1].host)["view"] is not None
