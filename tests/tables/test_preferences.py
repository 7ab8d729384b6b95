"""Per-person table preferences: auto-pass (passes for you when passing is your only move) and
learning mode, saved on the profile from the table page."""

from __future__ import annotations

from datetime import timedelta

import pytest

from apps.rules.engine import PASS_MOVE, legal_dict
from apps.tables import game, services
from apps.tables.models import Move, Table

from .conftest import play_random_move, seat_user

pytestmark = pytest.mark.django_db


def _play_until_a_pass_is_forced(table, rng):
    """Random moves until the seat to play can only pass; return that seat (or None)."""
    for _ in range(60):
        engine = game.load(Table.objects.get(pk=table.pk).current_match)
        rnd = engine.current
        if rnd is None:
            return None
        if rnd.legal() == [PASS_MOVE]:
            return rnd.turn
        play_random_move(table, rng)
    return None


def test_auto_pass_passes_for_a_person_who_turned_it_on(full_table, people):
    import random

    services.start_match(user=people["host"], table_id=full_table.pk)
    for seed in range(40):
        rng = random.Random(seed)
        seat = _play_until_a_pass_is_forced(full_table, rng)
        if seat is not None:
            break
        services.next_round(user=people["host"], table_id=full_table.pk)
    assert seat is not None
    user = seat_user(full_table, seat)
    before = Move.objects.filter(is_pass=True).count()
    # Turning it on while the pass is the only move passes at once.
    services.set_preferences(user=user, table_id=full_table.pk, auto_pass=True)
    user.profile.refresh_from_db()
    assert user.profile.auto_pass
    passes = Move.objects.filter(is_pass=True).order_by("-pk")
    assert passes.count() > before
    assert passes.first().seat == seat or passes.filter(seat=seat).exists()
    engine = game.load(Table.objects.get(pk=full_table.pk).current_match)
    assert engine.rounds[-1].result is not None or engine.rounds[-1].turn != seat


def test_without_auto_pass_the_person_presses_pass(full_table, people):
    import random

    services.start_match(user=people["host"], table_id=full_table.pk)
    seat = _play_until_a_pass_is_forced(full_table, random.Random(3))
    if seat is None:
        pytest.skip("no forced pass in this deal")
    engine = game.load(Table.objects.get(pk=full_table.pk).current_match)
    assert engine.current.turn == seat  # the table waits for the Pass button


def test_learning_mode_is_saved(people):
    services.set_preferences(user=people["ana"], learning_mode=True)
    people["ana"].profile.refresh_from_db()
    assert people["ana"].profile.learning_mode and not people["ana"].profile.auto_pass


def test_preferences_endpoint(client, full_table, people):
    client.force_login(people["ana"])
    response = client.post(f"/t/{full_table.code}/preferences/", {"learning_mode": "1"})
    assert response.status_code == 200
    data = response.json()
    assert (data["ok"], data["auto_pass"], data["learning_mode"]) == (True, False, True)
    response = client.post(f"/t/{full_table.code}/preferences/", {"auto_pass": "true"})
    assert response.json()["auto_pass"] is True


def test_with_auto_pass_on_the_table_never_waits_on_a_forced_pass(full_table, people):
    import random

    for name in ("host", "ana", "bea", "caio"):
        services.set_preferences(user=people[name], auto_pass=True)
    services.start_match(user=people["host"], table_id=full_table.pk)
    rng = random.Random(11)
    passes = 0
    for _round in range(3):
        while True:
            engine = game.load(Table.objects.get(pk=full_table.pk).current_match)
            rnd = engine.current
            if rnd is None:
                break
            assert rnd.legal() != [PASS_MOVE]
            play_random_move(full_table, rng)
        passes = Move.objects.filter(is_pass=True, by=Move.By.PLAYER).count()
        if engine.over:
            break
        services.next_round(user=people["host"], table_id=full_table.pk)
    assert passes > 0


# -- seed 004's options: the page's own (size, speed, sounds, arranging) and play automatically --

def test_page_options_are_saved_and_answered(client, full_table, people):
    client.force_login(people["ana"])
    url = f"/t/{full_table.code}/preferences/"
    data = client.post(url, {"tile_size": "large", "game_speed": "fast", "sounds": "1",
                             "arrange_tiles": "0"}).json()
    assert data["ok"]
    assert (data["tile_size"], data["game_speed"], data["sounds"], data["arrange_tiles"]) == \
        ("large", "fast", True, False)
    profile = people["ana"].profile
    profile.refresh_from_db()
    assert (profile.tile_size, profile.game_speed, profile.sounds) == ("large", "fast", True)
    # A value outside the choices changes nothing and says why.
    response = client.post(url, {"tile_size": "huge"})
    assert response.status_code == 400 and response.json()["message"]
    profile.refresh_from_db()
    assert profile.tile_size == "large"


def test_sounds_are_off_and_tiles_arrangeable_for_a_new_person(people):
    profile = people["ana"].profile
    assert (profile.sounds, profile.auto_play, profile.arrange_tiles) == (False, False, True)
    assert (profile.tile_size, profile.game_speed) == ("medium", "normal")


def _turn_user(table):
    engine = game.load(Table.objects.get(pk=table.pk).current_match)
    return seat_user(table, engine.current.turn), engine


def test_turning_play_automatically_on_at_your_turn_plays_for_you_at_once(full_table, people):
    services.start_match(user=people["host"], table_id=full_table.pk)
    user, engine = _turn_user(full_table)
    first = legal_dict(*engine.current.legal()[0])
    services.set_preferences(user=user, table_id=full_table.pk, auto_play=True)
    move = Move.objects.order_by("-pk").first()
    assert move is not None and move.by == Move.By.TABLE
    assert move.tile == first["play"]  # the first tile that fits, as when time runs out
    user.profile.refresh_from_db()
    assert user.profile.auto_play


def test_turning_it_on_out_of_turn_only_saves_it(full_table, people):
    services.start_match(user=people["host"], table_id=full_table.pk)
    user, engine = _turn_user(full_table)
    other = next(p for p in (people[n] for n in ("host", "ana", "bea", "caio")) if p != user)
    services.set_preferences(user=other, table_id=full_table.pk, auto_play=True)
    assert not Move.objects.exists()


def test_with_play_automatically_on_the_table_plays_after_the_bot_think_time(full_table, people):
    Table.objects.filter(pk=full_table.pk).update(bot_think_ms=700)
    services.start_match(user=people["host"], table_id=full_table.pk)
    user, engine = _turn_user(full_table)
    nxt = seat_user(full_table, (engine.current.turn + 1) % 4)
    services.set_preferences(user=nxt, auto_play=True)  # not at the table: saved only
    first = legal_dict(*engine.current.legal()[0])
    services.play_move(user=user, table_id=full_table.pk, round_number=0, ply=0,
                       tile=first.get("play"), end=first.get("end"))
    table = Table.objects.get(pk=full_table.pk)
    # Their turn has the think time for a deadline, not the 45 s turn time.
    assert table.turn_deadline - table.turn_started_at == timedelta(milliseconds=700)
    services.act_on_deadline(table_id=table.pk, round_number=0, ply=1, now=table.turn_deadline)
    move = Move.objects.get(ply=1)
    assert move.by == Move.By.TABLE and move.seat == (engine.current.turn + 1) % 4
    # The next seat plays itself (nobody here holds a socket: 5 s of grace, then the table).
    table = Table.objects.get(pk=full_table.pk)
    assert table.turn_deadline - table.turn_started_at == timedelta(seconds=5)
