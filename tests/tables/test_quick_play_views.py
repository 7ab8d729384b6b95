"""POST /play/ and the "Play now" section of the home page."""

from __future__ import annotations

import pytest
from django.urls import reverse

from apps.accounts.services import set_language
from apps.tables import services
from apps.tables.models import Table

PLAY_NOW = {"es": "Jugar ahora", "pt-br": "Jogar agora", "en": "Play now"}


@pytest.fixture(autouse=True)
def _no_timers(monkeypatch):
    monkeypatch.setattr("apps.tables.scheduling.schedule_fill", lambda table_id, when: None)


@pytest.fixture
def people(people):
    for user in people.values():
        set_language(user=user, language="en")
    return people


@pytest.mark.parametrize("language", PLAY_NOW)
def test_the_home_page_offers_play_now_in_every_language(client, people, language):
    set_language(user=people["host"], language=language)
    client.force_login(people["host"])
    html = client.get(reverse("home")).content.decode()
    assert PLAY_NOW[language] in html
    assert f'action="{reverse("tables:quick_play")}"' in html
    assert 'name="preset"' in html and 'name="players"' in html
    assert "<script>" not in html and 'style="' not in html  # the page's CSP


def test_a_visitor_sees_play_now_and_is_sent_to_sign_in(client, db):
    assert "Jugar ahora" in client.get(reverse("home")).content.decode()  # the site's default
    response = client.post(reverse("tables:quick_play"), {"preset": "partners"})
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("accounts:login"))
    assert not Table.objects.exists()


def test_play_now_seats_and_redirects_to_the_table(client, people):
    client.force_login(people["ana"])
    response = client.post(reverse("tables:quick_play"), {"preset": "draw", "players": "3"})
    table = Table.objects.get(quick=True)
    assert response.status_code == 302
    assert response["Location"] == reverse("tables:table", args=[table.code])
    assert table.players == 3 and table.host == people["ana"]
    page = client.get(response["Location"]).content.decode()
    assert "Quick play" in page and "Leave the seat" in page  # even the host may leave
    # A four-player game ignores a number of players sent by a page without JS.
    client.force_login(people["bea"])
    client.post(reverse("tables:quick_play"), {"preset": "partners", "players": "2"})
    assert Table.objects.get(quick=True, preset="partners").players == 4


@pytest.mark.parametrize(("data", "words"), [
    ({"preset": "chess"}, "Choose a game"),
    ({"preset": "draw", "players": "7"}, "Choose a game"),
])
def test_bad_input_gets_a_message_and_changes_nothing(client, people, data, words):
    client.force_login(people["ana"])
    response = client.post(reverse("tables:quick_play"), data, follow=True)
    assert words in response.content.decode()
    assert not Table.objects.exists()


def test_refusals_come_back_to_the_home_page_with_the_reason(client, people):
    services.create_table(host=people["ana"], preset="partners", name="Friday club")
    client.force_login(people["ana"])
    response = client.post(reverse("tables:quick_play"), {"preset": "partners"}, follow=True)
    assert response.redirect_chain[-1][0] == reverse("home")
    assert "Friday club" in response.content.decode()
    people["bea"].profile.guest = True
    people["bea"].profile.save(update_fields=["guest"])
    client.force_login(people["bea"])
    response = client.post(reverse("tables:quick_play"), {"preset": "partners"}, follow=True)
    html = response.content.decode()
    assert "sign up" in html.lower() and not Table.objects.filter(quick=True).exists()


def test_the_lobby_marks_quick_tables(client, people):
    services.quick_play(user=people["ana"], preset="partners")
    html = client.get(reverse("tables:lobby")).content.decode()
    assert 'class="table-mark"' in html and "Partida rápida" in html  # signed out: Spanish


def test_get_is_not_allowed(client, people):
    client.force_login(people["ana"])
    assert client.get(reverse("tables:quick_play")).status_code == 405
