"""The growing wait before quick play (hooks.on_quick_play_refusal) and wait_left, which the
tournaments ask."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import AnonymousUser
from django.test import Client
from django.utils import timezone, translation

from apps.core.errors import ServiceError
from apps.fairplay import rules
from apps.fairplay.selectors import wait_left
from apps.tables import services as tables
from apps.tables.models import Seat, Table

from .conftest import block_table, counts, set_record


def test_wait_left_follows_the_tiers(people):
    ana = people["ana"]
    now = timezone.now()
    assert wait_left(ana) == timedelta(0)
    assert wait_left(AnonymousUser()) == timedelta(0) and wait_left(None) == timedelta(0)
    set_record(ana, finished=3, abandoned=1, times=[now - timedelta(minutes=1)])
    assert wait_left(ana, now=now) == timedelta(0)
    set_record(ana, finished=3, abandoned=2,
               times=[now - timedelta(hours=3), now - timedelta(minutes=1)])
    assert wait_left(ana, now=now) == timedelta(minutes=4)
    set_record(ana, finished=3, abandoned=3,
               times=[now - timedelta(hours=5), now - timedelta(hours=3),
                      now - timedelta(minutes=10)])
    assert wait_left(ana, now=now) == timedelta(minutes=20)
    times = [now - timedelta(hours=h) for h in (20, 10, 5)] + [now - timedelta(minutes=30)]
    set_record(ana, finished=3, abandoned=4, times=times)
    assert wait_left(ana, now=now) == timedelta(minutes=90)
    assert wait_left(ana, now=now + timedelta(minutes=90)) == timedelta(0)
    # A day later the old ones are forgotten: the last alone costs nothing.
    assert wait_left(ana, now=now + timedelta(hours=23)) == timedelta(0)


def test_two_matches_left_in_a_day_close_quick_play_for_a_while(people):
    for _match in range(2):
        table = block_table(people, ("host", "ana"), target=1000)
        # Away (no socket) for three minutes already: a bot takes her hand.
        Seat.objects.filter(table=table, index=1).update(
            away_since=timezone.now() - timedelta(minutes=3))
        tables.stand_in(table_id=table.pk, seat_index=1)
        tables.close_by_staff(table_id=table.pk, reason="test")
    assert counts(people["ana"]) == (2, 0, 2)
    left = wait_left(people["ana"])
    assert timedelta(minutes=4) < left <= rules.WAIT_AFTER_2
    with translation.override("en"):
        with pytest.raises(ServiceError) as err:
            tables.quick_play(user=people["ana"], preset="block", players=2)
    assert err.value.code == "wait"
    assert "2 matches" in err.value.message and "minutes" in err.value.message
    assert not Table.objects.filter(quick=True).exists()
    # Others are not held up.
    tables.quick_play(user=people["bea"], preset="block", players=2)


def test_the_play_now_page_says_how_long_is_left(people):
    now = timezone.now()
    set_record(people["ana"], finished=0, abandoned=3,
               times=[now - timedelta(minutes=m) for m in (50, 40, 5)])
    client = Client()
    client.force_login(people["ana"])
    page = client.post("/play/", {"preset": "block", "players": "2"}, follow=True)
    text = page.content.decode()
    assert "25 minutes" in text and "3 matches" in text, text[-2000:]
    assert not Table.objects.filter(quick=True).exists()


@pytest.mark.parametrize("language,words", [("es", "minutos"), ("pt-br", "minutos"),
                                            ("en", "minutes")])
def test_the_wait_speaks_every_language(people, language, words):
    now = timezone.now()
    set_record(people["ana"], finished=0, abandoned=4,
               times=[now - timedelta(minutes=m) for m in (50, 40, 30, 5)])
    with translation.override(language):
        with pytest.raises(ServiceError) as err:
            tables.quick_play(user=people["ana"], preset="block", players=2)
    message = err.value.message
    assert words in message and "1" in message and "55" in message, message
    if language != "en":
        assert "Play now" not in message and "match" not in message, message
