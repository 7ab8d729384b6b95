"""The club's pages: the profile section, the daily grant, stake tables."""

from __future__ import annotations

import pytest
from django.urls import reverse

from apps.club import numbers, selectors
from apps.club.models import Stake
from apps.tables.models import Table

from .test_stakes import drain

pytestmark = pytest.mark.usefixtures("sound_books")


@pytest.fixture
def ana_client(client, people):
    from apps.accounts.services import set_language

    set_language(user=people["ana"], language="en")
    client.force_login(people["ana"])
    return client


def test_the_profile_shows_balance_level_and_ledger(ana_client, people):
    page = ana_client.get(reverse("accounts:profile")).content.decode()
    assert 'id="club-balance"' in page and str(numbers.START_COINS) in page
    assert 'id="club-level">1<' in page
    assert "club-ledger" in page and "Collect" not in page
    assert "style=" not in page and "<script>" not in page


def test_the_daily_grant_from_the_profile(ana_client, people):
    response = ana_client.post(reverse("club:daily"), follow=True)
    assert str(numbers.DAILY_FLOOR) in response.content.decode()  # refused: above the floor
    drain(people["ana"], 10)
    assert reverse("club:daily") in ana_client.get(
        reverse("accounts:profile")).content.decode()
    ana_client.post(reverse("club:daily"))
    assert selectors.balance(people["ana"]) == 10 + numbers.DAILY_COINS
    assert ana_client.get(reverse("club:daily")).status_code == 405


def test_open_a_stake_table_sit_and_stand_up(ana_client, client, people):
    response = ana_client.post(reverse("club:stakes"),
                               {"entry": 250, "preset": "partners", "players": 4})
    table = Table.objects.get(stake__isnull=False)
    assert response.status_code == 302 and table.code in response["Location"]
    assert selectors.balance(people["ana"]) == numbers.START_COINS - 250
    page = ana_client.get(reverse("club:stakes")).content.decode()
    assert "250" in page and reverse("club:stand_up", args=[table.code]) in page
    bad = ana_client.post(reverse("club:stakes"), {"entry": 7, "preset": "partners",
                                                   "players": 4}, follow=True)
    assert Stake.objects.count() == 1 and "entries shown" in bad.content.decode()
    ana_client.post(reverse("club:stand_up", args=[table.code]))
    assert selectors.balance(people["ana"]) == numbers.START_COINS
    assert Table.objects.get(pk=table.pk).state == Table.State.CLOSED


def test_pages_need_an_account(client):
    assert client.get(reverse("club:stakes")).status_code == 302


def test_league_and_leaderboards_highlight_the_person(ana_client, people):
    from datetime import timedelta

    from django.utils import timezone

    from apps.club.models import LeaguePoints, Rating
    from apps.club.services import week_of
    from apps.tables import services
    from apps.tables.models import Match

    table = services.create_table(host=people["host"], preset="partners", public=True)
    match = Match.objects.create(table=table, number=1, rules={}, players=4)
    week = week_of(timezone.now())
    LeaguePoints.objects.create(user=people["ana"], week=week, match=match, rank=1, points=10)
    LeaguePoints.objects.create(user=people["bea"], week=week, match=match, rank=1, points=12)
    LeaguePoints.objects.create(user=people["bea"], week=week - timedelta(days=7),
                                match=Match.objects.create(table=table, number=2, rules={},
                                                           players=4), rank=1, points=4)
    page = ana_client.get(reverse("club:league")).content.decode()
    assert page.count('class="me"') == 1 and "ana" in page and "bea" in page
    Rating.objects.create(user=people["ana"], kind="pairs", mu=30, sigma=3, shown=1840,
                          matches=numbers.RATING_PROVISIONAL_MATCHES)
    Rating.objects.create(user=people["bea"], kind="pairs", mu=25, sigma=8, shown=1000,
                          matches=2)
    page = ana_client.get(reverse("club:leaderboards")).content.decode()
    assert "1840" in page and 'class="me"' in page
    assert ">1000<" not in page  # provisional ratings stay off the all-time board
    profile = ana_client.get(reverse("accounts:profile")).content.decode()
    assert "1840" in profile


@pytest.mark.parametrize(("language", "words"), [
    ("es", ["Mesas con entrada", "Abrir una mesa con entrada", "Tienes 1000 monedas."]),
    ("pt-br", ["Mesas com entrada", "Abrir uma mesa com entrada", "Você tem 1000 moedas."]),
])
def test_club_pages_speak_the_person_s_language(client, people, language, words):
    from apps.accounts.services import set_language

    set_language(user=people["ana"], language=language)
    client.force_login(people["ana"])
    page = client.get(reverse("club:stakes")).content.decode()
    for word in words:
        assert word in page
    profile = client.get(reverse("accounts:profile")).content.decode()
    assert ("Monedas y experiencia" if language == "es" else "Moedas e experiência") in profile


def test_a_stake_table_with_impossible_options_is_refused_and_costs_nothing(ana_client,
                                                                           people):
    page = ana_client.post(reverse("club:stakes"), {"entry": 100, "preset": "partners",
                                                    "players": 3}, follow=True)
    assert "4" in page.content.decode() and not Stake.objects.exists()
    assert selectors.balance(people["ana"]) == numbers.START_COINS
