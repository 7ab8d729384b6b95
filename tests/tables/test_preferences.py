"""Per-person table preferences: auto-pass (passes for you when passing is your only move) and
learning mode, saved on the profile from the table page."""

from __future__ import annotations

import pytest

from apps.rules.engine import PASS_MOVE
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
    assert response.json() == {"ok": True, "auto_pass": False, "learning_mode": True}
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
