"""Finished matches to review: played through the table services with random legal moves (a
practice match's bots through the deadlines), and a small review budget for every test."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone, translation

from apps.rules.engine import legal_dict
from apps.tables import game, services
from apps.tables.models import Match, Table

#: Deals per candidate move in these tests (the site's ``REVIEW_DEALS``; the CLI's ``--deals``).
DEALS = 3


@pytest.fixture(autouse=True)
def small_review(settings):
    settings.REVIEW_DEALS = DEALS
    settings.REVIEWS_PER_HOUR = 5


@pytest.fixture(autouse=True)
def english():
    """Messages in English unless a test says otherwise (the site's default is Spanish)."""
    with translation.override("en"):
        yield


@pytest.fixture
def people(db):
    """host, ana, bea and an outsider, who read the site in English."""
    User = get_user_model()
    people = {name: User.objects.create_user(username=name, password="pw-" + name * 2)
              for name in ("host", "ana", "bea", "outsider")}
    for user in people.values():
        user.profile.language = "en"
        user.profile.save()
    return people


def finish(table: Table, seed: int = 1) -> Match:
    """Random legal moves until the match is over: a person's turn through ``play_move``, a
    bot's through its deadline; the next round dealt by the host."""
    rng = random.Random(seed)
    for _ in range(2000):
        table = Table.objects.get(pk=table.pk)
        match = table.current_match
        engine = game.restore(match)
        rnd = engine.current
        if rnd is None:
            if engine.over:
                return Match.objects.get(pk=match.pk)
            services.next_round(user=table.host, table_id=table.pk)
            continue
        seat = table.seats.get(index=rnd.turn)
        if seat.user is None or seat.is_bot:
            services.act_on_deadline(table_id=table.pk,
                                     now=timezone.now() + timedelta(minutes=5))
            continue
        move = legal_dict(*rng.choice(rnd.legal()))
        services.play_move(user=seat.user, table_id=table.pk,
                           round_number=len(engine.rounds) - 1, ply=len(rnd.history),
                           tile=move.get("play"), end=move.get("end"),
                           is_pass=bool(move.get("pass")))
    raise AssertionError("the match did not finish")


def two_player_table(host, other, *, target: int = 10) -> Table:
    table = services.create_table(host=host, preset="draw", players=2, public=False,
                                  options={"target": target, "turn_seconds": None})
    services.join_table(user=other, table_id=table.pk, code=table.code)
    services.start_match(user=host, table_id=table.pk)
    return table


@pytest.fixture
def finished(people):
    """host and ana's finished two-player draw match (invite-only): (table, match)."""
    table = two_player_table(people["host"], people["ana"])
    match = finish(table)
    return Table.objects.get(pk=table.pk), match


@pytest.fixture
def sent(monkeypatch):
    """The review tasks sent (review id, attempt), instead of the broker."""
    from apps.reviews import services as reviews

    calls: list[tuple] = []
    monkeypatch.setattr(reviews, "send",
                        lambda review_id, attempt, countdown=None: calls.append(
                            (review_id, attempt)))
    return calls
